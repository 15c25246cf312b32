import type { CommitCommand } from '../../shared/types'
import { AUTHORS, formatCommitMessage, type CairnCommitMeta } from './commit-message'
import { settleFolderSyncs, type FolderTree, type StagedWrite } from '../lib/folders'
import {
  moveLoggedMain,
  prepareMainRef,
  serializeCommit,
  type ObjectStore,
  type PendingRef,
} from './object-store'
import type { LoggedRef, RenameIntent } from './objects/object-log'
import { segmentsOf, toVirtual } from './paths'
import { IndexDamagedError, IndexFile, replaceIndexDir, writeIndexBeside } from './index-file'
import type { CommitFacts } from './types'
import type { RepoView } from './read'
import { catchUp, indexEntryOf, type IndexEntry } from './side-index'
import {
  changesOf,
  diffNodes,
  emptyTree,
  flushTree,
  nodeAt,
  setAt,
  treeFromOid,
  type FileDelta,
  type Node,
  type TreeNode,
} from './tree-state'
import type { StatCache } from './stat-cache'
import { createOwnWrites, type OwnWrites } from './own-writes'
import { takenOverError } from '../lib/instance-lock'
import type { Logger } from '../lib/logger'
import { mendUnreadTrees, type UnreadTree } from './head-match'
import { moveMainLocked } from './main-lock'
import type { AdoptHead } from './outside-move'
import {
  checkUncheckedBlobs,
  keptVersion,
  MAX_VERSIONED_BYTES,
  scanPath,
  type ScanReport,
  type UncheckedBlobs,
} from './work-tree'

/** The id of git's empty tree. */
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/**
 * Facts of a commit to make; `paths` defaults to the files it changed. `body`: a few lines
 * `git log` shows under the subject (History reads the facts only).
 */
export type CommitIntent = CommitFacts & { readonly body?: string }

/** The intent of a commit Cairn makes on its own (no conversation, no overwrite, no restore). */
export function systemIntent(command: CommitCommand, subject: string): CommitIntent {
  return {
    actor: 'system',
    command,
    subject,
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
  }
}

/**
 * The bytes of the commit object Cairn writes for `meta` (time in seconds); `otherParents`
 * only for a merge commit.
 */
export function commitBody(
  meta: CairnCommitMeta & { readonly body?: string },
  tree: string,
  parent: string | null,
  time: number,
  otherParents: ReadonlyArray<string> = [],
): Buffer {
  return serializeCommit({
    tree,
    parent,
    otherParents,
    author: AUTHORS[meta.actor],
    timestamp: time,
    message: formatCommitMessage(meta),
  })
}

/** Options of one `Repo.commit`. */
export interface CommitOptions {
  /** Filled in with what the scan skipped or repaired. */
  readonly report?: ScanReport
  /** Check that the history's copy of every unchanged file is intact (at open). */
  readonly verify?: boolean
  /** Remove temp files of interrupted writes on the way (the scan at open). */
  readonly removeTemp?: boolean
  /**
   * A write of the file at `relative` (one of `paths`), not yet flushed nor renamed: the
   * commit takes its content from it and makes it durable in the same rounds of fsyncs as its
   * own objects, the change first (docs/durability.md, "Cost"). The commit publishes it;
   * when the commit fails, the write is still unpublished only if its own flush failed.
   */
  readonly staged?: StagedChange
  /**
   * The open folders of the change being committed (see `ScanContext.tree`): the scan of
   * `paths` goes through them instead of walking the folder again. Not for `'all'`.
   */
  readonly tree?: FolderTree
}

/** A staged write and the path it is at (relative to the memory folder). */
export interface StagedChange {
  readonly relative: string
  readonly write: StagedWrite
}

/**
 * The history of one memory folder: the commit `main` points at, its tree kept in memory,
 * and the side index (the read side, `RepoView`), plus `commit`. Only the serial queue
 * calls `commit`.
 */
