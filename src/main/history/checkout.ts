/**
 * Moving `main` to a commit Cairn did not make here: a sync's fast-forward or merge commit,
 * or a switch to another history the person chose. The folder follows, so it always equals
 * the tree of `main`; a crash at any point is finished at the next open.
 *
 * Order: the objects it reaches are made durable (and the write-ahead log checkpointed, see
 * `objects/logged-main.ts`), the move is written down (`cairn-move.json`
 * in the git directory), the folder is updated (its fsyncs settled, and the stat cache told
 * what was written), `main` is moved (fsynced), the side index is appended to (or replaced),
 * the note is removed. Re-running the note's move is harmless at any point, which is what
 * `finishInterruptedMove` does at the next open, before anything else compares the folder
 * with `main`. All of it goes through the disk seam.
 */
import path from 'node:path'
import { writeJsonAtomic } from '../lib/atomic-json'
import { disk, isCode } from '../lib/disk'
import { readOwnRecord } from './objects/damaged-folder'
import { CairnError } from '../lib/errors'
import { diskProblem, isDiskProblem, isLastingRefusal } from '../lib/disk-errors'
import { Folder, FolderTree, readFileIn, settleFolderSyncs } from '../lib/folders'
import type { Logger } from '../lib/logger'
import { DamagedHistoryError } from './damage'
import { readMainRef } from './main-ref'
import { moveMainLocked } from './main-lock'
import { createObjectStore, writeMainRef, type ObjectStore } from './object-store'
import { segmentsOf, shownPath, toRelative, toVirtual } from './paths'
import type { Repo } from './repo'
import type { MoveKind } from './types'
import { applyDeltas, keptAsideNote, type FailedDelta, type KeptAside } from './restore-common'
import { entriesSince, parentsOf, type IndexEntry } from './side-index'
import { diffNodes, emptyTree, treeFromOid, type FileDelta, type TreeNode } from './tree-state'
import { MAX_VERSIONED_BYTES } from './work-tree'

/** The note of a move in progress, inside the git directory (never in the memory folder). */
export function moveNoteOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-move.json')
}

interface MoveNote {
  readonly from: string | null
  readonly to: string
}

export type { MoveKind } from './types'

/**
 * Moves `main` and the folder to `target`, whose objects must all be in the store. A
 * `forward` move refuses a target that does not contain the current `main` (history is never
 * rewritten by accident); a `switch` replaces the side index with the target's history.
 * Only the serial queue calls this, with the folder equal to `main`'s tree. Returns the
 * index entries the move added, oldest first.
 */
export async function moveMain(
  repo: Repo,
  target: string,
  kind: MoveKind,
  onKeptAside: (kept: ReadonlyArray<KeptAside>) => void = () => {},
): Promise<ReadonlyArray<IndexEntry>> {
  const from = repo.head()
  if (target === from) return []
  const store = repo.store
  const commit = await store.readCommit(target)
  // Every commit is read before anything changes: a missing object refuses the move here.
  const added = await entriesSince(
    store,
    target,
    kind === 'switch' ? () => false : (oid) => repo.index.positionOf(oid) >= 0,
  )
  if (kind === 'forward' && from && !added.some((entry) => parentsOf(entry).includes(from))) {
    throw new CairnError(
      'conflict',
      'That history does not continue this one; Cairn never replaces history without asking.',
    )
  }
  const deltas = await diffNodes(store, repo.root(), treeFromOid(commit.tree))
  // A commit from elsewhere is untrusted: none of its paths may leave the folder or reach git.
  for (const delta of deltas) toRelative(toVirtual(delta.path))
  // What the folder holds in the move's way and history never held (a person's own `.git`
  // where a file is to go) refuses the move before anything is written: met half-way, it
  // would fail every sync the same way, and the note would fail every start.
  refuseWhatIsInTheWay(repo.workRoot, deltas)
  // The objects the target reaches that were written here (a merge commit, its trees) are
  // durable before anything refers to them. So is every value of `main` the write-ahead log
  // holds, and the log is emptied for good: open moves `main` forward to a logged value, and
  // one logged before this move must never win over it (were the target an ancestor of it).
  await store.flush()
  await store.checkpoint({ durable: true })
  await writeJsonAtomic(moveNoteOf(store.gitdir), { from, to: target } satisfies MoveNote)
  let kept: ReadonlyArray<KeptAside>
  let failed: FailedDelta | null = null
  try {
    // A file the history never held is kept aside, never written over (`applyDeltas`). A
    // write that fails puts the folder back itself.
    kept = await applyDeltas(repo, deltas, (failure) => {
      failed = failure
    })
  } catch (error) {
    const failure = failed as FailedDelta | null
    // Put back in full (or never begun), the move did not happen, and its note goes with it
    // whatever the folder said: left behind, every start would try the same writes again, and
    // a refusal that lasts (a folder Cairn may not write, a disk too small for the file) would
    // keep Cairn from opening. Only a disk that failed the putting back keeps the note: the
    // next start finishes the move once the disk allows it.
    if (failure === null || failure.restored || !isDiskProblem(error)) removeNote(store.gitdir)
    if (failure && failure.keptAside.length > 0) onKeptAside(failure.keptAside)
    throw failure ? namingTheFile(error, failure) : error
  }
  onKeptAside(kept)
  noteWritten(repo, deltas)
  try {
    // The folder's changes are durable before the ref that records them moves (as for a
    // commit).
    await settleFolderSyncs()
    // git's lock on `main` while it moves, and compare and swap, as for a commit (main-lock.ts):
    // `main` moved outside Cairn meanwhile is not moved back past; the folder is put back and
    // the next change follows it.
    await moveMainLocked(store.gitdir, from, () => writeMainRef(store.gitdir, target))
  } catch (error) {
    // `main` did not move (a full disk): the folder goes back to it, and the note with it. If
    // even that fails, the note stays and the next start finishes the move.
    try {
      await applyDeltas(
        repo,
        deltas.map(({ path, before, after }) => ({ path, before: after, after: before })),
      )
      removeNote(store.gitdir)
    } catch {
      // Finished at the next start.
    }
    throw error
  }
  await repo.adopt(target, commit.tree, added, kind === 'switch')
  // The move has happened: a note that cannot be removed now is finished (harmlessly) at the
  // next start, and must not make the move look failed.
  try {
    removeNote(store.gitdir)
  } catch {
    // Left for the next start.
  }
  return added
}

