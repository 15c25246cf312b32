import type { ReactNode } from 'react'
import type { CommitDetail } from '../../../../shared/types'
import { absoluteTime } from '../../lib/format'
import { otherMachine } from '../../lib/use-this-machine'
import { CommitBadges, FlagList } from './CommitBadges'
import { actorLabel, commandLabel, restoreNote, shortOid } from './describe'
import { SplitIcon, UnifiedIcon } from '../../components/icons'
import type { DiffMode } from './DiffView'
import { FileChangeView } from './FileChangeView'
import { truncationNote } from './omitted-change'
import type { RestoreRequest } from './restore-request'

const DIFF_MODES: ReadonlyArray<{
  readonly value: DiffMode
  readonly label: string
  readonly title: string
  readonly Icon: () => ReactNode
}> = [
  { value: 'unified', label: 'Unified', title: 'Unified diff', Icon: UnifiedIcon },
  { value: 'split', label: 'Side by side', title: 'Side-by-side diff', Icon: SplitIcon },
]

/** The selected commit: who/what/when, the restore actions, and each file's diff. */
export function CommitDetailView(props: {
  readonly detail: CommitDetail
  readonly mode: DiffMode
  readonly onModeChange: (mode: DiffMode) => void
  readonly conversationTitle: (id: string) => string
  readonly onOpenConversation: (id: string) => void
  readonly onSelectOid: (oid: string) => void
  readonly onRequest: (request: RestoreRequest) => void
  /** This machine's name: a change made on another machine says where it came from. */
  readonly thisMachine: string | null
  /** Saves the memory as it was at this change, as a ZIP. */
  readonly onExport: (oid: string) => void
}) {
  const { detail, mode } = props
  const { commit } = detail
  const note = restoreNote(commit)
  const truncated = truncationNote(detail)
  const machine = otherMachine(commit, props.thisMachine)
  // A conversation held on another machine cannot be opened here.
  const conversationId = machine ? null : commit.conversationId
  const joined = commit.otherParents?.[0] ?? null
  const canRevert = commit.parent !== null && commit.command !== 'init'
  return (
    <section className="hist-detail" aria-label="Change details">
      <header className="hist-detail-header">
        <h2 className="hist-detail-title">
          <span className={`hist-actor hist-actor-${commit.actor}`}>
            {actorLabel(commit.actor)}
          </span>
          <span>{commit.subject}</span>
          {commit.overwrite && <span className="hist-badge hist-badge-overwrite">Overwrite</span>}
          <CommitBadges commit={commit} />
        </h2>
        <p className="hist-detail-meta">
          <span>{absoluteTime(commit.time)}</span>
          <span className="hist-oid" title={commit.oid}>
            {shortOid(commit.oid)}
          </span>
          <span>{commandLabel(commit.command)}</span>
          {machine && <span className="hist-badge hist-badge-machine">Made on {machine}</span>}
          {joined && (
            <button type="button" className="hist-link" onClick={() => props.onSelectOid(joined)}>
              Joins {shortOid(joined)}
            </button>
          )}
          {conversationId && (
            <button
              type="button"
              className="hist-link"
              onClick={() => props.onOpenConversation(conversationId)}
            >
              From: {props.conversationTitle(conversationId)}
            </button>
          )}
          {note && commit.restoredFrom && (
            <button
              type="button"
              className="hist-link"
              onClick={() => props.onSelectOid(commit.restoredFrom!)}
            >
              {note}
            </button>
          )}
        </p>
        {commit.overwrite && (
          <p className="hist-overwrite-note">
            Claude replaced an existing file with new content. Use “Restore this version” on the
            change before it to get the earlier content back.
          </p>
        )}
        <FlagList commit={commit} />
        <div className="hist-actions" role="toolbar" aria-label="Change actions">
          {canRevert && (
            <button
              type="button"
              className="button button-small"
              onClick={() => props.onRequest({ kind: 'revert', commit })}
            >
              Revert this change
            </button>
          )}
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onRequest({ kind: 'all', commit })}
          >
            Restore all memory to this point
          </button>
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onExport(commit.oid)}
          >
            Export this version (.zip)
          </button>
          <div className="hist-mode" role="group" aria-label="Diff layout">
            {DIFF_MODES.map(({ value, label, title, Icon }) => (
              <button
                key={value}
                type="button"
                className="button button-small button-icon"
                aria-label={label}
                title={title}
                aria-pressed={mode === value}
                onClick={() => props.onModeChange(value)}
              >
                <Icon />
              </button>
            ))}
          </div>
        </div>
      </header>
      <div className="hist-files">
        {truncated && (
          <p className="hist-truncated" role="note" aria-label="Files shown">
            {truncated}. Filter the timeline by file to see a change to one of the others.
          </p>
        )}
        {detail.changes.length === 0 && (
          <p className="hint hist-diff-note">This change did not modify any file.</p>
        )}
        {detail.changes.map((change) => (
          <FileChangeView
            key={`${commit.oid}:${change.path}`}
            commit={commit}
            change={change}
            mode={mode}
            onRequest={props.onRequest}
          />
        ))}
      </div>
    </section>
  )
}
