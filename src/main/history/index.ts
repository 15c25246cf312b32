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
  HistoryGit,
  HistorySession,
  CommitFacts,
  MoveKind,
  LogQuery,
  Origin,
  SearchQuery,
  RunFacts,
  RunVerdict,
  VersionedMemory,
} from './types'
export { AUTHORS, formatCommitMessage, parseCommitMessage, type CommitMeta } from './commit-message'
export type { CommitIntent } from './repo'
export { EMPTY_TREE_OID } from './repo'
export { DamagedHistoryError, entryNameProblem, wrongKindDetail } from './damage'
export { keepsNoCopy, MAX_VERSIONED_BYTES } from './work-tree'
export { wholeEntryHeader } from './objects/pack-writer'
export { reaches } from './objects/reaches'
export { entryNameAt } from './objects/tree-entry'
export { moveIntoDamaged } from './objects/damaged-folder'
export {
  MAIN_REF,
  serializeCommit,
  serializeTree,
  type CommitFields,
  type ObjectType,
  type RawCommit,
  type RawTreeEntry,
} from './object-store'
