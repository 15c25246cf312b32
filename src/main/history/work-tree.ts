import type { Stats } from 'node:fs'
import { CairnError } from '../lib/errors'
import { disk, isCode, isDenied } from '../lib/disk'
import { isLastingRefusal } from '../lib/disk-errors'
import { mayNotRead } from '../lib/may-read'
import {
  Folder,
  FolderDeniedError,
  FolderTree,
  isOwnTempName,
  readFileAndStats,
  readFileIn,
  removeTree,
  TEMP_FILE_PREFIX,
  writeFileAtomically,
} from '../lib/folders'
import { MAX_VIEW_FILE_BYTES } from '../memory'
import { entryNameProblem } from './damage'
import type { ObjectStore } from './object-store'
import type { PackedPositions } from './objects/object-database'
import type { StatCache } from './stat-cache'
import type { Logger } from '../lib/logger'
import { childrenOf, setAt, type Node, type TreeNode } from './tree-state'

/**
 * Names history never tracks: temp files of interrupted writes, anything named `.git`, and
 * names it could not hand back safely (see `entryNameProblem`).
 */
export function isUntracked(name: string): boolean {
  return entryNameProblem(name) !== null
}

/**
 * True for an entry history holds no copy of, which a folder delete must keep rather than
 * remove: a name it does not track (other than its own temp files), a link or other special
 * file, a file too large to version, a file or folder Cairn may not read (the scans keep its
 * last version; what it holds now was never read, so never versioned). `at` names the entry
 * so that the kernel decides what may be read (see `mayRead`).
 */
export function keepsNoCopy(name: string, stats: Stats, at?: string): boolean {
  if (!stats.isFile() && !stats.isDirectory()) return !isOwnTempName(name)
  return (
    (stats.isFile() && stats.size > MAX_VERSIONED_BYTES) ||
    isUntrackedOwn(name) ||
    mayNotRead(stats, at)
  )
}

function isUntrackedOwn(name: string): boolean {
  return isUntracked(name) && !isOwnTempName(name)
}

/**
 * Largest file the history records (the largest the Memory tool views). A bigger file is
 * skipped by every scan, never read, and reported as "not versioned: too large".
 */
export const MAX_VERSIONED_BYTES = MAX_VIEW_FILE_BYTES

// What makes `entryNameProblem` refuse a name a person may well have given a file.
const NOT_ALLOWED_CHARACTER = /[\p{Cc}\\]/u

/** What a scan left out or mended, for the caller to report. */
export interface ScanReport {
  /** Relative paths of files skipped because they are larger than `MAX_VERSIONED_BYTES`. */
  readonly tooLarge: string[]
  /**
   * Relative paths of entries skipped for a character their name holds (a line break, a tab,
   * a backslash): the history could not hand such a name back safely.
   */
  readonly nameNotAllowed: string[]
  /**
   * Relative paths of files and folders skipped because the system denied reading them (owned
   * by another account, mode 000): kept in history as last versioned, like a file too large.
   */
  readonly unreadable: string[]
  /** Blobs whose stored copy was damaged and was written again from the folder. */
  repaired: number
  /**
   * Asked for (`newScanReport(true)`): what the folder holds that history keeps no copy of, by
   * the rules a restore of the whole folder keeps files aside by (`findNoCopyEntries`, which a
   * scan of the whole folder thus spares a second walk of it).
   */
  readonly noCopy?: NoCopyEntries
  /**
   * Asked for (`newScanReport(noCopy, watched)`): those of `watched` (relative paths a scan
   * found unreadable before) that this scan met and went on to open (not a file too large to
   * version, which is never opened). Those not in `unreadable` were read again.
   */
  readonly met?: { readonly watched: ReadonlySet<string>; readonly found: string[] }
}

/** What the memory folder holds that history keeps no copy of. */
export interface NoCopyEntries {
  /** Files too large to version or that Cairn may not read (relative paths). */
  readonly files: string[]
  /** Folders Cairn may not list or enter (relative paths): not walked into. */
  readonly folders: string[]
  /** Those of `files` Cairn may not read (the others are too large to version). */
  readonly unreadable: Set<string>
}

