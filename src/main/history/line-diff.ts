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
  /** Each line's id in `table`: two lines have the same id exactly when their bytes are equal. */
  readonly ids?: Int32Array
  readonly table?: LineTable
  /**
   * Set by `splitLike`: how many bytes at the end this text shares with `sharedWith` (the
   * bytes of the text it was split like), when that is the whole of their common end (the
   * search for it stopped at a difference, not at its limit). `diffLines` of the two then
   * needs no search of its own for it. Only the bytes are named, not their `Lines`, so that
   * a walk's versions do not hold one another in a chain.
   */
  readonly sharedEnd?: number
  readonly sharedWith?: Uint8Array
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

/**
 * Numbers distinct lines: texts split by one table can be compared line by line as
 * integers. Splitting a text `like` another one (the next or previous version of a file)
 * reuses that one's numbers for the lines both share at their start and end, found by
 * comparing bytes, so only the lines in between are looked up: walking a file's history
 * costs about the changed lines, not the whole file each time.
 */
export class LineTable {
  private readonly ids = new Map<string, number>()

  /** How many distinct lines have an id. */
  get size(): number {
    return this.ids.size
  }

  /** Splits `bytes` into lines, each with its id. */
  split(bytes: Uint8Array): Lines {
    const { starts, count } = splitLines(bytes)
    const ids = new Int32Array(count)
    const buffer = bufferOf(bytes)
    for (let i = 0; i < count; i++)
      ids[i] = this.idOf(buffer, starts[i] as number, starts[i + 1] as number)
    return { bytes, starts, count, ids, table: this }
  }

  /**
   * Splits `bytes` as `split` does, taking from `like` (split by this table) the lines both
   * texts have at their start and at their end.
   */
  splitLike(bytes: Uint8Array, like: Lines): Lines {
    if (like.table !== this || !like.ids) return this.split(bytes)
    const mine = bufferOf(bytes)
    const theirs = bufferOf(like.bytes)
    const size = mine.length
    const delta = size - theirs.length
    // Whole lines of `like` inside the common start are lines of this text too.
    let head = linesBefore(like, commonPrefix(mine, theirs))
    // Unless both texts end there, a last line without a newline goes on in this text.
    const last = like.starts[like.count] as number
    if (head === like.count && head > 0 && theirs[last - 1] !== NEWLINE && size !== last) head--
    const middle = like.starts[head] as number
    // The common end, not reaching back into those lines on either side.
    const suffix = commonSuffix(mine, theirs, Math.min(size, theirs.length) - middle)
    let tail = firstLineFrom(like, theirs.length - suffix)
    // A line of `like` starting exactly where the common end starts is a line here only if
    // a line ends there in this text too.
    if (tail < like.count) {
      const at = (like.starts[tail] as number) + delta
      if (at > middle && mine[at - 1] !== NEWLINE) tail++
    }
    const end = (like.starts[tail] as number) + delta
    const found: number[] = []
    for (let at = middle; at < end;) {
      const newline = mine.indexOf(NEWLINE, at)
      const next = newline < 0 || newline >= end ? end : newline + 1
      found.push(at)
      at = next
    }
    const count = head + found.length + like.count - tail
    const starts = new Uint32Array(count + 1)
    const ids = new Int32Array(count)
    starts.set(like.starts.subarray(0, head))
    ids.set(like.ids.subarray(0, head))
    for (let i = 0; i < found.length; i++) {
      const start = found[i] as number
      starts[head + i] = start
      ids[head + i] = this.idOf(mine, start, (found[i + 1] as number | undefined) ?? end)
    }
    const after = head + found.length
    for (let i = tail; i <= like.count; i++) {
      starts[after + i - tail] = (like.starts[i] as number) + delta
    }
    ids.set(like.ids.subarray(tail), after)
    const exact = suffix < Math.min(size, theirs.length) - middle
    return {
      bytes,
      starts,
      count,
      ids,
      table: this,
      ...(exact ? { sharedEnd: suffix, sharedWith: like.bytes } : {}),
    }
  }

  private idOf(buffer: Buffer, start: number, end: number): number {
    const key = buffer.toString('latin1', start, end)
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.ids.size
      this.ids.set(key, id)
    }
    return id
  }
}

/**
 * A difference narrowed down to this many bytes is found by looking at them one by one: each
 * native comparison costs a call (about 0.1 µs), as much as looking at some 30 bytes here.
 */
const SCAN_BYTES = 32

