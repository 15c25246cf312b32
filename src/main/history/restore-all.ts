import type { ChangeResult } from '../../shared/types'
import { readingVersion } from './damage'
import { requireEntry, shortOid, treeOf, versionOf } from './read'
import type { CommitIntent, Repo } from './repo'
import {
  applyDeltas,
  changeResult,
  commitNow,
  keptAsideNote,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import { diffNodes } from './tree-state'

/** Makes the whole memory folder what it was at `oid`, in one commit. */
export async function restoreAll(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await readingVersion(
    oid,
    async () => diffNodes(repo.store, repo.root(), await treeOf(repo, oid)),
    true,
  )
  if (deltas.length === 0) {
    return {
      commit: null,
      message: `The memory folder already matches ${versionOf(entry)}.`,
    }
  }
  const intent: CommitIntent = {
    ...USER_INTENT,
    command: 'restore-all',
    subject: `restore all memories to ${shortOid(oid)}`,
    restoredFrom: oid,
  }
  // Durable before the first file changes: a kill half-way is finished at the next open.
  const { kept, made } = await applyAndCommit(
    repo,
    deltas,
    deltas.map((delta) => delta.path),
    intent,
    () => readingVersion(oid, () => applyDeltas(repo, deltas), true),
    commit,
  )
  return changeResult(
    made,
    `Restored the memory folder to ${versionOf(entry)}.${keptAsideNote(kept)}`,
    kept,
  )
}
