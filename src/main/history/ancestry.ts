/**
 * The shape of the history as readers walk it: where a commit sits in the side index, its
 * parents, the commit that last changed a file along a line of first parents, and the order
 * the timeline shows commits in. Read side only. Blame, history search, snapshots and the
 * timeline reach the index through these few functions, so a new index format changes them
 * here alone.
 *
 * The index holds every commit of `main`, oldest first, each after all of its parents. A
 * merge commit's `files` are what it changed against its first parent; a commit that did not
 * change a file has it exactly as its first parent had it, so following first parents from a
 * commit finds the change that produced the file's version there (what git calls following
 * a TREESAME parent).
 */
import type { IndexEntry } from './side-index'

/** Positions in the index, newest first in the timeline's order. */
export interface NewestFirst {
  readonly length: number
  /** The index position of the `k`-th commit shown (0: the newest). */
  at(k: number): number
  /** Where the commit at index position `position` is shown (-1 when it is not). */
  indexOf(position: number): number
}

export interface Ancestry {
  /** Every commit, oldest first (the side index). */
  entries(): ReadonlyArray<IndexEntry>
  /**
   * Changes whenever the index was replaced rather than grown (a sync that switched to
   * another history): positions kept from before mean nothing after it.
   */
  generation(): number
  /** Where commit `oid` is in the index, looking below `before` only (default: all); -1. */
  positionOf(oid: string, before?: number): number
  /** The positions of `oids`, in one pass back from the newest commit. */
  positionsOf(oids: ReadonlySet<string>): Map<string, number>
  /** The position of a commit's first parent (-1 for a root commit). */
  firstParentOf(position: number): number
  /** The positions of a commit's parents, first parent first (none for a root commit). */
  parentPositions(position: number): number[]
  /**
   * The newest commit at or before `from`, along first parents, that changed `path` (a file,
   * or anything under a folder): the commit that produced the version `from` has. -1: none.
   */
  producerOf(path: string, from: number): number
  /** The timeline's order (see `timelineOrder`). */
  newestFirst(): NewestFirst
}

/** The history's shape over an index that grows by appending (and is sometimes replaced). */
export function createAncestry(entriesOf: () => ReadonlyArray<IndexEntry>): Ancestry {
  // Positions found so far; each is checked against the index before it is trusted.
  const positions = new Map<string, number>()
  let generation = 0
  // What the index looked like when last seen: it only grows, unless it was replaced.
  let seenLength = 0
  let seenLast: string | null = null
  let order: { readonly length: number; readonly positions: Int32Array } | null = null

  function current(): ReadonlyArray<IndexEntry> {
    const entries = entriesOf()
    const last = seenLength > 0 ? entries[seenLength - 1]?.oid : undefined
    if (seenLength > 0 && (entries.length < seenLength || last !== seenLast)) {
      generation++
      positions.clear()
      order = null
    }
    seenLength = entries.length
    seenLast = entries.at(-1)?.oid ?? null
    return entries
  }

  function positionOf(oid: string, before?: number): number {
    const entries = current()
    const top = Math.min(before ?? entries.length, entries.length) - 1
    const known = positions.get(oid)
    if (known !== undefined && known <= top && entries[known]?.oid === oid) return known
    for (let i = top; i >= 0; i--) {
      if ((entries[i] as IndexEntry).oid !== oid) continue
      positions.set(oid, i)
      return i
    }
    return -1
  }

  function positionsOf(oids: ReadonlySet<string>): Map<string, number> {
    const entries = current()
    const found = new Map<string, number>()
    const wanted = new Set<string>()
    for (const oid of oids) {
      const known = positions.get(oid)
      if (known !== undefined && entries[known]?.oid === oid) found.set(oid, known)
      else wanted.add(oid)
    }
    for (let i = entries.length - 1; i >= 0 && wanted.size > 0; i--) {
      const oid = (entries[i] as IndexEntry).oid
      if (!wanted.delete(oid)) continue
      found.set(oid, i)
      positions.set(oid, i)
    }
    return found
  }

  /** The first parent's position: usually the entry just before (a line of commits). */
  function firstParent(entries: ReadonlyArray<IndexEntry>, position: number): number {
    const parent = entries[position]?.parent
    if (!parent) return -1
    if (entries[position - 1]?.oid === parent) return position - 1
    return positionOf(parent, position)
  }

  function parentPositions(position: number): number[] {
    const entries = current()
    const entry = entries[position]
    if (!entry?.parent) return []
    const result = [firstParent(entries, position)]
    for (const other of entry.otherParents ?? []) result.push(positionOf(other, position))
    return result.filter((p) => p >= 0)
  }

  function producerOf(path: string, from: number): number {
    const entries = current()
    const prefix = `${path}/`
    let position = Math.min(from, entries.length - 1)
    // `touches`, inlined: this loop may cross a whole 100,000-commit index.
    while (position >= 0) {
      const files = (entries[position] as IndexEntry).files
      for (let k = 0; k < files.length; k++) {
        const file = files[k] as string
        if (file === path || file.startsWith(prefix)) return position
      }
      position = firstParent(entries, position)
    }
    return -1
  }

  function newestFirst(): NewestFirst {
    const entries = current()
    if (order && order.length < entries.length) order = grown(entries, order)
    if (!order || order.length !== entries.length) {
      order = { length: entries.length, positions: timelineOrder(entries) }
    }
    const { positions: oldestLast } = order
    const length = entries.length
    // Where each position is shown, worked out the first time someone asks.
    let shownAt: Int32Array | null = null
    return {
      length,
      at: (k) => oldestLast[length - 1 - k] as number,
      indexOf(position) {
        if (!shownAt) {
          shownAt = new Int32Array(length).fill(-1)
          for (let i = 0; i < length; i++) shownAt[oldestLast[i] as number] = length - 1 - i
        }
        return shownAt[position] ?? -1
      },
    }
  }

  /**
   * The order after commits were appended: each new commit whose only parent is the newest
   * before it goes on top as it is; anything else (a merge) orders the whole history again.
   */
  function grown(
    entries: ReadonlyArray<IndexEntry>,
    known: { readonly length: number; readonly positions: Int32Array },
  ): { readonly length: number; readonly positions: Int32Array } | null {
    for (let i = known.length; i < entries.length; i++) {
      const entry = entries[i] as IndexEntry
      if (entry.otherParents?.length || entry.parent !== entries[i - 1]?.oid) return null
    }
    const positions = new Int32Array(entries.length)
    positions.set(known.positions)
    for (let i = known.length; i < entries.length; i++) positions[i] = i
    return { length: entries.length, positions }
  }

  return {
    entries: current,
    generation: () => {
      current()
      return generation
    },
    positionOf,
    positionsOf,
    firstParentOf: (position) => firstParent(current(), position),
    parentPositions,
    producerOf,
    newestFirst,
  }
}

