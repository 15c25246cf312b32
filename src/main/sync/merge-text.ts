/**
 * Three-way merge of text, line by line (diff3): what changed on one side only is taken;
 * where both sides changed the same lines differently, both versions are kept between
 * conflict markers. Pure: strings in, a string out.
 *
 * A conflict in the merged text looks like this (labels are machine names):
 *
 *   <<<<<<< laptop
 *   Editor: Helix
 *   =======
 *   Editor: Zed
 *   >>>>>>> desktop
 */
import { diffArrays } from 'diff'
import { MARKER_SIZE, markerLines, markerSizeFor } from './conflict-markers'
import { appendAll } from '../lib/arrays'

/** Who the two sides are, as the markers name them. */
export interface MergeLabels {
  readonly ours: string
  readonly theirs: string
}

// The labels, and the one marker size of every block of the merge.
interface BlockLabels extends MergeLabels {
  readonly markerSize: number
}

export interface TextMerge {
  readonly text: string
  /** How many conflict blocks the text holds (0: merged cleanly). */
  readonly conflicts: number
  /**
   * The length of every block's markers: longer than any marker-like line in the three
   * versions, so the merge's blocks are the only ones of that size in the file (an example
   * conflict in a git cheat sheet is not one of them).
   */
  readonly markerSize: number
}

/**
 * Past this many differing lines between two versions, they are not compared line by line
 * (that would take seconds): the whole region counts as changed, which keeps both versions.
 */
const MAX_EDIT_LENGTH = 5000

/** Splits text into lines, each keeping its `\n` (the last one may lack it). */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? []
}

/**
 * Merges `ours` and `theirs`, both changed from `base` (`''` when the file did not exist
 * before: every difference then is a conflict, and lines both sides share are kept once).
 */
export function mergeText(
  base: string,
  ours: string,
  theirs: string,
  labels: MergeLabels,
): TextMerge {
  if (ours === theirs) return { text: ours, conflicts: 0, markerSize: MARKER_SIZE }
  if (ours === base) return { text: theirs, conflicts: 0, markerSize: MARKER_SIZE }
  if (theirs === base) return { text: ours, conflicts: 0, markerSize: MARKER_SIZE }
  const o = splitLines(base)
  const a = splitLines(ours)
  const b = splitLines(theirs)
  const markerSize = markerSizeFor([...o, ...a, ...b])
  const out: string[] = []
  let conflicts = 0
  for (const chunk of diff3Chunks(o, a, b)) {
    if (chunk.kind === 'stable') appendAll(out, chunk.lines)
    else {
      conflicts += emitUnstable(out, chunk.base, chunk.ours, chunk.theirs, {
        ...labels,
        markerSize,
      })
    }
  }
  return { text: out.join(''), conflicts, markerSize }
}

type Chunk =
  | { readonly kind: 'stable'; readonly lines: ReadonlyArray<string> }
  | {
      readonly kind: 'unstable'
      readonly base: ReadonlyArray<string>
      readonly ours: ReadonlyArray<string>
      readonly theirs: ReadonlyArray<string>
    }

/**
 * The diff3 parse: runs of lines all three versions share (stable) alternate with regions
 * where at least one side differs from the base (unstable).
 */
function diff3Chunks(o: string[], a: string[], b: string[]): Chunk[] {
  const ma = matching(o, a)
  const mb = matching(o, b)
  const chunks: Chunk[] = []
  let io = 0
  let ia = 0
  let ib = 0
  for (;;) {
    let run = 0
    while (io + run < o.length && ma[io + run] === ia + run && mb[io + run] === ib + run) run++
    if (run > 0) {
      chunks.push({ kind: 'stable', lines: o.slice(io, io + run) })
      io += run
      ia += run
      ib += run
      continue
    }
    // The next base line both sides kept ends this unstable region.
    let next = io
    while (next < o.length && ((ma[next] ?? -1) < 0 || (mb[next] ?? -1) < 0)) next++
    if (next >= o.length) {
      if (io < o.length || ia < a.length || ib < b.length) {
        chunks.push({ kind: 'unstable', base: o.slice(io), ours: a.slice(ia), theirs: b.slice(ib) })
      }
      return chunks
    }
    const na = ma[next] as number
    const nb = mb[next] as number
    chunks.push({
      kind: 'unstable',
      base: o.slice(io, next),
      ours: a.slice(ia, na),
      theirs: b.slice(ib, nb),
    })
    io = next
    ia = na
    ib = nb
  }
}

