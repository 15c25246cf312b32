import type { Stats } from 'node:fs'
import path from 'node:path'
import type { RecoveryTelling } from '../../shared/types'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import type { OpeningReporter } from '../lib/progress'
import {
  disk,
  isCode,
  isNotPlainFile,
  listNames,
  listOwnFolderNames,
  readPlainFile,
  writeOwnFile,
} from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { diskProblem, placeOf } from '../lib/disk-errors'
import { DIR_MODE, settleFolderSyncs, TEMP_FILE_PREFIX } from '../lib/folders'
import { finishInterruptedMove } from './checkout'
import { blobSizesIn, redoRenames } from './redo-renames'
import { commitInterruptedCommand } from './command-intent'
import { finishInterruptedRestore, givenUpRestore, intentFileOf } from './restore-intent'
import { DamagedHistoryError } from './damage'
import { findLostTip, isReadableCommit, newerDescendant, otherRefs } from './find-tip'
import { MAIN_LOCK_LINKED, ownLockLeft, STALE_GIT_LOCK_MS } from './main-lock'
import { unlinkedMessage } from './outside-move'
import { readMainRef } from './main-ref'
import { DAMAGED_FOLDER, moveIntoDamaged, NotKeptAsideError } from './objects/damaged-folder'
import {
  IndexDamagedError,
  IndexFile,
  indexDirOf,
  IndexPartRefusedError,
  type IndexEntry,
} from './index-file'
import { folderAsHead } from './head-match'
import { createObjectStore, initRepository, writeMainRef, type ObjectStore } from './object-store'
import { damagedIndexes } from './objects/index-check'
import { reindexPacks } from './objects/index-pack'
import { removePackLeftovers } from './objects/pack-writer'
import {
  commitBody,
  createRepo,
  EMPTY_TREE_OID,
  systemIntent,
  type Repo,
  type RepoState,
} from './repo'
import { openIndex } from './side-index'
import { StatCache, statCacheOf } from './stat-cache'
import { emptyTree, flushTree, loadAll, treeFromOid } from './tree-state'
import { newScanReport, scanPath, type ScanReport } from './work-tree'

export interface OpenedRepo {
  readonly repo: Repo
  readonly recovery: RecoveryTelling | null
  /** Relative paths of files too large to version, found by the scan at open. */
  readonly tooLarge: ReadonlyArray<string>
  /** Entries the scan at open left out for a character in their name (relative paths). */
  readonly nameNotAllowed: ReadonlyArray<string>
  /** Files and folders the scan at open could not read, permission denied (relative paths). */
  readonly unreadable: ReadonlyArray<string>
  /**
   * The file or folder (relative) the system refused an interrupted restore to change, when
   * that gave the restore up (see `finishInterruptedRestore`).
   */
  readonly restoreRefused: string | null
}

/** What `openRepo` opens, and how. */
export interface OpenRepoOptions {
  readonly dataDir: string
  readonly now: () => number
  /** Told why a history could not be read before it is set aside. */
  readonly logger?: Logger
  /** The machine named in each commit's `Machine:` trailer (see `createRepo`). */
  readonly machine?: () => string | null
  /** The Cairn before did not close (its lock was taken over): look for its leftovers everywhere. */
  readonly afterCrash?: boolean
  /** The Cairn before closed owing commits (see `owedMarkerOf`). */
  readonly owed?: boolean
  /** True while this instance holds the data folder (see `ObjectStore.openLog`). */
  readonly owns?: () => boolean
  /** Told what the open is doing, and how far its slow steps are (the opening screen). */
  readonly progress?: OpeningReporter
}

/**
 * Opens (or starts) the history of `<dataDir>/memories` in `<dataDir>/history.git` and
 * repairs what an interrupted run, a damaged disk or an outside edit left behind:
 * - stray temp files of interrupted writes are removed (in the folder and in the history);
 * - a lost, empty or garbage `main` is found again (side index, then the commit objects);
 * - damaged copies of files the folder still holds are written again from the folder;
 * - changes not yet committed become one commit by the system author: an `outside` commit
 *   when the Cairn before closed cleanly owing nothing (so only another program can have
 *   made them), else a `recovery` commit (they may be a write whose commit was interrupted);
 * - a history that cannot be read at all is moved aside (never deleted, never overwritten)
 *   and a fresh one starts from the files as they are — the files are never touched.
 *
 * An I/O error (a full disk, EIO, EACCES, EMFILE) is never taken for damage: open fails with
 * a `disk-full` or `disk-error` CairnError and leaves the history as it was.
 */