/** Length of the common start of `a` and `b`, in bytes (compared natively, block by block). */
function commonPrefix(a: Buffer, b: Buffer): number {
  const limit = Math.min(a.length, b.length)
  let at = 0
  let block = 256
  while (at < limit) {
    const size = Math.min(block, limit - at)
    if (a.compare(b, at, at + size, at, at + size) !== 0) {
      // The first difference is inside this block: halve it down, comparing only the part
      // not known equal yet (bytes `at…low` are equal, the difference is before `high`).
      let low = at
      let high = at + size
      while (high - low > SCAN_BYTES) {
        const mid = (low + high) >>> 1
        if (a.compare(b, low, mid, low, mid) === 0) low = mid
        else high = mid
      }
      while (low < high && a[low] === b[low]) low++
      return low
    }
    at += size
    block *= 2
  }
  return limit
}

/** Length of the common end of `a` and `b`, in bytes, at most `limit`. */
function commonSuffix(a: Buffer, b: Buffer, limit: number): number {
  let done = 0
  let block = 256
  while (done < limit) {
    const size = Math.min(block, limit - done)
    const aEnd = a.length - done
    const bEnd = b.length - done
    if (a.compare(b, bEnd - size, bEnd, aEnd - size, aEnd) !== 0) {
      // As above, from the end: the last `low` bytes of the block are equal.
      let low = 0
      let high = size
      while (high - low > SCAN_BYTES) {
        const mid = (low + high) >>> 1
        if (a.compare(b, bEnd - mid, bEnd - low, aEnd - mid, aEnd - low) === 0) low = mid
        else high = mid
      }
      while (low < high && a[aEnd - low - 1] === b[bEnd - low - 1]) low++
      return done + low
    }
    done += size
    block *= 2
  }
  return limit
}

