import type { DomainHandlers } from '../lib/handlers'
import type { VersionedMemory } from './types'

/** Request handlers for the `history:*` channels (payloads already validated). */
export function historyHandlers(memory: VersionedMemory): DomainHandlers<'history'> {
  return {
    'history:log': (query) => memory.log(query),
    'history:show': ({ oid }) => memory.show(oid),
    'history:fileHistory': ({ path }) => memory.fileHistory(path),
    'history:readAt': ({ path, oid }) => memory.readAt(path, oid),
    'history:diff': ({ path, from, to }) => memory.diff(path, from, to),
    'history:restoreFile': ({ path, oid }) => memory.restoreFile(path, oid),
    'history:restoreDeleted': ({ path }) => memory.restoreDeleted(path),
    'history:revert': ({ oid }) => memory.revert(oid),
    'history:restoreAll': ({ oid }) => memory.restoreAll(oid),
    'history:blame': ({ path, oid }) => memory.blame(path, oid),
    'history:search': ({ text, matchCase, before }) =>
      memory.searchHistory({ text, matchCase: matchCase ?? false, before }),
    'history:compare': ({ from, to }) => memory.compare(from, to),
    'history:summaries': ({ oids }) => memory.summaries(oids),
  }
}
