import type { MemoryEntry, MemorySearchHit } from '../../shared/types'
import type { VersionedMemory } from '../history'
import { consistentRead, type Breather } from '../lib/time-slices'
import { listTree, searchMemories, type BrowserLimits } from './browser'

/** The live memory folder's tree, as `listTree` gives it. */
export type TreeReader = () => Promise<ReadonlyArray<MemoryEntry>>

/**
 * Reads the live folder's tree in slices (`consistentRead`), one walk for every caller that
 * asks while it runs with no change since it started: the window's first view asks for the
 * tree and the size meter at once, and two walks of a big folder shared the loop, each taking
 * twice as long. A caller that asks after a change made since the walk began gets a walk of
 * its own, so no answer is older than its question.
 */
export function sharedTreeReader(
  memory: Pick<VersionedMemory, 'folder' | 'changeStamp' | 'changeEnded'>,
  slices?: () => Breather,
): TreeReader {
  let running: {
    readonly stamp: number
    readonly tree: Promise<ReadonlyArray<MemoryEntry>>
  } | null = null
  return () => {
    const stamp = memory.changeStamp()
    if (running && running.stamp === stamp && stamp % 2 === 0) return running.tree
    const tree = consistentRead(memory.changeStamp, (breathe) => listTree(memory.folder, breathe), {
      slices,
      changeEnded: memory.changeEnded,
    })
    const walk = { stamp, tree }
    running = walk
    const done = () => {
      if (running === walk) running = null
    }
    tree.then(done, done)
    return tree
  }
}

/**
 * A search of the live folder in slices (`consistentRead`), as the tree is read: a search of
 * 20,000 files listed the whole folder in one synchronous stretch before it read a file, so
 * every other answer waited behind it. A change that runs between its slices (a rename could
 * list a file twice or not at all) has it made again, in one go after two torn tries.
 */
export function searchLive(
  memory: Pick<VersionedMemory, 'folder' | 'changeStamp' | 'changeEnded'>,
  query: string,
  limits: BrowserLimits,
  slices?: () => Breather,
): Promise<ReadonlyArray<MemorySearchHit>> {
  return consistentRead(
    memory.changeStamp,
    (breathe) => searchMemories(memory.folder, query, limits, breathe),
    { slices, changeEnded: memory.changeEnded },
  )
}