export async function openRepo(options: OpenRepoOptions): Promise<OpenedRepo> {
  try {
    return await openOrRepair(options)
  } catch (error) {
    if (error instanceof CairnError) throw error
    if (error instanceof NotKeptAsideError) throw notKeptAside(error, options.logger)
    // Whatever went wrong reaches people without its host path or stack: those go to the log
    // only, a disk problem (a refused index part included) as a warning, anything else as an
    // error.
    const problem = diskProblem(error, placeOf(error, path.join(options.dataDir, 'memories')))
    const logged = problem || error instanceof IndexPartRefusedError ? 'warn' : 'error'
    options.logger?.[logged]('The memory history could not be opened', error)
    if (error instanceof IndexPartRefusedError) throw partRefused(options.dataDir, error)
    if (!problem) {
      throw new CairnError(
        'history-damaged',
        'Cairn could not open your memory history because of an unexpected problem in its history folder. Nothing was changed; your memory files are as they were.',
      )
    }
    throw new CairnError(
      problem.code,
      `Cairn could not open your memory history because ${problem.reason}. Nothing was changed; ${
        problem.code === 'disk-full' ? 'free some space' : 'fix the problem'
      } and open Cairn again.`,
    )
  }
}

/**
 * The words for something damaged in the git directory that could not be moved into
 * `cairn-damaged/` (read-only, full, a mount): what, why, and that it was left where it was.
 */
function notKeptAside(error: NotKeptAsideError, logger: Logger | undefined): CairnError {
  logger?.warn('The memory history could not be opened', error)
  return new CairnError(
    diskProblem(error)?.code ?? 'io-error',
    `Cairn could not open your memory history: it found history.git/${error.what} damaged and could not move it into history.git/${DAMAGED_FOLDER} because ${error.reason}. Nothing was lost: it is still where it was. Fix that and open Cairn again.`,
  )
}

/**
 * The words for a part of the side index the system will not open for writing: which part,
 * by its path inside the data folder (never the host's), and what a person can do about it.
 * Nothing was rebuilt: the index may be sound, and another account may be using it.
 */
function partRefused(dataDir: string, error: IndexPartRefusedError): CairnError {
  const inside = path.relative(dataDir, error.file)
  const shown =
    inside === '' || inside.startsWith('..') || path.isAbsolute(inside)
      ? path.basename(error.file)
      : inside.split(path.sep).join('/')
  // Refused reading, the file or the folder it is in may be another account's.
  return new CairnError(
    'access-denied',
    error.access === 'read'
      ? `Cairn could not open your memory history because the system does not let it read ${shown} in Cairn's data folder (permission was denied; the file or the folder it is in may belong to another account). Nothing was changed; give the account Cairn runs as permission to read and write that file and its folder, then open Cairn again.`
      : `Cairn could not open your memory history because the system does not let it write to ${shown} in Cairn's data folder (permission was denied; the file may belong to another account or be read-only). Nothing was changed; give the account Cairn runs as permission to read and write that file, then open Cairn again.`,
  )
}

/** What opening found and did, for the recovery notice. */
interface Findings {
  /** The commit a lost `main` was found again at, if it was lost. */
  tipFound: string | null
  /** Why the history was set aside, if it was. */
  setAside: string | null
  /** True when the newest commit's damaged object was written again, exactly, from the index. */
  commitRebuilt: boolean
  /** True when HEAD's tree could not be read and was rebuilt from the folder. */
  treeRebuilt: boolean
  /** True when a sync's interrupted move could not be finished and was dropped. */
  moveAbandoned: boolean
  /** `main` was a link to another branch (`git symbolic-ref`), made a branch again: its text. */
  unlinked?: string
  /** How many packs had their lost or damaged index built again from the pack. */
  packsReindexed?: number
}

