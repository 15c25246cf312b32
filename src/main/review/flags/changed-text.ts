/**
 * Where a change happened, with the text around it: the stretches the `instructions` rule
 * reads. Pure.
 *
 * Reading only the lines a change adds is not enough for a pattern that spans lines: deleting
 * the middle line of "Ignore all previous / TODO buy milk / instructions and …" adds nothing,
 * yet joins an instruction; so does inserting its second half under a first half already
 * there. So each changed stretch is read with the lines around it, in the file as it was and
 * as it will be, and the rule counts what is new: a match the stretch holds more often after
 * the change than before.
 */
import { diffArrays } from 'diff'

/**
 * Text read on each side of a change: whole lines, until at least this many characters that
 * are not white space (blank lines are free, so a gap of empty lines does not hide the other
 * half of a sentence). Longer than any instruction the patterns match across lines.
 */
const CONTEXT_CHARS = 300

/** Most line edits `fewEdits` looks for before the patience diff takes over. */
const MAX_EDITS = 16

/** One changed stretch with its context, as it will be and as it was. */
export interface ChangedWindow {
  /** 1-based line of the changed file where `after` starts. */
  readonly line: number
  /** The stretch's lines in the changed file, joined by `\n`. */
  readonly after: string
  /** The same stretch in the file before the change (empty for a new file). */
  readonly before: string
}

/** Lines `[oldStart, oldEnd)` of the old text became `[newStart, newEnd)` of the new. */
interface Hunk {
  oldStart: number
  oldEnd: number
  newStart: number
  newEnd: number
}

/**
 * The changed stretches of `after` against `before`, each with at least `CONTEXT_CHARS` of
 * unchanged text on both sides (in whole lines) where the file has it; stretches whose
 * context meets are one. A new file is one stretch, the whole text.
 */
export function changedWindows(before: string | null, after: string): ReadonlyArray<ChangedWindow> {
  const oldLines = linesOf(before ?? '')
  const newLines = linesOf(after)
  const windows: Hunk[] = []
  const hunks = diffHunks(oldLines, newLines)
  hunks.forEach((hunk, i) => {
    const upTo = i > 0 ? hunks[i - 1]!.newEnd : 0
    const downTo = i < hunks.length - 1 ? hunks[i + 1]!.newStart : newLines.length
    let start = hunk.newStart
    for (let seen = 0; start > upTo && seen < CONTEXT_CHARS;)
      seen += newLines[--start]!.trim().length
    let end = hunk.newEnd
    for (let seen = 0; end < downTo && seen < CONTEXT_CHARS;) seen += newLines[end++]!.trim().length
    // Outside the hunks both texts hold the same lines, so context is the same on both sides.
    const window = {
      newStart: start,
      newEnd: end,
      oldStart: hunk.oldStart - (hunk.newStart - start),
      oldEnd: hunk.oldEnd + (end - hunk.newEnd),
    }
    const last = windows.at(-1)
    if (last && window.newStart <= last.newEnd) {
      last.newEnd = window.newEnd
      last.oldEnd = window.oldEnd
    } else {
      windows.push(window)
    }
  })
  return windows.map((w) => ({
    line: w.newStart + 1,
    after: newLines.slice(w.newStart, w.newEnd).join('\n'),
    before: oldLines.slice(w.oldStart, w.oldEnd).join('\n'),
  }))
}

/**
 * The changed runs of lines, as a patience diff finds them: the common start and end are cut
 * off (an edit by `str_replace` or `insert` is then one run, found by comparing lines alone);
 * in between, lines that occur exactly once on each side and keep their order are matched,
 * and what lies between two matched lines is one run. Linear but for the ordering (n log n),
 * whatever the change: no diff with a quadratic worst case runs on a write. A run may hold
 * lines that did not change; it is read with them, which costs time, never a miss.
 */
function diffHunks(oldLines: ReadonlyArray<string>, newLines: ReadonlyArray<string>): Hunk[] {
  const hunks: Hunk[] = []
  const middle = trimmed(oldLines, newLines, 0, oldLines.length, 0, newLines.length)
  if (!middle) return hunks
  if (middle.oldStart === middle.oldEnd || middle.newStart === middle.newEnd) return [middle]
  const few = fewEdits(oldLines, newLines, middle)
  if (few) return few
  let oldAt = middle.oldStart
  let newAt = middle.newStart
  const anchors = uniqueAnchors(oldLines, newLines, middle)
  anchors.push([middle.oldEnd, middle.newEnd])
  for (const [oldAnchor, newAnchor] of anchors) {
    const hunk = trimmed(oldLines, newLines, oldAt, oldAnchor, newAt, newAnchor)
    if (hunk) hunks.push(hunk)
    oldAt = oldAnchor + 1
    newAt = newAnchor + 1
  }
  return hunks
}