/** For each line of `from`, the index of the line of `to` it matches in their LCS, or -1. */
function matching(from: string[], to: string[]): Int32Array {
  const result = new Int32Array(from.length).fill(-1)
  // Common ends are matched directly: most edits touch a few lines of a long file.
  let start = 0
  while (start < from.length && start < to.length && from[start] === to[start]) {
    result[start] = start
    start++
  }
  let endFrom = from.length
  let endTo = to.length
  while (endFrom > start && endTo > start && from[endFrom - 1] === to[endTo - 1]) {
    endFrom--
    endTo--
    result[endFrom] = endTo
  }
  const middleFrom = from.slice(start, endFrom)
  const middleTo = to.slice(start, endTo)
  if (middleFrom.length === 0 || middleTo.length === 0) return result
  const changes = diffArrays(middleFrom, middleTo, { maxEditLength: MAX_EDIT_LENGTH })
  // Too different to compare: nothing in the middle matches.
  if (!changes) return result
  let i = start
  let j = start
  for (const change of changes) {
    const count = change.count ?? change.value.length
    if (change.added) j += count
    else if (change.removed) i += count
    else {
      for (let k = 0; k < count; k++) result[i + k] = j + k
      i += count
      j += count
    }
  }
  return result
}

// Writes one unstable region: one side's change when only it changed, else the conflict
// (narrowed to the lines that really differ). Returns the number of conflict blocks.
function emitUnstable(
  out: string[],
  base: ReadonlyArray<string>,
  ours: ReadonlyArray<string>,
  theirs: ReadonlyArray<string>,
  labels: BlockLabels,
): number {
  if (same(ours, theirs)) {
    appendAll(out, ours)
    return 0
  }
  if (same(base, ours)) {
    appendAll(out, theirs)
    return 0
  }
  if (same(base, theirs)) {
    appendAll(out, ours)
    return 0
  }
  return emitConflicts(out, ours, theirs, labels)
}

/**
 * Lines both sides hold in the same place are written once; each stretch where they differ
 * becomes one conflict block.
 */
function emitConflicts(
  out: string[],
  ours: ReadonlyArray<string>,
  theirs: ReadonlyArray<string>,
  labels: BlockLabels,
): number {
  const match = matching([...ours], [...theirs])
  let count = 0
  let ia = 0
  let ib = 0
  while (ia < ours.length || ib < theirs.length) {
    if (ia < ours.length && match[ia] === ib) {
      out.push(ours[ia] as string)
      ia++
      ib++
      continue
    }
    let na = ia
    while (na < ours.length && (match[na] ?? -1) < 0) na++
    const nb = na < ours.length ? (match[na] as number) : theirs.length
    writeBlock(out, ours.slice(ia, na), theirs.slice(ib, nb), labels)
    count++
    ia = na
    ib = nb
  }
  return count
}

function writeBlock(
  out: string[],
  ours: ReadonlyArray<string>,
  theirs: ReadonlyArray<string>,
  labels: BlockLabels,
): void {
  // The block starts on a line of its own, even after a last line without its newline.
  const last = out.at(-1)
  if (last !== undefined && !last.endsWith('\n')) out[out.length - 1] = `${last}\n`
  const markers = markerLines(labels.markerSize, labels.ours, labels.theirs)
  out.push(`${markers.start}\n`)
  appendAll(out, terminated(ours))
  out.push(`${markers.middle}\n`)
  appendAll(out, terminated(theirs))
  out.push(`${markers.end}\n`)
}

function terminated(lines: ReadonlyArray<string>): string[] {
  const copy = [...lines]
  const last = copy.at(-1)
  if (last !== undefined && !last.endsWith('\n')) copy[copy.length - 1] = `${last}\n`
  return copy
}

function same(a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i])
}