async function openOrRepair(options: OpenRepoOptions): Promise<OpenedRepo> {
  const { dataDir, now } = options
  const workRoot = path.join(dataDir, 'memories')
  const gitdir = path.join(dataDir, 'history.git')
  makeFolder(workRoot)

  // What open does when nothing is slow: read the history, compare the folder with it. After
  // an unclean stop it looks for leftovers everywhere and may commit what was interrupted.
  const baseStep = options.afterCrash ? 'recovering' : 'checking'
  options.progress?.({ step: baseStep, done: 0, total: null })
  const findings: Findings = {
    tipFound: null,
    setAside: null,
    commitRebuilt: false,
    treeRebuilt: false,
    moveAbandoned: false,
  }
  let state: LoadedState | null = null
  if (exists(gitdir)) {
    try {
      state = await loadState(gitdir, workRoot, findings, options)
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
      options.logger?.warn('The memory history could not be read; it is set aside', error)
      findings.setAside = await setAside(gitdir, now())
    }
  }
  // Back from a step that counted (a rebuild, a format step) to the folder's comparison.
  options.progress?.({ step: baseStep, done: 0, total: null })
  const fresh = state === null
  if (!state) {
    await initRepository(gitdir)
    const store = createObjectStore(gitdir)
    try {
      await store.openLog({ owns: options.owns, logger: options.logger })
    } catch (error) {
      store.close()
      throw error
    }
    state = {
      store,
      head: null,
      root: emptyTree(),
      treeOid: EMPTY_TREE_OID,
      index: IndexFile.create(indexDirOf(gitdir)),
      stats: new StatCache(statCacheOf(gitdir)),
    }
  }
  const repo = createRepo({
    store: state.store,
    workRoot,
    state,
    now,
    machine: options.machine,
    logger: options.logger,
  })

  const report = newScanReport()
  // A clean close commits or owes every change Cairn made, and a history found whole again
  // at the same newest version leaves no change of Cairn's uncommitted: what differs then
  // was made outside Cairn while it was closed.
  const outside =
    !options.afterCrash &&
    !options.owed &&
    !findings.tipFound &&
    !findings.commitRebuilt &&
    !findings.treeRebuilt
  let entry: IndexEntry | null
  let restoreRefused: string | null = null
  try {
    if (state.folderIsHead) {
      // The folder was found to be exactly HEAD (its files' stored copies checked on the way,
      // see head-match.ts): nothing to commit, and no restore was pending (it was looked for
      // first). What open wrote before (a repair) is made durable, as a commit finding no
      // change would.
      entry = null
      await Promise.all([repo.store.flush(), settleFolderSyncs()])
    } else {
      // A restore a kill interrupted is finished first, and committed as the restore it was.
      if (!fresh) restoreRefused = (await finishInterruptedRestore(repo, options.logger)).refused
      // A memory command a kill interrupted is committed as its own, with its conversation.
      if (!fresh && !outside) await commitInterruptedCommand(repo, report, options.logger)
      entry = await repo.commit(
        'all',
        fresh
          ? systemIntent('init', 'Start the history from the memory folder')
          : outside
            ? systemIntent('outside', 'Changes made outside Cairn while it was closed')
            : systemIntent('recovery', 'Save changes found at start-up'),
        // Temp files of interrupted writes go on the way (through the folders' handles): they
        // were never part of the folder.
        { report, verify: !fresh, removeTemp: true },
      )
    }
    // A restore given up by an earlier open that a kill stopped before its notice was raised.
    restoreRefused ??= givenUpRestore(repo.store.gitdir, options.logger)
    repo.stats.save()
  } catch (error) {
    // Nothing of a failed open stays: left open, the log (its idle checkpoint armed by the
    // recovery commit's append) would run a checkpoint later, on descriptors never closed,
    // while another instance (or the next open) holds the folder.
    repo.store.close()
    repo.index.close()
    throw error
  }
  return {
    repo,
    recovery: recoveryReport(findings, fresh, entry, report),
    tooLarge: report.tooLarge,
    nameNotAllowed: report.nameNotAllowed,
    unreadable: report.unreadable,
    restoreRefused,
  }
}

