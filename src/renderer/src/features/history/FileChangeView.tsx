import { useState } from 'react'
import type { CommitSummary, FileChange } from '../../../../shared/types'
import { Loading } from '../../components/Feedback'
import { api, unwrap } from '../../lib/api'
import type { RestoreRequest } from './restore-request'
import { displayPath, visibleName } from '../../lib/format'
import { DiffStat, DiffView, type DiffMode } from '../../components/DiffView'
import { loadFailure, loadOmittedChange, type HistoryReader } from './omitted-change'

const STATUS_LABEL: Readonly<Record<FileChange['status'], string>> = {
  added: 'Added',
  modified: 'Modified',
  deleted: 'Deleted',
  renamed: 'Renamed',
  unchanged: 'Unchanged',
}

const historyReader: HistoryReader = {
  diff: (path, from, to) => unwrap(api().history.diff({ path, from, to })),
  readAt: (path, oid) => unwrap(api().history.readAt({ path, oid })),
}

type Loaded =
  | { readonly state: 'idle' | 'loading' }
  | { readonly state: 'failed'; readonly message: string; readonly retry: boolean }
  | { readonly state: 'done'; readonly change: FileChange }

/**
 * One file of the selected change: its header with the restore action, and its diff. A file
 * whose text the core left out (a very large change) shows a "Load diff" button instead.
 */
export function FileChangeView(props: {
  readonly commit: CommitSummary
  readonly change: FileChange
  readonly mode: DiffMode
  /** Side by side: wrap long lines instead of scrolling sideways. */
  readonly wrap?: boolean
  readonly onRequest: (request: RestoreRequest) => void
}) {
  const { commit, mode } = props
  const [loaded, setLoaded] = useState<Loaded>({ state: 'idle' })
  const change = loaded.state === 'done' ? loaded.change : props.change
  const load = async () => {
    setLoaded({ state: 'loading' })
    try {
      setLoaded({
        state: 'done',
        change: await loadOmittedChange(historyReader, commit, props.change),
      })
    } catch (error) {
      setLoaded({ state: 'failed', ...loadFailure(error) })
    }
  }
  return (
    <article className="hist-file" aria-label={`Diff of ${displayPath(change.path)}`}>
      <header className="hist-file-header">
        <span className={`hist-status hist-status-${change.status}`}>
          {STATUS_LABEL[change.status]}
        </span>
        <span className="hist-file-path" title={visibleName(change.path)}>
          {change.oldPath && change.oldPath !== change.path
            ? `${displayPath(change.oldPath)} → ${displayPath(change.path)}`
            : displayPath(change.path)}
        </span>
        {!change.omitted && <DiffStat change={change} />}
        {change.status === 'deleted' ? (
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onRequest({ kind: 'deleted', path: change.path, commit })}
          >
            Bring back this file
          </button>
        ) : (
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onRequest({ kind: 'file', path: change.path, commit })}
          >
            Restore this version
          </button>
        )}
      </header>
      {change.omitted ? (
        <div className="hist-omitted">
          <p className="hint view-note">
            {loaded.state === 'failed'
              ? loaded.message
              : 'This change is large, so its diff was not loaded with the others.'}
          </p>
          {(loaded.state !== 'failed' || loaded.retry) && (
            <button
              type="button"
              className="button button-small"
              disabled={loaded.state === 'loading'}
              onClick={() => void load()}
            >
              {loaded.state === 'failed' ? 'Try again' : 'Load diff'}
            </button>
          )}
          <Loading active={loaded.state === 'loading'} label="Loading diff…" />
        </div>
      ) : (
        <DiffView change={change} mode={mode} wrap={props.wrap} />
      )}
    </article>
  )
}
