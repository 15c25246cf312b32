import type { Handlers } from '../dispatcher'
import type { VersionedMemory } from './types'

/** The channels this domain answers: the memory browser and history, over one versioned memory. */
export type HistoryChannel =
  | 'memory:tree'
  | 'memory:read'
  | 'memory:write'
  | 'memory:rename'
  | 'memory:delete'
  | 'memory:search'
  | 'memory:notices'
  | 'memory:removeSecrets'
  | 'history:log'
  | 'history:show'
  | 'history:fileHistory'
  | 'history:readAt'
  | 'history:diff'
  | 'history:restoreFile'
  | 'history:restoreDeleted'
  | 'history:revert'
  | 'history:restoreAll'

/** Request handlers for the `memory:*` and `history:*` channels (payloads already validated). */
export function createHistoryHandlers(memory: VersionedMemory): Pick<Handlers, HistoryChannel> {
  return {
    'memory:tree': () => memory.tree(),
    'memory:read': ({ path }) => memory.readFile(path),
    'memory:write': ({ path, content, mustNotExist }) =>
      memory.writeFile(path, content, { mustNotExist: mustNotExist ?? false }),
    'memory:rename': ({ from, to }) => memory.renameFile(from, to),
    'memory:delete': ({ path }) => memory.deleteFile(path),
    'memory:search': ({ query }) => memory.search(query),
    'memory:notices': () => memory.notices(),
    'memory:removeSecrets': ({ path }) => memory.removeSecrets(path),
    'history:log': (query) => memory.log(query),
    'history:show': ({ oid }) => memory.show(oid),
    'history:fileHistory': ({ path }) => memory.fileHistory(path),
    'history:readAt': ({ path, oid }) => memory.readAt(path, oid),
    'history:diff': ({ path, from, to }) => memory.diff(path, from, to),
    'history:restoreFile': ({ path, oid }) => memory.restoreFile(path, oid),
    'history:restoreDeleted': ({ path }) => memory.restoreDeleted(path),
    'history:revert': ({ oid }) => memory.revert(oid),
    'history:restoreAll': ({ oid }) => memory.restoreAll(oid),
  }
}
