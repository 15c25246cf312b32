import { useId, useState } from 'react'
import type { ImportKind, ImportResult } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { api, errorMessage, unwrap } from '../../lib/api'
import { SyncModal } from './SyncModal'
import { visibleName } from '../../lib/format'

const IMPORTS: ReadonlyArray<{
  readonly kind: Exclude<ImportKind, 'text'>
  readonly label: string
}> = [
  { kind: 'bundle', label: 'Git bundle…' },
  { kind: 'repository', label: 'Git repository…' },
  { kind: 'folder', label: 'Folder of Markdown…' },
  { kind: 'zip', label: 'ZIP of Markdown…' },
]

type Notice = {
  readonly tone: 'success' | 'error' | 'info'
  readonly text: string
  readonly skipped?: ImportResult['skipped']
} | null

/**
 * Export (the whole history as a git bundle, the memory files as a ZIP) and import (a bundle
 * or repository with its history, a folder or ZIP of Markdown, a pasted memory export). Each
 * import is one commit by You: the history shows it, and it can be undone.
 */
export function TransferSection() {
  const id = useId()
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState<Notice>(null)
  const [pasting, setPasting] = useState(false)

  const run = async (work: () => Promise<Notice>) => {
    setBusy(true)
    setNotice(null)
    try {
      setNotice(await work())
    } catch (error) {
      setNotice({ tone: 'error', text: errorMessage(error) })
    } finally {
      setBusy(false)
    }
  }
  const exportAs = (kind: 'bundle' | 'zip') =>
    run(async () => {
      const result = await unwrap(api().sync.export({ kind }))
      return { tone: result.saved ? 'success' : 'info', text: result.message }
    })
  const importFrom = (kind: ImportKind, text?: string) =>
    run(async () => {
      const result = await unwrap(
        api().sync.import({ kind, ...(text !== undefined ? { text } : {}) }),
      )
      return {
        tone: result.commit ? 'success' : 'info',
        text: result.message,
        skipped: result.skipped,
      }
    })

  return (
    <section className="settings-section" aria-labelledby={`${id}-transfer`}>
      <h3 id={`${id}-transfer`}>Export and import</h3>
      <div className="transfer-row">
        <span className="field-label">Export</span>
        <div className="transfer-buttons">
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => void exportAs('bundle')}
          >
            Whole history (.bundle)
          </button>
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() => void exportAs('zip')}
          >
            Memory files (.zip)
          </button>
        </div>
      </div>
      <div className="transfer-row">
        <span className="field-label">Import</span>
        <div className="transfer-buttons">
          {IMPORTS.map((item) => (
            <button
              key={item.kind}
              type="button"
              className="button"
              disabled={busy}
              onClick={() => void importFrom(item.kind)}
            >
              {item.label}
            </button>
          ))}
          <button type="button" className="button" disabled={busy} onClick={() => setPasting(true)}>
            Paste a memory export…
          </button>
        </div>
      </div>
      <p className="field-help">
        Imports pass the same checks as Claude’s writes: hidden files, links and anything that looks
        like a password or key are left out. Each import is one change in the history.
      </p>
      {notice && (
        <Banner
          tone={notice.tone}
          label="Export or import result"
          onDismiss={() => setNotice(null)}
        >
          {notice.text}
          {notice.skipped && notice.skipped.length > 0 && (
            <details className="transfer-skipped">
              <summary>
                {notice.skipped.length} {notice.skipped.length === 1 ? 'file' : 'files'} left out
              </summary>
              <ul>
                {notice.skipped.map((item) => (
                  <li key={item.path}>
                    <code>{visibleName(item.path)}</code> — {item.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </Banner>
      )}
      {pasting && (
        <PasteDialog
          onCancel={() => setPasting(false)}
          onImport={async (text) => {
            setPasting(false)
            await importFrom('text', text)
          }}
        />
      )}
    </section>
  )
}

function PasteDialog(props: {
  readonly onCancel: () => void
  readonly onImport: (text: string) => Promise<void>
}) {
  const [text, setText] = useState('')
  return (
    <SyncModal title="Paste a memory export" className="paste-dialog" onClose={props.onCancel}>
      <form
        className="sync-dialog-body"
        onSubmit={(event) => {
          event.preventDefault()
          if (text.trim()) void props.onImport(text)
        }}
      >
        <p className="field-help">
          Paste what another assistant exported of its memory about you. It is saved as one file in
          /memories, which Claude reads like any other.
        </p>
        <label className="field">
          <span className="field-label">Memory export</span>
          <textarea
            className="input textarea"
            data-autofocus
            rows={12}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
        </label>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={!text.trim()}>
            Import
          </button>
        </div>
      </form>
    </SyncModal>
  )
}
