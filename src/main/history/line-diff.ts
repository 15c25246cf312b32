/**
 * A line diff that makes the same choices as git's own (xdiff's Myers algorithm with its
 * default options, as `git blame` and `git diff` run it), so that line provenance computed
 * here agrees with `git blame` line for line. Where several smallest diffs exist (moved or
 * repeated lines), git's choice is the one taken: the same trimming of the common tail,
 * the same discarding of lines the other side lacks, the same middle-snake search with
 * its cost limits, and the same sliding of change groups. Git's indent heuristic, which
 * only moves a group among identical lines, is not applied (see docs/history.md).
 *
 * Pure: bytes in, hunks out. Lines are compared byte for byte, newline included, so a last
 * line without a newline differs from the same text with one (as in git).
 */

/** A run of changed lines: `oldCount` lines at `oldStart` became `newCount` at `newStart`. */
export interface Hunk {
  /** 0-based line index in the old text. */
  readonly oldStart: number
  readonly oldCount: number
  /** 0-based line index in the new text. */
  readonly newStart: number
  readonly newCount: number
}

/** Where each line of a text starts and ends (end excludes nothing: the newline is kept). */
export interface Lines {
  readonly bytes: Uint8Array
  /** `starts[i]` is line i's first byte; `starts[count]` is the end of the last line. */
  readonly starts: Uint32Array
  readonly count: number
}

const NEWLINE = 0x0a

/** Splits `bytes` into lines, each with its newline (the last may lack one). */
export function splitLines(bytes: Uint8Array): Lines {
  const found: number[] = [0]
  let at = 0
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, at)
    if (newline < 0) break
    at = newline + 1
    found.push(at)
  }
  if (at < bytes.length) found.push(bytes.length)
  return { bytes, starts: Uint32Array.from(found), count: found.length - 1 }
}

// Git's constants: a line matching this many others counts as "common" when discarding;
// the middle snake's search gives up past a cost and looks for long snakes past another.
const MAX_EQUAL_LIMIT = 1024
const SIMILAR_SCAN_WINDOW = 100
const KEEP_DISCARD_RUN = 4
const MAX_COST_MIN = 256
const HEURISTIC_MIN_COST = 256
const SNAKE_COUNT = 20
const HEURISTIC_FACTOR = 4
const LINE_MAX = 0x7fffffff
const TAIL_BLOCK = 1024

const DISCARD = 0
const KEEP = 1
const INVESTIGATE = 2

/** Git's integer square root estimate: 2^ceil(bits/2). */
function roughSqrt(n: number): number {
  let root = 1
  for (let rest = n; rest > 0; rest = Math.floor(rest / 4)) root *= 2
  return root
}

/**
 * How many bytes at the end of both texts can be left out of the diff: whole 1 KiB blocks
 * that are equal, minus the part up to the first line end inside them (git does this before
 * diffing when no context is wanted, and it changes which lines the diff can slide over).
 */
function commonTail(a: Uint8Array, b: Uint8Array): number {
  const smaller = Math.min(a.length, b.length)
  let trimmed = 0
  while (trimmed + TAIL_BLOCK <= smaller) {
    const aEnd = a.length - trimmed
    const bEnd = b.length - trimmed
    if (!equalBytes(a, aEnd - TAIL_BLOCK, b, bEnd - TAIL_BLOCK, TAIL_BLOCK)) break
    trimmed += TAIL_BLOCK
  }
  let recovered = 0
  const from = a.length - trimmed
  while (recovered < trimmed) {
    if (a[from + recovered++] === NEWLINE) break
  }
  return trimmed - recovered
}

function equalBytes(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number) {
  return bufferOf(a).compare(bufferOf(b), bAt, bAt + length, aAt, aAt + length) === 0
}

function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
}

/** One side of the diff: its lines, class ids for the ones in play, and which changed. */
interface Side {
  readonly buffer: Buffer
  readonly starts: Uint32Array
  /** Lines taking part (a common tail of whole lines is left out). */
  readonly count: number
  readonly hashes: Float64Array
  /** Class id of each line between the common head and tail (equal lines share an id). */
  readonly ids: Int32Array
  /** 1 for a changed line; one guard slot before and after (index i is `changed[i + 1]`). */
  readonly changed: Uint8Array
  /** Positions of the lines the search looks at (the others are settled already). */
  refs: Int32Array
}