export interface Repo extends RepoView {
  readonly gitdir: string
  /** What the folder's files looked like when last hashed (and the folder's totals). */
  readonly stats: StatCache
  /** The files Cairn's own commands wrote last, by the stat they left (own-writes.ts). */
  readonly ownWrites: OwnWrites
  /**
   * Reads `paths` (relative; `'all'` for the whole folder) from disk into the tree and, when
   * the tree changed, commits it. Returns the new entry, or null when nothing changed.
   */
  commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    options?: CommitOptions,
  ): Promise<IndexEntry | null>
  /**
   * The checks open left for later, made once: the trees of HEAD it took on their loose
   * file's stamp alone, read whole (damage beneath the file system keeps a stamp), and the
   * memory files' loose blobs it did not look at, by their stamps, else read whole
   * (`checkUncheckedBlobs`). A damaged one is written again from the folder. Each commit runs
   * it first; the history runs it about a second after open, when idle, before a maintenance
   * pass, a change that moves, removes or restores files (a restore, a sync), a transfer or an
   * export, and at close. `whenDeferredFound`'s hook hears of damage.
   */
  checkDeferred(): Promise<void>
  /** True until `checkDeferred` has run to its end. */
  hasDeferredChecks(): boolean
  /** Calls `hook` with what `checkDeferred` found damaged, when it found any. */
  whenDeferredFound(hook: (found: DeferredFound) => void): void
  /** Swaps in a rebuilt side index (which must end at `head()`); closes the old one. */
  replaceIndex(next: IndexFile): void
  /**
   * Calls `hook` when recording a commit in the side index finds the index damaged (a name
   * that fails its checksum, a catch-up that does not fit): the index then waits for a
   * rebuild from the commits (`indexRebuilding`) until `replaceIndex`.
   */
  whenIndexDamaged(hook: () => void): void
  /**
   * Marks the side index damaged because a read found a damaged entry in it: as a commit
   * that finds it damaged, it then waits for the rebuild (`indexRebuilding`) until
   * `replaceIndex`, so later reads answer "being rebuilt" without reading the entry again.
   * True the first time (the caller says so and has it rebuilt), false while already marked.
   */
  indexFoundDamaged(): boolean
  /**
   * Calls `keep` with the path of a memory file a command's write is about to replace, just
   * before the rename (history/freed-files.ts): keeping it by a second name, the rename frees
   * nothing and does not wait for the disk's discard.
   */
  keepReplaced(keep: (entry: string) => void): void
  /**
   * The barrier of the folder flushes a logged command's result did not wait for (owed:
   * docs/durability.md, "Cost"): resolves once each has succeeded. One that failed is retried
   * by a checkpoint of the log (which `fsync`s the folders of the renames it holds before it
   * empties them); if that fails too, this rejects with its error and the flush stays owed,
   * as it does, with the `locked` error, once the log was given up to another instance.
   * Whatever could leave a lost rename that open cannot redo (a move or removal in the memory
   * folder, a commit or a move of `main` that bypasses the log) waits for it first.
   * `retry: false` (close, whose own checkpoint retries): waits for those in flight only.
   */
  settleOwedFlushes(options?: { readonly retry?: boolean }): Promise<void>
  indexRebuilding(): boolean
  /**
   * Takes `head` as the new `main` after the ref and the folder were moved to it (see
   * `checkout.ts`): `added` are its commits the index lacked, oldest first (appended);
   * `replace` makes them the whole index (the history was switched, not grown). A failure to
   * record them is caught up later, never reported (the move has happened).
   */
  readonly adopt: AdoptHead
}

export interface RepoState {
  readonly head: string | null
  /** HEAD's tree, loaded; an empty tree (with `treeOid` set) when HEAD's tree is damaged. */
  readonly root: TreeNode
  /** The tree id HEAD's commit names (the empty tree's id for no commit). */
  readonly treeOid: string
  readonly index: IndexFile
  readonly stats: StatCache
  /** HEAD's trees open took on their loose file's stamp (see `folderAsHead`), to read once. */
  readonly unreadTrees?: ReadonlyArray<UnreadTree>
  /** The memory files whose loose blobs open did not look at (see `folderAsHead`). */
  readonly uncheckedBlobs?: UncheckedBlobs
}

