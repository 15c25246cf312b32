import type { VersionedMemory } from '../history'
import type { DomainHandlers } from '../lib/handlers'
import { listTree, listTreeAt, readMemoryFile, readMemoryFileAt, searchMemories } from './browser'
import { deleteFile, renameFile, writeFile } from './edits'

/**
 * Request handlers for the `memory:*` channels: browsing reads the live folder directly;
 * edits go through the versioned memory, so each is one commit.
 */
export function memoryBrowserHandlers(memory: VersionedMemory): DomainHandlers<'memory'> {
  const execute = memory.execute
  return {
    'memory:tree': (payload) =>
      payload?.at ? listTreeAt(memory, payload.at) : listTree(memory.folder),
    'memory:read': ({ path, at }) =>
      at ? readMemoryFileAt(memory, path, at) : readMemoryFile(memory.folder, path),
    'memory:search': ({ query }) => searchMemories(memory.folder, query),
    'memory:write': ({ path, content, mustNotExist }) =>
      writeFile(execute, path, content, { mustNotExist }),
    'memory:rename': ({ from, to }) => renameFile(execute, from, to),
    'memory:delete': ({ path }) => deleteFile(execute, path),
  }
}