/** An empty report to pass to a scan. */
export function newScanReport(noCopy = false, watched?: ReadonlySet<string>): ScanReport {
  return {
    tooLarge: [],
    nameNotAllowed: [],
    unreadable: [],
    repaired: 0,
    ...(noCopy && { noCopy: { files: [], folders: [], unreadable: new Set<string>() } }),
    ...(watched && watched.size > 0 && { met: { watched, found: [] } }),
  }
}

/** What a scan may use and update besides the store, and what it reports. */
export interface ScanContext {
  /** The stat cache: files whose size, times and inode did not change are not read again. */
  readonly stats?: StatCache | null
  /** Relative paths of the files the scan visited (a full scan prunes the cache to them). */
  readonly visited?: Set<string>
  /** Remove temp files of interrupted writes on the way (the scan at open). */
  readonly removeTemp?: boolean
  readonly report?: ScanReport
  /** Check the stored copy of every file that did not change (see `ObjectStore.isIntact`). */
  readonly verify?: boolean
  /**
   * The open folders of the operation this scan is a step of (left open for it, and its
   * `lstat` of the path scanned kept for its next `find`, the file's bytes for its next
   * `readFile` when the scan read them): the command that follows the check of its paths walks
   * the folder once and reads its file once. Without it the scan opens and closes its own.
   */
  readonly tree?: FolderTree
}

/**
 * Reads what the memory folder holds at `root/<segments>` as a history node, writing blobs
 * that are new; `[]` reads the whole folder. Regular files and directories only: symlinks
 * and other special files are not tracked, and a folder on the way that is not a real folder
 * (a symlink there would put files from outside into the history) yields null. Empty
 * directories yield null (git cannot store them). `previous` (the committed node at the same
 * place) saves re-writing unchanged blobs; the stat cache saves reading and hashing files
 * whose size, times and inode did not change since they were last hashed.
 *
 * Every folder is read through its open handle (see lib/folders.ts), so a symlink swapped in
 * while the scan runs is never followed.
 */
export async function scanPath(
  store: ObjectStore,
  root: string,
  segments: ReadonlyArray<string>,
  previous: Node | null,
  context: ScanContext = {},
): Promise<Node | null> {
  const shared = context.tree
  if (shared && shared.rootPath !== root) throw new Error('the scan and its tree disagree')
  const tree = shared ?? new FolderTree(root)
  const scan: Scan = {
    store,
    context,
    ...(context.verify ? { unchecked: { relatives: [], oids: [], previous: [] } } : {}),
    // Only the path itself, when it is a file: a folder's files are not kept.
    ...(shared && segments.length > 0
      ? { keeps: { tree: shared, relative: segments.join('/') } }
      : {}),
  }
  try {
    let node: Node | null
    if (segments.length === 0) node = await scanFolder(scan, tree.root(), '', previous)
    else {
      const dir = segments.slice(0, -1).join('/')
      const relative = segments.join('/')
      const name = segments.at(-1)!
      const parent = tree.folder(dir)
      node =
        parent instanceof Folder
          ? await scanEntry(
              scan,
              parent,
              relative,
              name,
              previous,
              tree.lstatEntry(parent, relative, name),
            )
          : null
      // Gone: its stat entries go too.
      if (node === null) context.stats?.forget(relative)
    }
    return scan.unchecked?.oids.length ? await checkStoredCopies(scan, tree, segments, node) : node
  } finally {
    if (!shared) tree.close()
  }
}

interface Scan {
  readonly store: ObjectStore
  readonly context: ScanContext
  /** The shared tree, and the path whose bytes are kept in it once read (`keepRead`). */
  readonly keeps?: { readonly tree: FolderTree; readonly relative: string }
  /** With `verify`: the unchanged files whose stored copy is checked once the walk is done. */
  readonly unchecked?: Unchecked
}

