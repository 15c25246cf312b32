/** The Memory tool handler: the one entry other domains and tests import. */

export {
  createMemoryTool,
  DEFAULT_LIMITS,
  USAGE_MAX_AGE_MS,
  type MemoryToolOptions,
} from './memory-tool'
export {
  mayDisplayAsAnother,
  parseMemoryPath,
  MEMORY_ROOT,
  MAX_PATH_LENGTH,
  MAX_SEGMENT_LENGTH,
  type ParsedMemoryPath,
  type RejectedMemoryPath,
} from './path-rules'
export { createRunnableMemoryTool, type MemoryExecutor } from './sdk-adapter'
export * from './types'
export { hasImageSignature, IMAGE_TYPES, imageTypeOf } from './view'
export { MAX_VIEW_FILE_BYTES, MAX_VIEW_CHARS, wholeViewSize } from './format'
export { maxEditableBytes } from './edit'
export { unexpectedFailure } from './outcome'
export { newSecrets, removeSecrets, scanForSecrets, type SecretFinding } from './secrets'
export { PLAN_FILE_LIST } from './plan'
export { asideName } from './keep-aside'
export { twinRefusalForPerson } from './spelling-twin'
