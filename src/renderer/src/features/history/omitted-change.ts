import type { CommitDetail, CommitSummary, FileChange } from '../../../../shared/types'
import { ApiError, errorMessage } from '../../lib/api'

/** The `window.api.history` calls an omitted file's diff needs (a subset, for testing). */
export interface HistoryReader {
  diff(path: string, from: string, to: string): Promise<FileChange>
  readAt(path: string, oid: string): Promise<string | null>
}

/**
 * Fetches the full text of a change `history:show` left out. A plain change compares the
 * commit with its parent (`history:diff`); a rename or a first commit, which that cannot
 * express, reads both sides (`history:readAt`). Keeps the change's status and paths.
 */
export async function loadOmittedChange(
  reader: HistoryReader,
  commit: CommitSummary,
  change: FileChange,
): Promise<FileChange> {
  if (commit.parent && change.status !== 'renamed') {
    const full = await reader.diff(change.path, commit.parent, commit.oid)
    return {
      ...change,
      before: full.before,
      after: full.after,
      binary: full.binary,
      omitted: false,
    }
  }
  const beforePath = change.oldPath ?? change.path
  // An earlier copy the history holds damaged cannot be read: the version is shown whole.
  const before =
    commit.parent && change.status !== 'added' && !change.beforeDamaged
      ? await reader.readAt(beforePath, commit.parent)
      : null
  const after = change.status === 'deleted' ? null : await reader.readAt(change.path, commit.oid)
  return { ...change, before, after, omitted: false }
}

/**
 * What to say when "Load diff" failed, and whether trying again can help: a version too large
 * to show (the core's `too-large`, in plain words) stays too large, so it is said as it is.
 */
export function loadFailure(error: unknown): { readonly message: string; readonly retry: boolean } {
  if (error instanceof ApiError && error.code === 'too-large') {
    return { message: error.message, retry: false }
  }
  return { message: `Could not load this diff: ${errorMessage(error)}`, retry: true }
}

/** "Showing 100 of 3,412 changed files", or null when the commit was sent whole. */
export function truncationNote(detail: CommitDetail): string | null {
  if (!detail.truncated) return null
  const count = (n: number) => n.toLocaleString('en-US')
  return `Showing ${count(detail.changes.length)} of ${count(detail.totalChanges)} changed files`
}
