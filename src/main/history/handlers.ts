import type { DomainHandlers } from '../lib/handlers'
import { maxEditableBytes } from '../memory'
import type { VersionedMemory } from './types'
import { changeWithinWindowLimit, withinWindowLimit } from './window-limits'

/** Request handlers for the `history:*` channels (payloads already validated). */
export function historyHandlers(memory: VersionedMemory): DomainHandlers<'history'> {
  // The memory browser's limit for `memory:read`: what the window can show of one file.
  const maxBytes = maxEditableBytes(memory.limits)
  return {
    'history:log': (query) => memory.log(query),
    'history:show': ({ oid }) => memory.show(oid),
    'history:fileHistory': ({ path }) => memory.fileHistory(path),
    'history:readAt': async ({ path, oid }) =>
      withinWindowLimit(path, await memory.readAt(path, oid), maxBytes),
    'history:diff': async ({ path, from, to }) =>
      changeWithinWindowLimit(await memory.diff(path, from, to), maxBytes),
    'history:restoreFile': ({ path, oid }) => memory.restoreFile(path, oid),
    'history:restoreDeleted': ({ path, oid }) => memory.restoreDeleted(path, oid),
    'history:revert': ({ oid }) => memory.revert(oid),
    'history:restoreAll': ({ oid }) => memory.restoreAll(oid),
    'history:blame': ({ path, oid }) => memory.blame(path, oid),
    'history:search': ({ text, matchCase, before }) =>
      memory.searchHistory({ text, matchCase: matchCase ?? false, before }),
    'history:compare': ({ from, to }) => memory.compare(from, to),
    'history:summaries': ({ oids }) => memory.summaries(oids),
  }
}