function sideOf(lines: Lines, count: number): Side {
  return {
    buffer: bufferOf(lines.bytes),
    starts: lines.starts,
    count,
    hashes: hashesOf(lines),
    ids: new Int32Array(count).fill(-1),
    changed: new Uint8Array(count + 2),
    refs: new Int32Array(0),
  }
}

const lengthOf = (side: Side, i: number): number =>
  (side.starts[i + 1] as number) - (side.starts[i] as number)

/** True when line `i` of `x` and line `j` of `y` are the same bytes. */
function sameLine(x: Side, i: number, y: Side, j: number): boolean {
  const length = lengthOf(x, i)
  if (length !== lengthOf(y, j) || x.hashes[i] !== y.hashes[j]) return false
  const from = y.starts[j] as number
  const at = x.starts[i] as number
  return x.buffer.compare(y.buffer, from, from + length, at, at + length) === 0
}

/** How many lines (a whole number) `a` and `b` share at their start. */
function commonHeadLines(a: Side, b: Side): number {
  const limit = Math.min(a.count, b.count)
  // Bytes first (memcmp by halving), then the lines that lie entirely within them.
  const aEnd = a.starts[a.count] as number
  const bEnd = b.starts[b.count] as number
  let low = 0
  let high = Math.min(aEnd, bEnd)
  while (low < high) {
    const mid = (low + high + 1) >>> 1
    if (a.buffer.compare(b.buffer, 0, mid, 0, mid) === 0) low = mid
    else high = mid - 1
  }
  let lines = 0
  while (
    lines < limit &&
    (a.starts[lines + 1] as number) <= low &&
    (b.starts[lines + 1] as number) <= low
  ) {
    lines++
  }
  return lines
}

/** How many whole lines `a` and `b` share at their end, not overlapping the first `head`. */
function commonTailLines(a: Side, b: Side, head: number): number {
  const limit = Math.min(a.count, b.count) - head
  const aEnd = a.starts[a.count] as number
  const bEnd = b.starts[b.count] as number
  let low = 0
  let high = Math.min(aEnd, bEnd)
  while (low < high) {
    const mid = (low + high + 1) >>> 1
    if (a.buffer.compare(b.buffer, bEnd - mid, bEnd, aEnd - mid, aEnd) === 0) low = mid
    else high = mid - 1
  }
  let lines = 0
  while (
    lines < limit &&
    (a.starts[a.count - 1 - lines] as number) >= aEnd - low &&
    (b.starts[b.count - 1 - lines] as number) >= bEnd - low
  ) {
    lines++
  }
  return lines
}

const lineHashes = new WeakMap<Lines, Float64Array>()

/**
 * A 53-bit hash of each line (two 32-bit FNV-style hashes combined), computed once per text:
 * it lets lines be matched by number, and equal hashes are still confirmed byte for byte.
 */
function hashesOf(lines: Lines): Float64Array {
  const known = lineHashes.get(lines)
  if (known) return known
  const hashes = new Float64Array(lines.count)
  const { bytes, starts } = lines
  for (let i = 0; i < lines.count; i++) {
    let h1 = 0x811c9dc5
    let h2 = 0x2f0b3c5d
    const end = starts[i + 1] as number
    for (let k = starts[i] as number; k < end; k++) {
      const byte = bytes[k] as number
      h1 = Math.imul(h1 ^ byte, 0x01000193)
      h2 = Math.imul(h2 ^ byte, 0x5bd1e995) ^ (h2 >>> 13)
    }
    hashes[i] = (h1 >>> 0) * 0x200000 + ((h2 >>> 0) & 0x1fffff)
  }
  lineHashes.set(lines, hashes)
  return hashes
}

/**
 * Gives the lines between `head` and each side's tail class ids (equal lines share one),
 * and counts how often each class occurs in either whole side: git's discard rules need
 * those counts, and only lines whose hash matches a class are compared at all.
 */
