import { useId, useState, type FormEvent } from 'react'
import { sameServer, sendsTokenInClear } from '../../../../shared/remote-address'
import type { SyncConfigView, SyncStatus, SyncTestResult } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import { icons } from '../../components/icons'
import { api, errorMessage, unwrap } from '../../lib/api'
import { errorTitle } from '../../lib/error-title'
import { exactTime, shortDateTime } from '../../lib/format'
import { useNow } from '../../lib/use-now'
import { KEEPS_FAILING, repeatedFailure, syncLabel } from './describe-sync'
import { useSync } from './sync-context'
import { TransferSection } from './TransferSection'
import './sync.css'

const INTERVALS: ReadonlyArray<{ readonly minutes: number; readonly label: string }> = [
  { minutes: 5, label: 'Every 5 minutes' },
  { minutes: 10, label: 'Every 10 minutes' },
  { minutes: 30, label: 'Every 30 minutes' },
  { minutes: 60, label: 'Every hour' },
  { minutes: 0, label: 'Only when memory changes' },
]

interface Draft {
  url: string
  username: string
  token: string
  machineName: string
  intervalMinutes: number
}

const draftOf = (config: SyncConfigView): Draft => ({
  url: config.url,
  username: config.username,
  token: '',
  machineName: config.machineName,
  intervalMinutes: config.intervalMinutes,
})

/** Settings → Sync and Export/Import: the sections the settings dialog shows for sync. */
export function SyncSettings() {
  const { status, loadError, retryLoad } = useSync()
  const id = useId()
  return (
    <>
      <section className="settings-section" aria-labelledby={`${id}-sync`}>
        <h3 id={`${id}-sync`}>Sync</h3>
        {loadError && (
          <Banner tone="error" title="Could not read the sync settings" onRetry={retryLoad}>
            {loadError}
          </Banner>
        )}
        {status && <SyncForm status={status} />}
      </section>
      <TransferSection />
    </>
  )
}

