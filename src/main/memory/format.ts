/** Output formats of the `view` command and the 16,000-character cap. Pure. */

import { LISTING_HEADER_START } from '../../shared/listing'
import { scaledSize } from '../../shared/sizes'
import { cutText } from '../lib/text'
import { LINE_NUMBER_WIDTH, numberLine, splitLines } from './text-model'

/**
 * Largest text file `view` reads at all (bigger files are refused before reading). Files
 * larger than this are also left out of the size limits and of the history (never read).
 */
export const MAX_VIEW_FILE_BYTES = 32 * 1024 * 1024

/** Most characters one `view` reply may hold. */
export const MAX_VIEW_CHARS = 16_000

/** Human size as the official listing shows it: `0B`, `512B`, `1.5K`, `4.0K`, `2.3M`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`
  return scaledSize(bytes, ['K', 'M', 'G', 'T'])
}

/** One entry of a directory listing. `path` is virtual; directories end with `/`. */
export interface ListingEntry {
  readonly size: number
  readonly path: string
}

/** The header line of a directory listing. */
export function listingHeader(virtualPath: string): string {
  return `${LISTING_HEADER_START}${virtualPath}, excluding hidden items and node_modules:`
}

/** The line of one listing entry. */
export function listingLine(entry: ListingEntry): string {
  return `${formatSize(entry.size)}\t${entry.path}`
}

/**
 * A page of a listing too long for one reply: entries `first` to `last` of `total`, numbered
 * breadth-first, and the `view_range` that shows the next ones (`next`, null when none).
 */
export interface ListingPage {
  readonly virtual: string
  readonly first: number
  readonly last: number
  readonly total: number
  readonly next: readonly [number, number] | null
}

/**
 * The note that ends a page of a long listing: it says what was shown, in which order, and
 * names the exact `view_range` that continues it.
 */
export function listingPageNote({ virtual, first, last, total, next }: ListingPage): string {
  const count = (n: number) => n.toLocaleString('en-US')
  const shown = `entries ${count(first)} to ${count(last)} of ${count(total)} shown (numbered with every first-level entry first, then each folder's contents)`
  if (next === null) return `[Listing of ${virtual}: ${shown}.]`
  const cap = MAX_VIEW_CHARS.toLocaleString('en-US')
  return `[Listing cut to stay under ${cap} characters: ${shown}. To continue, view ${virtual} with view_range: [${next[0]}, ${next[1]}]]`
}

/** The header line of a file view. */
export function fileHeader(virtualPath: string): string {
  return `Here's the content of ${virtualPath} with line numbers:`
}

/**
 * Numbers `lines` (the first one is line `firstLine`) under the file header, cut at a line
 * boundary when the reply would pass the cap, with a note naming the `view_range` to continue.
 * `lastLine` is the last line asked for; `toEnd` says it was asked as `-1` (the file's end),
 * so the note asks the same way.
 */
export function formatFileView(
  virtualPath: string,
  lines: ReadonlyArray<string>,
  firstLine: number,
  lastLine: number,
  toEnd = true,
): string {
  const header = fileHeader(virtualPath)
  if (lines.length === 0) return `${header}\n[The file is empty.]`
  // A reply that fits under the cap whole is never cut (no note, so no room kept for one).
  if (fitsWhole(header, lines, firstLine)) {
    return `${header}\n${lines.map((line, i) => numberLine(firstLine + i, line)).join('\n')}`
  }
  // Room for the longest possible note, so the whole reply stays within the cap.
  const budget = MAX_VIEW_CHARS - header.length - NOTE_ROOM
  const out: string[] = []
  let used = 0
  for (let i = 0; i < lines.length; i++) {
    const line = numberLine(firstLine + i, lines[i]!)
    used += line.length + 1
    if (used > budget) {
      const rest = { next: firstLine + i + (out.length === 0 ? 1 : 0), lastLine, toEnd }
      if (out.length === 0) {
        // A single line longer than the cap: show as much of it as fits, never half an emoji.
        const shown = cutText(line, budget - 1)
        const shownChars = shown.length - (line.length - lines[i]!.length)
        out.push(shown)
        return `${header}\n${out.join('\n')}\n${longLineNote(firstLine, shownChars, lines[i]!.length, rest)}`
      }
      return `${header}\n${out.join('\n')}\n${cutNote(rest)}`
    }
    out.push(line)
  }
  return `${header}\n${out.join('\n')}`
}

// Room kept under the cap for the note that ends a cut view (the longest note, with the
// largest line numbers and counts, is shorter).
const NOTE_ROOM = 300

// Whether the header and `lines` numbered from `firstLine`, each after a newline, fit in one
// reply (counted without building the numbered lines).
function fitsWhole(header: string, lines: ReadonlyArray<string>, firstLine: number): boolean {
  let chars = header.length
  for (let i = 0; i < lines.length; i++) {
    chars += Math.max(LINE_NUMBER_WIDTH, String(firstLine + i).length) + 2 + lines[i]!.length
    if (chars > MAX_VIEW_CHARS) return false
  }
  return true
}

/**
 * The characters one `view` of the whole of `text` holds before any cut, and whether it fits:
 * a file that does not fit needs several views (with `view_range`) to be read whole.
 */
export function wholeViewSize(
  virtualPath: string,
  text: string,
): { readonly chars: number; readonly fits: boolean } {
  const header = fileHeader(virtualPath)
  // `view` shows a file without its byte order mark (as Notepad writes it): nor is it counted.
  const { lines } = splitLines(text.startsWith('\uFEFF') ? text.slice(1) : text)
  let used = 0
  for (let i = 0; i < lines.length; i++) {
    // As `numberLine(i + 1, line)` plus its newline, without building the string.
    used += Math.max(LINE_NUMBER_WIDTH, String(i + 1).length) + 2 + lines[i]!.length
  }
  // The reply is the header and each numbered line after a newline: as `formatFileView`, whole
  // when that is within the cap.
  const chars = header.length + used
  return { chars, fits: chars <= MAX_VIEW_CHARS }
}

interface Rest {
  /** The first line not shown. */
  readonly next: number
  /** The last line asked for. */
  readonly lastLine: number
  /** Whether the view was asked up to the file's end (`-1`). */
  readonly toEnd: boolean
}

// How to view what follows: the exact range left of the one asked for.
function continueWith({ next, lastLine, toEnd }: Rest): string {
  if (next > lastLine) return ''
  return ` To continue, view with view_range: [${next}, ${toEnd ? -1 : lastLine}]`
}

function cutNote(rest: Rest): string {
  const cap = MAX_VIEW_CHARS.toLocaleString('en-US')
  return `[Output cut at a line boundary to stay under ${cap} characters.${continueWith(rest)}]`
}

/**
 * A line longer than one reply: `view_range` counts whole lines, so no view can show the rest
 * of it. The note says so plainly (and how to reach the lines after it), so Claude does not
 * take the cut for the line's end.
 */
function longLineNote(line: number, shown: number, total: number, rest: Rest): string {
  const count = (n: number) => n.toLocaleString('en-US')
  return `[Line ${line} is too long to show whole: only its first ${count(shown)} of ${count(total)} characters are shown, and view_range counts whole lines, so no view shows the rest of it (str_replace can still edit it).${continueWith(rest)}]`
}
