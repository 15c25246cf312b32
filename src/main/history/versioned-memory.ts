import { dropFetchedPacks } from './objects/drop-fetched'
import path from 'node:path'
import { runIds } from '../../shared/run-ids'
import type {
  ChangeResult,
  CommitCommand,
  CommitSummary,
  RecoveryReport,
  RecoveryTelling,
} from '../../shared/types'
import type { FollowProgress, OpeningProgress } from '../../shared/types'
import { disk, errorCode, exists, makeFolders, removeFile, removePath } from '../lib/disk'
import { diskProblem, isDiskProblem, placeOf } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import { DIR_MODE, FolderDeniedError, FolderTree, readFileIn } from '../lib/folders'
import { acquireInstanceLock, type InstanceLock } from '../lib/instance-lock'
import { consoleLogger, type Logger } from '../lib/logger'
import { PROGRESS_INTERVAL_MS, throttleProgress } from '../lib/progress'
import { createSerialQueue } from '../lib/serial-queue'
import { cutWithEllipsis, escapeInvisible } from '../lib/text'
import {
  createMemoryTool,
  DEFAULT_LIMITS,
  maxEditableBytes,
  parseMemoryPath,
  removeSecrets,
  unexpectedFailure,
  type MadeChange,
  type MemoryExecution,
  type MemoryLimits,
  type MemoryMutation,
  type MemoryPolicy,
  type WriteStager,
} from '../memory'
import { createAncestry } from './ancestry'
import { createBlamer } from './blame'
import { blameDirOf } from './blame-store'
import { changeLogOf, createChangeLog } from './change-log'
import { moveMain } from './checkout'
import { unlinkMain } from './main-lock'
import {
  followOutsideMove,
  MAX_DROPPED_LISTED,
  movedOutside,
  type FollowedMove,
  unlinkedMessage,
} from './outside-move'
import { reviewFactsOf } from './commit-message'
import { DamagedHistoryError } from './damage'
import { IndexFile, replaceIndexDir } from './index-file'
import { readIndexed, requireCurrentIndex } from './read'
import { compareCommits, diffFile, readAt, readBytesAt, showCommit } from './inspect'
import { commandIntents } from './command-intent'
import { createFreedFiles, FREED_QUIET_MS } from './freed-files'
import { createLookup } from './lookup'
import { createGitIndexKeeper, prepareGitIndex, writeGitIndex } from './git-index'
import { createMaintainer, PackFolderGate, type MaintenanceSettings } from './maintainer'
import { RepackAborted } from './objects/repack'
import {
  createNotices,
  followMoves,
  damagedCopyNotice,
  keptAsideNotice,
  restoreRefusedNotice,
  scanNotices,
  secretNotices,
} from './notices'
import { openRepo, owedMarkerOf, repairedMessage } from './open-repo'
import {
  commitOutsideChanges,
  differsFromHead,
  outermost,
  touchedByCommand,
  touchedByRevert,
  type TouchedPaths,
} from './outside-changes'
import { isWithin, segmentsOf, toRelative, toVirtual } from './paths'
import { nodeAt } from './tree-state'
import { changesSince, fileHistoryOf, queryLog, toSummary, toolUseCommitsOf } from './queries'
import { type CommitTimeline, createCommitTimeline } from './changes-in-commits'
import { systemIntent, type CommitIntent, type StagedChange } from './repo'
import { createSearcher } from './search'
import { createSnapshots } from './snapshot'
import { restoreAll } from './restore-all'
import { inWorkTree, type Committer } from './restore-common'
import { restoreDeleted } from './restore-deleted'
import { forgetGivenUpRestore } from './restore-intent'
import { restoreFile } from './restore-file'
import { revert } from './revert'
import {
  buildIndex,
  catchUp as catchUpIndex,
  checkIndex,
  parentsOf,
  type IndexEntry,
} from './side-index'
import type {
  ExecuteOptions,
  ExecuteOutcome,
  HistoryGit,
  HistorySession,
  Origin,
  RunFacts,
  VersionedMemory,
} from './types'
import { identityOf, watchFolder, type FolderWatcher } from './watcher'
import {
  deleteFileAndPrune,
  keepsNoCopy,
  newScanReport,
  writeFileSafely,
  type ScanReport,
} from './work-tree'

/** How the subject of a commit of files kept after a move of `main` outside Cairn begins. */
const KEPT_SUBJECT_START = 'Kept after main was'

/** Quiet time after the last file-system event before outside edits are committed. */
export const WATCH_DEBOUNCE_MS = 400

/**
 * How long after open the history checks by itself what open took unchecked (the loose blobs
 * it trusted by their stamps): after the window's first requests, long before the idle moment.
 */
const DEFERRED_CHECK_MS = 1000

/** Options of `openVersionedMemory`; everything but `dataDir` has a default. */
export interface VersionedMemoryOptions {
  /** Memory files live in `<dataDir>/memories`, their history in `<dataDir>/history.git`. */
  readonly dataDir: string
  /** Initial Memory tool policies (settings may change them later with `setPolicy`). */
  readonly policy?: Partial<MemoryPolicy>
  readonly limits?: Partial<MemoryLimits>
  /** Clock for commit times (tests). */
  readonly now?: () => number
  /**
   * Watch the folder and commit edits made outside Cairn as they happen (default on, after
   * `WATCH_DEBOUNCE_MS` of quiet). Off, they are still committed before Cairn touches the
   * same paths.
   */
  readonly watch?: boolean | { readonly debounceMs: number }
  /** Where failures nobody waits for are reported (default: the console). */
  readonly logger?: Logger
  /**
   * Background maintenance: packs loose objects into a git pack with deltas when they pile
   * up and when idle (default on). `false` turns it off; `maintain()` still runs it on demand.
   */
  readonly maintenance?: false | MaintenanceSettings
  /**
   * How long the commands' queue stays idle before git's index (`history.git/index`) is made
   * to list `main` again for a person's git CLI (default `GIT_INDEX_IDLE_MS`; git-index.ts).
   */
  readonly gitIndexIdleMs?: number
  /** The machine each commit names in its `Machine:` trailer (default: none; see `setMachine`). */
  readonly machine?: string | null
  /**
   * Told what the open is doing (checking, recovering, rebuilding or updating the index) and
   * how far the steps that walk every commit are, a few times a second at most; a step's last
   * report is always told (`done` equal to `total`). For the window that shows the opening.
   */
  readonly onProgress?: (progress: OpeningProgress) => void
}

/**
 * Opens the memory folder of `dataDir` under version control, repairing what an interrupted
 * run left behind (see `recovery`). Every successful change is one commit, made before the
 * call resolves; all changes run through one serial queue. Only one instance may have a data
 * folder open: a second one is refused with a `locked` CairnError; a disk problem at open is
 * a `disk-full` (or other disk) CairnError that changed nothing.
 */
export async function openVersionedMemory(
  options: VersionedMemoryOptions,
): Promise<VersionedMemory> {
  const dataDir = path.resolve(options.dataDir)
  let lock: InstanceLock | null = null
  try {
    makeFolders(dataDir)
    lock = acquireInstanceLock(dataDir)
    return await openLocked(dataDir, lock, options)
  } catch (error) {
    lock?.release()
    if (error instanceof CairnError) throw error
    // Whatever it was (a full disk, a library's plain Error, an errno Cairn has no words for)
    // names host paths and carries a stack: the details go to the log, the person gets plain
    // words. A disk problem is a warning (the disk's, not a bug of Cairn's).
    const logger = options.logger ?? consoleLogger
    const problem = diskProblem(error, placeOf(error, path.join(dataDir, 'memories')))
    logger[problem ? 'warn' : 'error']('Could not open the memory', error)
    if (!problem) {
      if (error instanceof DamagedHistoryError) {
        throw new CairnError(
          'history-damaged',
          "Cairn could not open your memory because its history is damaged. The details are in Cairn's log.",
        )
      }
      throw new CairnError('internal', unexpectedOpenFailure(error))
    }
    throw new CairnError(
      problem.code,
      `Cairn could not open your memory because ${problem.reason}. Nothing was changed; ${
        problem.code === 'disk-full' ? 'free some space' : 'fix the problem'
      } and open Cairn again.`,
    )
  }
}

/** What a command or a read of a closed memory is refused with. */
function closedError(): CairnError {
  return new CairnError('closed', 'The memory folder is closed.')
}

/**
 * Whether this instance still holds the data folder: false once another Cairn took it over. A
 * transient error reading cairn.lock (EIO, EMFILE) says nothing about who holds it: it is
 * thrown, or `unsure` is the answer when given.
 */
function owns(lock: InstanceLock, unsure?: boolean): boolean {
  try {
    lock.assertHeld()
    return true
  } catch (error) {
    if (error instanceof CairnError && error.code === 'locked') return false
    if (unsure !== undefined) return unsure
    throw error
  }
}