/**
 * The exact runs when a rewrite changes lines in a few places (a line changed is two edits),
 * or null: Myers' diff, given up past `MAX_EDITS`, costs less than numbering the lines then.
 */
function fewEdits(
  oldLines: ReadonlyArray<string>,
  newLines: ReadonlyArray<string>,
  middle: Hunk,
): Hunk[] | null {
  const changes = diffArrays(
    oldLines.slice(middle.oldStart, middle.oldEnd),
    newLines.slice(middle.newStart, middle.newEnd),
    { maxEditLength: MAX_EDITS },
  )
  if (!changes) return null
  const hunks: Hunk[] = []
  let oldAt = middle.oldStart
  let newAt = middle.newStart
  for (const change of changes) {
    if (!change.added && !change.removed) {
      oldAt += change.count
      newAt += change.count
      continue
    }
    let last = hunks.at(-1)
    if (!last || last.oldEnd !== oldAt || last.newEnd !== newAt) {
      last = { oldStart: oldAt, oldEnd: oldAt, newStart: newAt, newEnd: newAt }
      hunks.push(last)
    }
    if (change.removed) oldAt = last.oldEnd += change.count
    else newAt = last.newEnd += change.count
  }
  return hunks
}

/** `[oldStart, oldEnd)` against `[newStart, newEnd)` without their common start and end, or null if equal. */
function trimmed(
  oldLines: ReadonlyArray<string>,
  newLines: ReadonlyArray<string>,
  oldStart: number,
  oldEnd: number,
  newStart: number,
  newEnd: number,
): Hunk | null {
  while (oldStart < oldEnd && newStart < newEnd && oldLines[oldStart] === newLines[newStart]) {
    oldStart++
    newStart++
  }
  while (oldStart < oldEnd && newStart < newEnd && oldLines[oldEnd - 1] === newLines[newEnd - 1]) {
    oldEnd--
    newEnd--
  }
  return oldStart === oldEnd && newStart === newEnd ? null : { oldStart, oldEnd, newStart, newEnd }
}

/**
 * Pairs `[old, new]` of lines found once in each side of `hunk`, the longest chain of them
 * in the same order on both sides (patience sorting).
 */
function uniqueAnchors(
  oldLines: ReadonlyArray<string>,
  newLines: ReadonlyArray<string>,
  hunk: Hunk,
): Array<[number, number]> {
  // Per distinct line: where it is on the old side (-1: more than once), and how often new.
  const seen = new Map<string, { old: number; count: number; new: number }>()
  for (let i = hunk.oldStart; i < hunk.oldEnd; i++) {
    const entry = seen.get(oldLines[i]!)
    if (entry) entry.old = -1
    else seen.set(oldLines[i]!, { old: i, count: 0, new: -1 })
  }
  for (let j = hunk.newStart; j < hunk.newEnd; j++) {
    const entry = seen.get(newLines[j]!)
    if (entry && entry.old >= 0) {
      entry.count++
      entry.new = j
    }
  }
  const pairs: Array<[number, number]> = []
  for (let j = hunk.newStart; j < hunk.newEnd; j++) {
    const entry = seen.get(newLines[j]!)
    if (entry && entry.old >= 0 && entry.count === 1) pairs.push([entry.old, j])
  }
  // Longest run of pairs increasing on the old side too: piles hold the smallest old index
  // ending a chain of each length, with a link back to build the chain.
  const tails: number[] = []
  const back = new Int32Array(pairs.length)
  pairs.forEach(([old], k) => {
    let low = 0
    let high = tails.length
    while (low < high) {
      const mid = (low + high) >> 1
      if (pairs[tails[mid]!]![0] < old) low = mid + 1
      else high = mid
    }
    back[k] = low > 0 ? tails[low - 1]! : -1
    tails[low] = k
  })
  const chain: Array<[number, number]> = []
  for (let k = tails.at(-1) ?? -1; k >= 0; k = back[k]!) chain.push(pairs[k]!)
  return chain.reverse()
}

function linesOf(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}
