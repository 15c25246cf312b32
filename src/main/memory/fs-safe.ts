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
 * Looks a path up without following any symlink (even one pointing inside the root).
 * Fast path: when the real path of the parent folder is exactly root + parent, no ancestor is a
 * link, and one `lstat` of the target (run at the same time) tells the rest. Otherwise (a link, a
 * missing parent, a case-insensitive disk spelling the path differently) it walks one segment
 * at a time with `lstat`.
 */
export async function lookup(root: string, relative: string): Promise<Lookup> {
  if (relative !== '') {
    const full = realPath(root, relative)
    const parent = path.dirname(full)
    const [resolved, expected, stats] = await Promise.all([
      fs.realpath(parent).catch(() => null),
      realRoot(root).then((real) => path.dirname(realPath(real, relative))),
      fs.lstat(full).catch((error: unknown) => (isCode(error, 'ENOENT') ? null : undefined)),
    ])
    if (resolved !== null && resolved === expected && stats !== undefined) {
      if (stats === null) return { kind: 'missing', parentIsDirectory: true }
      if (stats.isFile()) return { kind: 'file', stats }
      if (stats.isDirectory()) return { kind: 'directory', stats }
      return { kind: 'special', at: relative }
    }
  }
  return walk(root, relative)
}

const realRoots = new Map<string, Promise<string>>()

// The root's real path, resolving only its ancestors (e.g. /tmp on macOS): were the root itself
// a link, the fast path would then never match and the walk refuses it. Cached per root.
function realRoot(root: string): Promise<string> {
  let cached = realRoots.get(root)
  if (!cached) {
    cached = fs.realpath(path.dirname(root)).then((dir) => path.join(dir, path.basename(root)))
    cached.catch(() => realRoots.delete(root))
    realRoots.set(root, cached)
  }
  return cached
}

async function walk(root: string, relative: string): Promise<Lookup> {
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
 * the target, fsync the folder. The temp file never survives a failure. `beforeCommit` (e.g. the
 * secret scan) runs while the temp file is written and flushed; if it throws, nothing is renamed.
 */
export async function atomicWrite(
  real: string,
  data: string | Buffer,
  beforeCommit: () => Promise<void> = async () => {},
): Promise<void> {
  const dir = path.dirname(real)
  const temp = path.join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`)
  let handle: fs.FileHandle | undefined
  const flushed = (async () => {
    // The mode is only ever narrowed by the umask, so the file is never more than owner-only.
    handle = await fs.open(temp, WRITE_NEW | O_NOFOLLOW, FILE_MODE)
    await handle.writeFile(data)
    await handle.sync()
    await handle.close()
    handle = undefined
  })()
  try {
    const [write, check] = await Promise.allSettled([flushed, beforeCommit()])
    if (write.status === 'rejected') throw write.reason
    if (check.status === 'rejected') throw check.reason
    await fs.rename(temp, real)
  } catch (error) {
    await flushed.catch(() => {})
    await (handle as fs.FileHandle | undefined)?.close().catch(() => {})
    await fs.unlink(temp).catch(() => {})
    throw error
  }
  await syncDirectory(dir)
}

const WRITE_NEW = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY

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
