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
  const kept = await readingVersion(oid, () => applyDeltas(repo, deltas), true)
  const intent: CommitIntent = {
    ...USER_INTENT,
    command: 'restore-all',
    subject: `restore all memories to ${shortOid(oid)}`,
    restoredFrom: oid,
  }
  return changeResult(
    await commit(
      deltas.map((delta) => delta.path),
      intent,
    ),
    `Restored the memory folder to ${versionOf(entry)}.${keptAsideNote(kept)}`,
  )
}
