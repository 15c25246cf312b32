import { useEffect, useId, useRef, useState, type ReactNode } from 'react'
import './kit.css'

/**
 * A modal confirmation: a title, exactly what will happen, and the confirm button named
 * after the action. The native dialog element gives focus trapping and Escape for free.
 */
export function ConfirmDialog(props: {
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  readonly tone?: 'default' | 'danger'
  /** `confirm` (default) focuses the confirm button; `field` leaves it to a child marked
   * `data-autofocus`. */
  readonly initialFocus?: 'confirm' | 'field'
  readonly onConfirm: () => Promise<void> | void
  readonly onCancel: () => void
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const bodyId = useId()
  const [busy, setBusy] = useState(false)
  const { onCancel, initialFocus = 'confirm' } = props

  useEffect(() => {
    const dialog = ref.current
    if (dialog && !dialog.open) dialog.showModal()
    // Focus the field or button marked for it (React's autoFocus runs before showModal).
    dialog?.querySelector<HTMLElement>('[data-autofocus]')?.focus()
    return () => dialog?.close()
  }, [])

  return (
    <dialog
      ref={ref}
      className="kit-dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={(event) => {
        event.preventDefault()
        if (!busy) onCancel()
      }}
    >
      <form
        method="dialog"
        onSubmit={async (event) => {
          event.preventDefault()
          setBusy(true)
          try {
            await props.onConfirm()
          } finally {
            setBusy(false)
          }
        }}
      >
        <h2 id={titleId} className="kit-dialog-title">
          {props.title}
        </h2>
        <div id={bodyId} className="kit-dialog-body">
          {props.children}
        </div>
        <div className="kit-dialog-actions">
          <button type="button" className="kit-button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button
            type="submit"
            className={`kit-button ${props.tone === 'danger' ? 'kit-button-danger' : 'kit-button-primary'}`}
            disabled={busy}
            data-autofocus={initialFocus === 'confirm' || undefined}
          >
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  )
}
