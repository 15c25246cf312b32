/**
 * The disk side of the handler: symlink-safe lookups, atomic writes, owner-only modes.
 * Every function takes the real root and a posix `relative` path that already passed the path rules.
 */

import { randomUUID } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { TEMP_FILE_PREFIX } from './types'

/** Mode of every file the handler writes: owner read/write only. */
export const FILE_MODE = 0o600
/** Mode of every folder the handler creates: owner only. */
export const DIR_MODE = 0o700

// 0 where the platform lacks it (Windows); the lstat walk below still refuses links there.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0

/** The real path of a relative memory path. */
export function realPath(root: string, relative: string): string {
  return relative === '' ? root : path.join(root, ...relative.split('/'))
}

/** What a memory path names on disk, found without following any symlink. */
export type Lookup =
  | { readonly kind: 'file'; readonly stats: Stats }
  | { readonly kind: 'directory'; readonly stats: Stats }
  /** Nothing there. `parentIsDirectory` tells whether the parent folder exists as a real folder. */
  | { readonly kind: 'missing'; readonly parentIsDirectory: boolean }
  /** An ancestor (`at`, relative) is a regular file, so nothing can exist below it. */
  | { readonly kind: 'under-file'; readonly at: string }
  /** The path or an ancestor (`at`, relative) is a symlink, device, socket or FIFO. */
  | { readonly kind: 'special'; readonly at: string }

/**
 * Looks a path up one segment at a time with `lstat`, so a symlink anywhere on the way (even
 * one pointing inside the root) is never followed.
 */
export async function lookup(root: string, relative: string): Promise<Lookup> {
  const segments = relative === '' ? [] : relative.split('/')
  let current = root
  let stats = await lstatOrNull(current)
  if (!stats?.isDirectory()) return { kind: 'special', at: '' }
  for (let i = 0; i < segments.length; i++) {
    current = path.join(current, segments[i]!)
    stats = await lstatOrNull(current)
    const last = i === segments.length - 1
    if (stats === null) return { kind: 'missing', parentIsDirectory: last }
    if (stats.isDirectory()) continue
    const at = segments.slice(0, i + 1).join('/')
    if (!stats.isFile()) return { kind: 'special', at }
    if (last) return { kind: 'file', stats }
    return { kind: 'under-file', at }
  }
  return { kind: 'directory', stats: stats! }
}

async function lstatOrNull(real: string): Promise<Stats | null> {
  try {
    return await fs.lstat(real)
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return null
    throw error
  }
}

/** Reads a regular file without following a symlink planted at the last moment. */
export async function readRegularFile(real: string): Promise<Buffer> {
  const handle = await fs.open(real, constants.O_RDONLY | O_NOFOLLOW)
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' })
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

/**
 * Creates the missing folders of `relativeDir` (mode 0700) and returns the ones it created,
 * deepest last, so a failed write can remove them again. Refuses to pass through anything but
 * real folders.
 */
export async function ensureDirectories(
  root: string,
  relativeDir: string,
): Promise<ReadonlyArray<string>> {
  const created: string[] = []
  if (relativeDir === '') return created
  let current = root
  try {
    for (const segment of relativeDir.split('/')) {
      current = path.join(current, segment)
      const stats = await lstatOrNull(current)
      if (stats?.isDirectory()) continue
      if (stats !== null) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
      await fs.mkdir(current, { mode: DIR_MODE })
      created.push(current)
      // mkdir's mode is filtered by the umask; make it exactly owner-only.
      await fs.chmod(current, DIR_MODE)
    }
  } catch (error) {
    await removeDirectories(created)
    throw error
  }
  return created
}

/** Removes folders `ensureDirectories` created (deepest first), ignoring ones that are gone. */
export async function removeDirectories(created: ReadonlyArray<string>): Promise<void> {
  for (const dir of [...created].reverse()) await fs.rmdir(dir).catch(() => {})
}

/**
 * Writes `data` to `real` atomically: a hidden temp file in the same folder, fsync, rename over
 * the target, fsync the folder. The temp file never survives a failure.
 */
export async function atomicWrite(real: string, data: string | Buffer): Promise<void> {
  const dir = path.dirname(real)
  const temp = path.join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`)
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(
      temp,
      constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | O_NOFOLLOW,
      FILE_MODE,
    )
    await handle.writeFile(data)
    await handle.chmod(FILE_MODE)
    await handle.sync()
    await handle.close()
    handle = undefined
    await fs.rename(temp, real)
  } catch (error) {
    await handle?.close().catch(() => {})
    await fs.unlink(temp).catch(() => {})
    throw error
  }
  await syncDirectory(dir)
}

/** Flushes a folder's entries (a rename is durable only once its folder is). */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; its rename is already journaled by NTFS.
  if (process.platform === 'win32') return
  const handle = await fs.open(dir, constants.O_RDONLY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Node's errno code of an error, if any. */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
