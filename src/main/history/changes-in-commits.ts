/**
 * `changesSince` answered from the commits themselves, for the time the side index is being
 * rebuilt (`indexRebuilding`): the review's "the person edited this" check runs before each of
 * Claude's writes, and refusing it then refused the write (review on) or dropped every flag of
 * its commit (review off) for as long as the rebuild took. Slower than the index (a tree diff
 * for each commit inside the window), and only while it is rebuilt.
 */
import type { CommitSummary } from '../../shared/types'
import { dateOrder } from './ancestry'
import { DamagedHistoryError } from './damage'
import type { ObjectStore } from './object-store'
import { nameBefore, OLD_RUN_LIMIT, toSummary, touches } from './queries'
import { entryFromCommit } from './side-index'

/** What the ordering needs of a commit: its parents' ids and its time (seconds). */
interface Facts {
  readonly parents: ReadonlyArray<string>
  readonly time: number
}

/** One head's commits in the timeline's order, newest last (so that new ones are pushed). */
interface Ordered {
  readonly head: string
  readonly oldestFirst: string[]
  /** Their times (seconds), place for place. */
  readonly times: number[]
}

/**
 * Every commit a head reaches, in the timeline's order, kept between calls: the review asks
 * before each of Claude's writes, and ordering the whole history each time cost ~20 µs a commit
 * (5 s or more a write at 100,000 commits, docs/history-storage.md). Each commit is read once; a head whose new commits each
 * have one parent, down to the head last ordered (Claude's and the person's own commits), is
 * ordered by putting them first, as the full ordering would (each is the only child of the one
 * under it, so it comes before all that head reached). Any other head (a merge, a history
 * switched) is ordered again from the facts kept, reading only the commits not yet read, and
 * the facts of commits it no longer reaches are dropped. Keep one while the index is rebuilt
 * and drop it after.
 */
export interface CommitTimeline {
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
   * the way, the order decides what is found (review13 R2).
   */
  changesSince(head: string | null, path: string, since: number): Promise<CommitSummary[]>
}

export function createCommitTimeline(store: ObjectStore): CommitTimeline {
  let facts = new Map<string, Facts>()
  let ordered: Ordered | null = null
  // One update at a time: calls may overlap (each awaits reads).
  let updating: Promise<unknown> = Promise.resolve()

  const factsOf = async (oid: string): Promise<Facts | null> => {
    const known = facts.get(oid)
    if (known) return known
    let commit
    try {
      commit = await store.readCommit(oid)
    } catch (error) {
      // A commit that cannot be read ends the walk down that line (what the rebuild leaves
      // out too); not kept, so that it is tried again.
      if (error instanceof DamagedHistoryError) return null
      throw error
    }
    const found = { parents: commit.parents, time: commit.timestamp }
    facts.set(oid, found)
    return found
  }

  async function orderFor(head: string): Promise<Ordered | null> {
    const last = ordered
    if (last?.head === head) return last
    if (last) {
      // New commits of one parent each, down to the head last ordered.
      const added: string[] = []
      let oid = head
      for (let k = 0; k < 1000 && oid !== last.head; k++) {
        const commit = await factsOf(oid)
        if (!commit || commit.parents.length !== 1) break
        added.push(oid)
        oid = commit.parents[0] as string
      }
      if (oid === last.head && (await factsOf(last.head))) {
        for (let k = added.length - 1; k >= 0; k--) {
          const oid = added[k] as string
          last.oldestFirst.push(oid)
          last.times.push((facts.get(oid) as Facts).time)
        }
        ordered = { head, oldestFirst: last.oldestFirst, times: last.times }
        return ordered
      }
    }
    const all = await reachable(head)
    if (!all) return null
    const kept = new Map<string, Facts>()
    for (const oid of all.oids) kept.set(oid, facts.get(oid) as Facts)
    facts = kept
    // dateOrder puts the newest last; two of one second, the later in the index's order.
    const times = all.times
    const order = dateOrder(
      all.oids.length,
      (i) => all.parents[i] as number[],
      (a, b) => {
        const ta = times[a] as number
        const tb = times[b] as number
        return ta !== tb ? ta > tb : a > b
      },
    )
    ordered = {
      head,
      oldestFirst: Array.from(order, (i) => all.oids[i] as string),
      times: Array.from(order, (i) => times[i] as number),
    }
    return ordered
  }

  /**
   * Every readable commit `head` reaches (itself last), in the rebuilt index's order, with
   * their times and their parents' places: the index is written depth-first from the head,
   * first parents first, every parent before its child (`commitsSince`), and the same walk
   * gives these commits their places.
   */
  async function reachable(
    head: string,
  ): Promise<{ oids: string[]; times: number[]; parents: number[][] } | null> {
    if (!(await factsOf(head))) return null
    const oids: string[] = []
    const times: number[] = []
    const parents: number[][] = []
    // A commit's place once written, -1 while its parents are walked.
    const place = new Map<string, number>()
    // Without recursion: histories can be far deeper than the call stack. A commit is
    // pushed twice: to walk its parents, then (done) to be written after them.
    const stack: string[] = [head]
    const done: boolean[] = [false]
    while (stack.length > 0) {
      const oid = stack.pop() as string
      const commit = facts.get(oid) as Facts
      if (done.pop()) {
        const at: number[] = []
        for (const parent of commit.parents) {
          const p = place.get(parent)
          if (p !== undefined && p >= 0) at.push(p)
        }
        place.set(oid, oids.length)
        oids.push(oid)
        times.push(commit.time)
        parents.push(at)
        continue
      }
      if (place.has(oid)) continue
      place.set(oid, -1)
      stack.push(oid)
      done.push(true)
      for (let k = commit.parents.length - 1; k >= 0; k--) {
        const parent = commit.parents[k] as string
        if (place.has(parent)) continue
        // Awaited only when not yet read: a pause per commit cost more than the ordering.
        if (facts.has(parent) || (await factsOf(parent))) {
          stack.push(parent)
          done.push(false)
        }
      }
    }
    return { oids, times, parents }
  }

  return {
    async changesSince(head, path, since) {
      if (!head) return []
      const next = updating.then(() => orderFor(head))
      updating = next.catch(() => undefined)
      const timeline = await next
      if (!timeline) return []
      // This call's commits: later ones only push past its end.
      const { oldestFirst, times } = timeline
      const found: CommitSummary[] = []
      let current = path
      let oldRun = 0
      for (let k = oldestFirst.length - 1; k >= 0; k--) {
        const oid = oldestFirst[k] as string
        if ((times[k] as number) * 1000 < since) {
          if (++oldRun >= OLD_RUN_LIMIT) break
          continue
        }
        oldRun = 0
        const entry = await entryFromCommit(store, oid)
        if (!touches(entry, current)) continue
        found.push(toSummary(entry))
        current = nameBefore(entry, current)
      }
      return found
    },
  }
}
