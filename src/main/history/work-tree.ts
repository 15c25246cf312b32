import { lstatSync, readdirSync, readFileSync, rmSync, type Dirent } from 'node:fs'
import { mkdir, rm, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { CairnError } from '../lib/errors'
import { atomicWrite, DIR_MODE, TEMP_FILE_PREFIX } from '../lib/atomic-write'
import { isMissing, lstatInside, lstatOrNull } from '../lib/lstat-inside'
import type { ObjectStore } from './object-store'
import type { StatCache } from './stat-cache'
import { childrenOf, type Node, type TreeNode } from './tree-state'

/** Names history never tracks: temp files of interrupted writes and anything named `.git`. */
export function isUntracked(name: string): boolean {
  return name.startsWith(TEMP_FILE_PREFIX) || name.toLowerCase() === '.git'
}

/** What a scan may use and update besides the store: the stat cache, and the files it saw. */
export interface ScanContext {
  readonly stats: StatCache | null
  /** Relative paths of the files the scan visited (a full scan prunes the cache to them). */
  readonly visited?: Set<string>
  /** Remove temp files of interrupted writes on the way (the scan at open). */
  readonly removeTemp?: boolean
}

/**
 * Reads what is on disk at `abs` (`relative` in the memory folder) as a history node, writing
 * blobs that are new. Regular files and directories only: symlinks and other special files are
 * not tracked, empty directories yield null (git cannot store them). `previous` (the committed
 * node at the same place) saves re-writing unchanged blobs; the stat cache saves reading and
 * hashing files whose size, times and inode did not change since they were last hashed.
 */
export async function scanNode(
  store: ObjectStore,
  abs: string,
  previous: Node | null,
  relative = '',
  context: ScanContext = { stats: null },
): Promise<Node | null> {
  // Synchronous reads: a scan touches every file at open, and a thread-pool round trip per
  // file costs far more than the read itself.
  let stats
  try {
    stats = lstatSync(abs)
  } catch (error) {
    if (isMissing(error)) return null
    throw error
  }
  if (stats.isFile()) {
    context.visited?.add(relative)
    const known = context.stats?.lookup(relative, stats)
    if (known !== undefined) {
      if (previous?.kind === 'blob' && previous.oid === known && previous.mode === '100644') {
        return previous
      }
      if (store.db.has(known)) return { kind: 'blob', oid: known, mode: '100644' }
    }
    const content = readFileSync(abs)
    const oid = store.hash('blob', content)
    if (previous?.kind !== 'blob' || previous.oid !== oid) await store.write('blob', content, oid)
    context.stats?.record(relative, stats, oid)
    return { kind: 'blob', oid, mode: '100644' }
  }
  if (!stats.isDirectory()) return null
  let dirents: Dirent[]
  try {
    dirents = readdirSync(abs, { withFileTypes: true })
  } catch (error) {
    if (isMissing(error)) return null
    throw error
  }
  const before = previous?.kind === 'tree' ? await childrenOf(store, previous) : null
  const children = new Map<string, Node>()
  for (const dirent of dirents) {
    if (context.removeTemp && dirent.name.startsWith(TEMP_FILE_PREFIX)) {
      rmSync(path.join(abs, dirent.name), { recursive: true, force: true })
      continue
    }
    if (isUntracked(dirent.name)) continue
    if (!dirent.isFile() && !dirent.isDirectory()) continue
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name
    const child = await scanNode(
      store,
      path.join(abs, dirent.name),
      before?.get(dirent.name) ?? null,
      childRelative,
      context,
    )
    if (child) children.set(dirent.name, child)
  }
  // What the last commit had here and the folder no longer has: its stat entries go.
  if (before && context.stats) {
    for (const name of before.keys()) {
      if (!children.has(name)) context.stats.forget(relative ? `${relative}/${name}` : name)
    }
  }
  if (children.size === 0) return null
  if (before && sameChildren(before, children)) return previous as TreeNode
  return { kind: 'tree', oid: null, children }
}

/**
 * `scanNode` for `root/<segments>`, or null when a folder on the way is not a real folder: a
 * symlink there would put files from outside the memory folder into the history.
 */
export async function scanPath(
  store: ObjectStore,
  root: string,
  segments: ReadonlyArray<string>,
  previous: Node | null,
  context: ScanContext = { stats: null },
): Promise<Node | null> {
  let dir = root
  for (const segment of segments.slice(0, -1)) {
    dir = path.join(dir, segment)
    let stats
    try {
      stats = lstatSync(dir)
    } catch (error) {
      if (isMissing(error)) return gone(segments, context)
      throw error
    }
    if (!stats.isDirectory()) return gone(segments, context)
  }
  const node = await scanNode(
    store,
    path.join(root, ...segments),
    previous,
    segments.join('/'),
    context,
  )
  return node ?? gone(segments, context)
}

function gone(segments: ReadonlyArray<string>, context: ScanContext): null {
  context.stats?.forget(segments.join('/'))
  return null
}

function sameChildren(a: ReadonlyMap<string, Node>, b: ReadonlyMap<string, Node>): boolean {
  if (a.size !== b.size) return false
  for (const [name, node] of b) {
    const other = a.get(name)
    if (!other || other !== node) {
      if (!other || other.kind !== 'blob' || node.kind !== 'blob' || other.oid !== node.oid) {
        return false
      }
    }
  }
  return true
}

/**
 * Writes `content` to `root/relative` atomically (the Memory tool's `atomicWrite`), creating
 * parent folders 0700; the file is 0600. Refuses to write through a symlink or over a directory.
 */
export async function writeFileSafely(
  root: string,
  relative: string,
  content: Uint8Array,
): Promise<void> {
  const segments = relative.split('/')
  let dir = root
  for (const segment of segments.slice(0, -1)) {
    dir = path.join(dir, segment)
    const stats = await lstatOrNull(dir)
    if (!stats) await mkdir(dir, { mode: DIR_MODE })
    else if (!stats.isDirectory()) {
      throw new CairnError('conflict', `A file is in the way of /memories/${relative}.`)
    }
  }
  const target = path.join(root, relative)
  const existing = await lstatOrNull(target)
  if (existing && !existing.isFile()) {
    throw new CairnError('conflict', `/memories/${relative} is a folder now; move it first.`)
  }
  await atomicWrite(target, content)
}

/** Deletes `root/relative` (a file) and then any parent folders it left empty. */
export async function deleteFileAndPrune(root: string, relative: string): Promise<void> {
  // Never through a symlinked folder: that would delete a file outside the memory folder.
  if (!(await lstatInside(root, relative))) return
  await rm(path.join(root, relative), { force: true })
  const segments = relative.split('/')
  for (let depth = segments.length - 1; depth > 0; depth--) {
    try {
      await rmdir(path.join(root, ...segments.slice(0, depth)))
    } catch {
      // Not empty (or already gone): the folders above it stay as well.
      break
    }
  }
}