/**
 * The unchanged files the walk took on the stat cache's word, their stored copies not yet
 * checked: the i-th one's path, blob and committed node, in parallel arrays (at open that is
 * every file: no object per file, and no `Stats` held until the walk ends; the few found
 * unsound are looked at again).
 */
interface Unchecked {
  readonly relatives: string[]
  readonly oids: string[]
  readonly previous: (Node | null)[]
}

/**
 * An entry of `folder` as a node. An unchanged file whose blob is there is answered without
 * awaiting anything (no promise per file: at open that is every file), its stored copy checked
 * after the walk with the others' (`verify`, `checkStoredCopies`); the rest returns a promise.
 */
function scanEntry(
  scan: Scan,
  folder: Folder,
  relative: string,
  name: string,
  previous: Node | null,
  /** Its `lstat`, when the caller made it. */
  looked?: Stats | null,
): Node | null | Promise<Node | null> {
  const { store, context } = scan
  const stats = looked !== undefined ? looked : folder.lstat(name)
  if (stats === null) return null
  // Met, to be read from here on: a file too large to version is never opened, so meeting it
  // says nothing of whether Cairn may read it now (its `unreadable` notice stays).
  const met = context.report?.met
  if (stats.isFile()) {
    const noCopy = context.report?.noCopy
    if (noCopy) {
      const at = folder.entry(name)
      if (keepsNoCopy(name, stats, at)) noCopy.files.push(relative)
      if (mayNotRead(stats, at)) noCopy.unreadable.add(relative)
    }
    if (stats.size > MAX_VERSIONED_BYTES) {
      context.report?.tooLarge.push(relative)
      return keptVersion(previous)
    }
    if (met?.watched.has(relative)) met.found.push(relative)
    context.visited?.add(relative)
    const known = context.stats?.lookup(relative, stats)
    if (known !== undefined) {
      // Unchanged since it was hashed: its stored copy is only checked at open (`verify`).
      const node = unchangedNode(store, previous, known)
      if (node) {
        const unchecked = scan.unchecked
        if (unchecked) {
          unchecked.relatives.push(relative)
          unchecked.oids.push(known)
          unchecked.previous.push(previous)
        }
        return node
      }
    }
    return scanFile(scan, folder, relative, name, stats, previous)
  }
  if (!stats.isDirectory()) return null
  if (met?.watched.has(relative)) met.found.push(relative)
  const unreadable = (): Node | null => {
    context.report?.unreadable.push(relative)
    context.report?.noCopy?.folders.push(relative)
    return previous?.kind === 'tree' ? previous : null
  }
  // A folder Cairn may list but not enter (mode 0444, after `chmod -R 444`) opens fine, and
  // then every `lstat` inside it fails: tested before, as the kernel will (review12-story R1).
  if (mayNotRead(stats, folder.entry(name))) return unreadable()
  let child: Folder | null
  try {
    child = folder.openChildIfFolder(name)
  } catch (error) {
    if (!isDenied(error)) throw error
    return unreadable()
  }
  if (!child) return null
  return scanChildFolder(scan, child, relative, previous)
}

/** The node of an unchanged file (`oid`, as the stat cache knows it), or null to read it. */
function unchangedNode(store: ObjectStore, previous: Node | null, oid: string): Node | null {
  if (previous?.kind === 'blob' && previous.oid === oid && previous.mode === '100644')
    return previous
  if (store.db.has(oid)) return { kind: 'blob', oid, mode: '100644' }
  return null
}

/**
 * The check at open (`verify`) of the stored copies of the unchanged files the walk took on the
 * stat cache's word, all at once (`storedCopiesUnsound`, as open's shortcut checks them): each
 * one missing or damaged is looked at and read again from the folder and its blob written
 * again (`scanFile`), and put in `node` (the node scanned at `segments`) should the file read
 * otherwise now. A folder of one that is no longer a folder (replaced by a file, or gone since
 * the walk) is dropped whole, as the folder is now, rather than only that file of it.
 */