// A failed move's error in words that name the file (a virtual path, never a host one), so
// that the person knows what to fix. Only a disk problem gets them; only when the folder was
// put back is "nothing was changed" true.
function namingTheFile(error: unknown, failure: FailedDelta): unknown {
  const problem = diskProblem(error, 'memory')
  if (!problem || error instanceof CairnError) return error
  const size =
    problem.code === 'disk-full' && failure.bytes !== null
      ? ` (it takes ${formatMiB(failure.bytes)})`
      : ''
  const outcome = failure.restored
    ? 'Nothing was changed; fix that, then try again.'
    : 'Cairn sets the folder right at the next start.'
  const what =
    failure.folder !== undefined
      ? `the folder ${shownPath(failure.folder)} could not be opened`
      : `${shownPath(failure.path)}${size} could not be written`
  return new CairnError(
    problem.code,
    `The history could not be brought up to date, because ${what}: ${problem.reason}. ${outcome}${keptAsideNote(failure.keptAside)}`,
  )
}

function formatMiB(bytes: number): string {
  return bytes < 1024 * 1024
    ? `${Math.ceil(bytes / 1024)} KiB`
    : `${(bytes / 1048576).toFixed(1)} MiB`
}

// The files a move wrote hold the blobs it wrote: the stat cache learns them (keeping the
// folder's totals right for the Memory tool's limits) without reading them back.
function noteWritten(repo: Repo, deltas: ReadonlyArray<FileDelta>): void {
  for (const delta of deltas) {
    if (delta.after === null) {
      repo.stats.forget(delta.path)
      continue
    }
    try {
      repo.stats.record(
        delta.path,
        disk.lstatSync(path.join(repo.workRoot, ...segmentsOf(delta.path))),
        delta.after,
      )
    } catch {
      // Gone already: the next scan sees what is there.
      repo.stats.forget(delta.path)
    }
  }
}

/**
 * Finishes a move a crash interrupted (see `moveMain`): each file the move changes is
 * brought to the target's version where the folder still holds the old one, and `main` is
 * moved. A file that holds neither (edited by hand meanwhile) is left as it is, so the
 * start-up recovery commit keeps it. Returns true when a move was finished. A move that
 * cannot be finished (its versions damaged, or the folder unable to take them) is dropped,
 * the folder kept as it is, and `onAbandoned` told why.
 */
