/** The `view` command: a directory listing two levels deep, a numbered file, or an image. */

import path from 'node:path'
import { ChangedUnderfootError, Folder, sameEntry } from '../lib/folders'
import type { CommandContext } from './context'
import { formatFileView, MAX_VIEW_FILE_BYTES } from './format'
import { listDirectory } from './listing'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { MAX_LINES, splitLines } from './text-model'
import type { MemoryExecution } from './types'

/** Media types by lower-case extension: the files `view` and the history browser show as images. */
export const IMAGE_TYPES: Readonly<Record<string, 'image/png' | 'image/jpeg'>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
}

/** Runs `view` on a parsed path, with an optional `[start, end]` line range. */
export async function view(
  ctx: CommandContext,
  target: ParsedMemoryPath,
  viewRange: readonly [number, number] | undefined,
): Promise<MemoryExecution> {
  const found = ctx.tree.find(target.relative)
  if (found.kind === 'special')
    throw new CommandError('special-file', specialMessage(target.virtual))
  if (found.kind === 'missing' || found.kind === 'under-file') {
    throw new CommandError(
      'not-found',
      `The path ${target.virtual} does not exist. Please provide a valid path.`,
    )
  }
  // A view_range on a directory pages through a listing too long for one reply.
  if (found.kind === 'directory') {
    const folder = ctx.tree.folder(target.relative)
    if (!(folder instanceof Folder) || !sameEntry(folder.stats, found.stats)) {
      throw new ChangedUnderfootError()
    }
    return success(listDirectory(folder, target.virtual, found.stats.size, viewRange))
  }
  // The bytes the check before a view read through this tree, when it read them (it hashes a
  // file Cairn wrote last): the file it found, read once.
  const read = () => ctx.tree.readFile(target.relative, found.parent, found.name, found.stats)
  const imageType = IMAGE_TYPES[path.extname(target.relative).toLowerCase()]
  if (imageType) {
    return viewImage(ctx, target.virtual, read, found.stats.size, imageType, viewRange)
  }
  return success(viewText(target.virtual, read, found.stats.size, viewRange))
}

function viewText(
  virtual: string,
  read: () => Buffer,
  size: number,
  viewRange: readonly [number, number] | undefined,
): string {
  if (size > MAX_VIEW_FILE_BYTES) {
    throw new CommandError(
      'too-large',
      `Error: File ${virtual} is too large to view (${size.toLocaleString('en-US')} bytes).`,
    )
  }
  const text = withoutBom(decodeText(read(), virtual)).text
  const { lines } = splitLines(text)
  if (lines.length > MAX_LINES) {
    throw new CommandError(
      'too-large',
      `File ${virtual} exceeds maximum line limit of ${MAX_LINES.toLocaleString('en-US')} lines.`,
    )
  }
  const [start, end] = resolveRange(viewRange, lines.length)
  const toEnd = viewRange === undefined || viewRange[1] === -1
  return formatFileView(virtual, lines.slice(start - 1, end), start, end, toEnd)
}

/** Checks a `view_range` against a file of `lineCount` lines; returns 1-based inclusive bounds. */
export function resolveRange(
  viewRange: readonly [number, number] | undefined,
  lineCount: number,
): readonly [number, number] {
  if (!viewRange) return [1, lineCount]
  const [start, end] = viewRange
  const shown = `[${start}, ${end}]`
  if (start < 1 || start > Math.max(lineCount, 1)) {
    throw new CommandError(
      'invalid-range',
      `Error: Invalid \`view_range\`: ${shown}. Its first element \`${start}\` should be within the range of lines of the file: [1, ${Math.max(lineCount, 1)}]`,
    )
  }
  if (end === -1) return [start, lineCount]
  if (end < start) {
    throw new CommandError(
      'invalid-range',
      `Error: Invalid \`view_range\`: ${shown}. Its second element \`${end}\` should be -1 or larger than or equal to its first element \`${start}\``,
    )
  }
  // An end past the last line shows up to the last line (as the reference handler does).
  return [start, Math.min(end, lineCount)]
}