async function checkStoredCopies(
  scan: Scan,
  tree: FolderTree,
  segments: ReadonlyArray<string>,
  node: Node | null,
): Promise<Node | null> {
  const { relatives, oids, previous } = scan.unchecked!
  const unsound = await storedCopiesUnsound(scan.store, scan.context.stats, relatives, oids)
  let result = node
  const dropped: string[] = []
  for (let i = 0; i < unsound.length; i++) {
    const at = unsound[i]!
    const relative = relatives[at]!
    const slash = relative.lastIndexOf('/')
    const dir = slash < 0 ? '' : relative.slice(0, slash)
    if (dropped.some((gone) => relative.startsWith(`${gone}/`))) continue
    const below = relative.split('/').slice(segments.length)
    const folder = tree.folder(dir)
    if (!(folder instanceof Folder)) {
      // Not a folder any more: nothing under it is, and the commit must not keep its siblings.
      dropped.push(dir)
      if (below.length <= 1) result = null
      else if (result?.kind === 'tree') {
        const patched = await setAt(scan.store, result, below.slice(0, -1), null)
        result = patched.children!.size > 0 ? patched : null
      }
      continue
    }
    const name = slash < 0 ? relative : relative.slice(slash + 1)
    // Looked at again: the walk kept no `Stats` of it.
    const stats = folder.lstat(name)
    const read =
      stats?.isFile() && stats.size <= MAX_VERSIONED_BYTES
        ? await scanFile(scan, folder, relative, name, stats, previous[at] ?? null)
        : await scanEntry(scan, folder, relative, name, previous[at] ?? null, stats)
    if (read?.kind === 'blob' && read.oid === oids[at]) continue
    // Changed or gone since the walk: what the folder holds now takes its place.
    if (below.length === 0) result = read
    else if (result?.kind === 'tree') {
      const patched = await setAt(scan.store, result, below, read)
      result = patched.children!.size > 0 ? patched : null
    }
  }
  return result
}

/**
 * What history records for a file too large to version: its last versioned content, when it
 * had one (a file that grew past the limit), else nothing. Never its deletion: that commit
 * would reach every machine by the next sync and delete the file there.
 */
export function keptVersion(previous: Node | null): Node | null {
  return previous?.kind === 'blob' ? previous : null
}

// A file read and hashed (new, changed, or its stored copy damaged); its blob written when new.
async function scanFile(
  scan: Scan,
  folder: Folder,
  relative: string,
  name: string,
  stats: Stats,
  previous: Node | null,
): Promise<Node | null> {
  const { store, context } = scan
  let content: Buffer
  try {
    const read = readFileAndStats(folder, name, undefined, MAX_VERSIONED_BYTES)
    content = read.content
    if (scan.keeps?.relative === relative)
      scan.keeps.tree.keepRead(relative, folder, read.stats, content)
  } catch (error) {
    if (isCode(error, 'EFBIG')) {
      context.report?.tooLarge.push(relative)
      return keptVersion(previous)
    }
    // A file or folder the system will not let Cairn read (another account's, or mode 000) is
    // skipped like a file too large: kept in history as it was last versioned, and reported.
    // Were the error passed on, one such file would stop every start and, met while running,
    // every later write (each catches up with a full scan first).
    if (isDenied(error)) {
      context.report?.unreadable.push(relative)
      return keptVersion(previous)
    }
    // Gone, or replaced by something that is not a regular file, since the listing.
    if (isCode(error, 'ENOENT') || isCode(error, 'ELOOP') || isCode(error, 'EINVAL')) return null
    throw error
  }
  const oid = store.hash('blob', content)
  if (previous?.kind !== 'blob' || previous.oid !== oid) {
    await store.write('blob', content, oid)
  } else if (context.verify && !(await store.isIntact(oid))) {
    // The history's copy of a file the folder still holds is damaged: write it again.
    await store.write('blob', content, oid)
    if (context.report) context.report.repaired++
  }
  context.stats?.record(relative, stats, oid)
  return { kind: 'blob', oid, mode: '100644' }
}

