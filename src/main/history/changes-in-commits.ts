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
 * the index. First the commits are collected (commit objects only): newest first by time,
 * never a commit before one of its children, stopped after a run of `OLD_RUN_LIMIT` dated
 * before the window. Those are then put in the timeline's order (`timelineOrder`, like
 * `git log --date-order`: a commit only after all of its children, two of the same second in
 * the rebuilt index's order) before the window and the renames are applied: with a rename
 * followed along the way, the order decides what is found, not only how it is sorted (a
 * merge with a machine whose clock is behind, review13 R2). A commit that cannot be read
 * ends the walk down that line (what the rebuild leaves out too).
 */
export async function changesSinceInCommits(
  store: ObjectStore,
  head: string | null,
  path: string,
  since: number,
): Promise<ReadonlyArray<CommitSummary>> {
  if (!head) return []
  const found: CommitSummary[] = []
  let current = path
  let oldRun = 0
  for (const commit of timelineOf(await collect(store, head, since))) {
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

/**
 * The commits reachable from `head`, newest first by time with a parent only after one of its
 * children, up to a run of `OLD_RUN_LIMIT` dated before `since`: the part of the history the
 * window can reach, read as commit objects only.
 */
async function collect(store: ObjectStore, head: string, since: number): Promise<RawCommit[]> {
  const collected: RawCommit[] = []
  const seen = new Set<string>([head])
  const heap = new Heap<RawCommit>((a, b) => a.timestamp > b.timestamp)
  const first = await readable(store, head)
  if (first) heap.push(first)
  let oldRun = 0
  for (let commit = heap.pop(); commit; commit = heap.pop()) {
    collected.push(commit)
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
    } else {
      oldRun = 0
    }
  }
  return collected
}

/**
 * `commits` (the first one the head) in the timeline's order, as `timelineOrder` puts them in
 * the index: newest first by time, but a commit only once all of its children among them are
 * out; of two made in the same second, the one later in the rebuilt index first. The index is
 * written depth-first from the head, first parents first, every parent before its child
 * (`commitsSince`); the same walk over these commits gives their places.
 */
function timelineOf(commits: ReadonlyArray<RawCommit>): RawCommit[] {
  const byOid = new Map<string, RawCommit>()
  for (const commit of commits) byOid.set(commit.oid, commit)
  const place = new Map<string, number>()
  const head = commits[0]
  if (head) {
    // Without recursion: histories can be far deeper than the call stack.
    const stack: Array<{ commit: RawCommit; done: boolean }> = [{ commit: head, done: false }]
    const expanded = new Set<string>()
    while (stack.length > 0) {
      const top = stack.pop() as { commit: RawCommit; done: boolean }
      if (top.done) {
        place.set(top.commit.oid, place.size)
        continue
      }
      if (expanded.has(top.commit.oid)) continue
      expanded.add(top.commit.oid)
      stack.push({ commit: top.commit, done: true })
      for (let k = top.commit.parents.length - 1; k >= 0; k--) {
        const parent = byOid.get(top.commit.parents[k] as string)
        if (parent && !expanded.has(parent.oid)) stack.push({ commit: parent, done: false })
      }
    }
  }
  const children = new Map<string, number>()
  for (const commit of commits) {
    for (const parent of commit.parents) {
      if (byOid.has(parent)) children.set(parent, (children.get(parent) ?? 0) + 1)
    }
  }
  const placeOf = (commit: RawCommit) => place.get(commit.oid) ?? -1
  const heap = new Heap<RawCommit>((a, b) =>
    a.timestamp !== b.timestamp ? a.timestamp > b.timestamp : placeOf(a) > placeOf(b),
  )
  for (const commit of commits) if (!children.get(commit.oid)) heap.push(commit)
  const ordered: RawCommit[] = []
  for (let commit = heap.pop(); commit; commit = heap.pop()) {
    ordered.push(commit)
    for (const oid of commit.parents) {
      const parent = byOid.get(oid)
      if (!parent) continue
      const left = (children.get(oid) ?? 0) - 1
      children.set(oid, left)
      if (left === 0) heap.push(parent)
    }
  }
  return ordered
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

// A max-heap: `before(a, b)` when `a` comes out first.
class Heap<T> {
  private readonly items: T[] = []

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const items = this.items
    items.push(item)
    let i = items.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if (!this.before(item, items[up] as T)) break
      items[i] = items[up] as T
      i = up
    }
    items[i] = item
  }

  pop(): T | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (items.length > 0 && last !== undefined) {
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = l < items.length && this.before(items[l] as T, last) ? l : i
        const bestItem = (k: number) => (k === i ? last : (items[k] as T))
        if (r < items.length && this.before(items[r] as T, bestItem(best))) best = r
        if (best === i) break
        items[i] = items[best] as T
        i = best
      }
      items[i] = last
    }
    return top
  }
}
