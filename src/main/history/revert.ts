import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { DamagedHistoryError, readingVersion } from './damage'
import { describeChange as describe, readingEarlierState, treeBefore } from './earlier-state'
import { segmentsOf, shownPath, toVirtual } from './paths'
import { momentOf, requireEntry, shortOid, treeOf } from './read'
import type { IndexEntry } from './side-index'
import type { Repo } from './repo'
import {
  applyOrExplain,
  changeResult,
  commitNow,
  keptAsideNote,
  noCopyOnDisk,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import { diffNodes, nodeAt, type FileDelta } from './tree-state'

/** How many conflicting paths a refused revert names before "…". */
const CONFLICTS_LISTED = 5

/**
 * Undoes one commit with a new commit. Refuses, changing nothing, when a file it touched
 * has changed since.
 */
export async function revert(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await readingVersion(
    oid,
    () =>
      readingEarlierState(entry, 'undo', async () =>
        diffNodes(repo.store, await treeBefore(repo, entry), await treeOf(repo, oid)),
      ),
    true,
  )
  const conflicts: string[] = []
  // A file already back as it was before the change (a deleted file brought back unchanged, an
  // edit put back by hand) has nothing to undo, as `git revert` finds: it is left alone. A file
  // the change made that is gone now stays a conflict: it may live on under another name.
  const undone = new Set<FileDelta>()
  for (const delta of deltas) {
    const current = await nodeAt(repo.store, repo.root(), segmentsOf(delta.path))
    const currentOid = current?.kind === 'blob' ? current.oid : current ? 'folder' : null
    if (currentOid === delta.after) continue
    if (current && currentOid === delta.before && !noCopyOnDisk(repo, delta.path)) {
      undone.add(delta)
    } else conflicts.push(shownPath(delta.path))
  }
  if (conflicts.length > 0) {
    const listed =
      conflicts.slice(0, CONFLICTS_LISTED).join(', ') +
      (conflicts.length > CONFLICTS_LISTED ? ', …' : '')
    throw new CairnError(
      'conflict',
      `Cannot undo that change (${describe(entry)}): ${listed} changed since. Nothing was changed; restore a version of the file instead.`,
    )
  }
  if (deltas.length === 0) {
    return { commit: null, message: `That change (${describe(entry)}) changed nothing.` }
  }
  const inverse = deltas
    .filter((delta) => !undone.has(delta))
    .map((delta) => ({ ...delta, before: delta.after, after: delta.before }))
  if (inverse.length === 0) {
    return {
      commit: null,
      message: `Memory already matches how it was before that change (${describe(entry)}); nothing to undo.`,
    }
  }
  // Its intent on disk meanwhile: a kill half-way is finished at the next open.
  const { kept, made } = await applyAndCommit(
    repo,
    inverse,
    inverse.map((delta) => delta.path),
    {
      ...USER_INTENT,
      command: 'revert',
      subject: `revert ${shortOid(oid)}: ${entry.subject}`,
      paths: inverse.map((delta) => toVirtual(delta.path)),
      restoredFrom: oid,
    },
    () =>
      readingVersion(
        oid,
        () => bringingBack(entry, inverse, () => applyOrExplain(repo, inverse, 'The undo')),
        true,
      ),
    commit,
  )
  return changeResult(
    made,
    `Undid the change of ${momentOf(entry.time)}.${keptAsideNote(kept)}`,
    kept,
  )
}

/**
 * Runs `apply` (which reads every version it brings back before it writes anything), saying in
 * plain words which file's earlier version is damaged when that is why it failed: the change
 * itself is intact, so "damaged at <this change>" would point at the wrong version.
 */
async function bringingBack<T>(
  entry: IndexEntry,
  inverse: ReadonlyArray<FileDelta>,
  apply: () => Promise<T>,
): Promise<T> {
  try {
    return await apply()
  } catch (error) {
    const lost =
      error instanceof DamagedHistoryError
        ? inverse.find((delta) => delta.after === error.oid)
        : undefined
    if (!lost) throw error
    throw new CairnError(
      'history-damaged',
      `Cannot undo that change (${describe(entry)}): the history's copy of ${shownPath(lost.path)} from before it is damaged on disk, so that version cannot be brought back. Nothing was changed.`,
    )
  }
}