// Codes that are no disk problem, with words of their own (the start-up dialog had them).
const OPEN_REASONS: Readonly<Record<string, string>> = {
  EEXIST: 'something stands where Cairn makes a file or folder of its own in its data folder',
  EISDIR: 'a folder stands where Cairn expects one of its files in its data folder',
  ENOENT: 'a file or folder Cairn needs is missing from its data folder and could not be made',
}

/** What a failed open says when the cause is no disk problem (the code kept, for the log). */
function unexpectedOpenFailure(error: unknown): string {
  const code = errorCode(error)
  if (code !== undefined && Object.hasOwn(OPEN_REASONS, code)) {
    return `Cairn could not open your memory because ${OPEN_REASONS[code]!}. The details are in Cairn's log.`
  }
  const suffix = code !== undefined && /^[A-Z0-9_]{2,40}$/.test(code) ? ` (${code})` : ''
  return `Cairn could not open your memory: something unexpected went wrong${suffix}. The details are in Cairn's log; open Cairn again, and if it fails the same way, the log says what stopped it.`
}

async function openLocked(
  dataDir: string,
  lock: InstanceLock,
  options: VersionedMemoryOptions,
): Promise<VersionedMemory> {
  const now = options.now ?? Date.now
  const logger = options.logger ?? consoleLogger
  let machine = options.machine ?? null
  const owedMarker = owedMarkerOf(path.join(dataDir, 'history.git'))
  const {
    repo,
    recovery: startUp,
    tooLarge,
    nameNotAllowed,
    unreadable,
    restoreRefused,
  } = await openRepo({
    dataDir,
    now,
    logger,
    afterCrash: lock.tookOver,
    owed: exists(owedMarker),
    progress: options.onProgress
      ? throttleProgress(options.onProgress, (error) =>
          logger.error('A listener of the opening progress failed', error),
        )
      : undefined,
    // Only a lock lost or taken over ends the log's use. A transient error reading cairn.lock
    // (EIO, EMFILE) says nothing about who holds it: it is thrown, so the checkpoint neither
    // empties the log nor gives it up, and is tried again later.
    owns: () => owns(lock),
    machine: () => machine,
  })
  // The open has used the record of a command a kill interrupted (if any): it goes now.
  const intents = commandIntents(repo.gitdir, logger)
  // The open's commit saved what was owed.
  try {
    removeFile(owedMarker)
  } catch (error) {
    // Left, it only words the next start's commit (if any) as a recovery.
    logger.warn('Could not remove the note of owed commits', error)
  }
  const tool = createMemoryTool({
    root: repo.workRoot,
    createExisting: options.policy?.createExisting,
    secretScanning: options.policy?.secretScanning,
    limits: options.limits,
    logger,
    // Every commit settles the folder fsyncs of its change before its ref moves (repo.ts).
    folderSyncs: 'host',
    // A folder delete keeps what history could not bring back (a user's .git, a file too large).
    keepsNoCopy,
    // Said when a file Cairn may not read is kept aside: its last version may be in history.
    versionedAt: async (relative) =>
      (await nodeAt(repo.store, repo.root(), segmentsOf(relative)))?.kind === 'blob',
    // Every change is scanned for its commit right after the command, and the scans keep the
    // folder's totals: the tool never has to walk the folder.
    usage: {
      get: async () => repo.stats.totals(),
      // Near a limit: edits made outside Cairn that the watcher has not saved yet (its
      // debounce, or events not yet delivered) are saved first, so the totals include them.
      fresh: async () => {
        // The whole folder (the stat cache skips unchanged files): the watcher's events may
        // be only the first of a folder of files dropped in, the rest not yet delivered.
        await commitOutsideChanges(repo, 'all', (paths, intent) => record(paths, intent))
        return repo.stats.totals()
      },
      invalidate: () => undefined,
      wantsRefresh: () => false,
      refresh: async () => undefined,
    },
  })
  const limits: MemoryLimits = { ...DEFAULT_LIMITS, ...options.limits }
  const queue = createSerialQueue()
  // The write-ahead log's checkpoints start no `fsync` while a command runs.
  repo.store.yieldCheckpointsTo(queue)
  // The old versions commands replace are kept by a second name and removed at quiet moments
  // (their discards off the commands' path), those a kill or power cut left first.
  const quietMs = (options.maintenance || undefined)?.quietMs ?? FREED_QUIET_MS
  const freed = createFreedFiles(repo.gitdir, {
    untilQuiet: () => (queue.busy() ? quietMs : quietMs - (performance.now() - queue.lastActive())),
    logger,
  })
  repo.keepReplaced(freed.keep)
  const gate = new PackFolderGate()
  // What open took unchecked, checked through the queue by the history itself (about a second
  // after open, when idle, before a pass packs, before a transfer or an export, at close). A
  // Cairn whose data folder another took over writes no repaired blob: it skips quietly, and
  // the next command refuses with the locked error.
  function checkDeferredIfHeld(): Promise<void> {
    if (!repo.hasDeferredChecks()) return Promise.resolve()
    return queue.run(async () => {
      try {
        lock.assertHeld()
      } catch {
        return
      }
      await repo.checkDeferred()
    })
  }
  // While the index is rebuilt, `changesSince` orders the commits themselves; the order is
  // kept from one call to the next (one ordering of the whole history a write was 1.6 s at
  // 100,000 commits), and dropped with the rebuild.
  let rebuildTimeline: CommitTimeline | null = null
  const maintainer = createMaintainer({
    store: repo.store,
    queue,
    gate,
    logger,
    head: () => repo.head(),
    settings:
      options.maintenance === false
        ? { looseThreshold: Infinity, idleMs: 2 ** 30 }
        : options.maintenance,
    // The side index was checked at open by its structure and newest entry; the rest of it is
    // checked at the first idle moment, and rebuilt from the commits (then swapped in) if off.
    // Nothing open took unchecked is packed: a damaged copy is written again first.
    beforePack: () => checkDeferredIfHeld(),
    verify: async (pause) => {
      // What open took on its files' stamps alone (HEAD's trees, the files' loose blobs) is
      // checked now, not by a first commit.
      await checkDeferredIfHeld()
      // An index a commit found damaged goes straight to the rebuild.
      const checked = repo.index
      const inUse = () => checked === repo.index
      if (!repo.indexRebuilding() && (await checkIndex(repo.store, checked, pause, inUse))) return
      // Replaced while checked (a switched history): its index was written fresh from the
      // commits and is not checked this session, unless a read or a commit finds it damaged.
      if (checked !== repo.index && !repo.indexRebuilding()) return
      logger.warn('The history index does not match the commits; it is rebuilt from them')
      const dir = repo.index.dir
      const building = await buildIndex(repo.store, dir, repo.head(), pause)
      await queue.run(async () => {
        // Caught up with the commits made meanwhile before it replaces anything: one that no
        // longer fits (the history was switched while it was built) is dropped and the index
        // in use stays open; the maintainer tries the check again later.
        let fits = false
        try {
          fits = await catchUpIndex(repo.store, building, repo.head())
        } finally {
          building.close()
          if (!fits) removePath(building.dir)
        }
        if (!fits) throw new Error('the rebuilt index does not fit the history')
        repo.index.close()
        replaceIndexDir(building.dir, dir)
        repo.replaceIndex(IndexFile.open(dir))
        rebuildTimeline = null
      })
    },
  })
  // A commit that finds the index damaged starts its rebuild at once: until it is in, the
  // commits made since are not in the index, and reads of them say so.
  repo.whenIndexDamaged(() => {
    logger.warn('The history index was found damaged while recording a commit; it is rebuilt')
    maintainer.reverify()
  })
  // git's index, for a person's git CLI: synced a moment after the changes, off their path.
  const gitIndex = createGitIndexKeeper({
    queue,
    head: () => repo.head(),
    prepare: (head) =>
      prepareGitIndex({
        gitdir: repo.gitdir,
        workRoot: repo.workRoot,
        store: repo.store,
        root: repo.root(),
        stats: repo.stats,
        head,
      }),
    write: async (prepared) => {
      try {
        lock.assertHeld()
      } catch {
        // Another Cairn has the folder: its index is that one's to write.
        return 'kept'
      }
      return writeGitIndex(repo.gitdir, prepared, repo.stats, () =>
        logger.warn('Removed the index.lock a stopped git left in the history folder'),
      )
    },
    warn: (message, error) => logger.warn(message, error),
    ...(options.gitIndexIdleMs === undefined ? {} : { idleMs: options.gitIndexIdleMs }),
  })
  // Open: a missing, damaged or stale index is made again once the window's first requests ran.
  gitIndex.changed()
  const lookup = createLookup(repo.store)
  const ancestry = createAncestry(() => repo.index)
  const blamer = createBlamer(repo, lookup, ancestry, {
    saveDir: blameDirOf(repo.gitdir),
    logger,
  })
  const searcher = createSearcher(
    repo,
    ancestry,
    createChangeLog(repo, lookup, { file: changeLogOf(repo.gitdir), logger }),
  )
  const snapshots = createSnapshots(repo, lookup, ancestry)
  const commitListeners = new Set<(commit: CommitSummary) => void>()
  const recoveryListeners = new Set<(report: RecoveryReport) => void>()
  const followListeners = new Set<(progress: FollowProgress) => void>()
  // Each report told gets an id of its own, counted from 1 in the run (`recovery-3`): a
  // dismissal names it, and takes no other report that reads the same.
  const reportIds = runIds('recovery')
  const identified = (telling: RecoveryTelling): RecoveryReport => ({
    id: reportIds.next(),
    ...telling,
  })
  const recovery = startUp ? identified(startUp) : null
  // Every report of this session, the latest of each kind (start-up's first): a window that
  // starts listening late asks for these (`recoveries`), so none told before is lost.
  let recoveries: ReadonlyArray<RecoveryReport> = recovery ? [recovery] : []
  const notices = createNotices(logger)
  const forPeople = <T>(work: Promise<T>): Promise<T> => forPeopleIn(repo.workRoot, work)
  let closed = false
  // Set as the close shuts the store and the side index: reads are refused from then on.
  let indexShut = false
  // Set when a change reached the disk but its commit failed: the next change first saves
  // whatever the folder holds, so HEAD and the folder agree again.
  let resync = false
  // Changes that reached the folder but whose commit failed: retried, with their own author
  // and trailers, before anything else runs.
  let unrecorded: Array<{ readonly paths: ReadonlyArray<string>; readonly intent: CommitIntent }> =
    []

  // First: a refused restore's notice says more than the scan's about the same file.
  if (restoreRefused !== null) {
    notices.raise(restoreRefusedNotice(restoreRefused), { readClears: false })
    // Raised: the note that kept it across a kill has done its work.
    forgetGivenUpRestore(repo.store.gitdir)
  }
  for (const notice of scanNotices({ tooLarge, nameNotAllowed, unreadable })) notices.raise(notice)
  // Damage found by the checks open left for later (`checkDeferred`): a blob written again from
  // its file is told as open tells it; one no file holds any more stays, and reads of it say
  // it is damaged, as of any damage found later.
  repo.whenDeferredFound(({ trees, repaired, lost }) => {
    if (trees > 0) {
      logger.warn(`${trees} of HEAD's trees were damaged on disk; written again from the folder`)
    }
    if (repaired.length > 0) {
      logger.warn(`${repaired.length} damaged stored copies of files were written again from them`)
      tellRecovery({
        kind: 'history-repaired',
        message: repairedMessage(repaired.length),
        commitOid: repo.head(),
      })
    }
    if (lost.length > 0) {
      logger.warn(`${lost.length} stored copies of files are damaged and the files changed since`)
      for (const relative of lost) notices.raise(damagedCopyNotice(relative))
    }
  })
  // The open's recovery commit has happened: a failure to read it back for the secret scan
  // (a failing disk, a damaged index entry) only means no warning, never a failed open.
  let opened: IndexEntry | undefined
  try {
    opened = recovery?.commitOid ? repo.entry(recovery.commitOid) : undefined
  } catch (error) {
    logger.warn('Could not scan the changes saved at start-up for secrets', error)
  }
  if (opened && opened.actor === 'system') await raiseSecretNotices(opened)

  function tell<T>(listeners: ReadonlySet<(value: T) => void>, value: T, what: string): void {
    // `main` moved: git's index follows it once the queue is quiet.
    if (what === 'commit') gitIndex.changed()
    for (const listener of listeners) {
      try {
        listener(value)
      } catch (error) {
        // A listener's failure must not undo or hide a commit that happened.
        logger.error(`A ${what} listener failed`, error)
      }
    }
  }

  function reportRecovery(entry: IndexEntry): void {
    const [first] = entry.files
    const one = entry.files.length === 1
    // One file is named (relative to /memories, never a host path); more are counted.
    const what = one && first ? toRelative(first) : `${entry.files.length} files`
    const report: RecoveryTelling = entry.subject.startsWith(KEPT_SUBJECT_START)
      ? {
          kind: 'uncommitted-changes',
          message: `${what}, changed by Cairn in commits that main no longer holds (it was moved outside Cairn), ${one ? 'was' : 'were'} still in the memory folder and ${one ? 'was' : 'were'} saved to the history again.`,
          commitOid: entry.oid,
        }
      : entry.command === 'outside'
        ? {
            kind: 'outside-changes',
            message: `${what} ${one ? 'was' : 'were'} edited outside Cairn and saved to the history as ${one ? 'its' : 'their'} own change.`,
            commitOid: entry.oid,
          }
        : {
            kind: 'uncommitted-changes',
            message: `${what}, changed by an interrupted change, ${one ? 'was' : 'were'} saved to the history as a recovery commit.`,
            commitOid: entry.oid,
          }
    tellRecovery(report)
  }

  /**
   * Keeps the report `telling` makes, with an id of its own (in place of an earlier one of its
   * kind), and tells the listeners.
   */
  function tellRecovery(telling: RecoveryTelling): void {
    const report = identified(telling)
    recoveries = [...recoveries.filter((earlier) => earlier.kind !== report.kind), report]
    tell(recoveryListeners, report, 'recovery')
  }

  /**
   * Every commit goes through here: it is made (if this instance still holds the data
   * folder), what the scan skipped is reported, what an edit outside Cairn brought in is
   * scanned for secrets, and listeners hear of it.
   */
  async function record(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    staged?: StagedChange,
    tree?: FolderTree,
    report: ScanReport = watchedReport(),
  ): Promise<IndexEntry | null> {
    lock.assertHeld()
    const entry = await repo.commit(paths, intent, {
      report,
      ...(staged ? { staged } : {}),
      ...(tree ? { tree } : {}),
    })
    for (const notice of scanNotices(report)) notices.raise(notice)
    clearGoneNotices()
    clearReadAgain(report)
    if (!entry) return null
    // A change of Cairn's (not an outside edit it saved) wrote these: a refused restore's notice
    // of one of them, or of their folder, goes (restore27).
    if (entry.actor !== 'system') notices.clearWritten(entry.files)
    // Maintenance waits for a quiet moment after the last commit.
    maintainer.noteActivity()
    tell(commitListeners, toSummary(entry), 'commit')
    if (entry.actor === 'system') {
      reportRecovery(entry)
      await raiseSecretNotices(entry)
    }
    return entry
  }

  /**
   * Clears the notices of files no longer in the folder (deleted outside Cairn, by the tool or
   * the Memory tab): one `lstat` per notice kept. Only a name that is not there counts as gone.
   */
  function clearGoneNotices(): void {
    notices.clearGone((virtual) => {
      // Text only (no path rules): a name the history refuses (a backslash) has a notice too.
      const relative = virtual.slice('/memories/'.length)
      try {
        return disk.lstatIfThere(path.join(repo.workRoot, relative)) === undefined
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      }
    })
  }

  /**
   * A scan report that also notes which of the files and folders with an `unreadable` notice
   * the scan meets (`clearReadAgain`).
   */
  function watchedReport(noCopy = false): ScanReport {
    const watched = new Set<string>()
    for (const notice of notices.kept()) {
      if (notice.kind === 'unreadable') watched.add(notice.path.slice('/memories/'.length))
    }
    return newScanReport(noCopy, watched)
  }

  /**
   * Clears the `unreadable` notices of what the scan behind `report` read after all (access given
   * back): the notice said Cairn cannot read it, and it now can, and versions it.
   */
  function clearReadAgain(report: ScanReport): void {
    if (!report.met || report.met.found.length === 0) return
    const still = new Set(report.unreadable)
    notices.clearReadAgain(
      report.met.found.filter((relative) => !still.has(relative)).map((r) => `/memories/${r}`),
    )
  }

  /**
   * Commits what changed outside Cairn at `paths` (as a change's first step, or before a view
   * reads), raises the notices the scan behind `report` met and clears those that no longer
   * hold; returns whether a commit was made.
   */
  async function commitTouched(
    paths: TouchedPaths,
    report: ScanReport,
    tree: FolderTree,
  ): Promise<boolean> {
    const entry = await commitOutsideChanges(
      repo,
      paths,
      (at, intent, scanned) => record(at, intent, undefined, undefined, scanned),
      report,
      tree,
    )
    for (const notice of scanNotices(report)) notices.raise(notice)
    // A file deleted outside Cairn that history held no copy of commits nothing: its
    // notices go here.
    clearGoneNotices()
    clearReadAgain(report)
    // The tool's running total of the folder's size no longer holds.
    if (entry) tool.invalidateUsage()
    return entry !== null
  }

  async function raiseSecretNotices(entry: IndexEntry): Promise<void> {
    if (!tool.policy().secretScanning) return
    try {
      for (const notice of await secretNotices(repo, entry)) notices.raise(notice)
    } catch (error) {
      // The commit stands; a scan that could not read it only means no warning.
      logger.warn('Could not scan an outside edit for secrets', error)
    }
  }

  /**
   * Takes `main` as found on disk when it moved outside Cairn (outside-move.ts), tells
   * History, and commits what the folder holds beyond its tree on top, as made outside Cairn
   * (Cairn's own files a reset or an amend left out stay in the history that way). One read
   * of the ref when it did not move. How far it is goes to `onFollowing` while it runs (a
   * history of thousands of commits put in place with git takes seconds), then its end, also
   * when it failed; nothing is told when `main` did not move.
   */
  async function followMain(): Promise<void> {
    let total: number | null = null
    let told = false
    const tellFollowing = throttleProgress<FollowProgress>(
      (progress) => tell(followListeners, progress, 'following progress'),
      (error) => logger.error('A listener of the following progress failed', error),
      PROGRESS_INTERVAL_MS,
      now,
    )
    try {
      await takeMoved((done, of) => {
        told = true
        total = of
        tellFollowing({ done, total: of, ended: false })
      })
    } finally {
      if (told)
        tell(followListeners, { done: total ?? 0, total, ended: true }, 'following progress')
    }
  }

  async function takeMoved(progress: (done: number, total: number | null) => void): Promise<void> {
    const moved = await followOutsideMove(repo, () => lock.assertHeld(), progress)
    if (!moved) return
    tool.invalidateUsage()
    const tip = moved.added.at(-1)
    if (tip) tell(commitListeners, toSummary(tip), 'commit')
    if (moved.symbolic !== undefined) await unlinkFollowed(moved.to, moved.symbolic)
    try {
      // A change whose commit the move refused (`conflict`) is saved first, as its own (by
      // Claude, with its tool use), so that it is not taken in as made outside Cairn.
      while (unrecorded.length > 0) {
        const [first] = unrecorded
        await record(first!.paths, first!.intent)
        unrecorded = unrecorded.slice(1)
      }
      // What the folder still holds of Cairn's commits the move left out of `main` (a reset
      // that did not touch the folder) is kept, and said to be theirs, never an outside edit.
      const kept = keptAfterMove(moved)
      if (kept) await record(kept.paths, kept.intent)
      await record('all', systemIntent('outside', 'Changes made outside Cairn'))
    } catch (error) {
      // The next change reads the whole folder again.
      resync = true
      throw error
    }
  }

  /**
   * `main` was found a link to another branch (`git symbolic-ref refs/heads/main refs/heads/x`)
   * and followed to that branch's commit: it is made a branch of its own there again, before
   * any commit of Cairn's would write over the link, and the person is told in plain words.
   * Nothing is lost: the commits git made through the link are `main`'s now, and the branch is
   * left as it is.
   */
  async function unlinkFollowed(oid: string, symbolic: string): Promise<void> {
    await unlinkMain(repo.gitdir, oid, symbolic)
    logger.warn('main was a link to another branch; it is a branch of its own again')
    tellRecovery({
      kind: 'history-repaired',
      message: unlinkedMessage(symbolic, oid),
      commitOid: oid,
    })
  }

  // A read the window makes (History, blame, search, a version of a file, the tree at a
  // commit) first takes `main` moved outside Cairn, through the queue as a change would (one
  // small read of the ref when it did not move), so that it never answers the history Cairn
  // held before a `git commit` or a `git reset`; the follow's `onCommit` tells the open views.
  // Called while the queue is busy (a read made by a task in it, such as a sync's), the read
  // does not wait for the follow queued behind that task: it would wait for itself.
  let readFollow: Promise<void> | null = null
  function following<T>(read: () => Promise<T>): Promise<T> {
    if (closed || movedOutside(repo.gitdir, repo.head()) === null) return read()
    const busy = queue.busy()
    readFollow ??= exclusive(async () => undefined)
      .catch((error: unknown) =>
        warnUnsaved('main moved outside Cairn could not be followed before a read', error),
      )
      .finally(() => {
        readFollow = null
      })
    return busy ? read() : readFollow.then(read)
  }

  /**
   * The commit of what the folder still holds of Cairn's commits that a move of `main` made
   * outside Cairn left out (a `git reset` or `update-ref` back that did not touch the folder):
   * their files, saved by Cairn as kept (a recovery, never an edit made outside Cairn), the
   * subject saying why and the body naming the move and those commits (docs/durability.md).
   * Null when the move left none out.
   */
  function keptAfterMove(
    moved: FollowedMove,
  ): { readonly paths: ReadonlyArray<string>; readonly intent: CommitIntent } | null {
    if (moved.dropped.length === 0) return null
    const paths = new Set<string>()
    for (const entry of moved.dropped) {
      for (const file of entry.files) {
        try {
          paths.add(toRelative(file))
        } catch {
          // A name the history holds but the rules refuse: the whole-folder commit after takes it.
        }
      }
    }
    if (paths.size === 0) return null
    const back = moved.dropped.some((entry) => parentsOf(entry).includes(moved.to))
    const short = (oid: string | null) => (oid ?? 'none').slice(0, 12)
    const lines = [
      `main was ${back ? 'moved back' : 'replaced'} outside Cairn, from ${short(moved.from)} to ${short(moved.to)}.`,
      'These commits left it; the memory folder still held what they changed, kept here:',
      ...moved.dropped
        .slice(0, MAX_DROPPED_LISTED)
        .map(
          (entry) => `${short(entry.oid)} ${cutWithEllipsis(escapeInvisible(entry.subject), 120)}`,
        ),
      ...(moved.dropped.length > MAX_DROPPED_LISTED ? ['and older ones'] : []),
    ]
    return {
      paths: [...paths],
      intent: {
        ...systemIntent(
          'recovery',
          `${KEPT_SUBJECT_START} ${back ? 'moved back' : 'replaced'} outside Cairn`,
        ),
        body: lines.join('\n'),
      },
    }
  }

  // What the queue owes before the next change: commits that failed, then a full rescan.
  async function catchUp(): Promise<void> {
    while (unrecorded.length > 0) {
      const [first] = unrecorded
      await record(first!.paths, first!.intent)
      unrecorded = unrecorded.slice(1)
    }
    if (resync) {
      await record(
        'all',
        rootRemade
          ? systemIntent('outside', 'Changes made outside Cairn')
          : systemIntent('recovery', 'Save changes whose commit was interrupted'),
      )
      resync = false
      rootRemade = false
    }
  }

  // The memory folder removed while Cairn runs (a person starting afresh in the file manager)
  // would fail every command until a restart: before each task it is made again if gone (one
  // `lstat` without an exception, 2–8 µs here; a `mkdir` answering EEXIST cost 2–9x that, most of
  // it Node making the error), and the whole folder is read again, so the next commit records
  // what went with it. A folder put in its place by the person (`rm -rf` then `mkdir`, or the
  // old one renamed away) is another folder, found by its identity in the same `lstat`: read
  // again whole and watched anew, or its files would stay out of the history.
  let rootRemade = false
  let rootId = identityOf(repo.workRoot)
  function remakeRootIfGone(): void {
    const id = identityOf(repo.workRoot)
    if (id !== null && id === rootId) return
    if (id === null) {
      // Something that is not a folder (a link: refused by each command) is left alone.
      if (disk.lstatIfThere(repo.workRoot) !== undefined) return
      try {
        disk.mkdirSync(repo.workRoot, DIR_MODE)
      } catch {
        return
      }
      logger.warn('The memory folder was gone; it was made again, empty')
    } else {
      logger.warn('The memory folder was replaced by another; it is read again whole')
    }
    rootId = identityOf(repo.workRoot)
    rootRemade = true
    resync = true
    tool.invalidateUsage()
    // The watches were on the folder that went: edits in the new one would go unseen until
    // the next command.
    watchMemoryFolder()
  }

  /**
   * Runs `task` alone in the queue. `touched` names what it will change: edits made there
   * outside Cairn are committed first, on their own, so the task's commit holds only its
   * own change (and undoing it never undoes someone else's edit). A task that only `reads`
   * runs even when the commits owed cannot be made (a full disk): reads keep working.
   * `task` gets the folders the check of `touched` opened (it may use them instead of
   * walking the folder again; they are closed after it).
   */
  function exclusive<T>(
    /**
     * `scanned`: what the check of the touched paths met that history keeps no copy of (for
     * a change to the whole folder, all of it), or null for a read.
     */
    task: (tree: FolderTree, scanned: ScanReport | null) => Promise<T>,
    touched: () => TouchedPaths = () => [],
    /**
     * `replaces`: a write that only replaces or creates files (`create`, `str_replace`,
     * `insert`), which does not wait for the folder flushes earlier commands owe before it
     * starts; its commit still waits for them where it bypasses the log (`commitScanned`).
     */
    mode: 'reads' | 'writes' | 'replaces' = 'writes',
    stop?: { readonly signal: AbortSignal | undefined; readonly outcome: () => T },
  ): Promise<T> {
    if (closed) return Promise.reject(closedError())
    // A task handed to an idle queue has started, whatever the microtasks before it runs.
    const waits = queue.busy()
    return runIn(mode)(async () => {
      // Stop pressed while this waited behind other work (the SDK starts all the calls of one
      // reply at once): it does not run, and owes no commit of its own.
      if (waits && stop?.signal?.aborted) return stop.outcome()
      // A change that may move or remove what holds a logged rename (a delete, a rename, a
      // restore, a sync), or commit past the log, first waits for the folder flushes earlier
      // commands' results did not (docs/durability.md, "Cost"): open could not redo their
      // renames after a power cut. A write that only replaces files goes ahead (its commit
      // waits for them where it bypasses the log).
      if (mode === 'writes') {
        await repo.settleOwedFlushes()
        // Before anything in the folder changes: a change that moves, removes or writes files
        // before its commit (a delete, a rename, a restore, a sync) would otherwise change the
        // folder under the Cairn that took the data folder over, and fail only at its commit.
        // A write that only replaces files needs no check here: its commit's, before its
        // rename, comes first (`stage`; a create into new folders checks in `beforeMove`).
        lock.assertHeld()
        // A change that may read what history stores (a restore, a sync): what open took
        // unchecked is checked first (a write that only replaces files: by its commit).
        await repo.checkDeferred()
      }
      remakeRootIfGone()
      // `main` moved outside Cairn (a commit made with git while Cairn is open): taken first,
      // so that nothing Cairn commits next moves it back past the outside commits.
      if (mode !== 'reads') await followMain()
      try {
        await catchUp()
      } catch (error) {
        if (mode !== 'reads') throw error
        logger.warn('Owed commits could not be made yet; a read runs anyway', error)
      }
      const tree = new FolderTree(repo.workRoot)
      let report: ScanReport | null = null
      try {
        if (mode !== 'reads') {
          const paths = touched()
          // A change to the whole folder (a restore of it) takes what history keeps no copy
          // of from this scan, which walks the whole folder anyway.
          report = watchedReport(paths === 'all')
          await commitTouched(paths, report, tree)
        }
        return await task(tree, report)
      } catch (error) {
        // Whatever failed may have failed half-way (a restore that wrote some files): the
        // next change first re-reads the whole folder, which commits nothing if all is well.
        resync = true
        tool.invalidateUsage()
        throw error
      } finally {
        tree.close()
      }
    })
  }

  /**
   * Commits what was edited outside Cairn at the path a view is about to read, so that what
   * Claude reads is a version in history; returns the commit that holds it (undefined when
   * the edits could not be committed: the view runs anyway, as reads do). Run in the view's
   * task. Looked at: what the watcher saw and has not saved yet (its debounce still running),
   * and the file viewed itself (one `lstat` against the stat cache: the watcher's event for a
   * save a moment ago may not have arrived); a folder viewed is left to the watcher, or, where
   * nothing watches, checked whole. When nothing differs from `HEAD` (the common case),
   * nothing is committed and nothing else is read.
   */
  async function settleForView(
    input: unknown,
    tree: FolderTree,
  ): Promise<string | null | undefined> {
    const raw = (input as { path?: unknown }).path
    const parsed = typeof raw === 'string' ? parseMemoryPath(raw) : null
    const paths: string[] = []
    const pending = watcher ? watcher.takePending() : null
    if (pending === 'all') paths.push('')
    else if (pending) paths.push(...pending)
    if (parsed?.ok && parsed.relative !== '') {
      const stats = disk.lstatIfThere(path.join(repo.workRoot, parsed.relative))
      if (!watcher || stats?.isFile()) paths.push(parsed.relative)
    } else if (parsed?.ok && !watcher) {
      paths.push('')
    }
    if (paths.length === 0) return repo.head()
    try {
      const touched = outermost(paths)
      if (!(await differsFromHead(repo, touched, undefined, tree))) return repo.head()
      // As the watcher's own commit of them would run (a change: `exclusive`'s steps).
      await repo.settleOwedFlushes()
      lock.assertHeld()
      await followMain()
      // The folder did not change, the history did: sliced reads of the history start again.
      if (await commitTouched(touched, watchedReport(), tree)) stamp += 2
      return repo.head()
    } catch (error) {
      // What the watcher had seen is no longer pending with it: the next change reads the
      // whole folder again.
      resync = true
      warnUnsaved('Outside edits could not be saved before a view; it reads them unsaved', error)
      return undefined
    }
  }

  // The change stamp (`changeStamp`): odd while a task that may change the folder runs.
  let stamp = 0
  // Reads waiting for the change running now to end (`changeEnded`).
  let waitingForEnd: Array<() => void> = []
  function runIn(mode: 'reads' | 'writes' | 'replaces') {
    return <T>(task: () => Promise<T>): Promise<T> =>
      mode === 'reads'
        ? queue.run(task)
        : queue.run(async () => {
            stamp++
            try {
              return await task()
            } finally {
              stamp++
              const waiting = waitingForEnd
              waitingForEnd = []
              for (const resume of waiting) resume()
            }
          })
  }

  async function run(
    input: unknown,
    origin: Origin,
    runOptions: ExecuteOptions,
    tree?: FolderTree,
  ): Promise<ExecuteOutcome> {
    let facts: RunFacts = {}
    const dryRun = runOptions.beforeRun && (runOptions.needsDryRun?.() ?? true)
    const afterRun = dryRun ? undefined : runOptions.afterRun
    const intentOf = (mutation: MemoryMutation): CommitIntent => ({
      ...intentFor(mutation, origin, runOptions.commitAs),
      ...(runOptions.subject ? { subject: runOptions.subject } : {}),
      ...reviewFactsOf(facts),
    })
    // Without a dry run, `afterRun` finds the commit's facts in what the command changed.
    const findFacts = async (made: MadeChange | undefined): Promise<void> => {
      if (!afterRun || !made) return
      try {
        facts = await afterRun(made)
      } catch (error) {
        logger.warn('The facts of a change could not be found; it is committed without them', error)
      }
    }
    // A command's file write is committed before it is renamed into place: the write and its
    // commit share their fsyncs (docs/durability.md, "Cost").
    const staged: { outcome: { readonly entry: IndexEntry | null } | 'owed' | null } = {
      outcome: null,
    }
    const stage: WriteStager = async (write, relative, mutation, made) => {
      await findFacts(made)
      const paths = mutation.paths.map(toRelative)
      const intent = intentOf(mutation)
      try {
        staged.outcome = { entry: await record(paths, intent, { relative, write }) }
      } catch (error) {
        // Another Cairn took the data folder over: the write is dropped (its temp file goes)
        // and the command fails with the lock's words, the folder as it was.
        if (error instanceof CairnError && error.code === 'locked') throw error
        // The write goes ahead alone, as any write whose commit fails (if its own flush
        // fails, this throws: the command fails and nothing changed); the commit is owed.
        await write.publishAlone(logger)
        logger.warn('A commit failed; it is retried before the next change', error)
        unrecorded = [...unrecorded, { paths, intent }]
        resync = true
        staged.outcome = 'owed'
      }
    }
    // A delete or rename, checked and about to touch the folder: a kill before its commit
    // leaves its move to the next open, which commits it with these facts if the folder holds
    // exactly that move (command-intent.ts). A write needs no note: its commit comes first.
    // A create into new folders is the one write that publishes before its commit's check of
    // the lock (a delete or rename was checked as its task started): it checks here.
    const beforeMove = (mutation: MemoryMutation, text?: string): void => {
      if (mutation.command === 'create') lock.assertHeld()
      const [first, second] = mutation.paths.map(toRelative)
      intents.record(repo.head(), intentOf(mutation), mutation.paths.map(toRelative), text)
      // What the move will leave, noted before it happens, so the watcher's sight of it moves
      // no change stamp (own-writes.ts); the folders it makes are noted once it has ended.
      if (mutation.command === 'delete' && first !== undefined) repo.ownWrites.noteRemoving(first)
      else if (mutation.command === 'rename' && first !== undefined && second !== undefined) {
        repo.ownWrites.noteMoving(first, second)
      } else if (mutation.command === 'create' && first !== undefined) {
        repo.ownWrites.noteCreating(first)
      }
    }
    const toolOptions = {
      createExisting: runOptions.createExisting,
      stage,
      spelledAsOnDisk: runOptions.spelledAsOnDisk,
    }
    if (dryRun && runOptions.beforeRun) {
      // The folders the check just walked serve the dry run; the command itself runs after
      // the verdict, which may take a person's time: it walks the folder afresh.
      const dry = await tool.preview(input, { ...toolOptions, tree })
      if (dry.isError) return { ...dry, commit: null }
      if (dry.planned) {
        const verdict = await runOptions.beforeRun(dry.planned)
        if (!verdict.run) {
          return { ...dry, content: '', mutation: null, commit: null, held: true }
        }
        facts = verdict
      }
    }
    const result = await tool
      .execute(input, {
        ...toolOptions,
        beforeMove,
        describe: afterRun !== undefined,
        ...(dryRun ? {} : { tree }),
      })
      .finally(() => repo.ownWrites.settleMoves())
    if (!result.isError) followMoves(notices, movesOf(result))
    const done = staged.outcome
    if (result.isError || !result.mutation) return { ...result, commit: null }
    const { made, ...answer } = result
    if (done === 'owed') return { ...answer, commit: null, commitPending: true }
    if (done) return { ...answer, commit: done.entry ? toSummary(done.entry) : null }
    await findFacts(made)
    const paths = result.mutation.paths.map(toRelative)
    const intent = intentOf(result.mutation)
    let entry: IndexEntry | null
    try {
      // Through the folders the command went through (those it moved or removed forgotten).
      entry = await record(paths, intent, undefined, dryRun ? undefined : tree)
    } catch (error) {
      // The command did change the folder, so Claude (or the user) is told the truth; its
      // commit is made, with the same author and trailers, before the next change runs.
      logger.warn('A commit failed; it is retried before the next change', error)
      unrecorded = [...unrecorded, { paths, intent }]
      resync = true
      return { ...answer, commit: null, commitPending: true }
    }
    return { ...answer, commit: entry ? toSummary(entry) : null }
  }

  // Restores commit through here: when the files are written but the commit fails, the
  // commit is owed (made, with this intent, before the next change) instead of lost.
  const commitOrOwe: Committer = async (paths, intent) => {
    try {
      return await record(paths, intent)
    } catch (error) {
      if (!isDiskProblem(error)) throw error
      logger.warn('A restore commit failed; it is retried before the next change', error)
      unrecorded = [...unrecorded, { paths, intent }]
      resync = true
      return 'pending'
    }
  }

  /**
   * Runs a read of the side index (`readIndexed`): an entry found damaged there fails this
   * call with a clear error and sets a rebuild from the commits going in the background; an
   * index replaced under the read is read again (`retry`) or answers as being rebuilt.
   * The index is marked damaged once (`indexFoundDamaged`): the reads that need it whole
   * (`requireCurrentIndex`) then answer "being rebuilt" at once until the rebuilt index is in,
   * and one that meets the damaged entry again says nothing more and asks for no second check.
   */
  // A read of a closed memory (the window asking for a page while the app quits) met the
  // closed side index and took it for damage: said so in the log, and to the person as an
  // index being rebuilt. It is refused as closed, and so is one the close overtook. (Until the
  // close shuts the index, reads go on: a command queued before the close still runs, and
  // the review's check of Claude's write reads the index.)
  function indexed<T>(read: () => Promise<T>, retry = true): Promise<T> {
    if (indexShut) return Promise.reject(closedError())
    return readIndexed(
      repo,
      read,
      (error) => {
        if (indexShut || !repo.indexFoundDamaged()) return
        logger.warn('A damaged history index entry was read; the index is rebuilt', error)
        maintainer.reverify()
      },
      retry,
    ).catch((error: unknown) => {
      throw indexShut && error instanceof CairnError && error.code === 'index-rebuilding'
        ? closedError()
        : error
    })
  }

  /** `indexed`, once `main` moved outside Cairn is followed (`following`). */
  function followingIndexed<T>(read: () => Promise<T>): Promise<T> {
    return following(() => indexed(read))
  }

  /**
   * Runs a restore in the queue, then points the notices of what it kept aside where it went.
   * `asAsked`: the paths (virtual) the restore, done, left as the person asked, written or
   * found so: a refused restore's notice of one goes (it asked for a restore again), even
   * when nothing had to be written and so no commit cleared it.
   */
  function restoring(
    touched: () => TouchedPaths,
    task: (scanned: ScanReport | null) => Promise<ChangeResult>,
    asAsked?: (path: string) => boolean,
  ): Promise<ChangeResult> {
    return forPeople(
      exclusive(async (_tree, scanned) => {
        // Never run twice: a restore writes.
        const result = await indexed(() => task(scanned), false)
        tool.invalidateUsage()
        followMoves(
          notices,
          (result.keptAside ?? []).map(({ path, keptAs, versioned }) => ({
            from: path,
            to: keptAs,
            ...(versioned !== undefined && { versioned }),
          })),
        )
        if (asAsked) notices.clearSettled(asAsked)
        return result
      }, touched),
    )
  }

  async function takeOutSecrets(file: string): Promise<ChangeResult> {
    const virtual = normalize(file)
    const relative = toRelative(virtual)
    const tree = new FolderTree(repo.workRoot)
    let text: string
    try {
      const found = tree.find(relative)
      if (found.kind !== 'file') {
        // Shown as the caller sent it, which may be any string: cut, with nothing invisible.
        throw new CairnError(
          'not-found',
          `${escapeInvisible(cutWithEllipsis(virtual, 200))} does not exist.`,
        )
      }
      const bytes = readFileIn(found.parent, found.name, found.stats, maxEditableBytes(limits))
      // `ignoreBOM`: the file is written back, and must keep its BOM.
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    } catch (error) {
      if (error instanceof CairnError) throw error
      if (error instanceof TypeError || (error as { code?: string }).code === 'EFBIG') {
        throw new CairnError('not-text', `${virtual} is not a text file Cairn can edit.`)
      }
      throw error
    } finally {
      tree.close()
    }
    const cleaned = await removeSecrets(text, virtual)
    if (cleaned.removed === 0) {
      notices.resolve('secret', virtual)
      return { commit: null, message: `No secret was found in ${virtual}.` }
    }
    const outcome = await run(
      { command: 'create', path: virtual, file_text: cleaned.text },
      { actor: 'user' },
      { commitAs: 'write', subject: `remove secrets from ${virtual}` },
    )
    if (outcome.isError) {
      const message = typeof outcome.content === 'string' ? outcome.content : 'It was refused.'
      throw new CairnError(outcome.errorCode ?? 'io-error', message.replace(/^Error:\s*/, ''))
    }
    notices.resolve('secret', virtual)
    const said = `Removed ${cleaned.removed === 1 ? 'the secret' : `${cleaned.removed} secrets`} from ${virtual}. Earlier versions in the history still hold it.`
    return outcome.commitPending
      ? { commit: null, message: `${said} It will appear in History with the next change.` }
      : { commit: outcome.commit, message: said }
  }

  // What sync, export and import do with the repository: always alone in the queue, with
  // the folder equal to `main` (edits made outside Cairn saved first).
  const session: HistorySession = {
    head: () => repo.head(),
    async moveMain(target, kind) {
      lock.assertHeld()
      const added = (
        await moveMain(repo, target, kind, (kept) => {
          for (const { path, keptAs, changed } of kept) {
            notices.raise(keptAsideNotice(path, keptAs, changed))
          }
        })
      ).map(toSummary)
      // One announcement for the new head: a sync can bring hundreds of commits at once, and
      // listeners only need to know that the history and the folder moved.
      const head = added.at(-1)
      if (head) tell(commitListeners, head, 'commit')
      return added
    },
    async commitFiles(files, intent) {
      lock.assertHeld()
      await inWorkTree(repo, async (tree) => {
        for (const [relative, content] of files) {
          if (content === null) deleteFileAndPrune(tree, relative)
          else await writeFileSafely(tree, relative, content)
        }
      })
      const entry = await record([...files.keys()], intent)
      return entry ? toSummary(entry) : null
    },
    async dropFetchedPacks(names, heads, since) {
      lock.assertHeld()
      const head = repo.head()
      return gate.transfer(() =>
        dropFetchedPacks(repo.store, names, head === null ? heads : [...heads, head], since),
      )
    },
  }
  const store = repo.store
  const git: HistoryGit = {
    gitdir: repo.gitdir,
    // Trees come as stored: sync judges content from elsewhere itself (links, odd names).
    objects: {
      hash: store.hash,
      write: store.write,
      readTree: store.readForeignTree,
      readBlob: store.readBlob,
      readCommit: store.readCommit,
      readRaw: store.readRaw,
    },
    assertWriter: () => lock.assertHeld(),
    head: () => repo.head(),
    // The side index is oldest first with parents before children: its positions are that order.
    position: (oid) => repo.index.positionOf(oid),
    // A full disk or damage met on the way is said in plain words, like a restore's.
    exclusive: (task) =>
      forPeople(
        exclusive(
          async () => {
            try {
              return await task(session)
            } finally {
              // Whatever the task wrote, the tool's running total of the folder's size is stale.
              tool.invalidateUsage()
            }
          },
          () => 'all',
        ),
      ),
    // A transfer sends or reads stored objects: what open took unchecked is checked first.
    transfer: async (task) => {
      // Asked for the pack folder at once when nothing is left to check (no turn of the loop
      // lost: a pass about to remove files sees the transfer waiting).
      if (repo.hasDeferredChecks()) await checkDeferredIfHeld()
      return gate.transfer(task)
    },
  }

  // Once another Cairn took the data folder over, every watcher event and every turn fails to
  // save outside edits with the same `locked` error, for as long as this one runs: said once,
  // in words that say why, not as a failure retried at every event.
  let takeoverSaid = false
  /** Warns that outside edits were not saved (`message`), or once that none will be. */
  function warnUnsaved(message: string, error: unknown): void {
    if (!(error instanceof CairnError && error.code === 'locked')) {
      logger.warn(message, error)
      return
    }
    if (takeoverSaid) return
    takeoverSaid = true
    logger.warn(
      'Another Cairn took over this data folder: this one saves nothing more to its history, edits made outside Cairn included',
    )
  }

  // Events for Cairn's own writes come too, after their commit: the rescan of those paths
  // finds them equal to HEAD and commits nothing.
  let watcher: FolderWatcher | null = null

  /**
   * Whether every path the watcher reports is Cairn's own last write, still as it left it and
   * still equal to `HEAD`: then there is nothing to save, and no change is run for it (a change
   * moves the change stamp, and every sliced walk it ran through is made again). The content
   * is compared, not only the stat: a person's edit in the same clock tick, of the same size,
   * can keep the stat Cairn's write left. Compared in a read of the queue, which leaves the
   * stamp alone; anything owed, or anything that differs, goes the whole way.
   */
  async function onlyOwnWrites(touched: TouchedPaths): Promise<boolean> {
    if (touched === 'all' || touched.length === 0) return false
    const paths = touched
    const own = () =>
      !resync && unrecorded.length === 0 && paths.every((p) => repo.ownWrites.isOwn(p))
    if (!own()) return false
    return runIn('reads')(async () => {
      if (closed || !own()) return false
      try {
        return !(await differsFromHead(repo, outermost(paths)))
      } catch {
        return false
      }
    })
  }
  /** Watches the memory folder (again: a folder made anew is another folder to watch). */
  function watchMemoryFolder(): void {
    if (options.watch === false || closed) return
    watcher?.close()
    watcher = watchFolder(repo.workRoot, {
      debounceMs: typeof options.watch === 'object' ? options.watch.debounceMs : WATCH_DEBOUNCE_MS,
      logger,
      // An edit the watcher has seen and not saved yet moves the change stamp (by two: a change
      // running stays odd), so a sliced read it ran through is made again. The event of
      // Cairn's own write (its file still exactly as the write left it) does not: the meter
      // asked after each commit walked a big folder two or three times for it.
      onSeen: (relative) => {
        if (relative === null || !repo.ownWrites.isOwn(relative)) stamp += 2
      },
      onChanges: (touched) => {
        if (closed) return
        onlyOwnWrites(touched)
          .then((own) =>
            own
              ? undefined
              : exclusive(
                  async () => undefined,
                  () => touched,
                ),
          )
          .catch((error: unknown) =>
            // The next change (or the next start) saves them: nothing is lost, only later.
            warnUnsaved('Could not save edits made outside Cairn to the history', error),
          )
      },
    })
  }
  watchMemoryFolder()
  // The check open left for later, made by itself soon after open: the window's first requests
  // (the first timeline page) are served first. Anything that ran it earlier (a command, a
  // transfer) leaves this run nothing to do.
  const deferredTimer = repo.hasDeferredChecks()
    ? setTimeout(() => {
        if (closed) return
        checkDeferredIfHeld().catch((error: unknown) =>
          logger.warn('Could not check the stored copies open left for later', error),
        )
      }, DEFERRED_CHECK_MS)
    : null
  deferredTimer?.unref()

  let closing: Promise<void> | null = null
  // Each step runs whatever the ones before it did, and the lock is released last: a step
  // that threw left the lock held and the store open, so the next open in this process was
  // refused as "in use" (none throws for a failing disk today: a sweep of every call of a
  // close, each failed, found none; stop 27). The first failure is thrown once the lock is
  // released, any other logged.
  async function closeOnce(): Promise<void> {
    closed = true
    const failures: Array<{ readonly step: string; readonly error: unknown }> = []
    const step = async (name: string, work: () => unknown): Promise<void> => {
      try {
        await work()
      } catch (error) {
        failures.push({ step: name, error })
      }
    }
    await step('stopping the watcher', () => {
      watcher?.close()
      if (deferredTimer) clearTimeout(deferredTimer)
    })
    await step('waiting for the commands queued', () => queue.idle())
    // What open took unchecked and nothing checked since is checked now, before the close's
    // checkpoint: the next open takes the full scan if a file changes while closed, and
    // would never look at it again. A failure is logged; close goes on.
    await checkDeferredIfHeld().catch((error: unknown) =>
      logger.warn('Could not check the stored copies open left for later', error),
    )
    if (resync || unrecorded.length > 0) {
      // The next open must not take the changes whose commits failed for edits made
      // outside Cairn while it was closed. Not once another Cairn took the folder over (a
      // command it refused owes a re-read too): the history is that one's, its next open
      // would take an edit made outside Cairn for an interrupted write. (A lock that cannot be
      // read now is no proof of that: the note is written.)
      try {
        if (owns(lock, true)) disk.writeFileSync(owedMarker, '')
      } catch (error) {
        logger.warn('Could not note the commits owed for the next start', error)
      }
    }
    // git's index lists `main` as the close leaves it (unless git holds its lock then).
    await step('updating the git index', () => gitIndex.close())
    await step('stopping background packing', () => maintainer.stop())
    await step('stopping the removal of replaced files', () => freed.stop())
    // The folder flushes owed by the last commands: the checkpoint below empties the log
    // only once each folder is flushed (a failed one tried again there).
    await step('settling the owed folder flushes', () => repo.settleOwedFlushes({ retry: false }))
    // Every object the write-ahead log covers made durable, the log emptied: the next open
    // has nothing to replay. A failure leaves the records for it.
    await repo.store.checkpoint({ durable: true }).catch((error: unknown) => {
      logger.warn('The history log could not be emptied; it is replayed at the next open', error)
    })
    await step('saving the stat cache', () => repo.stats.save())
    indexShut = true
    await step('closing the history store', () => repo.store.close())
    await step('closing the history index', () => repo.index.close())
    commitListeners.clear()
    recoveryListeners.clear()
    lock.release()
    const [first, ...others] = failures
    for (const { step: name, error } of others) {
      logger.error(`The memory did not close cleanly (${name})`, error)
    }
    if (first) throw first.error
  }

  return {
    folder: repo.workRoot,
    recovery,
    limits,
    execute: (input, origin, executeOptions = {}) =>
      exclusive(
        async (tree) => {
          // What the command reads is committed by now, outside edits included: a change's
          // were committed by `exclusive`, a view's are here.
          const readAt = isView(input)
            ? await settleForView(input, tree)
            : readsFile(input)
              ? repo.head()
              : undefined
          const outcome = await run(input, origin, executeOptions, tree).finally(() =>
            intents.clear(),
          )
          return outcome.isError || readAt === undefined ? outcome : { ...outcome, readAt }
        },
        () => touchedByCommand(input, executeOptions.spelledAsOnDisk === true),
        isView(input) ? 'reads' : replacesOnly(input) ? 'replaces' : 'writes',
        { signal: executeOptions.signal, outcome: notRunStopped },
      ).catch(toolFailure),
    setPolicy: (policy) => tool.configure(policy),
    removeSecrets: (file) =>
      forPeople(
        exclusive(
          () => takeOutSecrets(file),
          () => touchedByUserPath(file),
        ),
      ),
    notices: () => notices.list(),
    dismissNotice: (id) => notices.dismiss(id),
    onNotice: (listener) => notices.onNotice(listener),
    onNoticeCleared: (listener) => notices.onCleared(listener),
    setMachine: (name) => {
      machine = name
    },
    git,

    log: (query) =>
      forPeople(
        followingIndexed(async () => {
          requireCurrentIndex(repo)
          return queryLog(
            repo.index,
            query.path ? { ...query, path: normalize(query.path) } : query,
            ancestry.newestFirst(),
          )
        }),
      ),
    fileHistory: (file) =>
      forPeople(
        followingIndexed(async () => {
          requireCurrentIndex(repo)
          return fileHistoryOf(repo.index, normalize(file), ancestry.newestFirst())
        }),
      ),
    // While the index is rebuilt (or found damaged by this very read), from the commits,
    // slower: the review's check of each of Claude's writes asks this, and refusing it refused
    // the write (review on) or dropped every flag of its commit (review off).
    changesSince: (file, since) =>
      forPeople(
        (async () => {
          const path = normalize(file)
          if (!repo.indexRebuilding()) {
            // The rebuild is in: what the commits' order kept goes with it.
            rebuildTimeline = null
            try {
              return await indexed(async () =>
                changesSince(repo.index, path, since, ancestry.newestFirst()),
              )
            } catch (error) {
              if (!(error instanceof CairnError && error.code === 'index-rebuilding')) throw error
            }
          }
          rebuildTimeline ??= createCommitTimeline(repo.store)
          return rebuildTimeline.changesSince(repo.head(), path, since)
        })(),
      ),
    toolUseCommits: (conversationId, toolUseIds, since) =>
      forPeople(
        indexed(async () => {
          requireCurrentIndex(repo)
          return toolUseCommitsOf(repo.index, conversationId, toolUseIds, since)
        }),
      ),
    show: (oid) => forPeople(followingIndexed(() => showCommit(repo, oid))),
    readAt: (file, oid) => forPeople(followingIndexed(() => readAt(repo, file, oid))),
    diff: (file, from, to) => forPeople(followingIndexed(() => diffFile(repo, file, from, to))),
    head: () => repo.head(),
    changeStamp: () => stamp,
    changeEnded: () =>
      stamp % 2 === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => waitingForEnd.push(resolve)),
    async settledHead() {
      try {
        return await exclusive(
          async () => repo.head(),
          // What the watcher saw and has not saved yet (its debounce still running); without a
          // watcher, the whole folder (the stat cache keeps that to one lstat per file).
          () => (watcher ? watcher.takePending() : 'all'),
        )
      } catch (error) {
        // A turn must start even when nothing can be saved now (a full disk, a closed memory).
        warnUnsaved('Outside edits could not be saved before a turn; its memory is as saved', error)
        return repo.head()
      }
    },
    blame: (file, at) => forPeople(followingIndexed(() => blamer.blame(file, at))),
    searchHistory: (query) =>
      forPeople(
        followingIndexed(() => {
          requireCurrentIndex(repo)
          return searcher.search(query)
        }),
      ),
    compare: (from, to) =>
      forPeople(followingIndexed(() => compareCommits(repo, from, to ?? null))),
    summaries: (oids) =>
      oids.flatMap((oid) => {
        const entry = repo.entry(oid)
        return entry ? [toSummary(entry)] : []
      }),
    listAt: (oid) => forPeople(followingIndexed(() => snapshots.listAt(oid))),
    readBytesAt: (file, oid) => forPeople(followingIndexed(() => readBytesAt(repo, file, oid))),

    restoreFile: (file, oid) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreFile(repo, file, oid, commitOrOwe),
        (at) => at === normalize(file),
      ),
    restoreDeleted: (file, deletedIn) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreDeleted(repo, file, commitOrOwe, deletedIn),
      ),
    revert: (oid) =>
      restoring(
        () => {
          try {
            return touchedByRevert(repo.entry(oid))
          } catch {
            // A damaged index entry: the revert itself reports it.
            return []
          }
        },
        () => revert(repo, oid, commitOrOwe),
      ),
    // Its commit covers only the paths that differ from the target: anything else the folder
    // gained outside Cairn must be saved before, or it would stay out of HEAD.
    restoreAll: (oid) => {
      // What it left as it is (a file it may not read that no version holds, a folder it may
      // not enter): not as asked, nor is a folder holding one.
      let left: ReadonlyArray<string> = []
      return restoring(
        () => 'all',
        // The check before it scanned the whole folder: what history keeps no copy of is
        // taken from that scan, not found by a second walk.
        async (scanned) => {
          const { leftAsItIs, ...result } = await restoreAll(repo, oid, commitOrOwe, scanned)
          left = leftAsItIs.map(toVirtual)
          return result
        },
        (at) => !left.some((kept) => isWithin(at, kept) || isWithin(kept, at)),
      )
    },

    // Refused as closed, as the reads are, after the close and when the close ends the pass
    // (it stopped it): not a bare "maintenance stopped" for a caller to make sense of.
    maintain: (maintainOptions) =>
      closed
        ? Promise.reject(closedError())
        : maintainer.runNow(maintainOptions).catch((error: unknown) => {
            throw closed && error instanceof RepackAborted ? closedError() : error
          }),

    onCommit(listener) {
      commitListeners.add(listener)
      return () => commitListeners.delete(listener)
    },
    recoveries: () => recoveries,
    dismissRecovery(id) {
      if (!reportIds.wasGiven(id)) {
        throw new CairnError('not-found', `No report ${id} was told in this run.`)
      }
      // Only that very report: one told since (of its kind, in its place), even one that reads
      // the same, has not been seen dismissed, and stays.
      recoveries = recoveries.filter((kept) => kept.id !== id)
    },
    onRecovery(listener) {
      recoveryListeners.add(listener)
      return () => recoveryListeners.delete(listener)
    },
    onFollowing(listener) {
      followListeners.add(listener)
      return () => followListeners.delete(listener)
    },
    close() {
      // A second close (the app's quit beside a failed start's clean-up) waits for the first:
      // resolved at once, its caller could open the folder again while the lock was held.
      closing ??= closeOnce()
      return closing
    },
  }
}

