/**
 * The `view` listing of a directory: two levels deep, through the folders' own handles (a
 * folder swapped for a link meanwhile is left out, never followed).
 *
 * A listing that fits in one reply is whole and in the official order (each folder followed by
 * its contents), and a `view_range` on it is ignored, as the reference handler does. A listing
 * too long for one reply is numbered breadth-first (every first-level entry, then each
 * first-level folder's contents in turn), so its first page names every first-level folder
 * whenever they fit at all; the page ends with a note naming the `view_range` that shows the
 * next entries, and a `view_range` selects entries by that numbering. A depth-first cut (the
 * first folders' contents filling the reply) hid the later folders' names from Claude for good.
 */

import { isDenied } from '../lib/disk'
import { Folder } from '../lib/folders'
import { mayNotRead } from '../lib/may-read'
import {
  listingHeader,
  listingLine,
  listingPageNote,
  MAX_VIEW_CHARS,
  type ListingPage,
} from './format'
import { CommandError } from './outcome'
import { isAddressableName } from './path-rules'

/** One entry below the listed folder: a first-level one (`under` null) or one inside `under`. */
interface Entry {
  readonly name: string
  readonly under: string | null
  /** Its virtual path, without the `/` a folder's line ends with. */
  readonly path: string
  /** A folder Cairn may not list or enter: its line says so, and nothing inside is listed. */
  readonly unreadable?: true
}

/** Said after the line of an entry Cairn may not read (permission denied). */
export const CANNOT_BE_READ = '(cannot be read: permission denied)'

// Room kept under the cap for the note that ends a page (the longest note, with the largest
// counts, is shorter than this plus the listed path it names).
const NOTE_ROOM = 300

/** Lists `folder` (whose virtual path is `virtual`), or the entries `viewRange` selects. */
export function listDirectory(
  folder: Folder,
  virtual: string,
  ownSize: number,
  viewRange: readonly [number, number] | undefined,
): string {
  const header = listingHeader(virtual)
  const ownLine = listingLine({ size: ownSize, path: virtual })
  const budget = MAX_VIEW_CHARS - header.length - ownLine.length - 2 - NOTE_ROOM - virtual.length
  const { firstLevel, contents } = collect(folder, virtual)
  const numbered = [...firstLevel, ...firstLevel.flatMap((e) => contents.get(e.name) ?? [])]
  const lines = new LineMaker(folder)
  try {
    // A listing whose reply fits under the cap whole is whole: no note, so no room kept for one.
    const room = MAX_VIEW_CHARS - header.length - ownLine.length - 1
    const whole = fill(numbered, 0, numbered.length, room, lines)
    if (whole.next === numbered.length) {
      const official = firstLevel.flatMap((e) => [e, ...(contents.get(e.name) ?? [])])
      return [header, ownLine, ...official.flatMap((e) => whole.shown.get(e) ?? [])].join('\n')
    }
    const [start, end] = viewRange ? entryRange(viewRange, numbered.length) : [1, numbered.length]
    const page =
      start === 1 && !viewRange
        ? within(whole, numbered, budget)
        : fill(numbered, start - 1, end, budget, lines)
    const shown = numbered.slice(start - 1, page.next).flatMap((e) => page.shown.get(e) ?? [])
    const note: ListingPage = {
      virtual,
      first: start,
      last: page.next,
      total: numbered.length,
      next: page.next < end ? [page.next + 1, viewRange && viewRange[1] !== -1 ? end : -1] : null,
    }
    return [header, ownLine, ...shown, listingPageNote(note)].join('\n')
  } finally {
    lines.close()
  }
}

/** Checks a `view_range` against a listing of `count` entries; returns 1-based inclusive bounds. */
function entryRange(viewRange: readonly [number, number], count: number): [number, number] {
  const [start, end] = viewRange
  const shown = `[${start}, ${end}]`
  if (start < 1 || start > count) {
    throw new CommandError(
      'invalid-range',
      `Error: Invalid \`view_range\`: ${shown}. Its first element \`${start}\` should be within the range of entries of the listing: [1, ${count}]`,
    )
  }
  if (end === -1) return [start, count]
  if (end < start) {
    throw new CommandError(
      'invalid-range',
      `Error: Invalid \`view_range\`: ${shown}. Its second element \`${end}\` should be -1 or larger than or equal to its first element \`${start}\``,
    )
  }
  return [start, Math.min(end, count)]
}

