import { diffLines, diffWordsWithSpace } from 'diff'
import type { FileChange } from '../../../shared/types'

/** A piece of one line; `changed` marks the words that differ from the paired line. */
export interface Segment {
  readonly text: string
  readonly changed: boolean
}

/** One line of one side: its number in that file and its text in segments. */
export interface DiffLine {
  readonly kind: 'context' | 'add' | 'del'
  readonly oldNo: number | null
  readonly newNo: number | null
  readonly segments: ReadonlyArray<Segment>
}

/** A run of unchanged lines folded away between hunks. */
export interface DiffGap {
  readonly kind: 'gap'
  readonly count: number
}

export type UnifiedRow = DiffLine | DiffGap

/** One row of the side-by-side view: left is the old file, right the new one. */
export type SplitRow =
  | { readonly kind: 'pair'; readonly left: DiffLine | null; readonly right: DiffLine | null }
  | DiffGap

export interface DiffModel {
  readonly unified: ReadonlyArray<UnifiedRow>
  readonly split: ReadonlyArray<SplitRow>
  readonly added: number
  readonly removed: number
  /** True when some changed lines are shown whole, without word-level highlights. */
  readonly coarse: boolean
  /**
   * True when the two versions differ in too many lines to pair them up: the model then shows
   * every old line removed and every new line added (the view says so).
   */
  readonly unpaired: boolean
}

/** Above this many changed lines a block is shown without word-level highlights. */
const WORD_DIFF_LIMIT = 200

/**
 * Most lines added plus removed the line diff looks for. The search costs about the square
 * of this, on the renderer's thread, at render time: 8,000 rewritten lines took 10 s unbounded.
 * Beyond it, pairing lines would not help the reader anyway.
 */
export const LINE_EDIT_LIMIT = 1_000

/**
 * A safety net beside LINE_EDIT_LIMIT for huge files whose few changes lie far apart (the
 * search then also walks long unchanged runs): past this, the diff is unpaired as above.
 */
const LINE_DIFF_TIMEOUT_MS = 500

/** A line longer than this is shown whole: a word diff of a 78 KB one-line JSON took 9 s. */
export const WORD_DIFF_MAX_LINE = 2_000

/** Most words added plus removed within one line pair before it is shown whole instead. */
const WORD_EDIT_LIMIT = 100

/** Most characters, summed over one file's line pairs, that are compared word by word. */
const WORD_DIFF_BUDGET = 200_000

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/**
 * Word-level segments for a removed line and the added line it became, or null when the two
 * differ in too many words for highlights to be worth their cost.
 */
export function wordSegments(
  before: string,
  after: string,
): { readonly del: ReadonlyArray<Segment>; readonly add: ReadonlyArray<Segment> } | null {
  const parts = diffWordsWithSpace(before, after, { maxEditLength: WORD_EDIT_LIMIT })
  if (!parts) return null
  const del: Segment[] = []
  const add: Segment[] = []
  for (const part of parts) {
    if (part.added) add.push({ text: part.value, changed: true })
    else if (part.removed) del.push({ text: part.value, changed: true })
    else {
      del.push({ text: part.value, changed: false })
      add.push({ text: part.value, changed: false })
    }
  }
  return { del, add }
}

const whole = (text: string): ReadonlyArray<Segment> => [{ text, changed: false }]

/**
 * Builds both diff views of one file from its two versions (null: absent on that side).
 * Unchanged runs longer than `2 × context` lines are folded into a gap row. The work is
 * bounded whatever the input (see the limits above), since it runs while the view renders.
 */
