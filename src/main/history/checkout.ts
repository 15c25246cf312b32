/**
 * Moving `main` to a commit Cairn did not make here: a sync's fast-forward or merge commit,
 * or a switch to another history the person chose. The folder follows, so it always equals
 * the tree of `main`; a crash at any point is finished at the next open.
 *
 * Order: the move is written down (`cairn-move.json` in the git directory), the folder is
 * updated (and the stat cache told what was written), `main` is moved, the side index is
 * appended to (or replaced), the note is removed. Re-running
 * the note's move is harmless at any point, which is what `finishInterruptedMove` does.
 */
import { lstatSync, readFileSync, rmSync } from 'node:fs'
import { lstat, readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeJsonAtomic } from '../lib/atomic-json'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { createObjectStore, readMainRef, writeMainRef, type ObjectStore } from './object-store'
import { segmentsOf, toRelative, toVirtual } from './paths'
import type { Repo } from './repo'
import type { MoveKind } from './types'
import { applyDeltas } from './restore-common'
import { entriesSince, parentsOf, type IndexEntry } from './side-index'
import { diffNodes, emptyTree, treeFromOid, type FileDelta, type TreeNode } from './tree-state'

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
  await writeJsonAtomic(moveNoteOf(store.gitdir), { from, to: target } satisfies MoveNote)
  await applyDeltas(repo, deltas)
  noteWritten(repo, deltas)
  await writeMainRef(store.gitdir, target)
  await repo.adopt(target, commit.tree, added, kind === 'switch')
  rmSync(moveNoteOf(store.gitdir), { force: true })
  return added
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
        lstatSync(path.join(repo.workRoot, ...segmentsOf(delta.path))),
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
 * start-up recovery commit keeps it. Returns true when a move was finished.
 */
export async function finishInterruptedMove(
  gitdir: string,
  workRoot: string,
  logger?: Logger,
): Promise<boolean> {
  const file = moveNoteOf(gitdir)
  let note: MoveNote
  try {
    note = JSON.parse(readFileSync(file, 'utf8')) as MoveNote
  } catch {
    // No move was in progress (or its note was never completely written: nothing moved yet).
    rmSync(file, { force: true })
    return false
  }
  if (!isOid(note.to) || (note.from !== null && !isOid(note.from))) {
    rmSync(file, { force: true })
    return false
  }
  const store = createObjectStore(gitdir)
  try {
    const before = await treeOfCommit(store, note.from)
    const after = await treeOfCommit(store, note.to)
    const deltas = await diffNodes(store, before, after)
    const pending: FileDelta[] = []
    for (const delta of deltas) {
      const onDisk = await blobOidOnDisk(store, workRoot, delta.path)
      if (onDisk === delta.before && onDisk !== delta.after) pending.push(delta)
    }
    await applyDeltas({ store, workRoot }, pending)
    if ((await readMainRef(gitdir)) !== note.to) await writeMainRef(gitdir, note.to)
  } finally {
    store.close()
  }
  rmSync(file, { force: true })
  logger?.warn('An interrupted move of the history (a sync) was finished at start-up')
  return true
}

async function treeOfCommit(store: ObjectStore, oid: string | null): Promise<TreeNode> {
  return oid ? treeFromOid((await store.readCommit(oid)).tree) : emptyTree()
}

// The blob id of what the folder holds at `relative` (null: nothing, or not a regular file).
async function blobOidOnDisk(
  store: ObjectStore,
  workRoot: string,
  relative: string,
): Promise<string | null> {
  const file = path.join(workRoot, ...segmentsOf(relative))
  try {
    if (!(await lstat(file)).isFile()) return null
    return store.hash('blob', await readFile(file))
  } catch {
    // Missing (or unreadable): the move's "absent" side.
    return null
  }
}

function isOid(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{40}$/.test(value)
}