/**
 * The order the timeline shows commits in, oldest last (position `i` of the result is shown
 * `length - 1 - i` rows from the top): newest first by time, but never a commit below one of
 * its parents, like `git log --date-order`. A line of commits keeps the index's order; commits
 * another machine made interleave by time with this one's, so days are not split in two.
 */
export function timelineOrder(entries: ReadonlyArray<IndexEntry>): Int32Array {
  const length = entries.length
  const result = new Int32Array(length)
  if (!entries.some((entry) => entry.otherParents?.length)) {
    for (let i = 0; i < length; i++) result[i] = i
    return result
  }
  const byOid = new Map<string, number>()
  entries.forEach((entry, i) => byOid.set(entry.oid, i))
  const parents = entries.map((entry) =>
    [entry.parent, ...(entry.otherParents ?? [])]
      .map((oid) => (oid ? (byOid.get(oid) ?? -1) : -1))
      .filter((p) => p >= 0),
  )
  const children = new Int32Array(length)
  for (const list of parents) for (const p of list) children[p] = (children[p] as number) + 1

  // A max-heap of the commits whose children are all shown: the newest first, and of two
  // made in the same second, the later in the index (a child before its parent).
  const heap: number[] = []
  const before = (a: number, b: number) => {
    const ta = (entries[a] as IndexEntry).time
    const tb = (entries[b] as IndexEntry).time
    return ta !== tb ? ta > tb : a > b
  }
  const push = (p: number) => {
    heap.push(p)
    let i = heap.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if (!before(heap[i] as number, heap[up] as number)) break
      ;[heap[i], heap[up]] = [heap[up] as number, heap[i] as number]
      i = up
    }
  }
  const pop = (): number => {
    const top = heap[0] as number
    const last = heap.pop() as number
    if (heap.length > 0) {
      heap[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = i
        if (l < heap.length && before(heap[l] as number, heap[best] as number)) best = l
        if (r < heap.length && before(heap[r] as number, heap[best] as number)) best = r
        if (best === i) break
        ;[heap[i], heap[best]] = [heap[best] as number, heap[i] as number]
        i = best
      }
    }
    return top
  }

  for (let i = 0; i < length; i++) if (children[i] === 0) push(i)
  let shown = 0
  while (heap.length > 0) {
    const p = pop()
    result[length - 1 - shown++] = p
    for (const parent of parents[p] as number[]) {
      children[parent] = (children[parent] as number) - 1
      if (children[parent] === 0) push(parent)
    }
  }
  return result
}