export async function finishInterruptedMove(
  gitdir: string,
  workRoot: string,
  logger?: Logger,
  onAbandoned?: (why: 'damaged' | 'folder') => void,
): Promise<boolean> {
  const file = moveNoteOf(gitdir)
  // No move was in progress (a fifo, a link or a folder in its place is kept aside and read
  // as none). An I/O error is not "no move": open fails, changing nothing.
  const bytes = readOwnRecord(gitdir, file)
  if (bytes === null) return false
  const text = bytes.toString('utf8')
  let note: MoveNote
  try {
    note = JSON.parse(text) as MoveNote
  } catch {
    // Its note was never completely written: nothing moved yet.
    removeNote(gitdir)
    return false
  }
  if (!isOid(note.to) || (note.from !== null && !isOid(note.from))) {
    removeNote(gitdir)
    return false
  }
  const at = readMainRef(gitdir)
  if (at.kind === 'ok' && at.oid !== note.from && at.oid !== note.to) {
    // `main` moved on since (the move failed and was undone, and commits followed): the note
    // is stale, and finishing it would drop those commits.
    logger?.warn('A stale note of a move of the history was dropped at start-up')
    removeNote(gitdir)
    return false
  }
  const store = createObjectStore(gitdir)
  try {
    const before = await treeOfCommit(store, note.from)
    const after = await treeOfCommit(store, note.to)
    const deltas = await diffNodes(store, before, after)
    // As in `moveMain`: the commits may come from elsewhere, and the note is only data.
    for (const delta of deltas) toRelative(toVirtual(delta.path))
    const pending: FileDelta[] = []
    for (const delta of deltas) {
      const onDisk = blobOidOnDisk(store, workRoot, delta.path)
      if (onDisk === delta.before && onDisk !== delta.after) pending.push(delta)
    }
    const kept = await applyDeltas({ store, workRoot }, pending)
    if (kept.length > 0) {
      logger?.warn(`An interrupted move kept ${kept.length} file(s) the history never held aside`)
    }
  } catch (error) {
    // Only the disk itself (full, failing) fails the open: the move is finished at a start
    // when the disk allows it. Anything else would fail every start the same way, and so would
    // a refusal that lasts (a folder or file Cairn may not write or read, a file held open by
    // another program): that folder is kept as it is, like one that cannot take a name.
    if (isDiskProblem(error) && !isLastingRefusal(error)) throw error
    // The versions the move was between cannot be read (damage), or the folder cannot take
    // them (a name too long for this file system, a folder in a file's way): the folder stays
    // as it is (`applyDeltas` put back what it changed), and the start-up recovery commit
    // saves it on top of `main` as it was. Every file is kept; nothing is guessed.
    logger?.warn('An interrupted move of the history could not be finished', error)
    onAbandoned?.(error instanceof DamagedHistoryError ? 'damaged' : 'folder')
    removeNote(gitdir)
    return false
  } finally {
    store.close()
  }
  await settleFolderSyncs()
  if (at.kind !== 'ok' || at.oid !== note.to) await writeMainRef(gitdir, note.to)
  removeNote(gitdir)
  logger?.warn('An interrupted move of the history (a sync) was finished at start-up')
  return true
}

/**
 * Refuses (changing nothing) a move whose writes meet something history never held: a
 * folder holding such files where a file is to go, or a file or link where a folder is to be.
 * What the move itself deletes first is not in its way.
 */
function refuseWhatIsInTheWay(workRoot: string, deltas: ReadonlyArray<FileDelta>): void {
  const removed = new Set(deltas.filter((delta) => delta.after === null).map((d) => d.path))
  const tree = new FolderTree(workRoot)
  try {
    for (const delta of deltas) {
      if (delta.after === null) continue
      const found = tree.find(delta.path)
      let blocker: string | null = null
      let example: string | null = null
      if (found.kind === 'under-file' || found.kind === 'special') {
        if (!removed.has(found.at)) blocker = found.at
      } else if (found.kind === 'directory') {
        example = fileKeptIn(tree, delta.path, removed)
        if (example !== null) blocker = delta.path
      }
      if (blocker === null) continue
      const what = example
        ? `is a folder holding files the history does not keep (such as ${shownPath(example)})`
        : 'is something the history does not keep'
      throw new CairnError(
        'conflict',
        `${shownPath(blocker)} ${what}, in the way of the file ${shownPath(delta.path)} the sync brings. Move it out of the memory folder, then sync again. Nothing was changed.`,
      )
    }
  } finally {
    tree.close()
  }
}

// A file (or link) inside the folder `relative` that the move does not delete, or null.
function fileKeptIn(
  tree: FolderTree,
  relative: string,
  removed: ReadonlySet<string>,
): string | null {
  const folder = tree.folder(relative)
  if (!(folder instanceof Folder)) return null
  for (const dirent of folder.list()) {
    const child = `${relative}/${dirent.name}`
    if (dirent.isDirectory()) {
      const inside = fileKeptIn(tree, child, removed)
      if (inside !== null) return inside
    } else if (!removed.has(child)) {
      return child
    }
  }
  return null
}

function removeNote(gitdir: string): void {
  try {
    disk.unlinkSync(moveNoteOf(gitdir))
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

async function treeOfCommit(store: ObjectStore, oid: string | null): Promise<TreeNode> {
  return oid ? treeFromOid((await store.readCommit(oid)).tree) : emptyTree()
}

// The blob id of what the folder holds at `relative` (null: nothing, or not a regular file).
// Read through the folders' handles, never through a link.
function blobOidOnDisk(store: ObjectStore, workRoot: string, relative: string): string | null {
  const tree = new FolderTree(workRoot)
  try {
    const found = tree.find(segmentsOf(relative).join('/'))
    if (found.kind !== 'file') return null
    return store.hash(
      'blob',
      readFileIn(found.parent, found.name, found.stats, MAX_VERSIONED_BYTES),
    )
  } catch (error) {
    // Unreadable as a file (changed meanwhile): the move's "absent" side. A disk problem is
    // not that.
    if (isDiskProblem(error)) throw error
    return null
  } finally {
    tree.close()
  }
}

function isOid(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{40}$/.test(value)
}
