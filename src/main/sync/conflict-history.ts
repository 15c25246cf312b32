/**
 * Conflicts read back from history. A merge records its conflicts in `Conflict:` trailers;
 * `sync/state.json` only caches them, and is written after the merge moved `main` (and was
 * pushed). A kill or a full disk in between must not lose them on the machine that merged,
 * while the other machine learns them from the same trailers.
 */
import { parseCommitMessage, type HistoryGit } from '../history'
import { conflictsOfMessage, settledOfMessage } from './engine'
import { commitFiles } from './file-map'
import { detectRenames, followFolders } from './renames'
import type { ConflictRecord } from './store'
import { appendAll } from '../lib/arrays'

/**
 * Commits read at most. The merge that went unrecorded is the newest commit or close to it
 * (only commits made after it stand above), and the walk starts there; the bound keeps a
 * first sync of a long history (nothing recorded yet) from reading all of it at each start.
 */
const MAX_COMMITS = 2_000

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
  const settled = new Set<string>()
  const seen = new Set<string>()
  const stack = [head]
  while (stack.length > 0 && seen.size < MAX_COMMITS) {
    const oid = stack.pop() as string
    if (seen.has(oid) || history.position(oid) <= floor) continue
    seen.add(oid)
    const commit = await history.objects.readCommit(oid)
    stack.push(...commit.parents)
    const { command } = parseCommitMessage(commit, commit.message)
    // Newest first: a conflict a later choice settled without changing a file stays closed.
    if (command === 'resolve')
      for (const path of settledOfMessage(commit.message)) settled.add(path)
    if (command === 'merge' || command === 'import') {
      const raised = conflictsOfMessage(commit.message, oid)
      appendAll(
        records,
        raised.filter((record) => !settled.has(record.path)),
      )
    }
  }
  return records
}

/**
 * The record with its paths where the files went since the merge that raised it, when they
 * were renamed (by Claude, the person or an editor; a file or its folder); null when a path
 * is gone for another reason. A conflict travels with its file: the markers do.
 */
export async function followRenames(
  objects: HistoryGit['objects'],
  record: ConflictRecord,
  head: string,
): Promise<ConflictRecord | null> {
  const [before, now] = await Promise.all([
    commitFiles(objects, record.foundAt ?? record.since),
    commitFiles(objects, head),
  ])
  const renames = await detectRenames(before, now, (oid) => objects.readBlob(oid))
  const where = (virtual: string): string | null => {
    const relative = virtual.slice(MEMORIES.length)
    if (now.has(relative)) return virtual
    const moved = renames.files.get(relative) ?? followFolders(relative, renames.folders)
    return now.has(moved) ? `${MEMORIES}${moved}` : null
  }
  const path = where(record.path)
  const otherPath = record.otherPath === undefined ? undefined : where(record.otherPath)
  if (!path || otherPath === null) return null
  if (path === record.path && otherPath === record.otherPath) return null
  const found = { ...record, path, foundAt: head }
  return otherPath === undefined ? found : { ...found, otherPath }
}

const MEMORIES = '/memories/'