function classify(one: Side, two: Side, head: number, tail: number): Array<[number, number]> {
  const byHash = new Map<number, number[]>()
  const counts: Array<[number, number]> = []
  const firsts: Array<[Side, number]> = []
  const find = (side: Side, i: number, create: boolean): number => {
    const hash = side.hashes[i] as number
    const ids = byHash.get(hash)
    for (const id of ids ?? []) {
      const [first, at] = firsts[id] as [Side, number]
      if (sameLine(side, i, first, at)) return id
    }
    if (!create) return -1
    const id = counts.length
    counts.push([0, 0])
    firsts.push([side, i])
    if (ids) ids.push(id)
    else byHash.set(hash, [id])
    return id
  }
  for (const side of [one, two]) {
    for (let i = head; i < side.count - tail; i++) side.ids[i] = find(side, i, true)
  }
  const sides = [one, two] as const
  for (let which = 0; which < 2; which++) {
    const side = sides[which] as Side
    const hashes = side.hashes
    for (let i = 0; i < side.count; i++) {
      if (!byHash.has(hashes[i] as number)) continue
      const id = i >= head && i < side.count - tail ? (side.ids[i] as number) : find(side, i, false)
      if (id >= 0) (counts[id] as [number, number])[which]++
    }
  }
  return counts
}

/**
 * The hunks turning `before` into `after`, in order. `before`/`after` may be given already
 * split (the blame walk splits each version once).
 */
export function diffLines(before: Lines | Uint8Array, after: Lines | Uint8Array): Hunk[] {
  const linesA = before instanceof Uint8Array ? splitLines(before) : before
  const linesB = after instanceof Uint8Array ? splitLines(after) : after
  const a = linesA.bytes
  const b = linesB.bytes
  if (a.length === b.length && equalBytes(a, 0, b, 0, a.length)) return []
  // The common tail git leaves out is whole lines: drop them by count.
  const tail = commonTail(a, b)
  const one = sideOf(linesA, linesBefore(linesA, a.length - tail))
  const two = sideOf(linesB, linesBefore(linesB, b.length - tail))

  // Equal lines at both ends are never part of a change.
  const head = commonHeadLines(one, two)
  const end = commonTailLines(one, two, head)
  const counts = classify(one, two, head, end)
  discardUnmatched(one, head, one.count - end, counts, 1)
  discardUnmatched(two, head, two.count - end, counts, 0)
  compare(one, two)
  compact(one, two)
  compact(two, one)
  return hunksOf(one, two)
}

/** The number of lines that end at or before byte `offset` (a line boundary). */
function linesBefore(lines: Lines, offset: number): number {
  let low = 0
  let high = lines.count
  while (low < high) {
    const mid = (low + high + 1) >>> 1
    if ((lines.starts[mid] as number) <= offset) low = mid
    else high = mid - 1
  }
  return low
}

/**
 * Marks as changed the lines of `side` (between `from` and `to`) that never occur on the
 * other side, and those occurring very often there when they sit among such lines; the
 * rest are what the search has to place.
 */
function discardUnmatched(
  side: Side,
  from: number,
  to: number,
  counts: ReadonlyArray<readonly [number, number]>,
  other: 0 | 1,
): void {
  const length = Math.max(0, to - from)
  const limit = Math.min(roughSqrt(side.count), MAX_EQUAL_LIMIT)
  const action = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    const matches = (counts[side.ids[from + i] as number] as readonly [number, number])[other]
    action[i] = matches === 0 ? DISCARD : matches < limit ? KEEP : INVESTIGATE
  }
  const refs: number[] = []
  for (let i = 0; i < length; i++) {
    let kind = action[i]
    if (kind === INVESTIGATE) kind = amongDiscarded(action, i, length) ? DISCARD : KEEP
    if (kind === KEEP) refs.push(from + i)
    else side.changed[from + i + 1] = 1
  }
  side.refs = Int32Array.from(refs)
}

