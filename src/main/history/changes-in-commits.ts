/**
 * `changesSince` answered from the commits themselves, for the time the side index is being
 * rebuilt (`indexRebuilding`): the review's "the person edited this" check runs before each of
 * Claude's writes, and refusing it then refused the write (review on) or dropped every flag of
 * its commit (review off) for as long as the rebuild took. Slower than the index (a commit
 * read per step, a tree diff for each commit inside the window), and only while it is rebuilt.
 */
import type { CommitSummary } from '../../shared/types'
import { DamagedHistoryError } from './damage'
import type { ObjectStore, RawCommit } from './object-store'
import { nameBefore, OLD_RUN_LIMIT, toSummary, touches } from './queries'
import { entryFromCommit } from './side-index'

/**
 * The commits at `since` or later, reachable from `head`, that changed `path` (or anything
 * under it), newest first, followed back through renames; as `changesSince` finds them in
 * the index. Walked newest first by time, never a commit before one of its children, and
 * stopped after a run of `OLD_RUN_LIMIT` commits dated before the window. A commit that
 * cannot be read ends the walk down that line (what the rebuild leaves out too).
 */
export async function changesSinceInCommits(
  store: ObjectStore,
  head: string | null,
  path: string,
  since: number,
): Promise<ReadonlyArray<CommitSummary>> {
  if (!head) return []
  const found: CommitSummary[] = []
  const seen = new Set<string>([head])
  const heap = new NewestHeap()
  const first = await readable(store, head)
  if (first) heap.push(first)
  let current = path
  let oldRun = 0
  for (let commit = heap.pop(); commit; commit = heap.pop()) {
    // Parents join only once their child is out: a clock running ahead never puts a parent
    // before its child.
    for (const parent of commit.parents) {
      if (seen.has(parent)) continue
      seen.add(parent)
      const read = await readable(store, parent)
      if (read) heap.push(read)
    }
    if (commit.timestamp * 1000 < since) {
      if (++oldRun >= OLD_RUN_LIMIT) break
      continue
    }
    oldRun = 0
    const entry = await entryFromCommit(store, commit.oid)
    if (!touches(entry, current)) continue
    found.push(toSummary(entry))
    current = nameBefore(entry, current)
  }
  return found
}

async function readable(
  store: Pick<ObjectStore, 'readCommit'>,
  oid: string,
): Promise<RawCommit | null> {
  try {
    return await store.readCommit(oid)
  } catch (error) {
    if (error instanceof DamagedHistoryError) return null
    throw error
  }
}

// A max-heap of commits by time.
class NewestHeap {
  private readonly items: RawCommit[] = []

  push(commit: RawCommit): void {
    const items = this.items
    items.push(commit)
    let i = items.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if ((items[up] as RawCommit).timestamp >= commit.timestamp) break
      items[i] = items[up] as RawCommit
      i = up
    }
    items[i] = commit
  }

  pop(): RawCommit | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (items.length > 0 && last) {
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = i
        const timeOf = (k: number) => (k === i ? last.timestamp : (items[k] as RawCommit).timestamp)
        if (l < items.length && timeOf(l) > timeOf(best)) best = l
        if (r < items.length && timeOf(r) > timeOf(best)) best = r
        if (best === i) break
        items[i] = items[best] as RawCommit
        i = best
      }
      items[i] = last
    }
    return top
  }
}
