import type { Stats } from 'node:fs'
import path from 'node:path'
import type { MemoryEntry, MemoryFile, MemorySearchHit } from '../../shared/types'
import {
  entryNameProblem,
  keepsNoCopy,
  MAX_VERSIONED_BYTES,
  segmentsOf,
  toRelative,
  toVirtual,
  type VersionedMemory,
} from '../history'
import { closeQuietly, disk, isCode, isDenied, OPEN } from '../lib/disk'
import { CairnError } from '../lib/errors'
import { Folder, FolderTree, sameEntry } from '../lib/folders'
import { mayNotRead } from '../lib/may-read'
import { decodeUtf8 } from '../lib/text'
import { asideName, IMAGE_TYPES, imageTypeOf, MAX_VIEW_FILE_BYTES } from '../memory'
import { cutText } from '../lib/text'
import { inOneGo, type Breather } from '../lib/time-slices'

/** Hidden entries (which include temp files) and node_modules never show in the browser. */
function isListed(name: string): boolean {
  return !name.startsWith('.') && name !== 'node_modules'
}

/** How much the memory browser reads: the Memory tool's own limits. */
export interface BrowserLimits {
  /** Largest text file shown (the largest file the tool edits). */
  readonly maxTextBytes: number
  /** Largest image shown. */
  readonly maxImageBytes: number
  /** Most bytes one search reads in all (files past it are not searched). */
  readonly maxSearchBytes: number
}

/**
 * Every file and folder of the memory folder, sorted by path; folders carry their total size.
 * `breathe` is asked after each entry (default: never gives the loop back, the walk runs in one
 * go); a caller that slices it reads through `consistentRead`, so no change lands between.
 */