/** The first line starting at or after byte `offset` (`count` when none does). */
function firstLineFrom(lines: Lines, offset: number): number {
  let low = 0
  let high = lines.count
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((lines.starts[mid] as number) < offset) low = mid + 1
    else high = mid
  }
  return low
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
function commonTail(a: Uint8Array, b: Uint8Array, sharedEnd?: number): number {
  let trimmed = 0
  if (sharedEnd !== undefined) {
    // The blocks compared below are equal exactly while they lie within the shared end.
    trimmed = sharedEnd - (sharedEnd % TAIL_BLOCK)
  } else {
    const smaller = Math.min(a.length, b.length)
    while (trimmed + TAIL_BLOCK <= smaller) {
      const aEnd = a.length - trimmed
      const bEnd = b.length - trimmed
      if (!equalBytes(a, aEnd - TAIL_BLOCK, b, bEnd - TAIL_BLOCK, TAIL_BLOCK)) break
      trimmed += TAIL_BLOCK
    }
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
  /** Lines taking part (a common tail of whole lines is left out). */
  readonly count: number
  /** Each line's id in the table both sides were split by (equal lines, equal ids). */
  readonly lines: Int32Array
  /** Class id of each line between the common head and tail (equal lines share an id). */
  readonly ids: Int32Array
  /** 1 for a changed line; one guard slot before and after (index i is `changed[i + 1]`). */
  readonly changed: Uint8Array
  /** Positions of the lines the search looks at (the others are settled already). */
  refs: Int32Array
}

/**
 * Each side's per-line arrays, kept between calls (a call runs start to end without a pause,
 * and its hunks keep none of them): the blame walk diffs a thousand versions of a file in a
 * row, and two new arrays per side per diff were a cost of their own (allocation, and the
 * collector's work after it).
 */
const scratch = [
  { ids: new Int32Array(1024), changed: new Uint8Array(1026) },
  { ids: new Int32Array(1024), changed: new Uint8Array(1026) },
]

/**
 * The most lines the kept arrays grow to (320 KiB a side): an older version of a file can be
 * any size (only the version traced is bounded, BLAME_MAX_LINES), and one diff of a huge one
 * must not leave its arrays held for the rest of the session. Longer texts get arrays of
 * their own.
 */
const SCRATCH_MAX_LINES = 1 << 16

function sideOf(lines: Lines, count: number, which: 0 | 1): Side {
  const kept = scratch[which] as { ids: Int32Array; changed: Uint8Array }
  if (kept.ids.length < count && count <= SCRATCH_MAX_LINES) {
    kept.ids = new Int32Array(Math.min(Math.max(count, kept.ids.length * 2), SCRATCH_MAX_LINES))
    kept.changed = new Uint8Array(kept.ids.length + 2)
  }
  const fits = count <= kept.ids.length
  return {
    count,
    lines: lines.ids as Int32Array,
    ids: fits ? kept.ids.subarray(0, count).fill(-1) : new Int32Array(count).fill(-1),
    changed: fits ? kept.changed.subarray(0, count + 2).fill(0) : new Uint8Array(count + 2),
    refs: new Int32Array(0),
  }
}

/** True when line `i` of `x` and line `j` of `y` are the same bytes. */
const sameLine = (x: Side, i: number, y: Side, j: number): boolean => x.lines[i] === y.lines[j]

/** How many lines `a` and `b` share at their start. */
function commonHeadLines(a: Side, b: Side): number {
  const limit = Math.min(a.count, b.count)
  let lines = 0
  while (lines < limit && a.lines[lines] === b.lines[lines]) lines++
  return lines
}

/** How many lines `a` and `b` share at their end, not overlapping the first `head`. */
function commonTailLines(a: Side, b: Side, head: number): number {
  const limit = Math.min(a.count, b.count) - head
  let lines = 0
  while (lines < limit && a.lines[a.count - 1 - lines] === b.lines[b.count - 1 - lines]) lines++
  return lines
}

/** For each table line id, 1 + its class id during one `classify` (0: none); kept zeroed. */
let classOf = new Int32Array(1024)

/**
 * Gives the lines between `head` and each side's tail class ids (equal lines share one),
 * and counts how often each class occurs in either whole side (`counts[2 * id + side]`):
 * git's discard rules need those counts.
 */
function classify(one: Side, two: Side, head: number, tail: number, tableSize: number): Int32Array {
  if (classOf.length < tableSize) classOf = new Int32Array(Math.max(tableSize, classOf.length * 2))
  const table = classOf
  let classes = 0
  for (const side of [one, two]) {
    for (let i = head; i < side.count - tail; i++) {
      const line = side.lines[i] as number
      let id = table[line] as number
      if (id === 0) id = table[line] = ++classes
      side.ids[i] = id - 1
    }
  }
  const counts = new Int32Array(classes * 2)
  for (let which = 0; which < 2; which++) {
    const side = which === 0 ? one : two
    for (let i = 0; i < side.count; i++) {
      const id = table[side.lines[i] as number] as number
      if (id !== 0) (counts[2 * (id - 1) + which] as number)++
    }
  }
  for (const side of [one, two]) {
    for (let i = head; i < side.count - tail; i++) table[side.lines[i] as number] = 0
  }
  return counts
}

/**
 * The hunks turning `before` into `after`, in order. `before`/`after` may be given already
 * split (the blame walk splits each version once, both by one `LineTable`).
 */
export function diffLines(before: Lines | Uint8Array, after: Lines | Uint8Array): Hunk[] {
  let linesA = before instanceof Uint8Array ? null : before
  let linesB = after instanceof Uint8Array ? null : after
  const a = linesA?.bytes ?? (before as Uint8Array)
  const b = linesB?.bytes ?? (after as Uint8Array)
  if (a.length === b.length && equalBytes(a, 0, b, 0, a.length)) return []
  // Lines are compared by id: both sides need ids from one table.
  if (!linesA?.table || linesA.table !== linesB?.table) {
    const table = new LineTable()
    linesA = table.split(a)
    linesB = table.splitLike(b, linesA)
  }
  const table = linesA.table as LineTable
  // The common tail git leaves out is whole lines: drop them by count. One of the two split
  // like the other (the blame walk's versions) already knows how many bytes they share there.
  const sharedEnd =
    linesA.sharedWith === b
      ? linesA.sharedEnd
      : linesB?.sharedWith === a
        ? linesB.sharedEnd
        : undefined
  const tail = commonTail(a, b, sharedEnd)
  const one = sideOf(linesA, linesBefore(linesA, a.length - tail), 0)
  const two = sideOf(linesB as Lines, linesBefore(linesB as Lines, b.length - tail), 1)

  // Equal lines at both ends are never part of a change.
  const head = commonHeadLines(one, two)
  const end = commonTailLines(one, two, head)
  const counts = classify(one, two, head, end, table.size)
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
  counts: Int32Array,
  other: 0 | 1,
): void {
  const length = Math.max(0, to - from)
  const limit = Math.min(roughSqrt(side.count), MAX_EQUAL_LIMIT)
  const action = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    const matches = counts[2 * (side.ids[from + i] as number) + other] as number
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
