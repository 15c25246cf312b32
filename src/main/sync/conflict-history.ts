/**
 * Conflicts read back from history. A merge records its conflicts in `Conflict:` trailers;
 * `sync/state.json` only caches them, and is written after the merge moved `main` (and was
 * pushed). A kill or a full disk in between must not lose them on the machine that merged,
 * while the other machine learns them from the same trailers.
 */
import { parseCommitMessage, type HistoryGit } from '../history'
import { conflictsOfMessage } from './engine'
import type { ConflictRecord } from './store'

/** Commits read at most when nothing was recorded yet (a first sync reads the whole history). */
const MAX_COMMITS = 10_000

/**
 * The conflicts merge and import commits recorded since `since` (exclusive; null: from the
 * start), newest merge first. Whether their files still hold conflict blocks is for the
 * caller to check (a settled conflict is simply dropped when viewed).
 */
export async function conflictsSince(
  history: Pick<HistoryGit, 'head' | 'position' | 'objects'>,
  since: string | null,
): Promise<ConflictRecord[]> {
  const head = history.head()
  if (!head || head === since) return []
  const floor = since ? history.position(since) : -1
  const records: ConflictRecord[] = []
  const seen = new Set<string>()
  const stack = [head]
  while (stack.length > 0 && seen.size < MAX_COMMITS) {
    const oid = stack.pop() as string
    if (seen.has(oid) || history.position(oid) <= floor) continue
    seen.add(oid)
    const commit = await history.objects.readCommit(oid)
    stack.push(...commit.parents)
    const { command } = parseCommitMessage(commit.authorName, commit.message)
    if (command === 'merge' || command === 'import') {
      records.push(...conflictsOfMessage(commit.message, oid))
    }
  }
  return records
}
