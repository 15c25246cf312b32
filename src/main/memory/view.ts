/** The `view` command: a directory listing two levels deep, a numbered file, or an image. */

import path from 'node:path'
import { ChangedUnderfootError, Folder, readFileIn, sameEntry } from '../lib/folders'
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
  const read = () => readFileIn(found.parent, found.name, found.stats)
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
  if (size > max) {
    throw new CommandError(
      'too-large',
      `Error: The image ${virtual} is ${size.toLocaleString('en-US')} bytes; images up to ${max.toLocaleString('en-US')} bytes can be viewed.`,
    )
  }
  const bytes = read()
  // Sent as the image its bytes say it is: a PNG saved as `photo.jpg` is one (the API refuses
  // an image whose declared type its bytes contradict).
  const actual = imageTypeOf(bytes)
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

/** The image type `bytes` start as (the PNG or JPEG signature), or null when neither. */
export function imageTypeOf(bytes: Uint8Array): 'image/png' | 'image/jpeg' | null {
  if (hasImageSignature(bytes, 'image/png')) return 'image/png'
  if (hasImageSignature(bytes, 'image/jpeg')) return 'image/jpeg'
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