/**
 * For a line with many matches: true when it sits in a run of lines without matches, on
 * both sides, and such lines outnumber the frequent ones enough (git's "multimatch" rule).
 */
function amongDiscarded(action: Uint8Array, i: number, length: number): boolean {
  const first = Math.max(0, i - SIMILAR_SCAN_WINDOW)
  const last = Math.min(length - 1, i + SIMILAR_SCAN_WINDOW)
  let discardedBefore = 0
  let frequentBefore = 1
  for (let r = i - 1; r >= first; r--) {
    if (action[r] === DISCARD) discardedBefore++
    else if (action[r] === INVESTIGATE) frequentBefore++
    else break
  }
  if (discardedBefore === 0) return false
  let discardedAfter = 0
  let frequentAfter = 1
  for (let r = i + 1; r <= last; r++) {
    if (action[r] === DISCARD) discardedAfter++
    else if (action[r] === INVESTIGATE) frequentAfter++
    else break
  }
  if (discardedAfter === 0) return false
  const discarded = discardedBefore + discardedAfter
  const frequent = frequentBefore + frequentAfter
  return frequent * KEEP_DISCARD_RUN < frequent + discarded
}

interface Split {
  i1: number
  i2: number
  minLow: boolean
  minHigh: boolean
}

/** Myers' divide and conquer over the lines left to place, marking the ones that differ. */
function compare(one: Side, two: Side): void {
  const h1 = new Int32Array(one.refs.length)
  const h2 = new Int32Array(two.refs.length)
  for (let i = 0; i < h1.length; i++) h1[i] = one.ids[one.refs[i] as number] as number
  for (let i = 0; i < h2.length; i++) h2[i] = two.ids[two.refs[i] as number] as number
  const diagonals = h1.length + h2.length + 3
  const base = h2.length + 1
  const forward = new Int32Array(diagonals)
  const backward = new Int32Array(diagonals)
  const maxCost = Math.max(roughSqrt(diagonals), MAX_COST_MIN)
  const search = { h1, h2, forward, backward, base, maxCost }

  const boxes: Array<[number, number, number, number, boolean]> = [
    [0, h1.length, 0, h2.length, false],
  ]
  while (boxes.length > 0) {
    const box = boxes.pop() as [number, number, number, number, boolean]
    let [off1, lim1, off2, lim2] = box
    const needMin = box[4]
    while (off1 < lim1 && off2 < lim2 && h1[off1] === h2[off2]) {
      off1++
      off2++
    }
    while (off1 < lim1 && off2 < lim2 && h1[lim1 - 1] === h2[lim2 - 1]) {
      lim1--
      lim2--
    }
    if (off1 === lim1) {
      for (let i = off2; i < lim2; i++) two.changed[(two.refs[i] as number) + 1] = 1
    } else if (off2 === lim2) {
      for (let i = off1; i < lim1; i++) one.changed[(one.refs[i] as number) + 1] = 1
    } else {
      const split = middleSnake(search, off1, lim1, off2, lim2, needMin)
      boxes.push([split.i1, lim1, split.i2, lim2, split.minHigh])
      boxes.push([off1, split.i1, off2, split.i2, split.minLow])
    }
  }
}

interface Search {
  readonly h1: Int32Array
  readonly h2: Int32Array
  readonly forward: Int32Array
  readonly backward: Int32Array
  readonly base: number
  readonly maxCost: number
}

/**
 * Finds where to cut the box: the middle of an optimal path (searched from both corners at
 * once), or, when that grows too costly, a point on a long diagonal or the furthest reach.
 */