function recoveryReport(
  findings: Findings,
  fresh: boolean,
  entry: IndexEntry | null,
  report: ScanReport,
): RecoveryTelling | null {
  const count = entry?.files.length ?? 0
  const commitOid = entry?.oid ?? null
  if (findings.setAside) {
    return {
      kind: 'history-rebuilt',
      message: `The memory history could not be read. It was set aside, untouched (as ${findings.setAside} in your data folder), and a new history was started from your current memory files (${count} ${plural(count)}); no file was lost.`,
      commitOid,
    }
  }
  if (fresh) {
    if (!entry) return null
    return {
      kind: 'history-rebuilt',
      message: `No history was found for your memory folder. A new history was started from its ${count} ${plural(count)}.`,
      commitOid,
    }
  }
  const repairs: string[] = []
  if (findings.unlinked) repairs.push(findings.unlinked)
  if (findings.moveAbandoned) {
    repairs.push(
      'A sync that was bringing in changes from another machine when Cairn stopped could not be finished here; your memory folder was kept as it was, and the next sync tries again.',
    )
  }
  if (findings.commitRebuilt) {
    repairs.push(
      "The newest version's record in the history was damaged; it was rebuilt, exactly, from your files.",
    )
  } else if (findings.tipFound) {
    repairs.push(
      "The history's pointer to its newest version was missing, damaged or behind; the newest version was found again and the history continues from it.",
    )
  }
  if (findings.packsReindexed) {
    const one = findings.packsReindexed === 1
    repairs.push(
      `The history's ${one ? 'table of where its versions are stored was' : 'tables of where its versions are stored were'} missing or damaged; ${one ? 'it was' : 'they were'} rebuilt from the stored versions themselves, and nothing was lost.`,
    )
  }
  if (findings.treeRebuilt) {
    repairs.push(
      entry
        ? "The newest version's list of files in the history was damaged; your files were saved again as a new version."
        : "The newest version's list of files in the history was damaged; it was rebuilt from your files.",
    )
  }
  if (report.repaired > 0) {
    repairs.push(repairedMessage(report.repaired))
  }
  if (entry?.command === 'outside') {
    const one = count === 1
    repairs.push(
      `${count} ${plural(count)} ${one ? 'was' : 'were'} edited outside Cairn while it was closed; ${one ? 'it was' : 'they were'} saved to the history as ${one ? 'its' : 'their'} own change.`,
    )
  } else if (entry) {
    repairs.push(
      `${count} ${plural(count)} had changed without being saved to the history (an interrupted write or an edit outside Cairn). They were saved as one recovery commit.`,
    )
  }
  if (repairs.length === 0) return null
  return {
    kind:
      findings.tipFound ||
      findings.commitRebuilt ||
      findings.treeRebuilt ||
      findings.moveAbandoned ||
      findings.unlinked ||
      findings.packsReindexed ||
      report.repaired > 0
        ? 'history-repaired'
        : entry?.command === 'outside'
          ? 'outside-changes'
          : 'uncommitted-changes',
    message: repairs.join(' '),
    commitOid: commitOid ?? findings.tipFound,
  }
}

/** What a repair of the stored copies of `count` files from the files themselves says. */
export function repairedMessage(count: number): string {
  return `${count} damaged stored ${count === 1 ? 'copy' : 'copies'} of your files ${count === 1 ? 'was' : 'were'} repaired from the files themselves.`
}

/** The state open starts the repo from; `folderIsHead` when the folder is exactly HEAD. */
type LoadedState = RepoState & { readonly store: ObjectStore; readonly folderIsHead?: boolean }

/**
 * Reads the history's state, repairing what can be repaired in place. Throws a
 * `DamagedHistoryError` when the history cannot be used at all (the caller sets it aside);
 * I/O errors pass through.
 */
async function loadState(
  gitdir: string,
  workRoot: string,
  findings: Findings,
  { logger, afterCrash = false, owns, progress }: OpenRepoOptions,
): Promise<LoadedState> {
  if (!isFolder(path.join(gitdir, 'objects'))) {
    throw new DamagedHistoryError('objects', 'no objects folder')
  }
  removeGitTemps(gitdir, afterCrash)
  const packDir = path.join(gitdir, 'objects', 'pack')
  const unindexed: string[] = []
  removePackLeftovers(packDir, 0, Date.now(), unindexed)
  repairLayout(gitdir)
  const store = createObjectStore(gitdir)
  try {
    // A pack whose index is missing, zeroed or cut short (its objects would all read as
    // missing, and the history be set aside whole) gets its index built again from the pack;
    // a pack that is not whole either is kept aside as before (`git index-pack` cannot help).
    // A missing index is what a kill between a pack write's two renames leaves (its temp
    // index spoiled): indexing the pack finishes that write, as `finishInstalls` does, and is
    // not told; a damaged one is.
    // An index whose header opens but whose body is damaged (its bytes do not hash to its own
    // trailer; each index hashed once, then remembered by its stamp) is rebuilt the same way.
    const leftOut = [
      ...store.db.packsLeftOut(),
      ...damagedIndexes(
        gitdir,
        store.db.packs().map((open) => open.name),
      ),
    ]
    if (unindexed.length > 0 || leftOut.length > 0) {
      const rebuilt = await reindexPacks(gitdir, [...unindexed, ...leftOut], {
        keepAside: new Set(unindexed),
        by: 'History open',
        logger,
      })
      for (const name of rebuilt) {
        if (leftOut.includes(name)) findings.packsReindexed = (findings.packsReindexed ?? 0) + 1
      }
      store.db.reopen()
    }
    // Before anything reads an object: the write-ahead log brings back the objects of
    // acknowledged commits whose loose files a power cut lost (a clean close leaves it empty;
    // after a kill it is replayed too, its objects perhaps only in the page cache).
    // Commands' renames the log records and a power cut lost are redone (redo-renames.ts).
    await store.openLog({
      owns,
      logger,
      redo: async (renames) => void (await redoRenames(workRoot, renames, blobSizesIn(store))),
    })
    // A sync moving `main` when the app stopped is finished first, so the folder and `main`
    // agree again before anything is compared (and before the recovery commit).
    const moved = await finishInterruptedMove(gitdir, workRoot, logger, () => {
      findings.moveAbandoned = true
    })
    const head = await findHead(store, gitdir, workRoot, findings)
    if (!head) {
      const { index } = await openIndex(store, gitdir, null, undefined, progress)
      const stats = loadStats(gitdir)
      return { store, head: null, root: emptyTree(), treeOid: EMPTY_TREE_OID, index, stats }
    }
    // A move just finished may have taken `main` back on purpose (a sync's switch): it stays.
    return {
      store,
      ...(await loadHead(store, gitdir, workRoot, head, findings, !moved, progress)),
    }
  } catch (error) {
    // Its packs are closed before the history is set aside (or open fails).
    store.close()
    throw error
  }
}

