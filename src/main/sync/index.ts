/**
 * Memory on every machine: sync through a git remote, and export and import. The one entry
 * other rooms and tests import.
 */
export { syncHandlers } from './handlers'
export { createSyncService, SYNC_DEBOUNCE_MS } from './service'
export type { SyncService, SyncServiceOptions } from './service'
