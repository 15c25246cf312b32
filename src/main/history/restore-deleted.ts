import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { readingVersion } from './damage'
import { segmentsOf, toVirtual } from './paths'
import { shortOid, treeOf, versionOf } from './read'
import type { Repo } from './repo'
import {
  applyDeltas,
  keptAsideNote,
  changeResult,
  commitNow,
  requireFilePath,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import { listFiles, nodeAt } from './tree-state'

/** Brings back a deleted file or folder from the last version that had it. */
export async function restoreDeleted(
  repo: Repo,
  path: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const relative = requireFilePath(path)
  // The index stores normalized paths: `/memories/d/` must find the commits of `/memories/d`.
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  if (await nodeAt(repo.store, repo.root(), segments)) {
    throw new CairnError('exists', `${virtual} exists; restore one of its versions instead.`)
  }
  // The timeline's path filter, run on the index's file ids.
  const touches = repo.index.pathMatcher(virtual)
  for (let i = repo.index.size - 1; i >= 1; i--) {
    if (!touches(i)) continue
    const from = repo.index.at(i).parent
    if (!from) continue
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
      () => readingVersion(from, () => applyDeltas(repo, deltas), true),
      commit,
    )
    return changeResult(
      made,
      `Brought back ${virtual} as of ${versionOf(repo.entry(from) ?? repo.index.at(i))}.${keptAsideNote(kept)}`,
      kept,
    )
  }
  throw new CairnError('not-found', `No earlier version of ${virtual} is in the history.`)
}
