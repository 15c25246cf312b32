/**
 * A restore the person asked for in History: what it is, the words of its confirmation, and
 * the call that performs it. Shared by the views that offer restores and the pane that runs them.
 */
import type { ApiResult, ChangeResult, CommitSummary } from '../../../../shared/types'
import { api } from '../../lib/api'
import { absoluteTime, displayPath } from '../../lib/format'
import { shortOid } from './describe'

/** One restore, as a button asked for it (before the person confirms). */
export type RestoreRequest =
  | { readonly kind: 'file'; readonly path: string; readonly commit: CommitSummary }
  | { readonly kind: 'deleted'; readonly path: string; readonly commit: CommitSummary }
  | { readonly kind: 'revert'; readonly commit: CommitSummary }
  | { readonly kind: 'all'; readonly commit: CommitSummary }

/** The confirmation text for a restore: exactly what will happen, and that it can be undone. */
export function describeRequest(request: RestoreRequest): {
  readonly title: string
  readonly body: ReadonlyArray<string>
  readonly confirm: string
} {
  const at = `${shortOid(request.commit.oid)} (${absoluteTime(request.commit.time)})`
  const undo = 'Nothing is lost: this is saved as a new change in History, and you can undo it.'
  switch (request.kind) {
    case 'file':
      return {
        title: `Restore ${displayPath(request.path)} to this version?`,
        body: [
          `${request.path} will get back the content it had right after change ${at}. Its current content is replaced.`,
          undo,
        ],
        confirm: 'Restore file',
      }
    case 'deleted':
      return {
        title: `Bring back ${displayPath(request.path)}?`,
        body: [
          `${request.path} is recreated with the content it had just before it was deleted.`,
          undo,
        ],
        confirm: 'Bring back',
      }
    case 'revert':
      return {
        title: 'Revert this change?',
        body: [
          `Cairn applies the opposite of change ${at} (“${request.commit.subject}”). If those files have changed since, nothing is touched and you will be told why.`,
          undo,
        ],
        confirm: 'Revert change',
      }
    case 'all':
      return {
        title: 'Restore all memory to this point?',
        body: [
          `Every memory file is put back exactly as it was right after change ${at}: files added since are removed, changed files get their earlier content, deleted files come back.`,
          undo,
        ],
        confirm: 'Restore all memory',
      }
  }
}

/** Starts the restore a confirmed request asks for; returns it with the notice it earns. */
export function startRestore(req: RestoreRequest): [Promise<ApiResult<ChangeResult>>, string] {
  const { oid } = req.commit
  switch (req.kind) {
    case 'file':
      return [
        api().history.restoreFile({ path: req.path, oid }),
        `Restored ${displayPath(req.path)} to its version from ${shortOid(oid)}.`,
      ]
    case 'deleted':
      return [
        api().history.restoreDeleted({ path: req.path }),
        `Brought back ${displayPath(req.path)}.`,
      ]
    case 'revert':
      return [api().history.revert({ oid }), `Reverted ${shortOid(oid)}.`]
    case 'all':
      return [api().history.restoreAll({ oid }), `Restored all memory to ${shortOid(oid)}.`]
  }
}
