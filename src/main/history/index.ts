/** Git-versioned memory: the one entry other domains and tests import. */

export { historyHandlers } from './handlers'
export { segmentsOf, toRelative, toVirtual } from './paths'
export {
  openVersionedMemory,
  WATCH_DEBOUNCE_MS,
  type VersionedMemoryOptions,
} from './versioned-memory'
export type {
  ExecuteOptions,
  ExecuteOutcome,
  LogQuery,
  Origin,
  SearchQuery,
  RunVerdict,
  VersionedMemory,
} from './types'
