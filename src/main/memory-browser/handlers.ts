import type { VersionedMemory } from '../history'
import { diskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import type { EventBus } from '../lib/events'
import type { DomainHandlers } from '../lib/handlers'
import { maxEditableBytes } from '../memory'
import { listTreeAt, readMemoryFile, readMemoryFileAt, type BrowserLimits } from './browser'
import { deleteFile, renameFile, writeFile } from './edits'
import { searchLive, sharedTreeReader, type TreeReader } from './tree-reader'

/**
 * Request handlers for the `memory:*` channels: browsing reads the live folder directly,
 * within the Memory tool's own limits; edits go through the versioned memory, so each is one
 * commit; notices and removing a secret are the versioned memory's. A dismissed notice is
 * told on `events` (`memory:noticeDismissed`), so every window hides it at once (the core's
 * bus; a test with no window to tell leaves it out).
 */
export function memoryBrowserHandlers(
  memory: VersionedMemory,
  events?: Pick<EventBus, 'emit'>,
  readTree: TreeReader = sharedTreeReader(memory),
): DomainHandlers<'memory'> {
  const execute = memory.execute
  const limits = browserLimits(memory)
  return {
    // The live folder's tree is walked in slices: the window's other first questions (the
    // conversations, the sync status) are answered meanwhile, even at 20,000 files.
    'memory:tree': (payload) =>
      forPeople(payload?.at ? listTreeAt(memory, payload.at) : readTree()),
    'memory:read': ({ path, at }) =>
      forPeople(
        at
          ? readMemoryFileAt(memory, path, at, limits)
          : readMemoryFile(memory.folder, path, limits),
      ),
    // In slices too, made again if a change ran through it.
    'memory:search': ({ query }) => forPeople(searchLive(memory, query, limits)),
    'memory:write': ({ path, content, mustNotExist }) =>
      writeFile(execute, path, content, { mustNotExist }),
    'memory:rename': ({ from, to }) => renameFile(execute, from, to),
    'memory:delete': ({ path }) => deleteFile(execute, path),
    'memory:notices': () => memory.notices(),
    'memory:dismissNotice': ({ id }) => {
      memory.dismissNotice(id)
      // Every window hides it at once, even one whose copy the core no longer keeps.
      events?.emit('memory:noticeDismissed', { id })
      return null
    },
    'memory:removeSecrets': ({ path }) => memory.removeSecrets(path),
  }
}

/** How much the browser reads: the Memory tool's limits in force. */
export function browserLimits(memory: Pick<VersionedMemory, 'limits'>): BrowserLimits {
  return {
    maxTextBytes: maxEditableBytes(memory.limits),
    maxImageBytes: memory.limits.maxImageBytes,
    maxSearchBytes: memory.limits.maxTotalBytes,
  }
}

// A disk that refuses a read is said in plain words, never as `internal`.
async function forPeople<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    const problem = diskProblem(error, 'memory')
    if (!problem || error instanceof CairnError) throw error
    throw new CairnError(problem.code, `That could not be read because ${problem.reason}.`)
  }
}