/** What `checkDeferred` found damaged and wrote again, or could not. */
export interface DeferredFound {
  /** How many of HEAD's trees were written again. */
  readonly trees: number
  /** The files whose blobs were written again from the files. */
  readonly repaired: ReadonlyArray<string>
  /** The files whose blobs are damaged and which no longer hold their content. */
  readonly lost: ReadonlyArray<string>
}

export function createRepo(options: {
  store: ObjectStore
  workRoot: string
  state: RepoState
  now: () => number
  /** The machine named in every commit's `Machine:` trailer (null: none). */
  machine?: () => string | null
  /** Told when a folder's flush the result did not wait for failed. */
  logger?: Logger
}): Repo {
  const { store, workRoot, now, logger } = options
  const machine = options.machine ?? (() => null)
  let index = options.state.index
  // Set when an index append failed: the next commit first catches the index up.
  let indexBehind = false
  // Set when the index was found damaged while recording: nothing more is appended or caught
  // up (each catch-up would redo every commit since, and fail again) until the rebuild,
  // which ends at HEAD, is swapped in.
  let indexDamaged = false
  let onIndexDamaged: () => void = () => undefined
  function markIndexDamaged(): boolean {
    indexBehind = true
    if (indexDamaged) return false
    indexDamaged = true
    return true
  }
  function indexWasDamaged(): void {
    if (markIndexDamaged()) onIndexDamaged()
  }
  const stats = options.state.stats
  let head = options.state.head
  let root = head ? options.state.root : emptyTree()
  let treeOid = head ? options.state.treeOid : EMPTY_TREE_OID

  let unreadTrees = options.state.unreadTrees ?? []
  let uncheckedBlobs = options.state.uncheckedBlobs ?? null
  let onDeferredFound: (found: DeferredFound) => void = () => undefined
  async function checkDeferred(): Promise<void> {
    if (unreadTrees.length === 0 && uncheckedBlobs === null) return
    const trees = await mendUnreadTrees(store, unreadTrees)
    const blobs = uncheckedBlobs
      ? await checkUncheckedBlobs(store, stats, workRoot, uncheckedBlobs, logger)
      : { repaired: [], lost: [], owed: null }
    if (trees.length + blobs.repaired.length > 0) await store.flush()
    unreadTrees = []
    // Blobs the disk refused to read for a passing reason are checked again next time.
    uncheckedBlobs = blobs.owed
    const { repaired, lost } = blobs
    if (trees.length + repaired.length + lost.length > 0) {
      onDeferredFound({ trees: trees.length, repaired, lost })
    }
  }

  // The folder flushes of logged renames the results did not wait for, in flight or failed:
  // until one has succeeded, its rename's record stays in the log (the checkpoint that empties
  // the record `fsync`s the folder first), its temp file's name and folder stay where the
  // record says, and `main` is reached through the log's records (docs/durability.md, "Cost").
  const owed = new Set<{ readonly flushing: Promise<void>; failed: unknown }>()
  let owedWarned = false
  function owe(flushing: Promise<void>): void {
    const flush: { readonly flushing: Promise<void>; failed: unknown } = {
      flushing,
      failed: null,
    }
    owed.add(flush)
    flushing.then(
      () => {
        owed.delete(flush)
        owedWarned = false
      },
      (error: unknown) => {
        // Kept owed: the rename's record stays in the log until a checkpoint has flushed the
        // folder itself, and the next barrier retries through one. Told once until a flush
        // succeeds, not once per command while the disk keeps failing (review21-round R8).
        flush.failed = error ?? new Error('fsync failed')
        if (owedWarned) return
        owedWarned = true
        logger?.warn(
          'A folder could not be flushed after a write; the history log keeps its rename until it can',
          error,
        )
      },
    )
  }
  async function settleOwedFlushes({ retry = true } = {}): Promise<void> {
    if (owed.size === 0) return
    const flushes = [...owed]
    await Promise.allSettled(flushes.map(({ flushing }) => flushing))
    const failed = flushes.filter((flush) => flush.failed !== null)
    if (failed.length === 0 || !retry) return
    // Each failed flush's rename is logged with its folder kept: a checkpoint that empties its
    // file has `fsync`ed that folder first, and rejects (the records staying) when it cannot.
    // One that gives the log up instead (its `owns` false: another instance took the data
    // folder over) may have flushed none of them: they stay owed, and every barrier fails
    // clearly from then on (review21-round R6).
    if (!(await store.checkpoint())) throw takenOverError()
    for (const flush of failed) owed.delete(flush)
  }

  async function commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    commitOptions: CommitOptions = {},
  ): Promise<IndexEntry | null> {
    const { staged } = commitOptions
    try {
      if (staged && (paths === 'all' || !paths.includes(staged.relative))) {
        throw new Error('a staged write must be one of the paths committed')
      }
      // A commit reuses HEAD's trees and blobs by id: they are checked before the first one
      // builds on them.
      await checkDeferred()
      return await commitScanned(await scan(paths, commitOptions), intent, staged)
    } catch (error) {
      // Objects already written are complete files; make them durable or at least release them.
      await Promise.all([store.flush().catch(() => {}), settleFolderSyncs()])
      throw error
    }
  }

  async function scan(
    paths: ReadonlyArray<string> | 'all',
    { report, verify = false, removeTemp = false, staged, tree }: CommitOptions,
  ): Promise<TreeNode> {
    if (paths === 'all') {
      const visited = new Set<string>()
      const scanned = await scanPath(store, workRoot, [], root, {
        stats,
        visited,
        removeTemp,
        report,
        verify,
      })
      stats.retainOnly(visited)
      return scanned?.kind === 'tree' ? scanned : emptyTree()
    }
    let next = root
    // One owner for the whole commit: a folder several paths go through is copied once.
    const owner = {}
    for (const relative of paths) {
      const segments = segmentsOf(relative)
      const previous = await nodeAt(store, next, segments)
      const scanned =
        staged?.relative === relative
          ? await stagedNode(staged, previous, report)
          : await scanPath(store, workRoot, segments, previous, { stats, report, tree })
      if (scanned !== previous) next = await setAt(store, next, segments, scanned, owner)
    }
    return next
  }

  // The node of a staged write: its content is known, so the file is not read back.
  async function stagedNode(
    { relative, write }: StagedChange,
    previous: Node | null,
    report: ScanReport | undefined,
  ): Promise<Node | null> {
    if (write.content.byteLength > MAX_VERSIONED_BYTES) {
      report?.tooLarge.push(relative)
      stats.forget(relative)
      return keptVersion(previous)
    }
    const oid = store.hash('blob', write.content)
    if (previous?.kind === 'blob' && previous.oid === oid && previous.mode === '100644') {
      return previous
    }
    await store.write('blob', write.content, oid)
    return { kind: 'blob', oid, mode: '100644' }
  }

  /**
   * Publishes a staged write once everything is flushed, and records its file in the stat
   * cache by its size only (it counts in the folder's totals): a record of its times could
   * not be trusted anyway (they are within the racy window of the moment it is recorded, and
   * the rename may change the file's ctime), so the next scan of the file reads and hashes
   * it, as it would any file just written, and no `fstat` is spent on them.
   */
  let keepOld: ((entry: string) => void) | undefined
  const ownWrites = createOwnWrites(workRoot)
  function publishStaged(staged: StagedChange | undefined, node: Node | null): void {
    if (!staged) return
    staged.write.publish(keepOld)
    if (node?.kind === 'blob') {
      stats.recordWritten(staged.relative, staged.write.content.byteLength, node.oid)
      ownWrites.noteWritten(staged.relative)
    } else {
      stats.forget(staged.relative)
      ownWrites.forget(staged.relative)
    }
  }

  // The flushes of one round: a staged write's own failure fails the write (nothing changed:
  // it is reported first); any other leaves the write to go ahead alone, its commit owed.
  async function flushWith(staged: StagedChange | undefined, rest: Promise<unknown>) {
    const [file, others] = await Promise.allSettled([staged?.write.flush(), rest])
    if (file.status === 'rejected') throw file.reason
    if (others.status === 'rejected') throw others.reason
  }

  /**
   * The rename publishing `staged`, to log with its commit (docs/durability.md, "Cost"), or
   * undefined when it is not to be logged: a version not versioned as written (too large), a
   * path that was a folder, a folder that cannot be kept.
   */
  async function renameOf(
    { relative, write }: StagedChange,
    stagedAt: Node | null,
  ): Promise<RenameIntent | undefined> {
    if (stagedAt?.kind !== 'blob' || write.content.byteLength > MAX_VERSIONED_BYTES) return
    const segments = segmentsOf(relative)
    const before = head ? await nodeAt(store, root, segments) : null
    if (before?.kind === 'tree') return
    const folder = write.keptFolder()
    if (!folder) return
    return {
      record: {
        blob: stagedAt.oid,
        previous: before?.oid ?? null,
        dir: segments.slice(0, -1).join('/'),
        temp: write.temp,
        name: write.name,
      },
      folder,
    }
  }

  async function commitScanned(
    next: TreeNode,
    intent: CommitIntent,
    staged?: StagedChange,
  ): Promise<IndexEntry | null> {
    // Taken before the flush forgets them: the diff below then skips the unchanged entries.
    const changes = changesOf(next)
    const nextTree = await flushTree(store, next)
    const stagedAt = staged ? await nodeAt(store, next, segmentsOf(staged.relative)) : null
    if (nextTree === treeOid) {
      // Nothing to commit; objects rewritten by a repair still have to be made durable.
      await flushWith(staged, Promise.all([store.flush(), settleFolderSyncs()]))
      publishStaged(staged, stagedAt)
      await staged?.write.syncFolder()
      root = next
      return null
    }
    const deltas: FileDelta[] = await diffNodes(store, head ? root : null, next, '', [], {
      changes,
    })
    const files = deltas.map((delta) => toVirtual(delta.path))
    const meta: CairnCommitMeta & { readonly body?: string } = {
      ...intent,
      paths: intent.paths ?? files,
      machine: intent.machine ?? machine(),
    }
    const time = Math.floor(now() / 1000)
    const body = commitBody(meta, nextTree, head, time)
    const oid = await store.write('commit', body)
    // Every object the commit reaches, and the change it records, are durable before the ref
    // makes them reachable. A staged write is flushed in the same round as the objects, whose
    // log records end with the ref's new value and the staged write's rename: the ref file is
    // written (after the rename: a killed process keeps that order) but neither it nor its
    // folder is flushed; then the staged write's folder's flush starts, and the result does
    // not wait for it: one round on the path, 3 fsyncs (open redoes a rename a power cut lost:
    // docs/durability.md, "Cost").
    // Where the log cannot take the batch, the ref's temp file and folder are flushed as well,
    // and the folder flushes owed by earlier commands are waited for before the ref moves (a
    // `main` not reached through the log's records would leave their renames to no redo);
    // where it does, the ref file is written at the move, in place (`moveLoggedMain`).
    const logs = store.logsMain()
    let ref: PendingRef | null = logs ? null : prepareMainRef(store.gitdir, oid)
    const logged: { ref: LoggedRef | null } = { ref: null }
    const rename = logs && staged ? await renameOf(staged, stagedAt) : undefined
    try {
      const objects = store.flush(oid, rename).then((handle) => (logged.ref = handle))
      await flushWith(staged, Promise.all([objects, ref?.flush(), settleFolderSyncs()]))
      if (!logged.ref && !ref) {
        // The log could not take it after all: the ref's own flush, in a round of its own.
        ref = prepareMainRef(store.gitdir, oid)
        await ref.flush()
      }
      // One barrier for both ways the log is bypassed (review21-round R3): the owed folder
      // flushes are waited for just before `main` moves outside the log's records.
      if (ref) await settleOwedFlushes()
      // git's own lock on `main`, held from the last look at the ref until it is written: a git
      // command moving `main` meanwhile fails cleanly (main-lock.ts); one under way is waited
      // for briefly, else the commit fails (`conflict`) and is owed. Compare and swap: `main`
      // moved outside Cairn since this command began (a commit made with git) is never moved
      // back past; the command fails and the next one follows it.
      await moveMainLocked(store.gitdir, head, () => {
        publishStaged(staged, stagedAt)
        if (ref) ref.move()
        else moveLoggedMain(store.gitdir, oid)
      })
    } catch (error) {
      ref?.abandon()
      // Not moved: its logged value must not be taken for `main` at the next open.
      await logged.ref?.abandoned(head).catch(() => {})
      // Renamed all the same (the ref's write failed): the change has happened, and is made
      // durable as any change whose commit is owed.
      if (staged?.write.published) await staged.write.syncFolder()
      throw error
    }
    // As the ref folder's flush before: best effort, since the ref has moved. The staged
    // write's folder's flush starts now. Where its rename is logged, the result does not wait
    // for it: it is owed (`settleOwedFlushes`), and a later move in the memory folder, or a
    // commit that bypasses the log, waits for it first (review13-perf R1, R2). Unless a
    // checkpoint began flushing that log file's folders before the rename (and may empty it
    // next): then `moved` waits for it too. Elsewhere the result waits for it, as before.
    // None rejects. All start now; the entry is made and appended to the side index (not
    // flushed) once the ref is durable, never before, so that an entry on disk names a ref on
    // disk (a power cut must not leave the index ahead of `main`: review19-cold R1).
    const owedFlush = staged && logged.ref?.renameLogged ? staged.write.startFolderSync() : null
    if (owedFlush) owe(owedFlush)
    const folder = staged && !owedFlush ? staged.write.syncFolder() : undefined
    await (logged.ref
      ? logged.ref.moved(owedFlush ? () => owedFlush : undefined).catch(() => {})
      : ref!.sync())
    const entry = indexEntryOf({ oid, parents: head ? [head] : [], timestamp: time }, meta, files)
    head = oid
    root = next
    treeOid = nextTree
    // The commit has happened once the ref moved: failing to record it in the index (a full
    // disk) must not undo it. The entries missed are rebuilt from their commits next time.
    // A damaged index (found here) is rebuilt in the background at once.
    if (!indexDamaged) {
      try {
        if (!indexBehind) index.append(entry)
        else if (await catchUp(store, index, oid)) indexBehind = false
        else indexWasDamaged()
      } catch (error) {
        if (error instanceof IndexDamagedError) indexWasDamaged()
        else indexBehind = true
      }
    }
    await folder
    return entry
  }

  return {
    store,
    gitdir: store.gitdir,
    workRoot,
    checkDeferred,
    hasDeferredChecks: () => unreadTrees.length > 0 || uncheckedBlobs !== null,
    whenDeferredFound(hook) {
      onDeferredFound = hook
    },
    get index() {
      return index
    },
    stats,
    ownWrites,
    head: () => head,
    root: () => root,
    entry: (oid) => index.find(oid),
    indexRebuilding: () => indexDamaged,
    whenIndexDamaged(hook) {
      onIndexDamaged = hook
    },
    indexFoundDamaged: markIndexDamaged,
    keepReplaced(keep) {
      keepOld = keep
    },
    settleOwedFlushes,
    commit,
    replaceIndex(next) {
      if (next.head() !== head) throw new Error('the new index does not end at HEAD')
      indexBehind = false
      indexDamaged = false
      const old = index
      index = next
      old.close()
    },
    async adopt(nextHead, tree, added, replace = false) {
      head = nextHead
      root =
        tree === EMPTY_TREE_OID
          ? { kind: 'tree', oid: EMPTY_TREE_OID, children: new Map() }
          : treeFromOid(tree)
      treeOid = tree
      if (replace) {
        // Built beside the old one first: a failure leaves the old index whole (and the next
        // open, finishing the move, rebuilds it).
        const dir = index.dir
        const temp = writeIndexBeside(dir, added)
        index.close()
        replaceIndexDir(temp, dir)
        index = IndexFile.open(dir)
        indexBehind = false
        indexDamaged = false
        return
      }
      if (indexDamaged) return
      // `added` holds every commit up to `nextHead` the index lacks (even ones an earlier
      // append missed). As with a commit, the move has happened once the ref moved: what an
      // append misses now is caught up from the commits at the next commit.
      try {
        for (const entry of added) index.append(entry)
        indexBehind = false
      } catch (error) {
        if (error instanceof IndexDamagedError) indexWasDamaged()
        else indexBehind = true
      }
    },
  }
}
