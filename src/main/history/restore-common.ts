/** What the four restore operations share: their author, how they write, what they answer. */
import type { ChangeResult, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { disk, isDenied } from '../lib/disk'
import { diskProblem } from '../lib/disk-errors'
import { Folder, FolderTree, readFileIn } from '../lib/folders'
import { asideName } from '../memory'
import { DamagedHistoryError } from './damage'
import { shownPath, toRelative, toVirtual } from './paths'
import { toSummary } from './queries'
import type { CommitIntent, Repo } from './repo'
import type { IndexEntry } from './side-index'
import type { FileDelta } from './tree-state'
import { mayNotRead } from '../lib/may-read'
import { foldedName } from '../lib/text'
import {
  deleteFileAndPrune,
  isUntracked,
  keepsNoCopy,
  MAX_VERSIONED_BYTES,
  writeFileSafely,
  type NoCopyEntries,
} from './work-tree'

/** The facts every restore commit shares: made by the user, outside any conversation. */
export const USER_INTENT = {
  actor: 'user',
  conversationId: null,
  toolUseId: null,
  overwrite: false,
} as const

/**
 * Commits what a restore wrote. Returns the new entry, null when nothing changed, or
 * `'pending'` when the files were written but their commit has to wait (a full disk): it is
 * made, with this intent, before the next change.
 */
export type Committer = (
  paths: ReadonlyArray<string>,
  intent: CommitIntent,
) => Promise<IndexEntry | null | 'pending'>

/** Commits at once, failing the restore when the commit fails. */
export function commitNow(repo: Repo): Committer {
  return (paths, intent) => repo.commit(paths, intent)
}

/** A file history never held, moved out of a restore's or a move's way (relative paths). */
export interface KeptAside {
  readonly path: string
  readonly keptAs: string
  /**
   * True when history held the file, but it was changed (by an editor, say) after the last
   * commit saw it: that newer content is what was kept aside.
   */
  readonly changed?: boolean
  /**
   * True when it was kept aside because Cairn may not read it (permission denied): what it
   * holds was never read. `versioned` then says whether history holds a version at `path`.
   */
  readonly unreadable?: boolean
  readonly versioned?: boolean
}

/**
 * What `applyDeltas` tells its caller when a write failed: the file it was writing, its size,
 * whether the folder was put back exactly as it was, and what stays kept aside.
 */
export interface FailedDelta {
  readonly path: string
  /** The folder on the file's way that Cairn may not enter, when that was the failure. */
  readonly folder?: string
  /** Bytes of the version being written (null for a delete). */
  readonly bytes: number | null
  /** True when every file is as it was before `applyDeltas` began (or kept aside, below). */
  readonly restored: boolean
  /** Files that could not return to their names: safe, under the name given. */
  readonly keptAside: ReadonlyArray<KeptAside>
}

/**
 * Makes the folder match `deltas`' after side: all or nothing. Every blob is read before the
 * folder is touched (a damaged one refuses the restore, changing nothing); a write that fails
 * half-way puts back what was already changed, and `onFailed` hears how that went. Deletions
 * go first, so that a file and a folder of the same name can trade places.
 *
 * A file history does not hold (one at a path the old side lacks, one changed since the old
 * side was committed, one too large to version, or one Cairn may not read) is never written
 * over or deleted: it is renamed beside itself first, and returned, so that the caller can say
 * where it went. Nothing else keeps a copy of it.
 */
export async function applyDeltas(
  repo: Pick<Repo, 'store' | 'workRoot'>,
  deltas: ReadonlyArray<FileDelta>,
  onFailed: (failure: FailedDelta) => void = () => {},
): Promise<ReadonlyArray<KeptAside>> {
  const contents = new Map<string, Uint8Array>()
  for (const delta of deltas) {
    if (delta.after !== null && !contents.has(delta.after)) {
      contents.set(delta.after, await repo.store.readBlob(delta.after))
    }
  }
  // What is there now, to put back on failure (a damaged copy only means it cannot be).
  for (const delta of deltas) {
    if (delta.before === null || contents.has(delta.before)) continue
    try {
      contents.set(delta.before, await repo.store.readBlob(delta.before))
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
    }
  }
  const ordered = [
    ...deltas.filter((delta) => delta.after === null),
    ...deltas.filter((delta) => delta.after !== null),
  ]
  // Folded as a case-blind disk (macOS, Windows) folds names: there a file kept aside as
  // `x (not in history).md` would be written over by a restored `x (Not In History).md`.
  const targets = new Set(deltas.map((delta) => foldedName(delta.path)))
  return inWorkTree(repo, async (tree) => {
    const done: FileDelta[] = []
    const kept: Aside[] = []
    // The delta being applied: keeping its file aside can fail before its write begins.
    let current: FileDelta | undefined
    try {
      for (const delta of ordered) {
        current = delta
        const aside = keepAsideIfUnversioned(repo, tree, delta, contents, targets)
        if (aside) kept.push(aside)
        done.push(delta)
        if (delta.after === null) deleteFileAndPrune(tree, delta.path)
        else await writeFileSafely(tree, delta.path, contents.get(delta.after)!)
      }
    } catch (error) {
      const failed = current
      const back = await putBack(repo, tree, done, contents, kept)
      if (failed) {
        const folder = deniedFolder(error, tree, failed.path)
        onFailed({
          path: failed.path,
          bytes: failed.after === null ? null : contents.get(failed.after)!.length,
          ...(folder !== null && { folder }),
          ...back,
        })
      }
      throw error
    }
    return kept.map(withoutParent)
  })
}

type Aside = KeptAside & { readonly parent: Folder }

// The first folder on `relative`'s way that Cairn may not enter, when the failure was being
// denied (null when every folder opens: then the file itself was refused).
function deniedFolder(error: unknown, tree: FolderTree, relative: string): string | null {
  if (!isDenied(error)) return null
  const segments = relative.split('/').slice(0, -1)
  for (let i = 1; i <= segments.length; i++) {
    const at = segments.slice(0, i).join('/')
    try {
      tree.folder(at)
    } catch (denied) {
      if (isDenied(denied)) return at
      return null
    }
  }
  return null
}

function withoutParent({ parent: _parent, ...aside }: Aside): KeptAside {
  return aside
}

/**
 * True when the folder holds a file at `relative` history keeps no copy of (too large to
 * version, or one Cairn may not read): history then still names its last versioned content,
 * which the folder no longer holds. The same test `applyDeltas` keeps such a file aside by:
 * with only the size checked, an unreadable file "already matched" and the restore did
 * nothing (review hunt12-story D8).
 */
export function noCopyOnDisk(repo: Pick<Repo, 'workRoot'>, relative: string): boolean {
  const tree = new FolderTree(repo.workRoot)
  try {
    const found = tree.find(relative)
    return (
      found.kind === 'file' && keepsNoCopy(found.name, found.stats, found.parent.entry(found.name))
    )
  } finally {
    tree.close()
  }
}

/**
 * The sentence that says where the files history did not hold went ("" for none), virtual
 * paths only.
 */
export function keptAsideNote(kept: ReadonlyArray<KeptAside>): string {
  return kept
    .map(({ path, keptAs, changed, unreadable, versioned }) => {
      if (unreadable) {
        // Never "not in the history": its last readable version may well be (review12 D4).
        const history = versioned
          ? 'the history keeps its last version Cairn could read'
          : 'the history has no version of it'
        return ` ${shownPath(path)} could not be read (permission denied), so it was kept as ${shownPath(keptAs)}; ${history}.`
      }
      return changed
        ? ` ${shownPath(path)} was changed outside Cairn meanwhile, so that version was kept as ${shownPath(keptAs)}.`
        : ` ${shownPath(path)} was not in the history, so it was kept as ${shownPath(keptAs)}.`
    })
    .join('')
}

/**
 * Walks the memory folder for the files history holds no copy of (too large, or denied by
 * their permission bits) and the folders Cairn may not enter. A restore of the whole folder
 * diffs history's trees, where such a file still shows its last versioned content: without
 * this walk it "already matched" and the restore did nothing (review12-story, item 1). A
 * restore of the whole folder through the queue takes the same entries from the scan it makes
 * first (`ScanReport.noCopy`, by these rules, in the same order): this walk is for a caller
 * without such a scan.
 */
export function findNoCopyEntries(repo: Pick<Repo, 'workRoot'>): NoCopyEntries {
  const files: string[] = []
  const folders: string[] = []
  const unreadable = new Set<string>()
  const walk = (folder: Folder, prefix: string): void => {
    for (const dirent of folder.list()) {
      const name = dirent.name
      if (isUntracked(name)) continue
      const relative = prefix + name
      const stats = folder.lstat(name)
      if (stats === null) continue
      if (stats.isFile()) {
        if (keepsNoCopy(name, stats, folder.entry(name))) files.push(relative)
        if (mayNotRead(stats, folder.entry(name))) unreadable.add(relative)
        continue
      }
      if (!stats.isDirectory()) continue
      if (mayNotRead(stats, folder.entry(name))) {
        folders.push(relative)
        continue
      }
      let child: Folder | null
      try {
        child = folder.openChildIfFolder(name)
      } catch (error) {
        if (!isDenied(error)) throw error
        folders.push(relative)
        continue
      }
      if (!child) continue
      try {
        walk(child, `${relative}/`)
      } finally {
        child.close()
      }
    }
  }
  const tree = new FolderTree(repo.workRoot)
  try {
    walk(tree.root(), '')
  } finally {
    tree.close()
  }
  return { files, folders, unreadable }
}

/**
 * The error a restore that failed half-way throws: the file (or folder) it could not change
 * named by its virtual path, and whether the folder is as it was. Anything but a disk's
 * refusal goes as it came.
 */
export function restoreFailure(
  error: unknown,
  failure: FailedDelta | null,
  what: RestoreKind = 'The restore',
): unknown {
  const problem = diskProblem(error, 'memory')
  if (!problem || !failure || error instanceof CairnError) return error
  const denied = problem.code === 'access-denied'
  const where =
    failure.folder !== undefined
      ? `Cairn could not open the folder ${shownPath(failure.folder)}`
      : `Cairn could not change ${shownPath(failure.path)}`
  const why = denied ? `${problem.reason} (it may belong to another account)` : problem.reason
  const outcome = failure.restored
    ? 'Nothing was changed.'
    : 'Not everything could be put back; Cairn saves the folder as it is.'
  return new CairnError(
    problem.code,
    `${what} did not happen, because ${where}: ${why}. ${outcome}${keptAsideNote(failure.keptAside)}`,
  )
}

/** How a refusal names the operation that failed (`restoreFailure`). */
export type RestoreKind = 'The restore' | 'The undo'

/**
 * `applyDeltas`, with a disk's refusal (a folder at 555, a file at 000, another account's
 * file, a full disk) turned by `restoreFailure` into words that name the file or folder and
 * say whether anything changed: every restore goes through here, so none answers with the
 * generic "permission was denied" (review13-story R4, closing-13 "Left").
 */
export async function applyOrExplain(
  repo: Pick<Repo, 'store' | 'workRoot'>,
  deltas: ReadonlyArray<FileDelta>,
  what: RestoreKind = 'The restore',
): Promise<ReadonlyArray<KeptAside>> {
  let failed: FailedDelta | null = null
  try {
    return await applyDeltas(repo, deltas, (failure) => {
      failed = failure
    })
  } catch (error) {
    throw restoreFailure(error, failed, what)
  }
}

// Moves what the folder holds at `delta.path` out of the way when history does not hold it:
// anything that is neither the old side's content (an edit saved since the last commit saw
// the file: a sync runs for a while after its scan) nor the new side's, or a file too large
// to version (never any version's content). Checked right before the write, which leaves
// the instant git leaves, not the length of a sync. Renamed within its own folder, so the
// move cannot fail half-way for lack of space.
function keepAsideIfUnversioned(
  repo: Pick<Repo, 'store'>,
  tree: FolderTree,
  delta: FileDelta,
  contents: ReadonlyMap<string, Uint8Array>,
  targets: ReadonlySet<string>,
): (KeptAside & { readonly parent: Folder }) | null {
  const found = tree.find(delta.path)
  if (found.kind !== 'file') return null
  // Too large to version, or not ours to read: history never held what it holds now.
  const at = found.parent.entry(found.name)
  let neverRead = keepsNoCopy(found.name, found.stats, at)
  let denied = false
  if (!neverRead) {
    // Only a file whose size is one of the two versions' is read and hashed.
    const sizes = [delta.before, delta.after].map((oid) =>
      oid === null ? undefined : contents.get(oid)?.length,
    )
    const couldBe = delta.before !== null && sizes[0] === undefined
    if (couldBe || sizes.includes(found.stats.size)) {
      let bytes: Uint8Array | null = null
      try {
        bytes = readFileIn(found.parent, found.name, found.stats, MAX_VERSIONED_BYTES)
      } catch (error) {
        // Denied (an ACL, another account's file): renaming it needs only the folder's leave.
        if (!isDenied(error)) throw error
        neverRead = true
        denied = true
      }
      if (bytes !== null) {
        const onDisk = repo.store.hash('blob', bytes)
        if (onDisk === delta.before || onDisk === delta.after) return null
      }
    }
  }
  // Asked before the rename: the kernel's answer (see mayNotRead) needs the entry's name.
  const unreadable = (neverRead && mayNotRead(found.stats, at)) || denied
  const slash = delta.path.lastIndexOf('/')
  const dir = delta.path.slice(0, slash + 1)
  const name = asideName(
    found.name,
    (candidate) =>
      targets.has(foldedName(dir + candidate)) || found.parent.lstat(candidate) !== null,
    'file',
    `/memories/${dir}`,
    unreadable ? 'unreadable' : 'not-in-history',
  )
  disk.renameSync(at, found.parent.entry(name))
  found.parent.syncLater()
  const changed = !neverRead && delta.before !== null
  return {
    path: delta.path,
    keptAs: dir + name,
    parent: found.parent,
    ...(changed && { changed }),
    ...(unreadable && { unreadable, versioned: delta.before !== null }),
  }
}

// Best effort, after a write failed: each changed file goes back to what it held. A file
// kept aside goes back under its own name (over whatever the restore wrote there), never
// history's older version in its place: that was an editor's save, or a file history never
// held. The file whose write failed is left alone when it still holds what it held (the
// atomic write failed before its rename): rewriting it could only fail the same way, in a
// folder that refuses writes. `restored` is false when anything is not as it was, and
// `keptAside` names what could not return to its name (safe under the other).
async function putBack(
  repo: Pick<Repo, 'store'>,
  tree: FolderTree,
  done: ReadonlyArray<FileDelta>,
  contents: ReadonlyMap<string, Uint8Array>,
  kept: ReadonlyArray<Aside>,
): Promise<{ readonly restored: boolean; readonly keptAside: ReadonlyArray<KeptAside> }> {
  const asideOf = new Map(kept.map((aside) => [aside.path, aside]))
  const stillAside: KeptAside[] = []
  let restored = true
  for (const [position, delta] of [...done].reverse().entries()) {
    const aside = asideOf.get(delta.path)
    if (aside) {
      const name = aside.path.slice(aside.path.lastIndexOf('/') + 1)
      const asName = aside.keptAs.slice(aside.keptAs.lastIndexOf('/') + 1)
      try {
        disk.renameSync(aside.parent.entry(asName), aside.parent.entry(name))
        aside.parent.syncLater()
      } catch {
        stillAside.push(withoutParent(aside))
        restored = false
      }
      continue
    }
    if (position === 0 && holds(repo, tree, delta.path, delta.before)) continue
    try {
      const before = delta.before === null ? null : contents.get(delta.before)
      if (before === undefined) {
        restored = false
        continue
      }
      if (before === null) deleteFileAndPrune(tree, delta.path)
      else await writeFileSafely(tree, delta.path, before)
    } catch {
      // Keep putting back the others; what cannot be put back is saved by the next rescan.
      if (!holds(repo, tree, delta.path, delta.before)) restored = false
    }
  }
  return { restored, keptAside: stillAside }
}

// Whether the folder holds `oid`'s content at `relative` (nothing at all for null).
function holds(
  repo: Pick<Repo, 'store'>,
  tree: FolderTree,
  relative: string,
  oid: string | null,
): boolean {
  try {
    tree.forget(relative)
    const found = tree.find(relative)
    if (oid === null) return found.kind === 'missing'
    if (found.kind !== 'file') return false
    const bytes = readFileIn(found.parent, found.name, found.stats, MAX_VERSIONED_BYTES)
    return repo.store.hash('blob', bytes) === oid
  } catch {
    return false
  }
}

/** Runs `task` with the memory folder's folders opened for it (one restore's writes). */
export async function inWorkTree<T>(
  repo: Pick<Repo, 'workRoot'>,
  task: (tree: FolderTree) => Promise<T>,
): Promise<T> {
  const tree = new FolderTree(repo.workRoot)
  try {
    return await task(tree)
  } finally {
    tree.close()
  }
}

/**
 * The answer of a restore: its commit and `message`, "Nothing changed." without one, or the
 * message with a note when its commit is owed (`'pending'`).
 */
export function changeResult(
  entry: IndexEntry | null | 'pending',
  message: string,
  kept: ReadonlyArray<KeptAside> = [],
): ChangeResult {
  // What was kept aside goes with the result, so the window can say where it went.
  const keptAside =
    kept.length > 0
      ? {
          keptAside: kept.map(({ path, keptAs, changed, unreadable, versioned }) => ({
            path: toVirtual(path),
            keptAs: toVirtual(keptAs),
            ...(unreadable
              ? { reason: 'unreadable' as const, versioned: versioned === true }
              : { reason: changed ? ('changed' as const) : ('not-in-history' as const) }),
          })),
        }
      : {}
  if (entry === 'pending') {
    return {
      commit: null,
      message: `${message} It will appear in History with the next change.`,
      ...keptAside,
    }
  }
  const commit: CommitSummary | null = entry ? toSummary(entry) : null
  // A file kept aside is a change even when no commit was needed (history never held it).
  const said = commit || kept.length > 0 ? message : 'Nothing changed.'
  return { commit, message: said, ...keptAside }
}

/** The relative path of a file or folder a restore names (never the memory root itself). */
export function requireFilePath(virtual: string): string {
  const relative = toRelative(virtual)
  if (relative === '') {
    throw new CairnError('invalid-path', 'Choose a file or folder inside /memories.')
  }
  return relative
}
