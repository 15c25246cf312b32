/** Git-versioned memory: the one entry other domains and tests import. */

export { openVersionedMemory, type VersionedMemoryOptions } from './versioned-memory'
export type { ExecuteOutcome, LogQuery, Origin, VersionedMemory } from './types'
