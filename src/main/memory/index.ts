/** The Memory tool handler: the one entry other domains and tests import. */

export { createMemoryTool, DEFAULT_LIMITS, type MemoryToolOptions } from './memory-tool'
export {
  parseMemoryPath,
  MEMORY_ROOT,
  type ParsedMemoryPath,
  type RejectedMemoryPath,
} from './path-rules'
export { createRunnableMemoryTool } from './sdk-adapter'
export { maxEditableBytes } from './edit'
export { unexpectedMessage } from './outcome'
export * from './types'