const BOM = '\uFEFF'

/**
 * A text without its leading byte order mark, if it has one. The mark is not part of line 1:
 * `view` does not show it and edits match and count lines without it (the memory browser's
 * decoder drops it too); an edit puts it back at the start of the file (`withBom`).
 */
export function withoutBom(text: string): { readonly text: string; readonly bom: boolean } {
  return text.startsWith(BOM) ? { text: text.slice(1), bom: true } : { text, bom: false }
}

/** `text` with a leading byte order mark when `bom` (the file had one). */
export function withBom(text: string, bom: boolean): string {
  return bom ? BOM + text : text
}

/** Decodes UTF-8 strictly: a binary file must not be edited (or shown) as mangled text. */
export function decodeText(bytes: Uint8Array, virtual: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    throw new CommandError(
      'not-text',
      `Error: ${virtual} is not UTF-8 text. Memory shows and edits text files, and shows .png and .jpg images.`,
    )
  }
}

function viewImage(
  ctx: CommandContext,
  virtual: string,
  read: () => Buffer,
  size: number,
  mediaType: 'image/png' | 'image/jpeg',
  viewRange: readonly [number, number] | undefined,
): MemoryExecution {
  const max = ctx.limits.maxImageBytes
  const tooLarge = (): CommandError =>
    new CommandError(
      'too-large',
      `Error: The image ${virtual} is ${size.toLocaleString('en-US')} bytes; images up to ${max.toLocaleString('en-US')} bytes can be viewed.`,
    )
  // Past what any view reads, the name is all there is to go by.
  if (size > max && size > MAX_VIEW_FILE_BYTES) throw tooLarge()
  const bytes = read()
  // Sent as the image its bytes say it is: a PNG saved as `photo.jpg` is one (the API refuses
  // an image whose declared type its bytes contradict).
  const actual = imageTypeOf(bytes)
  // A text file named `.png` larger than an image may be is text, and told in text's words.
  if (actual !== null && size > max) throw tooLarge()
  // The API refuses an image over 8,000 pixels a side, and the whole request with it.
  const pixels = actual === null ? null : imageSizeOf(bytes)
  if (pixels && Math.max(pixels.width, pixels.height) > MAX_IMAGE_SIDE) {
    const [width, height] = [pixels.width, pixels.height].map((n) => n.toLocaleString('en-US'))
    throw new CommandError(
      'too-large',
      `Error: The image ${virtual} is ${width}×${height} pixels; images up to ${MAX_IMAGE_SIDE.toLocaleString('en-US')} pixels a side can be viewed.`,
    )
  }
  if (actual === null) {
    // Named like an image but holding text (Claude may create `notes.png` as text, and edit
    // it): shown as the text it is, as the Memory tab shows it.
    try {
      return success(viewText(virtual, () => bytes, size, viewRange))
    } catch (error) {
      if (!(error instanceof CommandError) || error.code !== 'not-text') throw error
    }
    throw new CommandError(
      'not-text',
      `Error: ${virtual} is not a valid ${mediaType === 'image/png' ? 'PNG' : 'JPEG'} image.`,
    )
  }
  return success([
    { type: 'text', text: `Here's the image ${virtual}:` },
    {
      type: 'image',
      source: { type: 'base64', media_type: actual, data: bytes.toString('base64') },
    },
  ])
}

/** The most pixels a side of an image the API takes (it refuses the request over one larger). */
export const MAX_IMAGE_SIDE = 8_000

/** The width and height of an image `imageTypeOf` accepts (from PNG's IHDR, JPEG's frame). */
function imageSizeOf(bytes: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (hasImageSignature(bytes, 'image/png')) {
    return { width: view.getUint32(16), height: view.getUint32(20) }
  }
  const frame = jpegFrameAt(bytes)
  return frame === null
    ? null
    : { height: view.getUint16(frame + 1), width: view.getUint16(frame + 3) }
}