export async function listTree(
  workRoot: string,
  breathe: Breather = inOneGo,
): Promise<ReadonlyArray<MemoryEntry>> {
  const entries: MemoryEntry[] = []
  const tree = new FolderTree(workRoot)
  try {
    await walk(tree.root(), '', entries, breathe)
  } finally {
    tree.close()
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

// Through each folder's handle: a folder swapped for a symlink meanwhile is never followed.
// Returns the folder's total size, and whether it holds a file History keeps no copy of.
async function walk(
  folder: Folder,
  relative: string,
  into: MemoryEntry[],
  breathe: Breather,
): Promise<{ readonly size: number; readonly keeps: boolean }> {
  let total = 0
  let keeps = false
  // Where a delete of an entry here keeps it: the core's rule, asked of this folder now.
  const within = `${toVirtual(relative)}/`
  const keptAs = (name: string, kind: 'file' | 'folder', unreadable = false) =>
    asideName(
      name,
      (candidate) => folder.lstat(candidate) !== null,
      kind,
      within,
      unreadable ? 'unreadable' : 'not-in-history',
    )
  for (const dirent of folder.list()) {
    if (!isListed(dirent.name)) continue
    const due = breathe()
    if (due) await due
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name
    const stats = folder.lstat(dirent.name)
    if (stats?.isFile()) {
      const unreadable = mayNotRead(stats, folder.entry(dirent.name))
      // So that a delete's confirmation can say the file will be kept aside, not lost, why,
      // and under which name.
      const why = keepsNoCopy(dirent.name, stats, folder.entry(dirent.name))
        ? stats.size > MAX_VERSIONED_BYTES
          ? ('too-large' as const)
          : entryNameProblem(dirent.name) !== null
            ? ('name-not-allowed' as const)
            : ('unreadable' as const)
        : null
      into.push({
        path: toVirtual(childRelative),
        kind: 'file',
        size: stats.size,
        modifiedAt: stats.mtimeMs,
        ...(why ? { notInHistory: why, keptAsideAs: keptAs(dirent.name, 'file', unreadable) } : {}),
        ...(unreadable ? { unreadable: true as const } : {}),
      })
      keeps ||= why !== null
      total += stats.size
    } else if (stats?.isDirectory()) {
      const entry: MemoryEntry = {
        path: toVirtual(childRelative),
        kind: 'dir',
        size: 0,
        modifiedAt: stats.mtimeMs,
      }
      // A folder Cairn may not open or list (another account's, a backup tool's) is named as
      // unreadable and the walk goes on: history skips it the same way, and one such folder
      // emptied the whole tree, search and size meter (review hunt12-story D3).
      let child: Folder | null
      try {
        child = folder.openChildIfFolder(dirent.name)
      } catch (error) {
        if (!isDenied(error)) throw error
        into.push({ ...entry, unreadable: true })
        continue
      }
      if (!child) continue
      const index = into.length
      into.push(entry)
      try {
        const inside = await walk(child, childRelative, into, breathe)
        into[index] = {
          ...entry,
          size: inside.size,
          ...(inside.keeps ? { keptAsideAs: keptAs(dirent.name, 'folder') } : {}),
        }
        total += inside.size
        keeps ||= inside.keeps
      } catch (error) {
        if (!isDenied(error)) throw error
        // Opened but not listed or entered: nothing of what it holds is shown.
        into.length = index
        into.push({ ...entry, unreadable: true })
      } finally {
        child.close()
      }
    }
  }
  return { size: total, keeps }
}

/** Every file and folder memory held after commit `at` (read-only), as the tree shows them. */
export async function listTreeAt(
  memory: Pick<VersionedMemory, 'listAt'>,
  at: string,
): Promise<ReadonlyArray<MemoryEntry>> {
  return (await memory.listAt(at)).filter((entry) =>
    segmentsOf(toRelative(entry.path)).every(isListed),
  )
}

/**
 * One memory file for the viewer: text, or an image as base64, or "binary". A file over the
 * limits comes back as `too-large`, without its content (the window would freeze on it).
 */
export async function readMemoryFile(
  workRoot: string,
  virtual: string,
  limits: BrowserLimits,
): Promise<MemoryFile> {
  const relative = toRelative(virtual)
  if (relative === '' || segmentsOf(relative).some((segment) => !isListed(segment))) {
    throw notFound(virtual)
  }
  const tree = new FolderTree(workRoot)
  try {
    const found = tree.find(relative)
    if (found.kind !== 'file') throw notFound(virtual)
    const max = maxBytesOf(relative, limits)
    if (found.stats.size > max) return tooLarge(virtual, found.stats.size)
    const bytes = readAtMost(found.parent, found.name, found.stats, max)
    if (bytes === null) return tooLarge(virtual, found.stats.size)
    return withinCap(memoryFile(virtual, bytes), limits)
  } finally {
    tree.close()
  }
}

/** One memory file as it was after commit `at`, within the same limits. */
export async function readMemoryFileAt(
  memory: Pick<VersionedMemory, 'readBytesAt'>,
  virtual: string,
  at: string,
  limits: BrowserLimits,
): Promise<MemoryFile> {
  const relative = toRelative(virtual)
  if (relative === '' || segmentsOf(relative).some((segment) => !isListed(segment))) {
    throw notFound(virtual)
  }
  const bytes = await memory.readBytesAt(virtual, at)
  if (!bytes) throw new CairnError('not-found', `${virtual} was not a file in that version.`)
  if (bytes.byteLength > maxBytesOf(relative, limits)) return tooLarge(virtual, bytes.byteLength)
  return withinCap(
    memoryFile(virtual, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
    limits,
  )
}

/**
 * The most bytes read of a file before what it holds is known: a file named like an image may
 * be one (the image cap) or text (the text cap), so the larger of the two.
 */
function maxBytesOf(relative: string, limits: BrowserLimits): number {
  return IMAGE_TYPES[path.extname(relative).toLowerCase()]
    ? Math.max(limits.maxImageBytes, limits.maxTextBytes)
    : limits.maxTextBytes
}

/**
 * `file` held to the cap of what it turned out to be: an image to the image cap, anything else
 * to the text cap. A text file named `.png` is text, as the Memory tool and the search read it,
 * so the image cap (smaller) does not make it "too large" here alone.
 */
function withinCap(file: MemoryFile, limits: BrowserLimits): MemoryFile {
  const cap = file.kind === 'image' ? limits.maxImageBytes : limits.maxTextBytes
  return file.size > cap ? tooLarge(file.path, file.size) : file
}

function tooLarge(virtual: string, size: number): MemoryFile {
  return { path: virtual, size, kind: 'too-large', text: null, mediaType: null, data: null }
}

function memoryFile(virtual: string, bytes: Buffer): MemoryFile {
  const relative = toRelative(virtual)
  // Only what is an image is shown as one: a text file named `notes.png` drew as a broken
  // image; it shows as its text (or as "not text"), and the view says the name misleads. An
  // image is shown as what its bytes say: a PNG saved as `photo.jpg` is a PNG.
  const mediaType = IMAGE_TYPES[path.extname(relative).toLowerCase()] ? imageTypeOf(bytes) : null
  if (mediaType) {
    return {
      path: virtual,
      size: bytes.byteLength,
      kind: 'image',
      text: null,
      mediaType,
      data: bytes.toString('base64'),
    }
  }
  const text = decodeUtf8(bytes)
  return {
    path: virtual,
    size: bytes.byteLength,
    kind: text === null ? 'binary' : 'text',
    text,
    mediaType: text === null ? null : 'text/plain',
    data: null,
  }
}

// Reads the file through its folder's handle, never more than `max` bytes (null when it grew
// past that since it was looked at).
function readAtMost(folder: Folder, name: string, expected: Stats, max: number): Buffer | null {
  const fd = disk.openSync(folder.entry(name), OPEN.READ | OPEN.NOFOLLOW)
  try {
    const stats = disk.fstatSync(fd)
    if (!stats.isFile() || !sameEntry(stats, expected)) throw notFound(name)
    const buffer = Buffer.alloc(Math.min(stats.size, max) + 1)
    let length = 0
    while (length < buffer.length) {
      const read = disk.readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
    }
    return length > max ? null : buffer.subarray(0, length)
  } finally {
    // Only read: what was read stands, and a read's own error is the one told.
    closeQuietly(fd)
  }
}

const MAX_HITS = 200
const MAX_LINE = 300
const CHUNK = 64 * 1024

/**
 * Case-insensitive search over the text files, one hit per matching line, capped at 200
 * hits. Files are read in 64 KiB chunks, never whole; files larger than the Memory tool
 * would view and binary files (images among them: a text file named `.png` is searched as the
 * text it is) are skipped, and the search stops after reading `maxSearchBytes` in all.
 * `breathe` is asked at each entry listed and each file read (default: never gives the loop
 * back, the search runs in one go); a caller that slices it searches through `consistentRead`
 * (`searchLive`), so no change lands between.
 */
export async function searchMemories(
  workRoot: string,
  query: string,
  limits: BrowserLimits,
  breathe: Breather = inOneGo,
): Promise<ReadonlyArray<MemorySearchHit>> {
  const needle = query.toLowerCase()
  if (!needle) return []
  const hits: MemorySearchHit[] = []
  let budget = limits.maxSearchBytes
  const tree = new FolderTree(workRoot)
  try {
    for (const entry of await listTree(workRoot, breathe)) {
      if (entry.kind !== 'file' || entry.unreadable) continue
      if (entry.size > MAX_VIEW_FILE_BYTES || entry.size > budget) continue
      const relative = toRelative(entry.path)
      const found = tree.find(relative)
      if (found.kind !== 'file') continue
      budget -= found.stats.size
      searchFile(found.parent, found.name, entry.path, needle, hits)
      if (hits.length >= MAX_HITS) break
      // A search of a large folder must not hold the main process for its whole length.
      const due = breathe()
      if (due) await due
    }
  } finally {
    tree.close()
  }
  return hits.slice(0, MAX_HITS)
}

function searchFile(
  folder: Folder,
  name: string,
  virtual: string,
  needle: string,
  hits: MemorySearchHit[],
): void {
  let fd: number
  try {
    fd = disk.openSync(folder.entry(name), OPEN.READ | OPEN.NOFOLLOW)
  } catch (error) {
    // A file Cairn may not read is skipped, as a binary one is: the rest is still searched.
    if (isCode(error, 'ENOENT') || isCode(error, 'ELOOP') || isDenied(error)) return
    throw error
  }
  try {
    if (!disk.fstatSync(fd).isFile()) return
    const decoder = new TextDecoder('utf-8', { fatal: true })
    const chunk = Buffer.alloc(CHUNK)
    let carry = ''
    let lineNumber = 0
    // Lines are bounded by the file size cap (files over it are not searched at all).
    const scan = (text: string, final: boolean): boolean => {
      const lines = (carry + text).split('\n')
      carry = final ? '' : (lines.pop() ?? '')
      for (const line of lines) {
        lineNumber++
        if (!line.toLowerCase().includes(needle)) continue
        hits.push({ path: virtual, line: lineNumber, text: cutText(line, MAX_LINE) })
        if (hits.length >= MAX_HITS) return false
      }
      return true
    }
    for (;;) {
      const read = disk.readSync(fd, chunk, 0, CHUNK, null)
      const bytes = chunk.subarray(0, read)
      if (bytes.includes(0)) return
      let text: string
      try {
        text = decoder.decode(bytes, { stream: read > 0 })
      } catch {
        return
      }
      if (read === 0) {
        if (carry !== '' || text !== '') scan(text, true)
        return
      }
      if (!scan(text, false)) return
    }
  } finally {
    closeQuietly(fd)
  }
}

function notFound(virtual: string): CairnError {
  return new CairnError('not-found', `${virtual} does not exist.`)
}