async function scanChildFolder(
  scan: Scan,
  child: Folder,
  relative: string,
  previous: Node | null,
): Promise<Node | null> {
  try {
    return await scanFolder(scan, child, relative, previous)
  } finally {
    child.close()
  }
}

/**
 * The check at open of unchanged files' stored copies (the blob `oids[i]` of the file at
 * `relatives[i]`), kept cheap: a packed one by the packs' indexes, asked for every id at once
 * (`looked`, when the caller has asked already: each slice of a pack's name table read once);
 * a loose one by its stamp (size, inode, ctime, mtime) when it was last checked whole (one
 * `lstat`: a file written in place, copied or renamed over since has another); else read and
 * hashed whole, and its stamp then remembered. The places in `oids` of those missing or
 * damaged; with `firstOnly`, no more than the first. The full scan and open's shortcut
 * (`head-match.ts`) both check this way. With `defer` (open's shortcut), a loose one whose
 * stamp the stat cache keeps is not looked at: it goes in `defer`, checked this way later
 * (`checkUncheckedBlobs`, before anything builds on it or hands it out).
 */
export async function storedCopiesUnsound(
  store: ObjectStore,
  stats: StatCache | null | undefined,
  relatives: ReadonlyArray<string>,
  oids: ReadonlyArray<string>,
  looked?: PackedPositions,
  firstOnly = false,
  defer?: UncheckedBlobs,
): Promise<number[]> {
  // Packed first: reads take the pack's copy before any loose one, so a packed blob needs no
  // `lstat` of a loose file it most often does not have (one per file, at every open).
  const packed = looked || store.db.packs().length > 0 ? store.db.inPackEach(oids, looked) : null
  const unsound: number[] = []
  // An indexed loop (see `positionsIn`), and the loose stamp compared where the stat
  // cache's record lies (`objectCheckedAs`), not through a stamp object made for every file.
  for (let i = 0; i < oids.length; i++) {
    if (packed?.[i]) continue
    const relative = relatives[i]!
    const oid = oids[i]!
    if (defer && stats?.hasObjectStamp(relative)) {
      defer.relatives.push(relative)
      defer.oids.push(oid)
      continue
    }
    const loose = store.looseStat(oid)
    if (loose && loose.size > 0 && stats?.objectCheckedAs(relative, loose)) continue
    if (await store.isIntact(oid)) {
      if (loose) stats?.noteObjectChecked(relative, loose)
      continue
    }
    unsound.push(i)
    if (firstOnly) break
  }
  return unsound
}

/**
 * The memory files whose loose blobs open took unchecked (`storedCopiesUnsound`, `defer`): the
 * blob `oids[i]` of the file at `relatives[i]`. With `retried` (the checks a check left owed),
 * `retried[i]` is true when its second chance is this one: it is not owed again.
 */
export interface UncheckedBlobs {
  readonly relatives: string[]
  readonly oids: string[]
  readonly retried?: boolean[]
}

/**
 * The check open left for later of `blobs` (their loose files' stamps, else read whole), as
 * `storedCopiesUnsound` makes it at open; a missing or damaged one is written again from its
 * memory file when the file still holds that content (its bytes hash to the blob's id).
 * Returns the files whose blobs were written again (`repaired`) and those whose damage stays
 * (`lost`: the file changed or went since; reads of the blob say it is damaged). The caller
 * flushes the store.
 */
