/**
 * The shape of the history as readers walk it: where a commit sits in the side index, its
 * parents, the commit that last changed a file along a line of first parents, and the order
 * the timeline shows commits in. Read side only. Blame, history search, snapshots and the
 * timeline reach the index through these few functions, so a new index format changes them
 * here alone.
 *
 * The side index (index-file.ts) holds every commit of `main`, oldest first, each after all of
 * its parents; positions, first parents, times and changed files are read from its fixed
 * records, and an entry's details (other parents) only for a merge. A
 * merge commit's `files` are what it changed against its first parent; a commit that did not
 * change a file has it exactly as its first parent had it, so following first parents from a
 * commit finds the change that produced the file's version there (what git calls following
 * a TREESAME parent).
 *
 * Every walk here goes down positions: a record naming itself or a later entry as its first
 * parent (a damaged or crafted side file, read before the idle check has gone over it) is
 * damage (`IndexDamagedError`: the read says the index is rebuilt), never a walk in a circle.
 */
import { IndexDamagedError, type IndexFile } from './index-file'
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
  /** The side index as it is now (replaced when rebuilt or switched). */
  index(): IndexFile
  /** The entry at `position` (its details read from disk the first time). */
  entry(position: number): IndexEntry
  /** The commit id at `position`. */
  oidAt(position: number): string
  /**
   * Changes whenever the index was replaced by another history rather than grown (a sync
   * that switched to another history): positions kept from before mean nothing after it.
   */
  generation(): number
  /** Where commit `oid` is in the index, looking below `before` only (default: all); -1. */
  positionOf(oid: string, before?: number): number
  /** The positions of `oids` that are in the index. */
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

/** Most path matchers kept (each is a mark per name of the index). */
const MATCHERS = 64

