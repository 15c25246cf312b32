/**
 * A restore the person asked for in History: what it is, the words of its confirmation, and
 * the call that performs it. Shared by the views that offer restores and the pane that runs
 * them. Versions are named by their time and what they were, never by a commit id.
 */
import type { ApiResult, ChangeResult, CommitSummary } from '../../../../shared/types'
import { api } from '../../lib/api'
import { knownSummary } from '../../lib/commit-summaries'
import { sentence } from '../../lib/commit-words'
import { displayPath, shortDateTime } from '../../lib/format'
import { asideNameOf } from '../../lib/kept-aside'

/** One restore, as a button asked for it (before the person confirms). */
export type RestoreRequest =
  | { readonly kind: 'file'; readonly path: string; readonly commit: CommitSummary }
  | { readonly kind: 'deleted'; readonly path: string; readonly commit: CommitSummary }
  | { readonly kind: 'revert'; readonly commit: CommitSummary }
  | { readonly kind: 'all'; readonly commit: CommitSummary }

/** "the change of 3 Nov, 14:02 (“Claude edited notes.md”)". */
function changeOf(commit: CommitSummary, now: number, thisMachine: string | null): string {
  const said = sentence(commit, knownSummary(commit.restoredFrom) ?? null, now, {
    thisMachine,
    joined: knownSummary(commit.otherParents?.[0]) ?? null,
  })
  return `the change of ${shortDateTime(commit.time, now)} (“${said}”)`
}

/** The confirmation text for a restore: exactly what will happen, and that it can be undone. */
export function describeRequest(
  request: RestoreRequest,
  now = Date.now(),
  thisMachine: string | null = null,
): {
  readonly title: string
  readonly body: ReadonlyArray<string>
  readonly confirm: string
} {
  const undo = 'Nothing is lost: this is saved as a new change in History, and you can undo it.'
  const change = changeOf(request.commit, now, thisMachine)
  switch (request.kind) {
    case 'file':
      return {
        title: `Restore ${displayPath(request.path)} to this version?`,
        body: [
          `${displayPath(request.path)} will get back the content it had right after ${change}. Its current content is replaced, unless History has no copy of it (too large to version, or changed outside Cairn since): then it is kept beside it as “${asideNameOf(request.path, false, true)}”, or as “${asideNameOf(request.path, true, true)}” if Cairn may not read it.`,
          undo,
        ],
        confirm: 'Restore file',
      }
    case 'deleted':
      return {
        title: `Bring back ${displayPath(request.path)}?`,
        body: [
          `${displayPath(request.path)} is recreated with the content it had just before ${change}.`,
          undo,
        ],
        confirm: 'Bring back',
      }
    case 'revert':
      return {
        title: 'Revert this change?',
        body: [
          `Cairn applies the opposite of ${change}. If those files have changed since, nothing is touched and you will be told why.`,
          undo,
        ],
        confirm: 'Revert change',
      }
    case 'all':
      return {
        title: 'Restore all memory to this point?',
        body: [
          `Every memory file is put back exactly as it was right after ${change}: files added since are removed, changed files get their earlier content, deleted files come back. A file History has no copy of is kept beside its place as “<name> (not in history)”, or as “<name> (unreadable)” if Cairn may not read it.`,
          undo,
        ],
        confirm: 'Restore all memory',
      }
  }
}

/** Starts the restore a confirmed request asks for; returns it with the notice it earns. */
export function startRestore(
  req: RestoreRequest,
  now = Date.now(),
  thisMachine: string | null = null,
): [Promise<ApiResult<ChangeResult>>, string] {
  const { oid, time } = req.commit
  const when = shortDateTime(time, now)
  switch (req.kind) {
    case 'file':
      return [
        api().history.restoreFile({ path: req.path, oid }),
        `Restored ${displayPath(req.path)} to its version of ${when}.`,
      ]
    case 'deleted':
      return [
        // The selected deletion names the version: a file deleted twice comes back as this
        // deletion removed it, not as the newest one did (review hunt12-story D2).
        api().history.restoreDeleted({ path: req.path, oid }),
        `Brought back ${displayPath(req.path)} as it was just before the change of ${when}.`,
      ]
    case 'revert':
      return [api().history.revert({ oid }), `Undid ${changeOf(req.commit, now, thisMachine)}.`]
    case 'all':
      return [api().history.restoreAll({ oid }), `Restored all memory to how it was on ${when}.`]
  }
}
