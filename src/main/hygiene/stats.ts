/**
 * The memory size meter: every file with its size, its use (from the read log), what viewing
 * it costs Claude in tokens, and whether one `view` can return it whole.
 */
import path from 'node:path'
import type { FileUse, MemoryEntry, MemoryStats } from '../../shared/types'
import { toRelative } from '../history'
import { closeQuietly, disk, OPEN } from '../lib/disk'
import { FolderTree, readFileIn, type Folder } from '../lib/folders'
import { decodeUtf8 } from '../lib/text'
import { inOneGo, type Breather } from '../lib/time-slices'
import { hasImageSignature, IMAGE_TYPES, MAX_VIEW_CHARS, wholeViewSize } from '../memory'
import type { ReadLog } from './read-log'
import { estimateTokens, imageTokens } from './tokens'

/** Files above this size are estimated from their size instead of read. */
const READ_LIMIT = 4 * 1024 * 1024
/** Bytes of an image read to find its size. */
const IMAGE_HEAD = 64 * 1024
/** Tokens of a view's header and answer around a file's lines. */
const VIEW_OVERHEAD = 15
/** What a refused view (a binary file) costs. */
const REFUSAL_TOKENS = 30

interface Measured {
  readonly size: number
  readonly modifiedAt: number
  readonly tokens: number
  readonly overViewLimit: boolean
}

/** Remembers what each file measured, by size and time, so an unchanged file is not read again. */
export type MeasureCache = Map<string, Measured>

/**
 * The meter for the memory folder `folder` as it is now. `breathe` is asked after each file
 * (default: never gives the loop back); a caller that slices it reads through `consistentRead`.
 */
export async function memoryStats(
  folder: string,
  entries: ReadonlyArray<MemoryEntry>,
  readLog: Pick<ReadLog, 'get' | 'since'>,
  cache: MeasureCache,
  breathe: Breather = inOneGo,
): Promise<MemoryStats> {
  const files: FileUse[] = []
  let totalBytes = 0
  let totalTokens = 0
  let listingChars = 0
  const seen = new Set<string>()
  // Files are read through their folders' handles: a folder swapped for a link is not followed.
  const tree = new FolderTree(folder)
  try {
    for (const entry of entries) {
      listingChars += entry.path.length + 8
      if (entry.kind !== 'file') continue
      const due = breathe()
      if (due) await due
      seen.add(entry.path)
      const measured = measure(tree, entry, cache)
      const record = readLog.get(entry.path)
      totalBytes += entry.size
      totalTokens += measured.tokens
      files.push({
        path: entry.path,
        size: entry.size,
        modifiedAt: entry.modifiedAt,
        lastReadAt: record?.read ?? null,
        lastChangedAt: record?.changed ?? null,
        tokens: measured.tokens,
        overViewLimit: measured.overViewLimit,
      })
    }
  } finally {
    tree.close()
  }
  for (const key of cache.keys()) if (!seen.has(key)) cache.delete(key)
  // The listing of the folder itself: its lines name each entry with its size.
  totalTokens += Math.ceil(listingChars / 4) + VIEW_OVERHEAD
  return {
    files,
    totalBytes,
    totalTokens,
    viewLimit: MAX_VIEW_CHARS,
    since: readLog.since,
  }
}

function measure(tree: FolderTree, entry: MemoryEntry, cache: MeasureCache): Measured {
  const known = cache.get(entry.path)
  if (known && known.size === entry.size && known.modifiedAt === entry.modifiedAt) return known
  const base = { size: entry.size, modifiedAt: entry.modifiedAt }
  let measured: Measured
  try {
    const found = tree.find(toRelative(entry.path))
    if (found.kind !== 'file') throw new Error('no longer a file')
    // Named like an image and starting like one: a `.png` that holds text is viewed as text.
    // The signature, not view's whole check: a JPEG's scan may start past the head read here,
    // and a file that starts like an image is no text either way (at most an over-count).
    const image = IMAGE_TYPES[path.extname(entry.path).toLowerCase()]
      ? head(found.parent, found.name)
      : null
    if (
      image &&
      (hasImageSignature(image, 'image/png') || hasImageSignature(image, 'image/jpeg'))
    ) {
      measured = { ...base, tokens: imageTokens(image), overViewLimit: false }
    } else if (entry.size > READ_LIMIT) {
      measured = { ...base, tokens: Math.ceil(entry.size / 4), overViewLimit: true }
    } else {
      const text = decodeUtf8(readFileIn(found.parent, found.name, found.stats, READ_LIMIT))
      if (text === null) {
        measured = { ...base, tokens: REFUSAL_TOKENS, overViewLimit: false }
      } else {
        // Line numbers and tabs: about two tokens a line on top of the text.
        const lines = text === '' ? 0 : text.split('\n').length
        const tokens = estimateTokens(text) + lines * 2 + VIEW_OVERHEAD
        measured = { ...base, tokens, overViewLimit: !wholeViewSize(entry.path, text).fits }
      }
    }
  } catch {
    // Removed or replaced since the listing: counted as nothing until the next look.
    return { ...base, tokens: 0, overViewLimit: false }
  }
  cache.set(entry.path, measured)
  return measured
}

function head(folder: Folder, name: string): Uint8Array {
  const fd = disk.openSync(folder.entry(name), OPEN.READ | OPEN.NOFOLLOW)
  try {
    const buffer = Buffer.alloc(IMAGE_HEAD)
    const bytesRead = disk.readSync(fd, buffer, 0, IMAGE_HEAD, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    closeQuietly(fd)
  }
}
