import type { CommitSummary, FileChange } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { BlameView, type BlameActions } from '../../components/BlameView'
import { Loading } from '../../components/Feedback'
import { displayPath } from '../../lib/format'
import { useBlame } from '../../lib/use-blame'

/** One file of the selected change, whole as it was after it, with each line's provenance. */
export function FileBlameView(props: {
  readonly commit: CommitSummary
  readonly change: FileChange
  readonly now: number
  readonly actions: BlameActions
}) {
  const { commit, change } = props
  const gone = change.status === 'deleted'
  const blame = useBlame(gone || change.binary ? null : change.path, commit.oid)
  return (
    <article className="hist-file" aria-label={`Blame of ${displayPath(change.path)}`}>
      <header className="hist-file-header">
        <span className="hist-file-path" title={change.path}>
          {displayPath(change.path)}
        </span>
      </header>
      {gone ? (
        <p className="hint hist-diff-note">
          This change deleted the file: it has no lines left to trace.
        </p>
      ) : change.binary ? (
        <p className="hint hist-diff-note">Binary file — it has no lines to trace.</p>
      ) : (
        <>
          {blame.error && (
            <Banner tone="error" compact onRetry={blame.reload}>
              {blame.error}
            </Banner>
          )}
          <Loading active={blame.loading && !blame.value} label="Tracing lines…" />
          {blame.value && (
            <BlameView
              path={change.path}
              lines={blame.value}
              now={props.now}
              actions={props.actions}
              current={commit.oid}
            />
          )}
        </>
      )}
    </article>
  )
}