/**
 * The image type `bytes` hold (PNG or JPEG), or null when neither. The signature alone is not
 * enough: a file that starts with one and holds something else would go to the API as an image
 * and be refused there, whole request and all. So the start of the structure is checked too: a
 * PNG's first chunk is its header (`IHDR`, 13 bytes, with sizes and modes the format allows),
 * and a JPEG's markers run in order, each segment within the file, up to its scan (`SOS`) after
 * a frame header (`SOFn`).
 */
export function imageTypeOf(bytes: Uint8Array): 'image/png' | 'image/jpeg' | null {
  if (hasImageSignature(bytes, 'image/png')) return isPng(bytes) ? 'image/png' : null
  if (hasImageSignature(bytes, 'image/jpeg')) return isJpeg(bytes) ? 'image/jpeg' : null
  return null
}

/** True when `bytes` start as a file of `mediaType` must (the PNG or JPEG signature). */
export function hasImageSignature(
  bytes: Uint8Array,
  mediaType: 'image/png' | 'image/jpeg',
): boolean {
  const signature =
    mediaType === 'image/png'
      ? [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
      : [0xff, 0xd8, 0xff]
  return signature.every((byte, i) => bytes[i] === byte)
}

// The signature, then the header chunk (PNG spec 11.2.2):
//   00 00 00 0d  49 48 44 52  width(4) height(4) depth(1) colour(1) 00 00 interlace(1)  crc(4)
const PNG_DEPTHS: Readonly<Record<number, ReadonlyArray<number>>> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
}

function isPng(bytes: Uint8Array): boolean {
  if (bytes.length < 8 + 25) return false
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(8) !== 13 || view.getUint32(12) !== 0x49484452) return false
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  const [depth, colour, compression, filter, interlace] = bytes.subarray(24, 29)
  return (
    width > 0 &&
    width < 2 ** 31 &&
    height > 0 &&
    height < 2 ** 31 &&
    (PNG_DEPTHS[colour!]?.includes(depth!) ?? false) &&
    compression === 0 &&
    filter === 0 &&
    (interlace === 0 || interlace === 1)
  )
}

// SOI (ff d8), then segments: ff, a marker, a two-byte length counting itself, its bytes; any
// number of ff fill bytes may stand before a marker. The scan's data follows SOS (ff da).
function isJpeg(bytes: Uint8Array): boolean {
  return jpegFrameAt(bytes) !== null
}

// Where the frame header's fields start (its precision, after its length), when the markers
// run as above; null when they do not.
function jpegFrameAt(bytes: Uint8Array): number | null {
  let at = 2
  let frame: number | null = null
  while (at < bytes.length) {
    if (bytes[at] !== 0xff) return null
    while (bytes[at] === 0xff) at++
    const marker = bytes[at]
    if (marker === undefined) return null
    at++
    // Markers without a length: TEM and RST0-7 (never before the scan, but harmless).
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue
    // A second SOI, an EOI before any scan, or a byte that is no marker.
    if (marker < 0xc0 || marker === 0xd8 || marker === 0xd9) return null
    if (at + 2 > bytes.length) return null
    const length = (bytes[at]! << 8) | bytes[at + 1]!
    if (length < 2 || at + length > bytes.length) return null
    // SOF0-15 but DHT (c4), JPG (c8) and DAC (cc): a frame header, 8 bytes at least.
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      if (length < 8) return null
      // A side of 0 (a height left to a later DNL marker, or none at all) is no image the API
      // takes: it would refuse the whole request over it.
      const sides = (bytes[at + 3]! << 8) | bytes[at + 4]!
      const width = (bytes[at + 5]! << 8) | bytes[at + 6]!
      if (sides === 0 || width === 0) return null
      frame = at + 2
    }
    if (marker === 0xda) return frame
    at += length
  }
  return null
}
