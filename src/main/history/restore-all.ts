import type { ChangeResult } from '../../shared/types'
import { requireEntry, shortOid, treeOf, versionOf } from './read'
import type { CommitIntent, Repo } from './repo'
import { applyDeltas, changeResult, USER_INTENT } from './restore-common'
import { diffNodes } from './tree-state'

/** Makes the whole memory folder what it was at `oid`, in one commit. */
export async function restoreAll(repo: Repo, oid: string): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await diffNodes(repo.store, repo.root(), await treeOf(repo, oid))
  if (deltas.length === 0) {
    return {
      commit: null,
      message: `The memory folder already matches ${versionOf(entry)}.`,
    }
  }
  await applyDeltas(repo, deltas)
  const intent: CommitIntent = {
    ...USER_INTENT,
    command: 'restore-all',
    subject: `restore all memories to ${shortOid(oid)}`,
    restoredFrom: oid,
  }
  return changeResult(
    await repo.commit(
      deltas.map((delta) => delta.path),
      intent,
    ),
    `Restored the memory folder to ${versionOf(entry)}.`,
  )
}