function middleSnake(
  s: Search,
  off1: number,
  lim1: number,
  off2: number,
  lim2: number,
  needMin: boolean,
): Split {
  const { h1, h2, base } = s
  const kf = s.forward
  const kb = s.backward
  const dmin = off1 - lim2
  const dmax = lim1 - off2
  const fmid = off1 - off2
  const bmid = lim1 - lim2
  const odd = ((fmid - bmid) & 1) !== 0
  let fmin = fmid
  let fmax = fmid
  let bmin = bmid
  let bmax = bmid
  kf[base + fmid] = off1
  kb[base + bmid] = lim1

  for (let cost = 1; ; cost++) {
    let gotSnake = false
    if (fmin > dmin) kf[base + --fmin - 1] = -1
    else ++fmin
    if (fmax < dmax) kf[base + ++fmax + 1] = -1
    else --fmax

    for (let d = fmax; d >= fmin; d -= 2) {
      let i1 =
        (kf[base + d - 1] as number) >= (kf[base + d + 1] as number)
          ? (kf[base + d - 1] as number) + 1
          : (kf[base + d + 1] as number)
      const from = i1
      let i2 = i1 - d
      while (i1 < lim1 && i2 < lim2 && h1[i1] === h2[i2]) {
        i1++
        i2++
      }
      if (i1 - from > SNAKE_COUNT) gotSnake = true
      kf[base + d] = i1
      if (odd && bmin <= d && d <= bmax && (kb[base + d] as number) <= i1) {
        return { i1, i2, minLow: true, minHigh: true }
      }
    }

    if (bmin > dmin) kb[base + --bmin - 1] = LINE_MAX
    else ++bmin
    if (bmax < dmax) kb[base + ++bmax + 1] = LINE_MAX
    else --bmax

    for (let d = bmax; d >= bmin; d -= 2) {
      let i1 =
        (kb[base + d - 1] as number) < (kb[base + d + 1] as number)
          ? (kb[base + d - 1] as number)
          : (kb[base + d + 1] as number) - 1
      const from = i1
      let i2 = i1 - d
      while (i1 > off1 && i2 > off2 && h1[i1 - 1] === h2[i2 - 1]) {
        i1--
        i2--
      }
      if (from - i1 > SNAKE_COUNT) gotSnake = true
      kb[base + d] = i1
      if (!odd && fmin <= d && d <= fmax && i1 <= (kf[base + d] as number)) {
        return { i1, i2, minLow: true, minHigh: true }
      }
    }

    if (needMin) continue

    if (gotSnake && cost > HEURISTIC_MIN_COST) {
      let best = 0
      const split: Split = { i1: 0, i2: 0, minLow: true, minHigh: false }
      for (let d = fmax; d >= fmin; d -= 2) {
        const distance = d > fmid ? d - fmid : fmid - d
        const i1 = kf[base + d] as number
        const i2 = i1 - d
        const value = i1 - off1 + (i2 - off2) - distance
        if (
          value > HEURISTIC_FACTOR * cost &&
          value > best &&
          off1 + SNAKE_COUNT <= i1 &&
          i1 < lim1 &&
          off2 + SNAKE_COUNT <= i2 &&
          i2 < lim2
        ) {
          for (let k = 1; h1[i1 - k] === h2[i2 - k]; k++) {
            if (k === SNAKE_COUNT) {
              best = value
              split.i1 = i1
              split.i2 = i2
              break
            }
          }
        }
      }
      if (best > 0) return split

      best = 0
      const low: Split = { i1: 0, i2: 0, minLow: false, minHigh: true }
      for (let d = bmax; d >= bmin; d -= 2) {
        const distance = d > bmid ? d - bmid : bmid - d
        const i1 = kb[base + d] as number
        const i2 = i1 - d
        const value = lim1 - i1 + (lim2 - i2) - distance
        if (
          value > HEURISTIC_FACTOR * cost &&
          value > best &&
          off1 < i1 &&
          i1 <= lim1 - SNAKE_COUNT &&
          off2 < i2 &&
          i2 <= lim2 - SNAKE_COUNT
        ) {
          for (let k = 0; h1[i1 + k] === h2[i2 + k]; k++) {
            if (k === SNAKE_COUNT - 1) {
              best = value
              low.i1 = i1
              low.i2 = i2
              break
            }
          }
        }
      }
      if (best > 0) return low
    }

    if (cost >= s.maxCost) {
      let fbest = -1
      let fbest1 = -1
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = Math.min(kf[base + d] as number, lim1)
        let i2 = i1 - d
        if (lim2 < i2) {
          i1 = lim2 + d
          i2 = lim2
        }
        if (fbest < i1 + i2) {
          fbest = i1 + i2
          fbest1 = i1
        }
      }
      let bbest = LINE_MAX
      let bbest1 = LINE_MAX
      for (let d = bmax; d >= bmin; d -= 2) {
        let i1 = Math.max(off1, kb[base + d] as number)
        let i2 = i1 - d
        if (i2 < off2) {
          i1 = off2 + d
          i2 = off2
        }
        if (i1 + i2 < bbest) {
          bbest = i1 + i2
          bbest1 = i1
        }
      }
      if (lim1 + lim2 - bbest < fbest - (off1 + off2)) {
        return { i1: fbest1, i2: fbest - fbest1, minLow: true, minHigh: false }
      }
      return { i1: bbest1, i2: bbest - bbest1, minLow: false, minHigh: true }
    }
  }
}