export function buildDiff(before: string | null, after: string | null, context = 3): DiffModel {
  const lines: DiffLine[] = []
  const pairs: Array<{ left: DiffLine | null; right: DiffLine | null }> = []
  let oldNo = 1
  let newNo = 1
  let added = 0
  let removed = 0
  let coarse = false
  let wordBudget = WORD_DIFF_BUDGET
  const lineParts = diffLines(before ?? '', after ?? '', {
    maxEditLength: LINE_EDIT_LIMIT,
    timeout: LINE_DIFF_TIMEOUT_MS,
  })
  const unpaired = lineParts === undefined
  const parts = lineParts ?? [
    { value: before ?? '', removed: true, added: false, count: 0 },
    { value: after ?? '', added: true, removed: false, count: 0 },
  ]
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const texts = splitLines(part.value)
    if (!part.added && !part.removed) {
      for (const text of texts) {
        const line: DiffLine = {
          kind: 'context',
          oldNo: oldNo++,
          newNo: newNo++,
          segments: whole(text),
        }
        lines.push(line)
        pairs.push({ left: line, right: line })
      }
      continue
    }
    // A removal directly followed by an addition is a change: pair the lines for word diffs.
    const next = parts[i + 1]
    const dels = part.removed ? texts : []
    const adds = part.added ? texts : next?.added ? splitLines(next.value) : []
    if (part.removed && next?.added) i++
    const wordLevel = !unpaired && dels.length <= WORD_DIFF_LIMIT && adds.length <= WORD_DIFF_LIMIT
    if (!wordLevel && dels.length && adds.length) coarse = true
    const delLines: DiffLine[] = []
    const addLines: DiffLine[] = []
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const d = dels[k]
      const a = adds[k]
      let paired: ReturnType<typeof wordSegments> = null
      if (wordLevel && d !== undefined && a !== undefined) {
        const affordable =
          d.length <= WORD_DIFF_MAX_LINE &&
          a.length <= WORD_DIFF_MAX_LINE &&
          d.length + a.length <= wordBudget
        if (affordable) {
          wordBudget -= d.length + a.length
          paired = wordSegments(d, a)
        }
        if (!paired) coarse = true
      }
      if (d !== undefined) {
        delLines.push({
          kind: 'del',
          oldNo: oldNo++,
          newNo: null,
          segments: paired?.del ?? whole(d),
        })
      }
      if (a !== undefined) {
        addLines.push({
          kind: 'add',
          oldNo: null,
          newNo: newNo++,
          segments: paired?.add ?? whole(a),
        })
      }
    }
    added += addLines.length
    removed += delLines.length
    // One at a time: spread as arguments, a hunk of more than ~120,000 lines (a long list
    // deleted) overflows V8's stack.
    for (const line of delLines) lines.push(line)
    for (const line of addLines) lines.push(line)
    for (let k = 0; k < Math.max(delLines.length, addLines.length); k++) {
      pairs.push({ left: delLines[k] ?? null, right: addLines[k] ?? null })
    }
  }
  return {
    unified: fold(lines, (line) => line.kind === 'context', context),
    split: fold(
      pairs.map((pair) => ({ kind: 'pair' as const, ...pair })),
      (pair) => pair.left?.kind === 'context',
      context,
    ),
    added,
    removed,
    coarse,
    unpaired,
  }
}

const models = new WeakMap<FileChange, DiffModel>()

/**
 * The diff model of one file change, computed once per change object: the file's header
 * (`+3 −1`) and its diff share it instead of each paying for the diff.
 */
export function diffModelOf(change: FileChange): DiffModel {
  let model = models.get(change)
  if (!model) {
    model = buildDiff(change.before, change.after)
    models.set(change, model)
  }
  return model
}

/** Replaces long unchanged runs by a gap row, keeping `context` rows around each change. */
function fold<T>(
  rows: ReadonlyArray<T>,
  unchanged: (row: T) => boolean,
  context: number,
): Array<T | DiffGap> {
  const out: Array<T | DiffGap> = []
  let i = 0
  while (i < rows.length) {
    if (!unchanged(rows[i]!)) {
      out.push(rows[i]!)
      i++
      continue
    }
    let end = i
    while (end < rows.length && unchanged(rows[end]!)) end++
    const keepBefore = i === 0 ? 0 : context
    const keepAfter = end === rows.length ? 0 : context
    const hidden = end - i - keepBefore - keepAfter
    if (hidden > 1) {
      out.push(...rows.slice(i, i + keepBefore))
      out.push({ kind: 'gap', count: hidden })
      out.push(...rows.slice(end - keepAfter, end))
    } else {
      out.push(...rows.slice(i, end))
    }
    i = end
  }
  return out
}
