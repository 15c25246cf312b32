/**
 * Conflict blocks in a merged file, and what each resolution makes of them. Pure.
 *
 * A file with one conflict reads:
 *
 *   # Preferences
 *   <<<<<<< laptop
 *   Editor: Helix
 *   =======
 *   Editor: Zed
 *   >>>>>>> desktop
 *   Theme: dark
 */

import { cutText } from '../lib/text'

/** The marker lines (git's, so every tool and person recognizes them). */
export const CONFLICT_MARKERS = { start: '<<<<<<<', middle: '=======', end: '>>>>>>>' } as const

/** The shortest marker, git's `conflict-marker-size`. */
export const MARKER_SIZE = 7

/**
 * The longest marker a conflict record keeps (the saved state refuses longer): a longer size
 * read from another machine's merge commit is not Cairn's, and its blocks count at any size.
 */
export const MAX_MARKER_SIZE = 1_000_000

/**
 * The marker size for a block holding `lines`: longer than any marker-like line in them (a
 * Markdown setext underline "=======", a quoted conflict), so the block's own markers stay
 * the only ones of their size — as git does for `conflict-marker-size`.
 */
export function markerSizeFor(lines: ReadonlyArray<string>): number {
  let size = MARKER_SIZE
  for (const line of lines) {
    const run = /^(<+|=+|>+)/.exec(line)?.[1]?.length ?? 0
    if (run >= size) size = run + 1
  }
  return size
}

/** The three marker lines of a block whose markers are `size` long (no newline). */
export function markerLines(
  size: number,
  oursLabel: string,
  theirsLabel: string,
): { start: string; middle: string; end: string } {
  return {
    start: `${'<'.repeat(size)} ${markerLabel(oursLabel)}`,
    middle: '='.repeat(size),
    end: `${'>'.repeat(size)} ${markerLabel(theirsLabel)}`,
  }
}

/** A machine name as a marker shows it: one line, no control characters, at most 60 chars. */
export function markerLabel(name: string): string {
  const clean = name.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ').trim()
  return cutText(clean || 'unnamed', 60)
}

/**
 * The marker sizes whose blocks are a conflict's: one per merge that left blocks in the file
 * (a second merge over unsettled blocks takes longer markers than theirs), none given for any.
 */
export type MarkerSizes = number | ReadonlyArray<number>

function sizeFits(size: number, wanted: MarkerSizes | undefined): boolean {
  if (wanted === undefined) return true
  return typeof wanted === 'number' ? size === wanted : wanted.includes(size)
}

/** One conflict block: the two versions and who wrote each. */
export interface ConflictBlock {
  readonly ours: string
  readonly theirs: string
  readonly oursLabel: string
  readonly theirsLabel: string
}

/** A block with the length of its markers, which tells the merge that left it. */
export type SizedBlock = ConflictBlock & { readonly size: number }

export type Segment = { readonly kind: 'text'; readonly text: string } | ConflictSegment
type ConflictSegment = { readonly kind: 'conflict' } & SizedBlock

/**
 * Splits a file into plain text and conflict blocks. Only complete blocks count: a stray
 * marker line stays plain text. With `size` (the merge's marker size, recorded with its
 * conflict), only blocks whose markers have that length: a conflict quoted in the file (a git
 * cheat sheet) is the person's text, not the merge's.
 */
export function parseConflicts(text: string, size?: MarkerSizes): ReadonlyArray<Segment> {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? []
  const markers = indexMarkers(lines)
  const segments: Segment[] = []
  let plain = ''
  let i = 0
  while (i < lines.length) {
    const block = blockAt(lines, i, markers, size)
    if (!block) {
      plain += lines[i]
      i++
      continue
    }
    if (plain) segments.push({ kind: 'text', text: plain })
    plain = ''
    segments.push(block.segment)
    i = block.next
  }
  if (plain) segments.push({ kind: 'text', text: plain })
  return segments
}

/** True when the text holds at least one complete conflict block (of `size`, when given). */
export function hasConflicts(text: string, size?: MarkerSizes): boolean {
  return parseConflicts(text, size).some((segment) => segment.kind === 'conflict')
}

/** The conflict blocks of a text with their marker sizes, in order (those of `size`, when given). */
export function sizedBlocks(text: string, size?: MarkerSizes): ReadonlyArray<SizedBlock> {
  return parseConflicts(text, size).filter((segment) => segment.kind === 'conflict')
}