/** A group of changed lines `[start, end)` (empty when start === end). */
interface Group {
  start: number
  end: number
}

const isChanged = (side: Side, i: number): boolean => side.changed[i + 1] === 1
const setChanged = (side: Side, i: number, value: boolean): void => {
  side.changed[i + 1] = value ? 1 : 0
}

function firstGroup(side: Side): Group {
  const group = { start: 0, end: 0 }
  while (isChanged(side, group.end)) group.end++
  return group
}

function nextGroup(side: Side, group: Group): boolean {
  if (group.end === side.count) return false
  group.start = group.end + 1
  group.end = group.start
  while (isChanged(side, group.end)) group.end++
  return true
}

function previousGroup(side: Side, group: Group): boolean {
  if (group.start === 0) return false
  group.end = group.start - 1
  group.start = group.end
  while (isChanged(side, group.start - 1)) group.start--
  return true
}

function slideDown(side: Side, group: Group): boolean {
  if (group.end < side.count && sameLine(side, group.start, side, group.end)) {
    setChanged(side, group.start++, false)
    setChanged(side, group.end++, true)
    while (isChanged(side, group.end)) group.end++
    return true
  }
  return false
}

function slideUp(side: Side, group: Group): boolean {
  if (group.start > 0 && sameLine(side, group.start - 1, side, group.end - 1)) {
    setChanged(side, --group.start, true)
    setChanged(side, --group.end, false)
    while (isChanged(side, group.start - 1)) group.start--
    return true
  }
  return false
}

/**
 * Slides each group of changed lines over equal neighbours: as far down as it goes, unless
 * it can line up with a change on the other side (then an edit reads as one change).
 */
function compact(side: Side, other: Side): void {
  const group = firstGroup(side)
  const otherGroup = firstGroup(other)
  for (;;) {
    if (group.end !== group.start) {
      let size: number
      let earliestEnd: number
      let matchingEnd: number
      do {
        size = group.end - group.start
        matchingEnd = -1
        while (slideUp(side, group)) previousGroup(other, otherGroup)
        earliestEnd = group.end
        if (otherGroup.end > otherGroup.start) matchingEnd = group.end
        while (slideDown(side, group)) {
          nextGroup(other, otherGroup)
          if (otherGroup.end > otherGroup.start) matchingEnd = group.end
        }
      } while (size !== group.end - group.start)
      if (group.end !== earliestEnd && matchingEnd !== -1) {
        while (otherGroup.end === otherGroup.start) {
          slideUp(side, group)
          previousGroup(other, otherGroup)
        }
      }
    }
    if (!nextGroup(side, group)) break
    nextGroup(other, otherGroup)
  }
}

function hunksOf(one: Side, two: Side): Hunk[] {
  const hunks: Hunk[] = []
  let i1 = one.count
  let i2 = two.count
  while (i1 >= 0 || i2 >= 0) {
    if (isChanged(one, i1 - 1) || isChanged(two, i2 - 1)) {
      const end1 = i1
      const end2 = i2
      while (isChanged(one, i1 - 1)) i1--
      while (isChanged(two, i2 - 1)) i2--
      hunks.push({ oldStart: i1, oldCount: end1 - i1, newStart: i2, newCount: end2 - i2 })
    }
    i1--
    i2--
  }
  return hunks.reverse()
}
