/**
 * Dry runs (`MemoryTool.preview`): what a command would change, and a fingerprint of the state
 * it was planned against, so a plan made now can be checked later ("has anything changed?").
 * A run that describes itself (`describe`) says the same, read before it writes, unprinted.
 * Everything is read through the command's own open folders (`ctx.tree`), never by path.
 */

import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { Folder, readFileIn, type FolderTree } from '../lib/folders'
import { PREVIEW_CHARS } from '../../shared/review'
import { decodeUtf8 } from '../lib/text'
import type { CommandContext } from './context'
import { isAddressableName, type ParsedMemoryPath } from './path-rules'
import type { MadeChange, MutatingCommand, PlannedChange } from './types'

/** Most files of a folder a plan lists by name (it counts them all). */
export const PLAN_FILE_LIST = 200

/** Files above this size are fingerprinted by size, time and inode instead of their bytes. */
const HASHED_BYTES = 8 * 1024 * 1024

/** The plan of a change to one file. `before` undefined: read it from disk. */
export async function planFile(
  ctx: CommandContext,
  command: MutatingCommand,
  target: ParsedMemoryPath,
  change: { readonly before?: string | null; readonly after: string | null },
): Promise<PlannedChange> {
  return {
    ...describeFile(ctx, command, target, change),
    fingerprint: fingerprint(ctx.tree, target.relative),
  }
}

/** The plan of a delete or rename of a file or folder (`to` for a rename). */
export async function planMove(
  ctx: CommandContext,
  command: 'delete' | 'rename',
  from: ParsedMemoryPath,
  kind: 'file' | 'dir',
  to: ParsedMemoryPath | null,
): Promise<PlannedChange> {
  // A file the plan does not read is fingerprinted by its size, time and inode (not read for it
  // either): a move needs no more than it to know the file is still the one the person saw.
  const prints = [fingerprint(ctx.tree, from.relative, PREVIEW_CHARS)]
  if (to) prints.push(fingerprint(ctx.tree, to.relative, PREVIEW_CHARS))
  return { ...describeMove(ctx, command, from, kind, to), fingerprint: prints.join('|') }
}

/**
 * What a change to one file does, as `planFile` says it but without a fingerprint: for a run
 * that describes itself, called before it writes. `before` undefined: read it from disk.
 */
export function describeFile(
  ctx: CommandContext,
  command: MutatingCommand,
  target: ParsedMemoryPath,
  change: { readonly before?: string | null; readonly after: string | null },
): MadeChange {
  const read = change.before !== undefined ? null : contentAt(ctx.tree, target.relative)
  const before = read ? read.text : (change.before ?? null)
  return {
    command,
    path: target.virtual,
    newPath: null,
    kind: 'file',
    before,
    after: change.after,
    notTextBytes: read?.notTextBytes ?? null,
    files: [],
    fileCount: 0,
  }
}

/** What a delete or rename does, as `planMove` says it but without a fingerprint. */
export function describeMove(
  ctx: CommandContext,
  command: 'delete' | 'rename',
  from: ParsedMemoryPath,
  kind: 'file' | 'dir',
  to: ParsedMemoryPath | null,
): MadeChange {
  const listed = kind === 'dir' ? listFiles(ctx.tree, from.relative) : null
  // A delete or rename needs no text but for the review card's preview: a file longer than a
  // preview carries is planned from its size alone (a stat), never read (review hunt13 D4,
  // review13-ui R4). No larger text is ever held for it, nor sent.
  const read = kind === 'file' ? contentAt(ctx.tree, from.relative, PREVIEW_CHARS) : null
  const before = read?.text ?? null
  return {
    command,
    path: from.virtual,
    newPath: to?.virtual ?? null,
    kind,
    before,
    // A rename leaves the text as it was, at its new path.
    after: command === 'rename' ? before : null,
    notTextBytes: read?.notTextBytes ?? null,
    unreadBytes: read?.unreadBytes ?? null,
    files: listed?.files ?? [],
    fileCount: listed?.count ?? 0,
  }
}

/**
 * The UTF-8 text of a regular file (null when it is missing or not text), and the size of one
 * that is there but not text, or (`unreadBytes`) over `readLimit` bytes and so not read.
 */
function contentAt(
  tree: FolderTree,
  relative: string,
  readLimit = Infinity,
): {
  readonly text: string | null
  readonly notTextBytes: number | null
  readonly unreadBytes?: number
} {
  const found = tree.find(relative)
  if (found.kind !== 'file') return { text: null, notTextBytes: null }
  if (found.stats.size > readLimit) {
    return { text: null, notTextBytes: null, unreadBytes: found.stats.size }
  }
  const text = decodeUtf8(readFileIn(found.parent, found.name, found.stats))
  return { text, notTextBytes: text === null ? found.stats.size : null }
}

/**
 * What is at `relative` now, in a short string: a content hash for a file, a hash of the
 * listing (names, sizes, times) for a folder, or what stands in the way.
 */
function fingerprint(tree: FolderTree, relative: string, hashedBytes = HASHED_BYTES): string {
  const found = tree.find(relative)
  switch (found.kind) {
    case 'missing':
      return 'missing'
    case 'under-file':
      return `under-file:${found.at}`
    case 'special':
      return `special:${found.at}`
    case 'file': {
      const { size, mtimeMs, ino } = found.stats
      if (size > hashedBytes) return `file:${size}:${mtimeMs}:${ino}`
      return `file:${hash(readFileIn(found.parent, found.name, found.stats))}`
    }
    case 'directory': {
      const lines: string[] = []
      walkFolder(tree, relative, (relativeChild, stats) => {
        lines.push(`${relativeChild}\t${stats.isDirectory() ? 'd' : stats.size}\t${stats.mtimeMs}`)
      })
      return `dir:${hash(Buffer.from(lines.sort().join('\n')))}`
    }
  }
}

function listFiles(
  tree: FolderTree,
  relative: string,
): { files: ReadonlyArray<string>; count: number } {
  const files: string[] = []
  let count = 0
  const base = `/memories/${relative}`
  walkFolder(tree, relative, (child, stats) => {
    if (!stats.isFile()) return
    count++
    files.push(`${base}/${child}`)
  })
  files.sort()
  return { files: files.slice(0, PLAN_FILE_LIST), count }
}

/** Visits every regular file and folder under `relative` that a memory path can name. */
function walkFolder(
  tree: FolderTree,
  relative: string,
  visit: (relative: string, stats: Stats) => void,
): void {
  const start = tree.folder(relative)
  if (!(start instanceof Folder)) return
  const walk = (folder: Folder, prefix: string): void => {
    for (const dirent of folder.list()) {
      if (!isAddressableName(dirent.name)) continue
      const stats = folder.lstat(dirent.name)
      if (!stats || !(stats.isFile() || stats.isDirectory())) continue
      const child = prefix ? `${prefix}/${dirent.name}` : dirent.name
      visit(child, stats)
      if (!stats.isDirectory()) continue
      const inner = folder.openChildIfFolder(dirent.name)
      if (!inner) continue
      try {
        walk(inner, child)
      } finally {
        inner.close()
      }
    }
  }
  walk(start, '')
}

function hash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}
