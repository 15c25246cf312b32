import type { DomainHandlers } from '../lib/handlers'
import type { SyncService } from './service'

/** Request handlers for the `sync:*` channels (payloads already validated). */
export function syncHandlers(sync: SyncService): DomainHandlers<'sync'> {
  return {
    'sync:status': () => sync.status(),
    'sync:now': () => sync.syncNow(),
    'sync:stop': () => sync.stop(),
    'sync:configure': (input) => sync.configure(input),
    'sync:test': (input) => sync.test(input),
    'sync:resolve': (input) => sync.resolve(input),
    'sync:join': ({ choice }) => sync.join(choice),
    'sync:restoreBackup': ({ name }) => sync.restoreBackup(name),
    'sync:export': ({ kind, at }) => sync.exportMemory(kind, at),
    'sync:import': ({ kind, text }) => sync.importMemory(kind, text),
  }
}
