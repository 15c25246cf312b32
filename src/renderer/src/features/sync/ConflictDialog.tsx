import { useState } from 'react'
import type { SyncConflict } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { icons } from '../../components/icons'
import { api, errorMessage, unwrap } from '../../lib/api'
import { displayPath } from '../../lib/format'
import { useSync } from './sync-context'
import { SyncModal } from './SyncModal'

// A block's start or end marker: 7 or more of its character (longer when a side holds a
// marker-like line). A lone "=======" is a Markdown setext underline as often as a marker.
const MARKER = /^(<{7,}|>{7,})( |$)/m

/**
 * The conflicts a merge could not settle: for each file, both versions side by side and the
 * four ways to settle it (this machine's, the other's, both, or text written here). Every
 * choice is a commit, so each can be undone from the history.
 */
export function ConflictDialog() {
  const { status, openDialog, resolve } = useSync()
  const conflicts = status?.conflicts ?? []
  const [selected, setSelected] = useState<string | null>(null)
  const current = conflicts.find((c) => c.path === selected) ?? conflicts[0] ?? null
  const [editing, setEditing] = useState<string | null>(null)
  // The file's text when the edit began: the choice is written only over that text.
  const [basis, setBasis] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)

  const close = () => openDialog(null)

  const settle = async (choice: 'ours' | 'theirs' | 'both' | 'edit') => {
    if (!current) return
    setBusy(true)
    setError(null)
    try {
      const next = await resolve({
        path: current.path,
        choice,
        ...(choice === 'edit' ? { text: editing ?? '', ...(basis !== null && { basis }) } : {}),
      })
      // A later sync's conflict made inside the version kept is still in the file: shown next.
      const left = next.conflicts.some((conflict) => conflict.path === current.path)
      setEditing(null)
      setSelected(left ? current.path : null)
      setDone(
        left
          ? `The choice is in the history, where it can be undone. ${displayPath(current.path)} still holds a conflict a later sync made inside the version kept: choose for it too.`
          : `${displayPath(current.path)} is settled. The choice is in the history, where it can be undone.`,
      )
    } catch (failure) {
      setError(errorMessage(failure))
    } finally {
      setBusy(false)
    }
  }

  const startEditing = async () => {
    if (!current) return
    setError(null)
    try {
      const file = await unwrap(api().memory.read({ path: current.path }))
      if (file.text === null) {
        // Too large to read here (over the browser's limit): an empty editor would lose it.
        setError(
          `${displayPath(current.path)} is too large to edit here. Choose a version, or edit the file in your own editor and remove its conflict markers.`,
        )
        return
      }
      setBasis(file.text)
      setEditing(file.text)
    } catch (failure) {
      setError(errorMessage(failure))
    }
  }

  return (
    <SyncModal title="Resolve conflicts" className="conflict-dialog" busy={busy} onClose={close}>
      <div className="sync-dialog-body">
        {done && (
          <Banner tone="success" label="Resolution" onDismiss={() => setDone(null)}>
            {done}
          </Banner>
        )}
        {error && (
          <Banner tone="error" title="Not resolved" onDismiss={() => setError(null)}>
            {error}
          </Banner>
        )}
        {!current ? (
          <div className="sync-empty">
            <icons.check />
            <p>No conflicts left. Memory is the same on every machine once it syncs.</p>
            <button type="button" className="button button-primary" data-autofocus onClick={close}>
              Close
            </button>
          </div>
        ) : (
          <div className="conflict-layout" data-single={conflicts.length === 1 || undefined}>
            {conflicts.length > 1 && (
              <nav className="conflict-list" aria-label="Files with conflicts">
                <ul>
                  {conflicts.map((conflict) => (
                    <li key={conflict.path}>
                      <button
                        type="button"
                        aria-current={conflict.path === current.path || undefined}
                        onClick={() => {
                          setSelected(conflict.path)
                          setEditing(null)
                        }}
                      >
                        {displayPath(conflict.path)}
                      </button>
                    </li>
                  ))}
                </ul>
              </nav>
            )}
            <section
              className="conflict-file"
              aria-label={`Conflict in ${displayPath(current.path)}`}
            >
              <h3 className="conflict-path">{displayPath(current.path)}</h3>
              <p className="field-help">{explain(current)}</p>
              {editing === null ? (
                <Versions conflict={current} />
              ) : (
                <label className="conflict-edit">
                  <span className="field-label">The text to keep</span>
                  <textarea
                    className="input textarea mono"
                    rows={14}
                    value={editing}
                    spellCheck={false}
                    data-autofocus
                    onChange={(event) => setEditing(event.target.value)}
                  />
                  {MARKER.test(editing) && (
                    <span className="field-help" data-error>
                      The text still holds conflict markers (&lt;&lt;&lt;&lt;&lt;&lt;&lt;, =======,
                      &gt;&gt;&gt;&gt;&gt;&gt;&gt;): remove them, or the conflict stays open.
                    </span>
                  )}
                </label>
              )}
              <div className="dialog-actions conflict-actions">
                {editing === null ? (
                  <>
                    <button
                      type="button"
                      className="button"
                      disabled={busy}
                      onClick={() => void startEditing()}
                    >
                      <icons.pencil />
                      Edit…
                    </button>
                    <span className="conflict-spacer" />
                    <button
                      type="button"
                      className="button"
                      disabled={busy}
                      onClick={() => void settle('both')}
                    >
                      Keep both
                    </button>
                    <button
                      type="button"
                      className="button"
                      disabled={busy}
                      onClick={() => void settle('theirs')}
                    >
                      Keep {current.theirsLabel}’s
                    </button>
                    <button
                      type="button"
                      className="button button-primary"
                      data-autofocus
                      disabled={busy}
                      onClick={() => void settle('ours')}
                    >
                      Keep {current.oursLabel}’s
                    </button>
                  </>
                ) : (
                  <>
                    <button
                      type="button"
                      className="button"
                      disabled={busy}
                      onClick={() => setEditing(null)}
                    >
                      Cancel
                    </button>
                    <button
                      type="button"
                      className="button button-primary"
                      disabled={busy}
                      onClick={() => void settle('edit')}
                    >
                      Save this text
                    </button>
                  </>
                )}
              </div>
            </section>
          </div>
        )}
      </div>
    </SyncModal>
  )
}