/** The facts of the commit for one successful Memory tool mutation. */
export function intentFor(
  mutation: MemoryMutation,
  origin: Origin,
  requested: CommitCommand = mutation.command,
): CommitIntent {
  // A `write` (the person's save) that made a new file is a creation ("You created
  // ideas.md"), not an edit of a file that was never there.
  const command =
    requested === 'write' && mutation.command === 'create' && !mutation.overwrite
      ? 'create'
      : requested
  const [first = '/memories', second] = mutation.paths
  const subject =
    mutation.command === 'rename' && second ? `rename ${first} -> ${second}` : `${command} ${first}`
  const claude = origin.actor === 'claude' ? origin : null
  return {
    actor: origin.actor,
    command,
    subject,
    paths: mutation.paths,
    conversationId: claude?.conversationId ?? null,
    toolUseId: claude?.toolUseId ?? null,
    overwrite: command === 'create' && mutation.overwrite,
    restoredFrom: null,
  }
}

// A command that only replaces or creates a file (its rename logged with its commit).
function replacesOnly(input: unknown): boolean {
  const command = commandOf(input)
  return command === 'create' || command === 'str_replace' || command === 'insert'
}

/** A change that reads the file it edits, and quotes it back (`str_replace`, `insert`). */
function readsFile(input: unknown): boolean {
  const command = commandOf(input)
  return command === 'str_replace' || command === 'insert'
}

