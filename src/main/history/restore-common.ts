/** What the four restore operations share: their author, how they write, what they answer. */
import type { ChangeResult, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { FolderTree } from '../lib/folders'
import { DamagedHistoryError } from './damage'
import { toRelative } from './paths'
import { toSummary } from './queries'
import type { CommitIntent, Repo } from './repo'
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
 * Commits what a restore wrote. Returns the new entry, null when nothing changed, or
 * `'pending'` when the files were written but their commit has to wait (a full disk): it is
 * made, with this intent, before the next change.
 */
export type Committer = (
  paths: ReadonlyArray<string>,
  intent: CommitIntent,
) => Promise<IndexEntry | null | 'pending'>

/** Commits at once, failing the restore when the commit fails. */
export function commitNow(repo: Repo): Committer {
  return (paths, intent) => repo.commit(paths, intent)
}

/**
 * Makes the folder match `deltas`' after side: all or nothing. Every blob is read before the
 * folder is touched (a damaged one refuses the restore, changing nothing); a write that fails
 * half-way puts back what was already changed. Deletions go first, so that a file and a
 * folder of the same name can trade places.
 */
export async function applyDeltas(
  repo: Pick<Repo, 'store' | 'workRoot'>,
  deltas: ReadonlyArray<FileDelta>,
): Promise<void> {
  const contents = new Map<string, Uint8Array>()
  for (const delta of deltas) {
    if (delta.after !== null && !contents.has(delta.after)) {
      contents.set(delta.after, await repo.store.readBlob(delta.after))
    }
  }
  // What is there now, to put back on failure (a damaged copy only means it cannot be).
  for (const delta of deltas) {
    if (delta.before === null || contents.has(delta.before)) continue
    try {
      contents.set(delta.before, await repo.store.readBlob(delta.before))
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
    }
  }
  const ordered = [
    ...deltas.filter((delta) => delta.after === null),
    ...deltas.filter((delta) => delta.after !== null),
  ]
  await inWorkTree(repo, async (tree) => {
    const done: FileDelta[] = []
    try {
      for (const delta of ordered) {
        done.push(delta)
        if (delta.after === null) deleteFileAndPrune(tree, delta.path)
        else await writeFileSafely(tree, delta.path, contents.get(delta.after)!)
      }
    } catch (error) {
      await putBack(tree, done, contents)
      throw error
    }
  })
}

// Best effort: what cannot be put back is saved by the next change's full rescan.
async function putBack(
  tree: FolderTree,
  done: ReadonlyArray<FileDelta>,
  contents: ReadonlyMap<string, Uint8Array>,
): Promise<void> {
  for (const delta of [...done].reverse()) {
    try {
      const before = delta.before === null ? null : contents.get(delta.before)
      if (before === undefined) continue
      if (before === null) deleteFileAndPrune(tree, delta.path)
      else await writeFileSafely(tree, delta.path, before)
    } catch {
      // Keep putting back the others.
    }
  }
}

/** Runs `task` with the memory folder's folders opened for it (one restore's writes). */
export async function inWorkTree<T>(
  repo: Pick<Repo, 'workRoot'>,
  task: (tree: FolderTree) => Promise<T>,
): Promise<T> {
  const tree = new FolderTree(repo.workRoot)
  try {
    return await task(tree)
  } finally {
    tree.close()
  }
}

/**
 * The answer of a restore: its commit and `message`, "Nothing changed." without one, or the
 * message with a note when its commit is owed (`'pending'`).
 */
export function changeResult(entry: IndexEntry | null | 'pending', message: string): ChangeResult {
  if (entry === 'pending') {
    return { commit: null, message: `${message} It will appear in History with the next change.` }
  }
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