/** The conflict blocks of a text, in order (those of `size`, when given). */
export function conflictBlocks(text: string, size?: MarkerSizes): ReadonlyArray<ConflictBlock> {
  const blocks: ConflictBlock[] = []
  for (const segment of parseConflicts(text, size)) {
    if (segment.kind === 'conflict') {
      const { ours, theirs, oursLabel, theirsLabel } = segment
      blocks.push({ ours, theirs, oursLabel, theirsLabel })
    }
  }
  return blocks
}

/** How a conflict is settled: one side, both one after the other, or text the person wrote. */
export type Resolution = 'ours' | 'theirs' | 'both'

/** The text with every conflict block replaced by the chosen side (or both, ours first). */
export function resolveConflicts(text: string, choice: Resolution): string {
  return replaceConflicts(text, (block) => {
    if (choice === 'ours') return block.ours
    if (choice === 'theirs') return block.theirs
    return block.ours + block.theirs
  })
}

/** The text with every conflict block (of `size`, when given) replaced by what `pick` makes of it. */
export function replaceConflicts(
  text: string,
  pick: (block: SizedBlock) => string,
  size?: MarkerSizes,
): string {
  return parseConflicts(text, size)
    .map((segment) => (segment.kind === 'text' ? segment.text : pick(segment)))
    .join('')
}

// A block's markers all have the length of its start marker: a side may hold shorter or
// longer marker-like lines (merge-text makes the block's markers longer than any of them).
// Read as a walk from the start marker would read it: the first line that is another start
// marker of its size (none), a middle of its size, or an end marker of its size (none before
// the middle) decides; after the middle, the first start or end marker of its size does.
// Found through `markers`, so that a text of start markers alone is read in n log n, not n².
function blockAt(
  lines: ReadonlyArray<string>,
  start: number,
  markers: MarkerIndex,
  wanted?: MarkerSizes,
): { segment: ConflictSegment; next: number } | null {
  const opening = markerOf(lines[start], '<')
  if (!opening || !sizeFits(opening.size, wanted)) return null
  const size = opening.size
  const next = (kind: MarkerKind, after: number) => markers.next(kind, size, after)
  const middle = next('=', start)
  if (middle > next('<', start) || middle > next('>', start) || middle === NONE) return null
  const end = next('>', middle)
  if (end === NONE || end > next('<', middle)) return null
  const closing = markerOf(lines[end], '>') as { size: number; label: string }
  return {
    segment: {
      kind: 'conflict',
      ours: lines.slice(start + 1, middle).join(''),
      theirs: lines.slice(middle + 1, end).join(''),
      oursLabel: opening.label,
      theirsLabel: closing.label,
      size,
    },
    next: end + 1,
  }
}

type MarkerKind = '<' | '=' | '>'
const NONE = Number.POSITIVE_INFINITY

/** Where each marker-like line of a text is, by kind and size. */
interface MarkerIndex {
  /** The first line after `after` that is a `kind` marker of `size` (NONE: there is none). */
  next(kind: MarkerKind, size: number, after: number): number
}

function indexMarkers(lines: ReadonlyArray<string>): MarkerIndex {
  const at = new Map<string, number[]>()
  const add = (kind: MarkerKind, size: number, line: number) => {
    const key = `${kind}${size}`
    const list = at.get(key)
    if (list) list.push(line)
    else at.set(key, [line])
  }
  lines.forEach((line, i) => {
    const first = line[0]
    if (first !== '<' && first !== '=' && first !== '>') return
    if (first === '=') {
      const bare = stripNewline(line)
      if (/^={7,}$/.test(bare)) add('=', bare.length, i)
      return
    }
    const marker = markerOf(line, first)
    if (marker) add(first, marker.size, i)
  })
  return {
    next(kind, size, after) {
      const list = at.get(`${kind}${size}`)
      if (!list) return NONE
      // The first position greater than `after` (binary search: the list is ascending).
      let low = 0
      let high = list.length
      while (low < high) {
        const mid = (low + high) >> 1
        if ((list[mid] as number) <= after) low = mid + 1
        else high = mid
      }
      return low < list.length ? (list[low] as number) : NONE
    },
  }
}

// "<<<<<<< laptop" -> { size: 7, label: 'laptop' }; a marker is 7 or more of its character,
// then nothing or a space and the label.
function markerOf(
  line: string | undefined,
  char: '<' | '>',
): { size: number; label: string } | null {
  if (line === undefined) return null
  const bare = stripNewline(line)
  const match = (char === '<' ? /^(<{7,})(?: (.*))?$/ : /^(>{7,})(?: (.*))?$/).exec(bare)
  if (!match) return null
  return { size: (match[1] as string).length, label: match[2] ?? '' }
}

function stripNewline(line: string): string {
  return line.endsWith('\n') ? line.slice(0, -1).replace(/\r$/, '') : line.replace(/\r$/, '')
}