function explain(conflict: SyncConflict): string {
  if (conflict.kind === 'binary') {
    return `Both machines changed this file, which is not text. ${conflict.oursLabel}’s version is kept here and ${conflict.theirsLabel}’s as ${displayPath(conflict.otherPath ?? '')} until you choose.`
  }
  const count = conflict.blockCount
  const cut = conflict.cut
    ? ' Only the start of the versions is shown here; the file holds them whole.'
    : ''
  return `${conflict.oursLabel} and ${conflict.theirsLabel} changed the same ${count === 1 ? 'lines' : `lines in ${count} places`}. Both versions are kept in the file, between markers, until you choose.${cut}`
}

function Versions({ conflict }: { readonly conflict: SyncConflict }) {
  if (conflict.kind === 'binary') return null
  return (
    <div className="conflict-versions">
      {conflict.blocks.map((block, index) => (
        <div className="conflict-block" key={index}>
          <figure className="conflict-side" data-side="ours">
            <figcaption>This machine · {conflict.oursLabel}</figcaption>
            <pre>{block.ours || '(nothing: these lines were removed here)'}</pre>
          </figure>
          <figure className="conflict-side" data-side="theirs">
            <figcaption>Other machine · {conflict.theirsLabel}</figcaption>
            <pre>{block.theirs || '(nothing: these lines were removed there)'}</pre>
          </figure>
        </div>
      ))}
    </div>
  )
}
