import { icons } from '../../components/icons'
import { useNavigation } from '../../lib/navigation'
import { useNow } from '../../lib/use-now'
import { syncLabel } from './describe-sync'
import { useSync } from './sync-context'
import './sync.css'

/**
 * The sidebar's sync line: how memory stands with the remote, one click from what needs the
 * person (the conflicts, the join question, or Settings), and "Sync now" beside it ("Stop
 * sync" while one runs).
 */
export function SyncIndicator() {
  const { status, openDialog, syncNow, stopSync } = useSync()
  const { openSettings } = useNavigation()
  const now = useNow()
  if (!status || (status.state === 'off' && status.conflicts.length === 0)) return null
  const label = syncLabel(status, now)
  const open = () => {
    if (status.join) openDialog('join')
    else if (status.conflicts.length > 0) openDialog('conflicts')
    else openSettings(true)
  }
  const Icon =
    label.tone === 'error' ? icons.cloudOff : label.tone === 'attention' ? icons.merge : icons.sync
  return (
    <div className="sync-indicator" role="status" aria-label="Sync status" data-tone={label.tone}>
      <button
        type="button"
        className="sync-indicator-main"
        title={label.detail}
        onClick={open}
        aria-describedby="sync-indicator-detail"
      >
        <Icon className={status.state === 'syncing' ? 'sync-spin' : undefined} />
        <span className="sync-indicator-text">{label.text}</span>
      </button>
      <span id="sync-indicator-detail" hidden>
        {label.detail}
      </span>
      {status.state === 'syncing' ? (
        <button
          type="button"
          className="icon-button sync-now"
          aria-label="Stop sync"
          title="Stop sync"
          onClick={() => {
            stopSync().catch(() => undefined)
          }}
        >
          <icons.stop />
        </button>
      ) : (
        status.state !== 'off' && (
          <button
            type="button"
            className="icon-button sync-now"
            aria-label="Sync now"
            title="Sync now"
            onClick={() => {
              syncNow().catch(() => undefined)
            }}
          >
            <icons.sync />
          </button>
        )
      )}
    </div>
  )
}
