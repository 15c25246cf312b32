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
import { recordRestore } from './restore-intent'
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
  const recorded = await recordRestore(repo, deltas, intent)
  let kept
  try {
    kept = await readingVersion(oid, () => applyDeltas(repo, deltas), true)
  } catch (error) {
    // Everything was put back (applyDeltas): there is nothing to finish.
    recorded.done()
    throw error
  }
  let made
  try {
    made = await commit(
      deltas.map((delta) => delta.path),
      intent,
    )
  } catch (error) {
    // The files are written; the next change saves them (the intent would no longer match).
    recorded.done()
    throw error
  }
  // A commit owed (a full disk) keeps the intent: if Cairn is killed before it is made, the
  // next open makes it, as this restore's.
  if (made !== 'pending') recorded.done()
  return changeResult(
    made,
    `Restored the memory folder to ${versionOf(entry)}.${keptAsideNote(kept)}`,
  )
}