export async function checkUncheckedBlobs(
  store: ObjectStore,
  stats: StatCache,
  workRoot: string,
  blobs: UncheckedBlobs,
  logger?: Logger,
): Promise<{
  readonly repaired: string[]
  readonly lost: string[]
  readonly owed: UncheckedBlobs | null
}> {
  const { relatives, oids, retried } = blobs
  const repaired: string[] = []
  const lost: string[] = []
  let owed: { relatives: string[]; oids: string[]; retried: boolean[] } | null = null
  // Owed once: a refusal that comes back at the next check is taken as the check found it
  // (review R1/R2: a blob the account can never read, or whose file fails with every read,
  // stayed owed for good, re-read at each commit, and nobody was told).
  const owe = (at: number): boolean => {
    if (retried?.[at]) return false
    owed ??= { relatives: [], oids: [], retried: [] }
    owed.relatives.push(relatives[at]!)
    owed.oids.push(oids[at]!)
    owed.retried.push(true)
    return true
  }
  let unsound: number[]
  try {
    unsound = await storedCopiesUnsound(store, stats, relatives, oids)
  } catch {
    // One blob could not be read at all: each is checked alone. One refused for a passing
    // reason (`PASSING`) is not taken for damage the first time: its check stays owed to the
    // next one (a sound copy was once told as damaged). Any other failure (EIO, a folder in
    // its place), or the same refusal at that next check, makes it unsound: written again from
    // its file, not every commit's raw error.
    unsound = []
    for (let i = 0; i < oids.length; i++) {
      try {
        const one = await storedCopiesUnsound(store, stats, [relatives[i]!], [oids[i]!])
        if (one.length > 0) unsound.push(i)
      } catch (error) {
        logger?.warn('A stored copy of a file could not be read while checked', errorCode(error))
        if (!isPassing(error) || !owe(i)) unsound.push(i)
      }
    }
  }
  if (unsound.length === 0) return { repaired, lost, owed }
  const tree = new FolderTree(workRoot)
  try {
    for (const at of unsound) {
      const relative = relatives[at]!
      const oid = oids[at]!
      let content: Buffer | null = null
      try {
        content = fileIfThere(tree, relative)
      } catch (error) {
        // Not told as lost for a file the disk would not read this time (EMFILE, ENOSPC…):
        // tried again at the next check, once. A failing disk (EIO), a lasting refusal, or the
        // same refusal again: the copy cannot be mended, and the person is told.
        logger?.warn('A memory file could not be read to mend its stored copy', errorCode(error))
        if (isPassing(error) && !isLastingRefusal(error) && owe(at)) continue
        lost.push(relative)
        continue
      }
      if (content !== null && store.hash('blob', content) === oid) {
        try {
          await store.write('blob', content, oid)
        } catch (error) {
          logger?.warn(
            'A damaged stored copy of a file could not be written again',
            errorCode(error),
          )
          lost.push(relative)
          continue
        }
        // Its stamp noted: the next open takes it unchecked again, not read whole.
        const loose = store.looseStat(oid)
        if (loose) stats.noteObjectChecked(relative, loose)
        repaired.push(relative)
      } else lost.push(relative)
    }
  } finally {
    tree.close()
  }
  return { repaired, lost, owed }
}

// Refusals that may not come back at the next check (too many files open, no memory or space
// for the moment, a file held open, a permission refused once): worth one more try, not damage.
const PASSING = ['EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN', 'EBUSY', 'ENOSPC', 'EACCES', 'EPERM']

function isPassing(error: unknown): boolean {
  return PASSING.some((code) => isCode(error, code))
}

// An error's code alone (`EIO`), for a log line that names no host path.
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : 'unknown error'
}

// The memory file at `relative` whole, or null when it is gone, grown past the limit, replaced
// by something else or unreadable (with its folder): no copy to take from it.
function fileIfThere(tree: FolderTree, relative: string): Buffer | null {
  const slash = relative.lastIndexOf('/')
  try {
    const folder = tree.folder(slash < 0 ? '' : relative.slice(0, slash))
    if (!(folder instanceof Folder)) return null
    return readFileIn(folder, relative.slice(slash + 1), undefined, MAX_VERSIONED_BYTES)
  } catch (error) {
    if (error instanceof FolderDeniedError || FILE_GONE.some((code) => isCode(error, code)))
      return null
    throw error
  }
}

const FILE_GONE = ['EFBIG', 'ENOENT', 'ENOTDIR', 'ELOOP', 'EINVAL', 'EACCES', 'EPERM']

