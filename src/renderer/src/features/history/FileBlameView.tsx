import { useState } from 'react'
import type { CommitSummary, FileChange } from '../../../../shared/types'
import { LoadedBlame, type BlameActions } from '../../components/BlameView'
import { displayPath, visibleName } from '../../lib/format'

/** One file of the selected change, whole as it was after it, with each line's provenance. */
export function FileBlameView(props: {
  readonly commit: CommitSummary
  readonly change: FileChange
  readonly now: number
  readonly actions: BlameActions
}) {
  const { commit, change } = props
  const gone = change.status === 'deleted'
  // A file the change's answer left out is large: traced only when asked, like its diff.
  const [asked, setAsked] = useState(false)
  return (
    <article className="hist-file" aria-label={`Blame of ${displayPath(change.path)}`}>
      <header className="hist-file-header">
        <span className="hist-file-path" title={visibleName(change.path)}>
          {displayPath(change.path)}
        </span>
      </header>
      {gone ? (
        <p className="hint view-note">
          This change deleted the file: it has no lines left to trace.
        </p>
      ) : change.binary ? (
        <p className="hint view-note">Binary file — it has no lines to trace.</p>
      ) : change.omitted && !asked ? (
        <div className="hist-omitted">
          <p className="hint view-note">
            This file is large, so its lines were not traced with the others.
          </p>
          <button type="button" className="button button-small" onClick={() => setAsked(true)}>
            Trace its lines
          </button>
        </div>
      ) : (
        <LoadedBlame path={change.path} at={commit.oid} now={props.now} actions={props.actions} />
      )}
    </article>
  )
}