function SyncForm({ status }: { readonly status: SyncStatus }) {
  const { configure, syncNow, stopSync, restoreBackup } = useSync()
  const [draft, setDraft] = useState<Draft>(() => draftOf(status.config))
  const [busy, setBusy] = useState<'save' | 'test' | 'off' | 'sync' | null>(null)
  const [notice, setNotice] = useState<{ tone: 'success' | 'error'; text: string } | null>(null)
  const [test, setTest] = useState<SyncTestResult | null>(null)
  const [restoring, setRestoring] = useState<string | null>(null)
  const now = useNow()
  const id = useId()
  const on = status.config.url !== ''
  const dirty =
    draft.token.trim() !== '' ||
    JSON.stringify({ ...draft, token: '' }) !== JSON.stringify(draftOf(status.config))
  const label = syncLabel(status, now)
  // The saved token goes only to the server it was given for (main drops it when the address
  // moves to another): typed towards another server, the form asks for that server's token.
  const tokenKept = status.config.hasToken && sameServer(draft.url, status.config.url)
  const tokenLeft = status.config.hasToken && !tokenKept && draft.url.trim() !== ''
  const change = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setNotice(null)
    setTest(null)
    setDraft((d) => ({ ...d, [key]: value }))
  }

  const save = async (event: FormEvent) => {
    event.preventDefault()
    setBusy('save')
    setNotice(null)
    try {
      const saved = await configure({
        url: draft.url.trim(),
        username: draft.username.trim(),
        // Only a changed name: one saved by an older version, under older rules, never stops
        // the saving of a new token or address.
        ...(draft.machineName.trim() !== status.config.machineName
          ? { machineName: draft.machineName.trim() }
          : {}),
        intervalMinutes: draft.intervalMinutes,
        ...(draft.token.trim() ? { token: draft.token.trim() } : {}),
      })
      setDraft(draftOf(saved.config))
      setNotice({
        tone: 'success',
        text: saved.config.url ? 'Sync settings saved. Syncing now.' : 'Sync is off.',
      })
    } catch (error) {
      setNotice({ tone: 'error', text: `Sync settings were not saved. ${errorMessage(error)}` })
    } finally {
      setBusy(null)
    }
  }

  const runTest = async () => {
    setBusy('test')
    setTest(null)
    try {
      setTest(
        await unwrap(
          api().sync.test({
            url: draft.url.trim(),
            username: draft.username.trim(),
            ...(draft.token.trim() ? { token: draft.token.trim() } : {}),
          }),
        ),
      )
    } catch (error) {
      setTest({ ok: false, found: 'unreachable', message: errorMessage(error) })
    } finally {
      setBusy(null)
    }
  }

  const turnOff = async () => {
    setBusy('off')
    try {
      const saved = await configure({ url: '' })
      setDraft(draftOf(saved.config))
      setNotice({ tone: 'success', text: 'Sync is off. The token was removed from Cairn.' })
    } catch (error) {
      setNotice({ tone: 'error', text: errorMessage(error) })
    } finally {
      setBusy(null)
    }
  }

  return (
    <>
      <div className="sync-state" role="status" aria-label="Sync state" data-tone={label.tone}>
        <span className="sync-state-badge">
          {status.state === 'off' ? <icons.cloudOff /> : <icons.sync />}
          {label.text}
        </span>
        <span className="sync-state-detail">{label.detail}</span>
        {/* One button that turns into Stop while a sync runs, so focus stays on it. */}
        {on &&
          (status.state === 'syncing' ? (
            <button
              type="button"
              className="button button-small"
              onClick={() => {
                stopSync().catch((error: unknown) =>
                  setNotice({ tone: 'error', text: errorMessage(error) }),
                )
              }}
            >
              Stop sync
            </button>
          ) : (
            <button
              type="button"
              className="button button-small"
              // Not while its own earlier press is still answering: that would take focus off it.
              disabled={busy !== null && busy !== 'sync'}
              onClick={() => {
                setBusy('sync')
                syncNow()
                  .catch((error: unknown) =>
                    setNotice({ tone: 'error', text: errorMessage(error) }),
                  )
                  .finally(() => setBusy(null))
              }}
            >
              Sync now
            </button>
          ))}
      </div>
      {status.error && !status.join && (
        <Banner
          // A Stop is the person's own doing: said plainly, not as an error.
          tone={status.error.code === 'sync-stopped' ? 'info' : 'error'}
          title={status.repeated ? KEEPS_FAILING : errorTitle(status.error.code)}
          label={status.error.code === 'sync-stopped' ? 'Sync stopped' : 'Sync error'}
        >
          {repeatedFailure(status, now) ?? status.error.message}
        </Banner>
      )}
      <p className="field-help sync-intro">
        Keep memory and its history in step across your machines through a private git repository
        you own (GitHub, GitLab, Gitea, or your own server), over HTTPS.
      </p>
      <form className="sync-form" onSubmit={save} aria-label="Sync settings">
        <label className="field">
          <span className="field-label">Repository address</span>
          <input
            className="input"
            type="url"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            placeholder="https://github.com/you/memory.git"
            value={draft.url}
            onChange={(event) => change('url', event.target.value)}
          />
          {sendsTokenInClear(draft.url) && (
            <span className="field-help" data-error>
              This address is not encrypted (http): the token travels in the clear. Use https.
            </span>
          )}
        </label>
        <div className="field-grid sync-grid">
          <label className="field">
            <span className="field-label">Username</span>
            <input
              className="input"
              autoComplete="off"
              spellCheck={false}
              value={draft.username}
              onChange={(event) => change('username', event.target.value)}
            />
          </label>
          <label className="field">
            <span className="field-label">
              {tokenKept ? 'Replace the access token' : 'Access token'}
            </span>
            <input
              className="input"
              type="password"
              autoComplete="off"
              spellCheck={false}
              placeholder={
                tokenKept
                  ? 'Saved (never shown)'
                  : tokenLeft
                    ? 'The token for this address'
                    : 'A token with read and write access'
              }
              value={draft.token}
              onChange={(event) => change('token', event.target.value)}
              aria-describedby={`${id}-token`}
            />
          </label>
        </div>
        <p id={`${id}-token`} className="field-help sync-token-help">
          {tokenLeft
            ? 'The saved token is only ever sent to the server it was given for: enter the token for this address. '
            : ''}
          The token is stored encrypted by your system, like the API key, and never shown again.
        </p>
        <div className="field-grid sync-grid">
          <label className="field">
            <span className="field-label">This machine’s name</span>
            <input
              className="input"
              maxLength={100}
              placeholder={status.config.defaultMachineName}
              value={draft.machineName}
              onChange={(event) => change('machineName', event.target.value)}
            />
            <span className="field-help">Shown beside the changes this machine makes.</span>
          </label>
          <label className="field">
            <span className="field-label">Sync</span>
            <select
              className="input"
              value={draft.intervalMinutes}
              onChange={(event) => change('intervalMinutes', Number(event.target.value))}
            >
              {INTERVALS.some((i) => i.minutes === draft.intervalMinutes) ? null : (
                <option value={draft.intervalMinutes}>Every {draft.intervalMinutes} minutes</option>
              )}
              {INTERVALS.map((interval) => (
                <option key={interval.minutes} value={interval.minutes}>
                  {interval.label}
                </option>
              ))}
            </select>
            <span className="field-help">Also at start and a few seconds after each change.</span>
          </label>
        </div>
        {test && (
          <Banner
            tone={test.ok ? 'success' : 'error'}
            label="Connection test"
            onDismiss={() => setTest(null)}
          >
            {test.message}
          </Banner>
        )}
        {notice && (
          <Banner tone={notice.tone} label="Sync settings result" onDismiss={() => setNotice(null)}>
            {notice.text}
          </Banner>
        )}
        <div className="dialog-actions sync-actions">
          {on && (
            <button
              type="button"
              className="button button-ghost"
              disabled={busy !== null}
              onClick={() => void turnOff()}
            >
              Turn off sync
            </button>
          )}
          <span className="conflict-spacer" />
          <button
            type="button"
            className="button"
            disabled={busy !== null || draft.url.trim() === ''}
            onClick={() => void runTest()}
          >
            {busy === 'test' ? 'Testing…' : 'Test connection'}
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={busy !== null || !dirty || draft.url.trim() === ''}
          >
            {busy === 'save' ? 'Saving…' : on ? 'Save sync settings' : 'Turn on sync'}
          </button>
        </div>
      </form>
      {status.backupsUnreadable && (
        <div className="sync-backups">
          <h4>Memory kept aside</h4>
          <Banner tone="error" label="Memory kept aside" compact>
            {status.backupsUnreadable}
          </Banner>
        </div>
      )}
      {status.backups.length > 0 && (
        <div className="sync-backups">
          <h4>Memory kept aside</h4>
          <p className="field-help">
            Histories this machine had before it used the remote’s memory. Bringing one back joins
            it to the current memory (both kept).
          </p>
          <ul>
            {status.backups.map((backup) => (
              <li key={backup.name}>
                <span>
                  <strong title={exactTime(backup.time)}>{shortDateTime(backup.time, now)}</strong>{' '}
                  · {backup.files} {backup.files === 1 ? 'file' : 'files'}
                </span>
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => setRestoring(backup.name)}
                >
                  Bring back…
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {restoring && (
        <ConfirmDialog
          title="Bring back this memory?"
          confirmLabel="Bring it back"
          onCancel={() => setRestoring(null)}
          onConfirm={async () => {
            try {
              await restoreBackup(restoring)
              setNotice({
                tone: 'success',
                text: 'The memory kept aside is back, joined to the current one.',
              })
            } catch (error) {
              setNotice({ tone: 'error', text: errorMessage(error) })
            } finally {
              setRestoring(null)
            }
          }}
        >
          Its files join the current memory in one commit; files both hold under one name keep both
          versions for you to choose from. It can be undone from the history.
        </ConfirmDialog>
      )}
    </>
  )
}