// The entries two levels deep, each folder's sorted; only what a memory path can name (no
// hidden items, links, devices or unaddressable names). Only names are read here: sizes are
// read for the lines a reply shows.
function collect(
  folder: Folder,
  virtual: string,
): { firstLevel: Entry[]; contents: Map<string, Entry[]> } {
  const firstLevel: Entry[] = []
  const contents = new Map<string, Entry[]>()
  for (const { name, isDirectory } of addressable(folder)) {
    const entry: Entry = { name, under: null, path: `${virtual}/${name}` }
    const inside = isDirectory ? contentsOf(folder, entry) : []
    if (inside === null) {
      firstLevel.push({ ...entry, unreadable: true })
      continue
    }
    firstLevel.push(entry)
    if (inside !== undefined && isDirectory) contents.set(name, inside)
  }
  return { firstLevel, contents }
}

/**
 * The entries of the first-level folder `entry`: undefined when it is gone or no longer a
 * folder, null when Cairn may not list or enter it. One such folder (another account's, a
 * backup tool's) is named as unreadable and the rest is listed: it failed the whole `view`,
 * so Claude saw no memory at all (review hunt12-story D3).
 */
function contentsOf(folder: Folder, entry: Entry): Entry[] | null | undefined {
  const stats = folder.lstat(entry.name)
  if (stats && mayNotRead(stats, folder.entry(entry.name))) return null
  let child: Folder | null
  try {
    child = folder.openChildIfFolder(entry.name)
  } catch (error) {
    if (isDenied(error)) return null
    throw error
  }
  if (!child) return undefined
  try {
    return addressable(child).map(({ name }) => ({
      name,
      under: entry.name,
      path: `${entry.path}/${name}`,
    }))
  } catch (error) {
    if (isDenied(error)) return null
    throw error
  } finally {
    child.close()
  }
}

function addressable(dir: Folder): { name: string; isDirectory: boolean }[] {
  return dir
    .list()
    .filter((e) => (e.isFile() || e.isDirectory()) && isAddressableName(e.name))
    .map((e) => ({ name: e.name, isDirectory: e.isDirectory() }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * The lines of entries `from` (0-based) up to `to` (exclusive) that fit in `budget` characters;
 * `next` is the first entry not shown (`to` when all were). An entry gone since it was listed
 * has no line.
 */
function fill(
  entries: ReadonlyArray<Entry>,
  from: number,
  to: number,
  budget: number,
  lines: LineMaker,
): { shown: Map<Entry, string>; next: number } {
  const shown = new Map<Entry, string>()
  let used = 0
  for (let i = from; i < to; i++) {
    const line = lines.of(entries[i]!)
    if (line === null) continue
    if (used + line.length + 1 > budget) return { shown, next: i }
    shown.set(entries[i]!, line)
    used += line.length + 1
  }
  return { shown, next: to }
}

/**
 * The first page of a listing too long for one reply, cut from the lines already read for the
 * whole (`whole`, filled to the cap) to `budget`, which keeps room for the note: no entry is
 * read twice.
 */
function within(
  whole: { shown: Map<Entry, string>; next: number },
  entries: ReadonlyArray<Entry>,
  budget: number,
): { shown: Map<Entry, string>; next: number } {
  const shown = new Map<Entry, string>()
  let used = 0
  for (let i = 0; i < whole.next; i++) {
    const line = whole.shown.get(entries[i]!)
    if (line === undefined) continue
    if (used + line.length + 1 > budget) return { shown, next: i }
    shown.set(entries[i]!, line)
    used += line.length + 1
  }
  return { shown, next: whole.next }
}

// Reads an entry's size for its line, keeping the last first-level folder open: the entries
// of one folder come one after another, so each folder is opened once per page.
class LineMaker {
  private open: { name: string; folder: Folder | null } | null = null

  constructor(private readonly root: Folder) {}

  of(entry: Entry): string | null {
    const dir = entry.under === null ? this.root : this.folder(entry.under)
    const stats = dir?.lstat(entry.name)
    if (!stats || !(stats.isFile() || stats.isDirectory())) return null
    const line = listingLine({
      size: stats.size,
      path: `${entry.path}${stats.isDirectory() ? '/' : ''}`,
    })
    return entry.unreadable || mayNotRead(stats, dir?.entry(entry.name))
      ? `${line} ${CANNOT_BE_READ}`
      : line
  }

  close(): void {
    this.open?.folder?.close()
    this.open = null
  }

  private folder(name: string): Folder | null {
    if (this.open?.name !== name) {
      this.close()
      this.open = { name, folder: this.root.openChildIfFolder(name) }
    }
    return this.open.folder
  }
}
