/**
 * The disk side of the handler: symlink-safe lookups, atomic writes, owner-only modes.
 * Every function takes the real root and a posix `relative` path that already passed the path rules.
 *
 * The metadata calls on the command path (realpath, lstat, open, write, rename, close) are
 * synchronous: each takes microseconds on a local disk, while each async hop through libuv's
 * thread pool cost more than the call itself and, on a busy machine, a scheduling delay on top.
 * The fsyncs, which take milliseconds, stay asynchronous so the event loop keeps running.
 */

import { randomUUID } from 'node:crypto'
import fss, { constants, type Stats } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { TEMP_FILE_PREFIX } from './types'

const fsync = promisify(fss.fsync)

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
    const resolved = realpathOrNull(path.dirname(full))
    const expected = path.dirname(realPath(realRoot(root), relative))
    if (resolved !== null && resolved === expected) {
      const stats = lstatOrNull(full)
      if (stats === null) return { kind: 'missing', parentIsDirectory: true }
      if (stats.isFile()) return { kind: 'file', stats }
      if (stats.isDirectory()) return { kind: 'directory', stats }
      return { kind: 'special', at: relative }
    }
  }
  return walk(root, relative)
}

const realRoots = new Map<string, string>()

// The root's real path, resolving only its ancestors (e.g. /tmp on macOS): were the root itself
// a link, the fast path would then never match and the walk refuses it. Cached per root.
function realRoot(root: string): string {
  let cached = realRoots.get(root)
  if (cached === undefined) {
    cached = path.join(fss.realpathSync.native(path.dirname(root)), path.basename(root))
    realRoots.set(root, cached)
  }
  return cached
}

function realpathOrNull(real: string): string | null {
  try {
    return fss.realpathSync.native(real)
  } catch {
    return null
  }
}

function walk(root: string, relative: string): Lookup {
  const segments = relative === '' ? [] : relative.split('/')
  let current = root
  let stats = lstatOrNull(current)
  if (!stats?.isDirectory()) return { kind: 'special', at: '' }
  for (let i = 0; i < segments.length; i++) {
    current = path.join(current, segments[i]!)
    stats = lstatOrNull(current)
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

function lstatOrNull(real: string): Stats | null {
  try {
    return fss.lstatSync(real)
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return null
    throw error
  }
}

/** Reads a regular file without following a symlink planted at the last moment. */
export async function readRegularFile(real: string): Promise<Buffer> {
  const fd = fss.openSync(real, constants.O_RDONLY | O_NOFOLLOW)
  try {
    if (!fss.fstatSync(fd).isFile()) {
      throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' })
    }
    return fss.readFileSync(fd)
  } finally {
    fss.closeSync(fd)
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
      const stats = lstatOrNull(current)
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
 * secret scan) runs while the temp file is flushed; if it throws, nothing is renamed.
 */
export async function atomicWrite(
  real: string,
  data: string | Uint8Array,
  beforeCommit: () => Promise<void> = async () => {},
): Promise<void> {
  const dir = path.dirname(real)
  const temp = path.join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`)
  let fd: number | undefined
  try {
    // The mode is only ever narrowed by the umask, so the file is never more than owner-only.
    fd = fss.openSync(temp, WRITE_NEW | O_NOFOLLOW, FILE_MODE)
    fss.writeFileSync(fd, data)
    const [flush, check] = await Promise.allSettled([fsync(fd), beforeCommit()])
    if (flush.status === 'rejected') throw flush.reason
    if (check.status === 'rejected') throw check.reason
    fss.closeSync(fd)
    fd = undefined
    fss.renameSync(temp, real)
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd)
    try {
      fss.unlinkSync(temp)
    } catch {
      // Never created, or already renamed.
    }
    throw error
  }
  // The rename has happened: the new content is in place, so reporting a failure now would
  // tell Claude (and history) that nothing changed when something did. Durability of the
  // folder entry is best effort from here.
  await syncDirectory(dir).catch(() => {})
}

const WRITE_NEW = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY

/** Flushes a folder's entries (a rename is durable only once its folder is). */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; its rename is already journaled by NTFS.
  if (process.platform === 'win32') return
  const fd = fss.openSync(dir, constants.O_RDONLY)
  try {
    await fsync(fd)
  } finally {
    fss.closeSync(fd)
  }
}

function closeQuietly(fd: number): void {
  try {
    fss.closeSync(fd)
  } catch {
    // Already closed.
  }
}

/** Node's errno code of an error, if any. */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
