import path from 'node:path'
import { disk, isCode, isNotPlainFile, readPlainFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { isDiskProblem } from '../lib/disk-errors'
import type { OpeningReporter } from '../lib/progress'
import { isCairnCommit, parseCommitMessage, reviewFactsOf, type CommitMeta } from './commit-message'
import { DamagedHistoryError } from './damage'
import {
  IndexDamagedError,
  IndexFile,
  type IndexEntry,
  indexDirOf,
  removeIndexLeftovers,
  replaceIndexDir,
  settleFormat,
  writeOlderIndex,
} from './index-file'
import type { ObjectStore, RawCommit } from './object-store'
import { isWithin, toVirtual } from './paths'
import { diffNodes, treeFromOid, type Pause } from './tree-state'

export { indexDirOf, writeIndex } from './index-file'

export type { IndexEntry } from './index-file'

/** Every parent of an entry, first parent first (none for a root commit). */
export function parentsOf(entry: Pick<IndexEntry, 'parent' | 'otherParents'>): string[] {
  return entry.parent ? [entry.parent, ...(entry.otherParents ?? [])] : []
}

/**
 * Builds an index entry from a commit object (used when catching up or rebuilding). A commit
 * whose trees are damaged still gets its entry, with the files it changed left empty: reading
 * that version later says it is damaged.
 */
export async function entryFromCommit(
  store: ObjectStore,
  oid: string,
  pause: Pause = noPause,
): Promise<IndexEntry> {
  return (await readEntryFromCommit(store, oid, pause)).entry
}

const noPause: Pause = () => undefined

/** `entryFromCommit`, saying whether the files were left empty for damaged trees. */
async function readEntryFromCommit(
  store: ObjectStore,
  oid: string,
  pause: Pause = noPause,
): Promise<{ readonly entry: IndexEntry; readonly treesDamaged: boolean }> {
  const commit = await store.readCommit(oid)
  let files: string[] = []
  let treesDamaged = false
  try {
    const before = commit.parent ? (await store.readCommit(commit.parent)).tree : null
    const changed = await diffNodes(
      store,
      before ? treeFromOid(before) : null,
      treeFromOid(commit.tree),
      '',
      [],
      { pause },
    )
    files = changed.map((delta) => toVirtual(delta.path))
  } catch (error) {
    if (!(error instanceof DamagedHistoryError)) throw error
    treesDamaged = true
  }
  const entry = indexEntryOf(commit, parseCommitMessage(commit, commit.message), files)
  return { entry, treesDamaged }
}

/**
 * The index entry of a commit, from its facts and the files it changed: the one shape of an
 * entry, whether built from the commit object (`entryFromCommit`) or, as the commit is made,
 * from the intent that made it (repo.ts), so that the two are equal.
 */
export function indexEntryOf(
  commit: Pick<RawCommit, 'oid' | 'parents' | 'timestamp'>,
  meta: CommitMeta,
  files: ReadonlyArray<string>,
): IndexEntry {
  const [parent = null, ...otherParents] = commit.parents
  return {
    oid: commit.oid,
    parent,
    ...(otherParents.length > 0 ? { otherParents } : {}),
    time: commit.timestamp * 1000,
    actor: meta.actor,
    ...(meta.author !== undefined ? { author: meta.author } : {}),
    command: meta.command,
    subject: meta.subject,
    // As a rebuild from the commit reads it back: no Path trailer means "the files".
    paths: meta.paths.length > 0 ? meta.paths : files,
    conversationId: meta.conversationId,
    toolUseId: meta.toolUseId,
    overwrite: meta.overwrite,
    restoredFrom: meta.restoredFrom,
    ...(meta.machine ? { machine: meta.machine } : {}),
    ...reviewFactsOf(meta),
    files,
  }
}

/** How `openIndex` found the index. */
export type IndexState = 'trusted' | 'caught-up' | 'migrated' | 'rebuilt'

/**
 * Opens the side index of `gitdir` and makes it match `head`:
 * - trusted as it is when its structure holds and its newest entry is `head`, equal to the
 *   entry rebuilt from that commit (entries spread over the history are compared in the
 *   background later: `spotCheck`);
 * - caught up from the commits when it lags behind (a crash between commit and append, or
 *   between a sync moving `main` forward and its append);
 * - migrated from the JSON-lines index of earlier versions;
 * - rebuilt from the commits when missing, damaged or from another history; a commit that
 *   cannot be read is where the rebuilt part starts (what is older on that path is out of
 *   reach).
 * A disk that fails (full, EIO, EACCES, EMFILE) is never taken for a damaged index: the error
 * is passed on and nothing is rebuilt.
 */
export async function openIndex(
  store: ObjectStore,
  gitdir: string,
  head: string | null,
  /**
   * Given the index as it was found, a newer `head` to take instead (open-repo's check for a
   * `main` left behind its own newer commits), or null; called only for an index that opened.
   */
  newerHead?: (index: IndexFile) => Promise<string | null>,
  /** Told how far a rebuild or a format step is, commit by commit (the opening screen). */
  progress?: OpeningReporter,
): Promise<{ index: IndexFile; state: IndexState; head: string | null }> {
  const dir = indexDirOf(gitdir)
  removeIndexLeftovers(dir)
  let index: IndexFile | null = null
  let state: IndexState = 'trusted'
  let olderFormat = false
  try {
    index = IndexFile.open(dir)
    olderFormat = index.readsOutsideAsCairn
  } catch (error) {
    if (!(error instanceof IndexDamagedError)) throw error
  }
  if (!index) {
    const legacy = await readLegacyIndex(legacyIndexOf(gitdir))
    if (legacy) {
      // As format 3, its entries read as format 3 read commits: looked at again below, and
      // again at the next open if this one stops before that is done.
      writeOlderIndex(dir, legacy)
      index = IndexFile.open(dir)
      state = 'migrated'
      olderFormat = true
    }
  }
  if (index && newerHead) {
    try {
      head = (await newerHead(index)) ?? head
    } catch (error) {
      index.close()
      throw error
    }
  }
  if (index && olderFormat) {
    try {
      index = await settleOutsideCommits(store, index, progress)
    } catch (error) {
      // Closed by now. An index whose records are damaged is rebuilt; a failing disk fails.
      if (!(error instanceof IndexDamagedError)) throw error
      index = null
    }
    state = 'migrated'
  }
  if (index) {
    const lagged = index.head() !== head
    let fits: boolean
    try {
      fits =
        (await catchUp(store, index, head)) && (await spotCheck(store, index, [index.size - 1]))
      if (fits) removeIfThere(legacyIndexOf(gitdir))
    } catch (error) {
      // A disk failing on the way fails the open: its four descriptors were left open, one set
      // more at every failed open of the process.
      index.close()
      throw error
    }
    if (fits) {
      if (lagged && state === 'trusted') state = 'caught-up'
      return { index, state, head }
    }
    index.close()
  }
  const counted = progress
    ? (done: number, total: number | null) => progress({ step: 'rebuilding-index', done, total })
    : undefined
  const building = await buildIndex(store, dir, head, undefined, counted)
  building.close()
  replaceIndexDir(building.dir, dir)
  removeIfThere(legacyIndexOf(gitdir))
  return { index: IndexFile.open(dir), state: 'rebuilt', head }
}

/**
 * Brings an index of an earlier format, which read commits made outside Cairn (with git) as
 * Cairn's, to today's reading: each entry's commit is read again, oldest first, for its people
 * alone (author and committer, not its trees), and the entries from the first commit made
 * outside Cairn on are cut, to be caught up from the commits (`catchUp`) as after a crash.
 * Most histories have none: then only the format changes. A commit that cannot be read keeps
 * its entry (its damage is the history's; reading it says so). Returns the index reopened.
 */
async function settleOutsideCommits(
  store: ObjectStore,
  index: IndexFile,
  progress?: OpeningReporter,
): Promise<IndexFile> {
  let keep = index.size
  const total = index.size
  try {
    for (let i = 0; i < index.size; i++) {
      progress?.({ step: 'updating-index', done: i, total })
      let commit: RawCommit
      try {
        commit = await store.readCommit(index.oidAt(i))
      } catch (error) {
        if (error instanceof DamagedHistoryError) continue
        throw error
      }
      if (!isCairnCommit(commit)) {
        keep = i
        break
      }
    }
  } finally {
    index.close()
  }
  settleFormat(index.dir, keep)
  // Every entry was looked at, or the rest is cut to be caught up: the step is done either way.
  progress?.({ step: 'updating-index', done: total, total })
  return IndexFile.open(index.dir)
}

/**
 * Brings `index` up to `head` when it lags behind, appending entries rebuilt from the commits
 * it lacks along every parent (a sync's fast-forward or merge brings commits made elsewhere),
 * parents first. False when it cannot be made to fit: another history, or `head` moved back.
 */
export async function catchUp(
  store: ObjectStore,
  index: IndexFile,
  head: string | null,
): Promise<boolean> {
  if (head === null) return index.size === 0
  const newest = index.head()
  if (newest === head) return true
  const missing: IndexEntry[] = []
  try {
    for (const oid of await commitsSince(store, head, (oid) => index.positionOf(oid) >= 0)) {
      missing.push(await entryFromCommit(store, oid))
    }
  } catch (error) {
    // A damaged commit on the way: the index is rebuilt around it. The disk failing is not that.
    if (isDiskProblem(error)) throw error
    return false
  }
  // Only a history that grew from the indexed one keeps its entries.
  if (newest !== null && !missing.some((entry) => parentsOf(entry).includes(newest))) return false
  index.beginBatch()
  try {
    for (const entry of missing) index.append(entry)
  } catch (error) {
    if (isDiskProblem(error)) throw error
    return false
  } finally {
    index.endBatch()
  }
  return true
}

/** True when the entries at `positions` equal the entries rebuilt from their commits. */
export async function spotCheck(
  store: ObjectStore,
  index: IndexFile,
  positions: Iterable<number>,
  pause: Pause = noPause,
): Promise<boolean> {
  for (const i of positions) {
    if (i < 0 || i >= index.size) continue
    let entry: IndexEntry
    try {
      entry = index.at(i)
    } catch (error) {
      if (isDiskProblem(error)) throw error
      return false
    }
    let fromCommit: IndexEntry
    let treesDamaged: boolean
    try {
      ;({ entry: fromCommit, treesDamaged } = await readEntryFromCommit(
        store,
        index.oidAt(i),
        pause,
      ))
    } catch (error) {
      // A damaged commit is the history's damage, not the index's: reading that version says
      // so, and a rebuild could not do better. The disk failing is neither.
      if (error instanceof DamagedHistoryError) continue
      throw error
    }
    // So are damaged trees (its own, or its parent's): the commit cannot tell which files it
    // changed, the index, written as it was made, can (stop 26: the first open after such
    // damage rebuilt the whole index, leaving that entry without its files). All else must
    // match, and the files must fit what the commit still says of them: see `fitsFiles`.
    if (treesDamaged) {
      if (!sameEntry({ ...entry, files: [], paths: [] }, { ...fromCommit, paths: [] })) {
        return false
      }
      if (!fitsFiles(entry, fromCommit.paths)) return false
      continue
    }
    if (!sameEntry(entry, fromCommit)) return false
  }
  return true
}

/**
 * The background check of an index opened as trusted: every entry's structure and checksum,
 * then entries spread over the history against their commits. False when anything is off.
 * An index closed under the check (or before it) is judged by `inUse`: swapped out between
 * the check's pauses by a rebuild or a switched history, another index is in use and nothing
 * is left to check (true, quietly); closed and still the one in use (a swap that failed after
 * closing it), it can serve nothing and must be rebuilt (false).
 */
export async function checkIndex(
  store: ObjectStore,
  index: IndexFile,
  pause: () => Promise<void> = async () => undefined,
  inUse: () => boolean = () => true,
): Promise<boolean> {
  try {
    const sound = await checkWhole(store, index, pause)
    if (!index.isClosed) return sound
  } catch (error) {
    if (!index.isClosed) throw error
  }
  return !inUse()
}

/**
 * Names and records the background check takes between two pauses. The check runs in a fresh
 * session, its code not yet compiled: 4,096 names and 2,048 records a slice, the older records
 * read in the first, held the event loop 12–16 ms of CPU at the start of the bench's passes
 * (stop 19).
 */
const CHECK_NAMES = 1024
const CHECK_RECORDS = 512

async function checkWhole(
  store: ObjectStore,
  index: IndexFile,
  pause: () => Promise<void>,
): Promise<boolean> {
  const size = index.size
  // Records check file ids, not what they name: each name has a checksum of its own, checked
  // in slices as the records are (100,000 names take hundreds of ms in one go).
  const names = index.namesRead
  for (let from = 0; from < names; from += CHECK_NAMES) {
    try {
      index.checkNames(from, from + CHECK_NAMES)
    } catch (error) {
      if (isDiskProblem(error)) throw error
      return false
    }
    await pause()
  }
  // Newest first: the records open did not read are read as the check reaches them (1,024 at
  // a time at least), not all of them in its first slice.
  for (let to = size; to > 0; to -= CHECK_RECORDS) {
    const from = Math.max(0, to - CHECK_RECORDS)
    try {
      index.checkStructure(from, to)
    } catch {
      return false
    }
    if (index.firstDamaged(from, to) >= 0) return false
    // A merge's further parents live in its details: each must come before it too.
    for (let i = from; i < to; i++) {
      if (!index.isMergeAt(i)) continue
      // Parents beyond the index (unreadable when it was built) are not in it at all.
      const beyond = index.otherParentsBeyond(i)
      const others = (index.at(i).otherParents ?? []).filter((other) => !beyond.includes(other))
      if (others.some((other) => !(index.positionOf(other) >= 0 && index.positionOf(other) < i))) {
        return false
      }
    }
    await pause()
  }
  for (const i of spreadPositions(size, 16)) {
    if (!(await spotCheck(store, index, [i], pause))) return false
    await pause()
  }
  return true
}

/** `count` positions spread evenly over an index of `size` entries (newest included). */
export function spreadPositions(size: number, count: number): number[] {
  const positions = new Set<number>([size - 1])
  for (let k = 0; k < count && size > 1; k++) {
    positions.add(Math.floor(((k + 0.5) * (size - 1)) / count))
  }
  return [...positions]
}

/**
 * Builds a fresh index of the history ending at `head` from its commits, beside `dir` (in
 * `<dir>.tmp-…`); the caller moves it into place (`replaceIndexDir`). `pause` is awaited
 * between commits (background rebuilds).
 */
export async function buildIndex(
  store: ObjectStore,
  dir: string,
  head: string | null,
  pause: () => Promise<void> = async () => undefined,
  /** Told how many commits are in (`total` null while they are still being found). */
  counted?: (done: number, total: number | null) => void,
): Promise<IndexFile> {
  // Found from the newest, written oldest first: every parent before its child. A commit that
  // cannot be read is left out, with what only it leads to; its children name it as a parent
  // beyond the index.
  const unreadable = new Set<string>()
  counted?.(0, null)
  const oids = head === null ? [] : await commitsSince(store, head, () => false, pause, unreadable)
  counted?.(0, oids.length)
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`
  removeTree(temp)
  const building = IndexFile.create(temp)
  try {
    building.beginBatch()
    for (let i = 0; i < oids.length; i++) {
      building.append(await entryFromCommit(store, oids[i] as string, pause), unreadable)
      counted?.(i + 1, oids.length)
      if (i % 4096 === 4095) {
        building.endBatch()
        building.beginBatch()
      }
      await pause()
    }
    building.endBatch()
    building.sync()
  } catch (error) {
    building.close()
    removeTree(temp)
    throw error
  }
  return building
}

/** Rebuilds the index of the history ending at `head` from its commits, into `dir`. */
export async function rebuildIndex(
  store: ObjectStore,
  dir: string,
  head: string | null,
): Promise<IndexFile> {
  const building = await buildIndex(store, dir, head)
  building.close()
  replaceIndexDir(building.dir, dir)
  return IndexFile.open(dir)
}

/**
 * Whether the files of `entry` (from the index) fit its commit whose trees cannot be read:
 * `named` are the paths its message names (none: the commit names no paths, and the index,
 * as a rebuild, gives its files as its paths). Named, they are its paths, and the files a
 * change of them made lie within them; a file elsewhere (an outside edit a command's commit
 * took along) only costs the rebuild that damaged trees cost before stop 26.
 */
function fitsFiles(entry: IndexEntry, named: ReadonlyArray<string>): boolean {
  if (named.length === 0) return sameList(entry.paths, entry.files)
  if (!sameList(entry.paths, named)) return false
  return entry.files.every((file) => named.some((path) => isWithin(file, path)))
}

function sameList(a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

function sameEntry(a: IndexEntry, b: IndexEntry): boolean {
  return canonical(a) === canonical(b)
}

// JSON with keys in one order, so entries built along different paths compare by content.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : inner,
  )
}

/** The JSON-lines index Cairn kept before the binary one. */
function legacyIndexOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-index.jsonl')
}

/**
 * Reads a JSON-lines index of earlier versions, oldest first, or null when it is missing or
 * unreadable (a torn last line is dropped).
 */
async function readLegacyIndex(file: string): Promise<IndexEntry[] | null> {
  let text: string
  try {
    text = readPlainFile(file, OWN_FILE_CAP.RECORDS).toString('utf8')
  } catch (error) {
    // Missing (the usual case): nothing to convert; nor in anything but a plain file. An I/O
    // error is not "missing".
    if (isCode(error, 'ENOENT') || isNotPlainFile(error)) return null
    throw error
  }
  const lines = text.split('\n')
  lines.pop()
  let entries: IndexEntry[]
  try {
    entries = JSON.parse(`[${lines.filter(Boolean).join(',')}]`) as IndexEntry[]
  } catch {
    return null
  }
  // Oldest first, every parent before its child (sync wrote merge commits into it too).
  const seen = new Set<string>()
  for (const entry of entries) {
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof entry.oid !== 'string' ||
      !Array.isArray(entry.files) ||
      !Array.isArray(entry.paths) ||
      parentsOf(entry).some((parent) => !seen.has(parent))
    ) {
      return null
    }
    seen.add(entry.oid)
  }
  return entries
}

/**
 * The commits reachable from `head` that `known` does not hold, oldest first with every
 * parent before its child: depth-first, first parents first, so a merge's own history comes
 * before the history it joined, then the merge. The same commits in the same order whether
 * caught up after a move or rebuilt, which keeps a rebuilt index equal to the one kept commit
 * by commit on the machine that made the merges.
 *
 * A commit that cannot be read throws a `DamagedHistoryError`, unless `unreadable` is given:
 * then it is added there and left out, like a known one (what is older than it on that path
 * is out of reach).
 */
export async function commitsSince(
  store: ObjectStore,
  head: string,
  known: (oid: string) => boolean,
  pause: () => Promise<void> = async () => undefined,
  unreadable?: Set<string>,
): Promise<string[]> {
  const expanded = new Set<string>()
  const ordered: string[] = []
  // Without recursion: histories can be far deeper than the call stack.
  const stack: Array<{ oid: string; done: boolean }> = [{ oid: head, done: false }]
  while (stack.length > 0) {
    const top = stack.pop() as { oid: string; done: boolean }
    if (top.done) {
      ordered.push(top.oid)
      continue
    }
    if (expanded.has(top.oid) || known(top.oid)) continue
    expanded.add(top.oid)
    let parents: ReadonlyArray<string>
    try {
      ;({ parents } = await store.readCommit(top.oid))
    } catch (error) {
      if (!unreadable || !(error instanceof DamagedHistoryError)) throw error
      unreadable.add(top.oid)
      continue
    }
    stack.push({ oid: top.oid, done: true })
    // Pushed in reverse, so the first parent's history comes out first.
    for (let k = parents.length - 1; k >= 0; k--) {
      const parent = parents[k] as string
      if (!expanded.has(parent) && !known(parent)) stack.push({ oid: parent, done: false })
    }
    await pause()
  }
  return ordered
}

/**
 * Index entries for `commitsSince(store, head, known)`, in its order; `read` is told how many
 * of how many were read, once they are found (0) and after each.
 */
export async function entriesSince(
  store: ObjectStore,
  head: string,
  known: (oid: string) => boolean,
  read: (done: number, total: number) => void = () => {},
): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = []
  const oids = await commitsSince(store, head, known)
  read(0, oids.length)
  for (const oid of oids) {
    entries.push(await entryFromCommit(store, oid))
    read(entries.length, oids.length)
  }
  return entries
}

function removeIfThere(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

// A temp index folder of a rebuild (its four files and format), gone or never made.
function removeTree(dir: string): void {
  let names: string[]
  try {
    names = disk.readdirSync(dir).map((dirent) => dirent.name)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return
    throw error
  }
  for (const name of names) removeIfThere(path.join(dir, name))
  disk.rmdirSync(dir)
}