/**
 * The commit `main` names when it can be read; otherwise the newest commit found again (the
 * newest commit rebuilt exactly from the side index and the folder, or a lost tip found from
 * the index or the commit objects), which `main` is then moved to. Null for a history that
 * never had a commit; a `DamagedHistoryError` when there was a history and none of it can be
 * found.
 */
async function findHead(
  store: ObjectStore,
  gitdir: string,
  workRoot: string,
  findings: Findings,
): Promise<string | null> {
  const ref = readMainRef(gitdir)
  if (ref.kind === 'ok' && (await isReadableCommit(store, ref.oid))) {
    if (ref.symbolic !== undefined) {
      // A link git made to another branch: followed, and made a branch of its own again before
      // anything of Cairn's writes over it (as a change does while Cairn runs: outside-move.ts).
      await writeMainRef(gitdir, ref.oid)
      findings.unlinked = unlinkedMessage(ref.symbolic, ref.oid)
    }
    return ref.oid
  }
  // Only now is the side index read as it is (the usual open reads it once, in openIndex).
  const index = openIndexAsIs(gitdir)
  try {
    const newest = newestEntry(index)
    if (
      newest &&
      (ref.kind !== 'ok' || ref.oid === newest.oid) &&
      !(await isReadableCommit(store, newest.oid)) &&
      (await rebuildCommit(store, workRoot, newest))
    ) {
      findings.commitRebuilt = true
      findings.tipFound = newest.oid
      await writeMainRef(gitdir, newest.oid)
      return newest.oid
    }
    // A damaged commit a sync ref (a backup, the remote's) still names stays where it is.
    if (ref.kind === 'ok' && !otherRefs(gitdir).some((other) => other.oid === ref.oid)) {
      quarantine(gitdir, ref.oid)
    }
    const head = await findLostTip(store, gitdir, index)
    if (head) {
      findings.tipFound = head
      await writeMainRef(gitdir, head)
      return head
    }
    if (
      ref.kind !== 'lost' ||
      ref.why !== 'missing' ||
      hasHistoryObjects(gitdir) ||
      (index?.size ?? 0) > 0
    ) {
      // There was a history, and nothing of it can be found: set it aside whole.
      throw new DamagedHistoryError(ref.kind === 'ok' ? ref.oid : 'main', 'no commit to be found')
    }
    return null
  } finally {
    index?.close()
  }
}

// The side index as it is on disk, or null when it is missing or damaged (I/O errors pass).
function openIndexAsIs(gitdir: string): IndexFile | null {
  try {
    return IndexFile.open(indexDirOf(gitdir))
  } catch (error) {
    if (error instanceof IndexDamagedError) return null
    throw error
  }
}

function newestEntry(index: IndexFile | null): IndexEntry | null {
  if (!index || index.size === 0) return null
  try {
    return index.at(index.size - 1)
  } catch (error) {
    if (error instanceof IndexDamagedError) return null
    throw error
  }
}