/** The history's shape over an index that grows by appending (and is sometimes replaced). */
export function createAncestry(indexOf: () => IndexFile): Ancestry {
  let generation = 0
  // What the index looked like when last seen: it only grows, unless it was replaced.
  let seen: IndexFile | null = null
  let seenSize = 0
  let seenLast: string | null = null
  let order: { readonly length: number; readonly positions: Int32Array } | null = null
  // Path matchers, for the index as it was at `matchersFor` (an append may add names).
  const matchers = new Map<string, (i: number) => boolean>()
  let matchersFor: { index: IndexFile; size: number } | null = null

  function current(): IndexFile {
    const index = indexOf()
    if (index === seen && index.size >= seenSize) {
      if (index.size !== seenSize) {
        seenSize = index.size
        seenLast = index.oidAt(seenSize - 1)
      }
      return index
    }
    // Another index object (rebuilt, or switched) or a shorter one: the same history only
    // when it still holds the newest commit seen, where it was.
    if (
      seenSize > 0 &&
      (index.size < seenSize || index.oidAt(seenSize - 1) !== (seenLast as string))
    ) {
      generation++
      order = null
    }
    seen = index
    seenSize = index.size
    seenLast = seenSize > 0 ? index.oidAt(seenSize - 1) : null
    return index
  }

  function positionOf(oid: string, before?: number): number {
    const index = current()
    const position = index.positionOf(oid)
    return position >= 0 && position < (before ?? index.size) ? position : -1
  }

  function positionsOf(oids: ReadonlySet<string>): Map<string, number> {
    const found = new Map<string, number>()
    for (const oid of oids) {
      const position = positionOf(oid)
      if (position >= 0) found.set(oid, position)
    }
    return found
  }

  function parentPositions(position: number): number[] {
    const index = current()
    const first = parentOf(index, position)
    if (first < 0) return []
    const result = [first]
    if (index.isMergeAt(position)) {
      for (const other of index.at(position).otherParents ?? []) {
        result.push(positionOf(other, position))
      }
    }
    return result.filter((p) => p >= 0)
  }

  function matcherFor(index: IndexFile, path: string): (i: number) => boolean {
    if (matchersFor?.index !== index || matchersFor.size !== index.size) {
      matchers.clear()
      matchersFor = { index, size: index.size }
    }
    let matches = matchers.get(path)
    if (!matches) {
      if (matchers.size >= MATCHERS) matchers.delete(matchers.keys().next().value as string)
      matches = index.pathMatcher(path)
      matchers.set(path, matches)
    }
    return matches
  }

  function producerOf(path: string, from: number): number {
    const index = current()
    const matches = matcherFor(index, path)
    // This loop may cross a whole 100,000-commit index: file ids and parent positions only.
    for (let position = Math.min(from, index.size - 1); position >= 0;) {
      if (matches(position)) return position
      position = parentOf(index, position)
    }
    return -1
  }

  function newestFirst(): NewestFirst {
    const index = current()
    const size = index.size
    if (order && order.length < size) order = grown(index, order)
    if (!order || order.length !== size) {
      order = { length: size, positions: timelineOrder(index) }
    }
    const { positions: oldestLast } = order
    // Where each position is shown, worked out the first time someone asks.
    let shownAt: Int32Array | null = null
    return {
      length: size,
      at: (k) => oldestLast[size - 1 - k] as number,
      indexOf(position) {
        if (!shownAt) {
          shownAt = new Int32Array(size).fill(-1)
          for (let i = 0; i < size; i++) shownAt[oldestLast[i] as number] = size - 1 - i
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
    index: IndexFile,
    known: { readonly length: number; readonly positions: Int32Array },
  ): { readonly length: number; readonly positions: Int32Array } | null {
    const size = index.size
    for (let i = known.length; i < size; i++) {
      if (index.isMergeAt(i) || index.parentAt(i) !== i - 1) return null
    }
    const positions = new Int32Array(size)
    positions.set(known.positions)
    for (let i = known.length; i < size; i++) positions[i] = i
    return { length: size, positions }
  }

  return {
    index: current,
    entry: (position) => current().at(position),
    oidAt: (position) => current().oidAt(position),
    generation: () => {
      current()
      return generation
    },
    positionOf,
    positionsOf,
    firstParentOf: (position) => parentOf(current(), position),
    parentPositions,
    producerOf,
    newestFirst,
  }
}

/**
 * The first parent's position of the entry at `position` (-1 for a root commit). Open checks
 * only the newest record; the rest are checked when idle: until then a record may name a
 * parent that is not older than itself, which is damage.
 */
function parentOf(index: Pick<IndexFile, 'parentAt'>, position: number): number {
  const parent = index.parentAt(position)
  if (parent >= position) {
    throw new IndexDamagedError(`index entry ${position} does not follow its parent`)
  }
  return parent
}

/**
 * The order the timeline shows commits in, oldest last (position `i` of the result is shown
 * `length - 1 - i` rows from the top): newest first by time, but never a commit below one of
 * its parents, like `git log --date-order`. A line of commits keeps the index's order; commits
 * another machine made interleave by time with this one's, so days are not split in two.
 */
export function timelineOrder(index: IndexFile): Int32Array {
  const length = index.size
  const result = new Int32Array(length)
  let merges = false
  for (let i = 0; i < length && !merges; i++) merges = index.isMergeAt(i)
  if (!merges) {
    for (let i = 0; i < length; i++) result[i] = i
    return result
  }
  const parents: number[][] = []
  for (let i = 0; i < length; i++) {
    const first = parentOf(index, i)
    const list = first >= 0 ? [first] : []
    if (index.isMergeAt(i)) {
      for (const other of index.at(i).otherParents ?? []) {
        const p = index.positionOf(other)
        // Not older than the merge: damage, as for a first parent (the idle check's rule).
        if (p >= i) throw new IndexDamagedError(`index entry ${i} does not follow its parents`)
        if (p >= 0) list.push(p)
      }
    }
    parents.push(list)
  }
  return dateOrder(
    length,
    (i) => parents[i] as number[],
    (a, b) => {
      const ta = index.timeAt(a)
      const tb = index.timeAt(b)
      return ta !== tb ? ta > tb : a > b
    },
  )
}

/**
 * The timeline's ordering of any `length` commits numbered 0..length-1 (`timelineOrder` on the
 * index; `changes-in-commits.ts` on commits read while it is rebuilt), oldest last: a commit
 * only once all of its children among them are out, and of those ready, the one `before` puts
 * first (the newest, then the later in the index). `parentsOf(i)` lists the parents of `i`
 * among them. This is `git log --date-order`.
 */
export function dateOrder(
  length: number,
  parentsOf: (i: number) => ReadonlyArray<number>,
  before: (a: number, b: number) => boolean,
): Int32Array {
  const result = new Int32Array(length)
  const children = new Int32Array(length)
  for (let i = 0; i < length; i++) {
    for (const p of parentsOf(i)) children[p] = (children[p] as number) + 1
  }

  // A max-heap of the commits whose children are all shown.
  const heap: number[] = []
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
    for (const parent of parentsOf(p)) {
      children[parent] = (children[parent] as number) - 1
      if (children[parent] === 0) push(parent)
    }
  }
  return result
}