async function scanFolder(
  scan: Scan,
  folder: Folder,
  relative: string,
  previous: Node | null,
): Promise<Node | null> {
  const { context } = scan
  const before = previous?.kind === 'tree' ? await childrenOf(scan.store, previous) : null
  const children = new Map<string, Node>()
  for (const dirent of folder.list()) {
    if (context.removeTemp && isOwnTempName(dirent.name)) {
      // Through the folder's handle: a temp name swapped for a link is unlinked, not followed.
      removeTree(folder, dirent.name)
      continue
    }
    if (isUntracked(dirent.name)) {
      // Temp files and `.git` are left out by design; a name someone gave a file is reported.
      if (NOT_ALLOWED_CHARACTER.test(dirent.name) && !dirent.name.startsWith(TEMP_FILE_PREFIX)) {
        context.report?.nameNotAllowed.push(relative ? `${relative}/${dirent.name}` : dirent.name)
      }
      continue
    }
    if (!dirent.isFile() && !dirent.isDirectory()) continue
    let child = scanEntry(
      scan,
      folder,
      relative ? `${relative}/${dirent.name}` : dirent.name,
      dirent.name,
      before?.get(dirent.name) ?? null,
    )
    if (child instanceof Promise) child = await child
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
 * Writes `content` to `relative` atomically, creating parent folders 0700; the file is 0600.
 * Refuses to write through a symlink or over a directory.
 */
export async function writeFileSafely(
  tree: FolderTree,
  relative: string,
  content: Uint8Array,
): Promise<void> {
  const slash = relative.lastIndexOf('/')
  const name = relative.slice(slash + 1)
  let folder: Folder
  try {
    ;({ folder } = tree.ensure(slash < 0 ? '' : relative.slice(0, slash)))
  } catch (error) {
    if (!isCode(error, 'ENOTDIR')) throw error
    throw new CairnError('conflict', `A file is in the way of /memories/${relative}.`)
  }
  const existing = folder.lstat(name)
  // An empty folder (or one of empty folders only) holds nothing git keeps: it gives way.
  const givesWay = () => {
    const gone = removeIfEmpty(folder, name)
    if (gone) tree.forget(relative)
    return gone
  }
  if (existing && !existing.isFile() && !(existing.isDirectory() && givesWay())) {
    throw new CairnError('conflict', `/memories/${relative} is a folder now; move it first.`)
  }
  await writeFileAtomically(folder, name, content)
}

/**
 * Removes the folder `name` of `parent` when it holds no file at any depth (only empty
 * folders), through handles; true when it is gone. A file anywhere inside keeps it all:
 * `rmdir` never removes a folder that is not empty.
 */
function removeIfEmpty(parent: Folder, name: string): boolean {
  let folder: Folder
  try {
    folder = parent.openChild(name)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return true
    if (isCode(error, 'ENOTDIR') || isCode(error, 'ELOOP')) return false
    throw error
  }
  try {
    for (const dirent of folder.list()) {
      if (!dirent.isDirectory() || !removeIfEmpty(folder, dirent.name)) return false
    }
  } finally {
    folder.close()
  }
  try {
    disk.rmdirSync(parent.entry(name))
  } catch (error) {
    if (isCode(error, 'ENOTEMPTY') || isCode(error, 'EEXIST')) return false
    if (!isCode(error, 'ENOENT')) throw error
  }
  parent.syncLater()
  return true
}

/** Deletes the file `relative` and then any parent folders it left empty. */
export function deleteFileAndPrune(tree: FolderTree, relative: string): void {
  const found = tree.find(relative)
  // Never through a symlinked folder: that would delete a file outside the memory folder.
  if (found.kind !== 'file') return
  try {
    disk.unlinkSync(found.parent.entry(found.name))
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
  // Durable before the commit that records it (settleFolderSyncs; best effort).
  found.parent.syncLater()
  const segments = relative.split('/')
  for (let depth = segments.length - 1; depth > 0; depth--) {
    const dir = segments.slice(0, depth).join('/')
    const parent = tree.folder(segments.slice(0, depth - 1).join('/'))
    if (!(parent instanceof Folder)) break
    tree.forget(dir)
    try {
      disk.rmdirSync(parent.entry(segments[depth - 1]!))
    } catch {
      break
    }
  }
}
