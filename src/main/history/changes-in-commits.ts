/**
 * `changesSince` answered from the commits themselves, for the time the side index is being
 * rebuilt (`indexRebuilding`): the review's "the person edited this" check runs before each of
 * Claude's writes, and refusing it then refused the write (review on) or dropped every flag of
 * its commit (review off) for as long as the rebuild took. Slower than the index (a commit
 * read per step, a tree diff for each commit inside the window), and only while it is rebuilt.
 */
import type { CommitSummary } from '../../shared/types'
import { dateOrder } from './ancestry'
import { DamagedHistoryError } from './damage'
import type { ObjectStore, RawCommit } from './object-store'
import { nameBefore, OLD_RUN_LIMIT, toSummary, touches } from './queries'
import { entryFromCommit } from './side-index'

/**
 * The commits at `since` or later, reachable from `head`, that changed `path` (or anything
 * under it), newest first, followed back through renames; as `changesSince` finds them in
 * the index. Every commit `head` reaches is read (commit objects only) and put in the
 * timeline's order (`dateOrder`, as `timelineOrder` orders the index: `git log --date-order`,
 * two of the same second in the rebuilt index's order); only then is the window applied and
 * the walk stopped after a run of `OLD_RUN_LIMIT` dated before it, as `changesSince` stops.
 * Stopping earlier, while collecting, would stop at another point whenever a commit has
 * children on two sides of a merge with a machine whose clock is behind (the collection puts
 * it out after one child, the timeline after all of them), and with a rename followed along
 * the way, the order decides what is found (review13 R2). A commit that cannot be read ends
 * the walk down that line (what the rebuild leaves out too).
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
  for (const commit of timelineOf(await reachable(store, head))) {
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
 * Every readable commit `head` reaches (itself first), in the rebuilt index's order, oldest
 * first: the index is written depth-first from the head, first parents first, every parent
 * before its child (`commitsSince`), and the same walk gives these commits their places.
 */
async function reachable(store: ObjectStore, head: string): Promise<RawCommit[]> {
  const first = await readable(store, head)
  if (!first) return []
  const inOrder: RawCommit[] = []
  const expanded = new Set<string>()
  // Each commit read once, however many children name it.
  const read = new Map<string, RawCommit | null>()
  // Without recursion: histories can be far deeper than the call stack.
  const stack: Array<{ commit: RawCommit; done: boolean }> = [{ commit: first, done: false }]
  while (stack.length > 0) {
    const top = stack.pop() as { commit: RawCommit; done: boolean }
    if (top.done) {
      inOrder.push(top.commit)
      continue
    }
    if (expanded.has(top.commit.oid)) continue
    expanded.add(top.commit.oid)
    stack.push({ commit: top.commit, done: true })
    for (let k = top.commit.parents.length - 1; k >= 0; k--) {
      const oid = top.commit.parents[k] as string
      if (expanded.has(oid)) continue
      let parent = read.get(oid)
      if (parent === undefined) {
        parent = await readable(store, oid)
        read.set(oid, parent)
      }
      if (parent) stack.push({ commit: parent, done: false })
    }
  }
  return inOrder
}

/** `commits` (in the index's order, oldest first) newest first, in the timeline's order. */
function timelineOf(commits: ReadonlyArray<RawCommit>): RawCommit[] {
  const place = new Map<string, number>()
  for (const [i, commit] of commits.entries()) place.set(commit.oid, i)
  const parents = commits.map((commit) =>
    commit.parents.flatMap((oid) => {
      const p = place.get(oid)
      return p === undefined ? [] : [p]
    }),
  )
  const oldestLast = dateOrder(
    commits.length,
    (i) => parents[i] as number[],
    (a, b) => {
      const ta = (commits[a] as RawCommit).timestamp
      const tb = (commits[b] as RawCommit).timestamp
      return ta !== tb ? ta > tb : a > b
    },
  )
  const ordered: RawCommit[] = []
  for (let k = oldestLast.length - 1; k >= 0; k--) {
    ordered.push(commits[oldestLast[k] as number] as RawCommit)
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