// HEAD's tree (made from the folder when it is exactly HEAD, rebuilt from the folder when
// damaged), the side index made to match HEAD, and the stat cache.
async function loadHead(
  store: ObjectStore,
  gitdir: string,
  workRoot: string,
  found: string,
  findings: Findings,
  mayGoForward: boolean,
  progress?: OpeningReporter,
): Promise<RepoState & { readonly folderIsHead: boolean }> {
  // A `main` behind its own newer commits (a stale `packed-refs` line read for a lost loose
  // ref, or the ref put back to an older commit) goes forward to the newest, as a lost `main`
  // is found again: cutting the index to it would drop those commits from the history and
  // commit their changes as if made outside Cairn. Nothing is lost either way for a person
  // who reset `main` on purpose: the folder, as it is, is then committed on top
  // (docs/durability.md).
  const opened = await openIndex(
    store,
    gitdir,
    found,
    mayGoForward ? (index) => newerDescendant(store, gitdir, index, found) : undefined,
    progress,
  )
  const { index } = opened
  const head = opened.head ?? found
  try {
    if (head !== found) {
      findings.tipFound = head
      await writeMainRef(gitdir, head)
    }
    const commit = await store.readCommit(head)
    const stats = loadStats(gitdir)
    // A restore a kill interrupted changes the folder before the scan at open: not the shortcut.
    const same = exists(intentFileOf(gitdir))
      ? null
      : await folderAsHead(store, workRoot, stats, commit.tree)
    let root = same?.root ?? treeFromOid(commit.tree)
    if (!same) {
      try {
        await loadAll(store, root)
      } catch (error) {
        if (!(error instanceof DamagedHistoryError)) throw error
        // HEAD's tree is damaged: the scan of the folder rebuilds it (and rewrites the damaged
        // objects, when the folder still holds what they held).
        root = emptyTree()
        findings.treeRebuilt = true
      }
    }
    return {
      head,
      root,
      treeOid: commit.tree,
      index,
      stats,
      folderIsHead: same !== null,
      unreadTrees: same?.unread ?? [],
      uncheckedBlobs: same?.unchecked,
    }
  } catch (error) {
    index.close()
    throw error
  }
}

/**
 * Writes the newest commit's object again when it is damaged but the side index still has
 * its facts and the folder still holds its files: the commit is rebuilt byte for byte (its id
 * proves it). False when the rebuilt commit would not have that id.
 */
async function rebuildCommit(
  store: ObjectStore,
  workRoot: string,
  entry: IndexEntry,
): Promise<boolean> {
  // A commit made outside Cairn holds people and a message the index does not keep.
  if (entry.actor === 'outside') return false
  if (entry.parent && !(await isReadableCommit(store, entry.parent))) return false
  const scanned = await scanPath(store, workRoot, [], null)
  const tree = await flushTree(store, scanned?.kind === 'tree' ? scanned : emptyTree())
  // The entry holds every fact the commit message was made from.
  const { oid: _oid, parent: _parent, otherParents, time: _time, files: _files, ...meta } = entry
  const facts = { ...meta, actor: entry.actor }
  const body = commitBody(facts, tree, entry.parent, Math.floor(entry.time / 1000), otherParents)
  if (store.hash('commit', body) !== entry.oid) {
    await store.flush()
    return false
  }
  await store.write('commit', body, entry.oid)
  await store.flush()
  return true
}

// A damaged loose object no commit will reach again is moved out of objects/ (git fsck
// would report it forever), into cairn-damaged/ beside it: set aside, never deleted.
function quarantine(gitdir: string, oid: string): void {
  const file = path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))
  if (!exists(file)) return
  moveIntoDamaged(gitdir, file, oid)
}

// HEAD must name main, and refs/heads must exist, for git (and us) to see a repository.
function repairLayout(gitdir: string): void {
  const headFile = path.join(gitdir, 'HEAD')
  // Anything but a plain file in HEAD's place (a link, which may point outside the data
  // folder, or a folder) is moved aside, never read nor written through (probe28n).
  moveAsideUnlessFile(gitdir, 'HEAD')
  let head: string | null = null
  try {
    // Read and written never through a link nor from a fifo, should one be put there after
    // the check above (rprobe28n): such an open fails, and nothing outside is touched.
    head = readPlainFile(headFile, OWN_FILE_CAP.TINY).toString('utf8').trim()
  } catch (error) {
    // A HEAD larger than any HEAD is damage as a folder there is: kept aside, written again.
    if (isNotPlainFile(error)) moveAsideInGitdir(gitdir, 'HEAD')
    else if (!isCode(error, 'ENOENT')) throw error
  }
  if (head !== 'ref: refs/heads/main') writeOwnFile(headFile, 'ref: refs/heads/main\n')
  // A file where `refs` or `refs/heads` should be, or a folder where the ref file should be,
  // would fail every start (a ref written onto a folder: EISDIR); it is moved aside, never
  // deleted, and `main` is then found again as a lost one.
  for (const dir of ['refs', 'refs/heads']) {
    const stats = disk.lstatIfThere(path.join(gitdir, dir))
    if (stats && !stats.isDirectory()) moveAsideInGitdir(gitdir, dir)
    makeFolder(path.join(gitdir, dir), 0o755)
  }
  const main = disk.lstatIfThere(path.join(gitdir, 'refs', 'heads', 'main'))
  if (main && !main.isFile()) moveAsideInGitdir(gitdir, 'refs/heads/main')
  // git refuses every command on a repository with a folder (or a link, a fifo) at
  // `packed-refs` or anything but a folder at `objects/pack`, and so every maintenance pass
  // failed (probe32b): kept aside, as for `config`. A link at objects/pack to a folder stays
  // (its packs are the history; a pass refuses to write through it).
  moveAsideUnlessFile(gitdir, 'packed-refs')
  const packs = path.join(gitdir, 'objects', 'pack')
  if (disk.lstatIfThere(packs) && !isFolder(packs)) {
    moveAsideInGitdir(gitdir, 'objects/pack')
    makeFolder(packs, 0o755)
  }
  repairConfig(gitdir)
}

