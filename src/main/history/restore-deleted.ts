import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { readingVersion } from './damage'
import { segmentsOf, shownPath, toVirtual } from './paths'
import { shortOid, treeOf, versionOf } from './read'
import type { Repo } from './repo'
import {
  applyOrExplain,
  keptAsideNote,
  changeResult,
  commitNow,
  requireFilePath,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import type { IndexEntry } from './side-index'
import { listFiles, nodeAt } from './tree-state'

/**
 * Brings back a deleted file or folder: from the version just before `deletedIn` (the change
 * that removed it, as the person selected it in History), or without one from the last version
 * that had it. A file deleted twice has two such versions; the person's choice decides which
 * comes back (review hunt12-story D2).
 */
export async function restoreDeleted(
  repo: Repo,
  path: string,
  commit: Committer = commitNow(repo),
  deletedIn?: string,
): Promise<ChangeResult> {
  const relative = requireFilePath(path)
  // The index stores normalized paths: `/memories/d/` must find the commits of `/memories/d`.
  const virtual = toVirtual(relative)
  const shown = shownPath(relative)
  const segments = segmentsOf(relative)
  if (await nodeAt(repo.store, repo.root(), segments)) {
    throw new CairnError('exists', `${shown} exists; restore one of its versions instead.`)
  }
  for (const { from, removedBy } of versionsBefore(repo, virtual, deletedIn)) {
    const deltas = await readingVersion(
      from,
      async () => {
        const before = await nodeAt(repo.store, await treeOf(repo, from), segments)
        if (!before) return null
        const files = await listFiles(repo.store, before, relative)
        return [...files].map(([file, blob]) => ({ path: file, before: null, after: blob }))
      },
      true,
    )
    if (!deltas) continue
    // Its intent on disk meanwhile: a kill half-way is finished at the next open.
    const { kept, made } = await applyAndCommit(
      repo,
      deltas,
      [relative],
      {
        ...USER_INTENT,
        command: 'restore-deleted',
        subject: `restore deleted ${virtual} from ${shortOid(from)}`,
        paths: [virtual],
        restoredFrom: from,
      },
      () => readingVersion(from, () => applyOrExplain(repo, deltas), true),
      commit,
    )
    return changeResult(
      made,
      `Brought back ${shown} as of ${versionOf(repo.entry(from) ?? removedBy)}.${keptAsideNote(kept)}`,
      kept,
    )
  }
  throw new CairnError(
    'not-found',
    deletedIn
      ? `${shown} was not in memory just before that change.`
      : `No earlier version of ${shown} is in the history.`,
  )
}

/**
 * The versions to bring `virtual` back from, newest first: the one before `deletedIn` alone,
 * or the one before each change that touched it.
 */
function* versionsBefore(
  repo: Repo,
  virtual: string,
  deletedIn?: string,
): Iterable<{ readonly from: string; readonly removedBy: IndexEntry }> {
  if (deletedIn) {
    const entry = repo.entry(deletedIn)
    if (!entry) throw new CairnError('not-found', 'That change is not in the history.')
    if (entry.parent) yield { from: entry.parent, removedBy: entry }
    return
  }
  // The timeline's path filter, run on the index's file ids.
  const touches = repo.index.pathMatcher(virtual)
  for (let i = repo.index.size - 1; i >= 1; i--) {
    if (!touches(i)) continue
    const removedBy = repo.index.at(i)
    if (removedBy.parent) yield { from: removedBy.parent, removedBy }
  }
}
