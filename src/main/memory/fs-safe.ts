/**
 * The disk side of the handler: symlink-safe lookups and owner-only folders (its writes go
 * through `lib/atomic-write`). Every function takes the real root and a posix `relative` path
 * that already passed the path rules.
 *
 * The metadata calls on the command path (realpath, lstat, open) are synchronous: each takes
 * microseconds on a local disk, while each async hop through libuv's thread pool cost more
 * than the call itself and, on a busy machine, a scheduling delay on top.
 */

import fss, { constants, type Stats } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { DIR_MODE } from '../lib/atomic-write'

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
    // Missing (or a dangling link): the segment-by-segment walk tells which.
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

/** Node's errno code of an error, if any. */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
