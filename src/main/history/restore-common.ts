/** What the four restore operations share: their author, how they write, what they answer. */
import type { ChangeResult, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { toRelative } from './paths'
import { toSummary } from './queries'
import type { Repo } from './repo'
import type { IndexEntry } from './side-index'
import type { FileDelta } from './tree-state'
import { deleteFileAndPrune, writeFileSafely } from './work-tree'

/** The facts every restore commit shares: made by the user, outside any conversation. */
export const USER_INTENT = {
  actor: 'user',
  conversationId: null,
  toolUseId: null,
  overwrite: false,
} as const

/**
 * Makes the folder match `deltas`' after side. Deletions first, so that a file and a folder
 * of the same name can trade places.
 */
export async function applyDeltas(
  repo: Pick<Repo, 'store' | 'workRoot'>,
  deltas: ReadonlyArray<FileDelta>,
): Promise<void> {
  for (const delta of deltas) {
    if (delta.after === null) await deleteFileAndPrune(repo.workRoot, delta.path)
  }
  for (const delta of deltas) {
    if (delta.after !== null) {
      await writeFileSafely(repo.workRoot, delta.path, await repo.store.readBlob(delta.after))
    }
  }
}

/** The answer of a restore: its commit and `message`, or "Nothing changed." without one. */
export function changeResult(entry: IndexEntry | null, message: string): ChangeResult {
  const commit: CommitSummary | null = entry ? toSummary(entry) : null
  return { commit, message: commit ? message : 'Nothing changed.' }
}

/** The relative path of a file or folder a restore names (never the memory root itself). */
export function requireFilePath(virtual: string): string {
  const relative = toRelative(virtual)
  if (relative === '') {
    throw new CairnError('invalid-path', 'Choose a file or folder inside /memories.')
  }
  return relative
}