// Cairn never reads `config`, but git refuses a repository whose config it cannot parse
// ("fatal: bad config line 1"), so the history stays valid for the git CLI only if a damaged
// one is replaced: moved aside (never deleted) and written again as Cairn writes it.
function repairConfig(gitdir: string): void {
  const file = path.join(gitdir, 'config')
  moveAsideUnlessFile(gitdir, 'config')
  let text: string
  try {
    text = readPlainFile(file, OWN_FILE_CAP.SMALL).toString('utf8')
  } catch (error) {
    // A config larger than any git config is damage as one git cannot parse: kept aside.
    if (isNotPlainFile(error)) moveAsideInGitdir(gitdir, 'config')
    else if (!isCode(error, 'ENOENT')) throw error
    writeOwnFile(file, DEFAULT_CONFIG)
    return
  }
  if (looksLikeGitConfig(text)) return
  moveAsideInGitdir(gitdir, 'config')
  writeOwnFile(file, DEFAULT_CONFIG)
}

const DEFAULT_CONFIG = '[core]\n\trepositoryformatversion = 0\n\tfilemode = false\n\tbare = true\n'

/**
 * A cheap check of git's config syntax, line by line: blank lines, comments, section headers
 * (`[core]`, `[remote "origin"]`) and, inside a section, `name` or `name = value` (a value may
 * go on over a line ending in a backslash). Anything else (a NUL, an unclosed header, a key
 * before any section) is what git refuses.
 */
