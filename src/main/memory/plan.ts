/**
 * Dry runs (`MemoryTool.preview`): what a command would change, and a fingerprint of the state
 * it was planned against, so a plan made now can be checked later ("has anything changed?").
 */

import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { decodeUtf8 } from '../lib/text'
import type { CommandContext } from './context'
import { lookup, readRegularFile, realPath } from './fs-safe'
import { isAddressableName, type ParsedMemoryPath } from './path-rules'
import type { MutatingCommand, PlannedChange } from './types'

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
  const before =
    change.before !== undefined ? change.before : await textAt(ctx.root, target.relative)
  return {
    command,
    path: target.virtual,
    newPath: null,
    kind: 'file',
    before,
    after: change.after,
    files: [],
    fileCount: 0,
    fingerprint: await fingerprint(ctx.root, target.relative),
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
  const listed = kind === 'dir' ? await listFiles(ctx.root, from.relative) : null
  const before = kind === 'file' ? await textAt(ctx.root, from.relative) : null
  const prints = [await fingerprint(ctx.root, from.relative)]
  if (to) prints.push(await fingerprint(ctx.root, to.relative))
  return {
    command,
    path: from.virtual,
    newPath: to?.virtual ?? null,
    kind,
    before,
    // A rename leaves the text as it was, at its new path.
    after: command === 'rename' ? before : null,
    files: listed?.files ?? [],
    fileCount: listed?.count ?? 0,
    fingerprint: prints.join('|'),
  }
}

/** The UTF-8 text of a regular file, or null when it is missing or not text. */
async function textAt(root: string, relative: string): Promise<string | null> {
  const found = await lookup(root, relative)
  if (found.kind !== 'file') return null
  return decodeUtf8(await readRegularFile(realPath(root, relative)))
}

/**
 * What is at `relative` now, in a short string: a content hash for a file, a hash of the
 * listing (names, sizes, times) for a folder, or what stands in the way.
 */
export async function fingerprint(root: string, relative: string): Promise<string> {
  const found = await lookup(root, relative)
  const real = realPath(root, relative)
  switch (found.kind) {
    case 'missing':
      return 'missing'
    case 'under-file':
      return `under-file:${found.at}`
    case 'special':
      return `special:${found.at}`
    case 'file': {
      const { size, mtimeMs, ino } = found.stats
      if (size > HASHED_BYTES) return `file:${size}:${mtimeMs}:${ino}`
      return `file:${hash(await readRegularFile(real))}`
    }
    case 'directory': {
      const lines: string[] = []
      await walk(real, '', async (relativeChild, stats) => {
        lines.push(`${relativeChild}\t${stats.isDirectory() ? 'd' : stats.size}\t${stats.mtimeMs}`)
      })
      return `dir:${hash(Buffer.from(lines.sort().join('\n')))}`
    }
  }
}

async function listFiles(
  root: string,
  relative: string,
): Promise<{ files: ReadonlyArray<string>; count: number }> {
  const files: string[] = []
  let count = 0
  const base = `/memories/${relative}`
  await walk(realPath(root, relative), '', async (child, stats) => {
    if (!stats.isFile()) return
    count++
    files.push(`${base}/${child}`)
  })
  files.sort()
  return { files: files.slice(0, PLAN_FILE_LIST), count }
}

/** Visits every regular file and folder under `dir` that a memory path can name. */
async function walk(
  dir: string,
  prefix: string,
  visit: (relative: string, stats: Stats) => Promise<void>,
): Promise<void> {
  let names: string[]
  try {
    names = await fs.readdir(dir)
  } catch {
    // Gone or unreadable since it was found: it lists as empty.
    return
  }
  for (const name of names) {
    if (!isAddressableName(name)) continue
    const full = path.join(dir, name)
    const stats = await fs.lstat(full).catch(() => null)
    if (!stats || !(stats.isFile() || stats.isDirectory())) continue
    const relative = prefix ? `${prefix}/${name}` : name
    await visit(relative, stats)
    if (stats.isDirectory()) await walk(full, relative, visit)
  }
}

function hash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}