function isView(input: unknown): boolean {
  return commandOf(input) === 'view'
}

/** The `command` of a tool call's input, not yet checked (undefined when it is no object). */
function commandOf(input: unknown): unknown {
  return typeof input === 'object' && input !== null
    ? (input as { command?: unknown }).command
    : undefined
}

/**
 * What Claude (or the person's edit) gets when a command could not run at all: never a
 * rejected promise, a raw errno or a host path.
 */
function toolFailure(error: unknown): ExecuteOutcome {
  if (error instanceof CairnError) {
    const code = error.code === 'closed' || error.code === 'locked' ? error.code : 'io-error'
    return failed(code, `Error: ${error.message}`)
  }
  if (error instanceof DamagedHistoryError) {
    return failed(
      'history-damaged',
      'Error: The memory command failed because the memory history is damaged. Nothing was changed.',
    )
  }
  const refusal = unexpectedFailure(error)
  return failed(refusal.code, refusal.content)
}

/** A command whose turn was stopped before it could run: nothing changed. */
function notRunStopped(): ExecuteOutcome {
  return {
    content: '',
    isError: true,
    mutation: null,
    errorCode: null,
    commit: null,
    stopped: true,
  }
}

function failed(errorCode: ExecuteOutcome['errorCode'], content: string): ExecuteOutcome {
  return { content, isError: true, mutation: null, errorCode, commit: null }
}

