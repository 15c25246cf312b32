import { useState } from 'react'
import { Banner } from '../../components/Banner'
import { errorMessage } from '../../lib/api'
import { useSync } from './sync-context'
import { SyncModal } from './SyncModal'

function files(count: number): string {
  return `${count} ${count === 1 ? 'file' : 'files'}`
}

/**
 * The question asked before two memories meet: the remote holds another machine's memory
 * (or a rewritten history). Nothing happens until the person picks one of the two answers.
 */
export function JoinDialog() {
  const { status, openDialog, join } = useSync()
  const [busy, setBusy] = useState<'merge' | 'use-remote' | null>(null)
  const [error, setError] = useState<string | null>(null)
  const question = status?.join ?? null

  const close = () => openDialog(null)
  const choose = async (choice: 'merge' | 'use-remote') => {
    setBusy(choice)
    setError(null)
    try {
      const after = await join(choice)
      if (after.error && !after.join) setError(after.error.message)
      else if (!after.join) openDialog(after.conflicts.length > 0 ? 'conflicts' : null)
    } catch (failure) {
      setError(errorMessage(failure))
    } finally {
      setBusy(null)
    }
  }

  const rewritten = question?.reason === 'rewritten'
  const other = question?.remoteMachine ?? 'another machine'
  return (
    <SyncModal
      title={rewritten ? 'The remote’s history was rewritten' : 'The remote already holds memory'}
      className="join-dialog"
      busy={busy !== null}
      onClose={close}
    >
      <div className="sync-dialog-body">
        {!question ? (
          <p className="field-help">There is nothing to decide now.</p>
        ) : (
          <>
            <p className="join-lead">
              {rewritten
                ? `Someone replaced the remote’s history since this machine last synced: it no longer holds all of this machine’s changes. Cairn has not changed anything here.`
                : `The remote holds ${other}’s memory (${files(question.remoteFiles)}), and this machine has its own (${files(question.localFiles)}). Cairn has not changed anything yet.`}
            </p>
            {error && (
              <Banner tone="error" title="Nothing was changed" onDismiss={() => setError(null)}>
                {error}
              </Banner>
            )}
            <div className="join-choices" role="group" aria-label="How to join">
              <button
                type="button"
                className="join-choice"
                data-autofocus
                disabled={busy !== null}
                onClick={() => void choose('merge')}
              >
                <strong>
                  {rewritten
                    ? 'Merge it with this machine’s history'
                    : 'Merge this machine’s memory into it'}
                </strong>
                <span>
                  {rewritten
                    ? 'Both histories are kept in one merge commit, and this machine’s changes go back onto the remote.'
                    : 'Both memories are kept, joined in one merge commit. Files both hold under one name keep both versions for you to choose from.'}
                </span>
                {busy === 'merge' && <span className="join-busy">Merging…</span>}
              </button>
              <button
                type="button"
                className="join-choice"
                disabled={busy !== null}
                onClick={() => void choose('use-remote')}
              >
                <strong>Use the remote’s memory</strong>
                <span>
                  This machine’s memory is replaced by the remote’s. Its history is kept aside as a
                  backup you can bring back from Settings → Sync.
                </span>
                {busy === 'use-remote' && <span className="join-busy">Switching…</span>}
              </button>
            </div>
          </>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" disabled={busy !== null} onClick={close}>
            Decide later
          </button>
        </div>
      </div>
    </SyncModal>
  )
}