function looksLikeGitConfig(text: string): boolean {
  if (text.includes('\0')) return false
  let inSection = false
  let continued = false
  for (const line of text.split(/\r?\n/)) {
    if (continued) {
      continued = line.endsWith('\\')
      continue
    }
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue
    if (trimmed.startsWith('[')) {
      if (!/^\[[A-Za-z0-9.-]+(\s+"(?:[^"\\]|\\.)*")?\]/.test(trimmed)) return false
      inSection = true
      continue
    }
    if (!inSection || !/^[A-Za-z][A-Za-z0-9-]*\s*(=|$|[#;])/.test(trimmed)) return false
    continued = trimmed.endsWith('\\')
  }
  return true
}

// Moves what is at `relative` in the git directory into cairn-damaged/ when it is there but
// is not a plain file: a link (written through, it would change a file it points to, outside
// the data folder too) or a folder.
function moveAsideUnlessFile(gitdir: string, relative: string): void {
  const stats = disk.lstatIfThere(path.join(gitdir, relative))
  if (stats && !stats.isFile()) moveAsideInGitdir(gitdir, relative)
}

// Moves what is at `relative` in the git directory into cairn-damaged/, under a new name.
function moveAsideInGitdir(gitdir: string, relative: string): void {
  const name = `${relative.replaceAll('/', '-')}-${Date.now()}`
  moveIntoDamaged(gitdir, path.join(gitdir, relative), name)
}

// Temp files of object, ref and index writes a crash or a failure left behind.
function removeGitTemps(gitdir: string, afterCrash: boolean): void {
  const objects = path.join(gitdir, 'objects')
  // An object's temp file is left only by a kill or a power cut (a failed write removes its
  // own), and either leaves the instance lock behind: only then are the 256 object folders
  // listed (~1 ms per 1,000 loose objects, and 30-40 ms for the 256 folders maintenance keeps,
  // emptied, on a slow disk). A maintenance pass lists them all anyway and removes the temp
  // files a minute old that it meets (objects/repack.ts).
  if (afterCrash) {
    for (const dir of listNames(objects)) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue
      for (const name of listOwnFolderNames(path.join(objects, dir))) {
        if (name.startsWith('tmp_obj_')) unlinkIfThere(path.join(objects, dir, name))
      }
    }
  }
  const own = disk.lstatIfThere(path.join(gitdir, MAIN_LOCK_LINKED))
  // Never through a link (at refs/heads, objects/pack, an object folder: to a folder outside
  // the data folder, say): its files are not Cairn's to remove (rhist33; such a link is kept
  // aside below, or read through and never written).
  for (const name of listOwnFolderNames(path.join(gitdir, 'refs', 'heads'))) {
    const file = path.join(gitdir, 'refs', 'heads', name)
    if (name.startsWith('main.') && name.endsWith('.lock') && name !== 'main.lock') {
      // A ref temp file of Cairn's (`prepareMainRef`).
      unlinkIfThere(file)
    } else if (name.endsWith('.lock') && leftLock(file, own)) {
      unlinkIfThere(file)
    }
  }
  for (const name of listNames(gitdir)) {
    if (/^cairn-index\.jsonl\..*tmp$/.test(name)) unlinkIfThere(path.join(gitdir, name))
    // The temp file of a move note (checkout.ts) a kill interrupted.
    if (name.startsWith(TEMP_FILE_PREFIX)) unlinkIfThere(path.join(gitdir, name))
  }
  // Those of a sync's writes (a fetched pack, a ref: sync/git-fs.ts).
  for (const name of listOwnFolderNames(path.join(objects, 'pack'))) {
    if (name.startsWith(TEMP_FILE_PREFIX)) unlinkIfThere(path.join(objects, 'pack', name))
  }
  removeTempsUnder(path.join(gitdir, 'refs'))
}

/**
 * A git lock in refs/heads nobody is holding: Cairn's own `main.lock` (a second name of
 * `cairn-main-lock`, main-lock.ts, or a file naming a process that is gone) that a kill left,
 * or any lock older than a git command holds one. A younger one that is not Cairn's may be a running git's (`git commit`, an
 * `update-ref --stdin` transaction): removed, git's move would fail or race Cairn's
 * (stop 30, rout30). It stays, and a move of main is refused in plain words while it does.
 */
function leftLock(file: string, own: Stats | undefined): boolean {
  const stats = disk.lstatIfThere(file)
  if (!stats) return false
  if (own && stats.ino === own.ino && stats.dev === own.dev) return true
  if (Date.now() - stats.mtimeMs > STALE_GIT_LOCK_MS) return true
  // Where hard links are refused, Cairn's own is a file naming its process.
  return path.basename(file) === 'main.lock' && ownLockLeft(file)
}

function removeTempsUnder(dir: string): void {
  for (const name of listOwnFolderNames(dir)) {
    const child = path.join(dir, name)
    if (name.startsWith(TEMP_FILE_PREFIX)) unlinkIfThere(child)
    else if (isFolder(child)) removeTempsUnder(child)
  }
}

// Any object but the empty tree (which a history with no commit yet holds).
function hasHistoryObjects(gitdir: string): boolean {
  const objects = path.join(gitdir, 'objects')
  for (const dir of listNames(objects)) {
    const names = /^[0-9a-f]{2}$/.test(dir) ? listNames(path.join(objects, dir)) : []
    if (names.some((name) => dir + name !== EMPTY_TREE_OID && !name.startsWith('tmp_obj_'))) {
      return true
    }
    if (
      dir === 'pack' &&
      listNames(path.join(objects, dir)).some((name) => name.endsWith('.pack'))
    ) {
      return true
    }
  }
  return false
}

async function setAside(gitdir: string, time: number): Promise<string> {
  const stamp = new Date(time).toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z')
  for (let n = 0; ; n++) {
    const candidate = `${gitdir}.broken-${stamp}${n ? `-${n}` : ''}`
    if (exists(candidate)) continue
    disk.renameSync(gitdir, candidate)
    return path.basename(candidate)
  }
}

function loadStats(gitdir: string): StatCache {
  return StatCache.load(statCacheOf(gitdir))
}

function makeFolder(dir: string, mode = DIR_MODE): void {
  try {
    disk.mkdirSync(dir, mode)
  } catch (error) {
    if (!isCode(error, 'EEXIST')) throw error
  }
}

function exists(file: string): boolean {
  try {
    disk.lstatSync(file)
    return true
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false
    throw error
  }
}

function isFolder(dir: string): boolean {
  try {
    return disk.statSync(dir).isDirectory()
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return false
    throw error
  }
}

function unlinkIfThere(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

/**
 * The file a Cairn that closes owing commits (they failed: a full disk) leaves in the history
 * folder, so that the next open saves what it finds as a `recovery`, not as an outside edit.
 */
export function owedMarkerOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-owed')
}

function plural(count: number): string {
  return count === 1 ? 'file' : 'files'
}