/**
 * Passes CairnErrors on; a disk problem or damage becomes one, in plain words (a read-only file
 * system named as the folder it was met in: the memory folder at `memoryRoot`, or the data
 * folder).
 */
async function forPeopleIn<T>(memoryRoot: string, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof CairnError) throw error
    const problem = diskProblem(error, placeOf(error, memoryRoot))
    if (problem) {
      // A folder Cairn may not enter is named, so that the person knows what to fix.
      const where =
        error instanceof FolderDeniedError
          ? ` the folder ${toVirtual(error.relative)} could not be opened:`
          : ''
      throw new CairnError(
        problem.code,
        `That did not work because${where} ${problem.reason}. Nothing was changed.`,
      )
    }
    if (error instanceof DamagedHistoryError) {
      throw new CairnError(
        'history-damaged',
        'The memory history is damaged; that version cannot be read.',
      )
    }
    throw error
  }
}

// A path the restore will refuse touches nothing (the restore reports the refusal itself).
function touchedByUserPath(virtual: string): ReadonlyArray<string> {
  try {
    const relative = toRelative(virtual)
    return relative === '' ? [] : [relative]
  } catch {
    return []
  }
}

function normalize(virtual: string): string {
  return toVirtual(toRelative(virtual))
}

// Where a command moved what it moved: what it kept aside, and a rename's file or folder.
function movesOf(
  result: MemoryExecution,
): ReadonlyArray<{ readonly from: string; readonly to: string; readonly versioned?: boolean }> {
  const kept = (result.keptAside ?? []).map(({ path, keptAs, versioned }) => ({
    from: path,
    to: keptAs,
    ...(versioned !== undefined && { versioned }),
  }))
  const mutation = result.mutation
  if (mutation?.command !== 'rename') return kept
  const [from, to] = mutation.paths
  return from && to ? [...kept, { from, to }] : kept
}
