import { useId, useState, type ReactNode } from 'react'
import { useModalDialog } from '../lib/use-modal-dialog'
import './components.css'

/**
 * What a dialog asks: a confirm button named after the action (`confirmLabel`) that runs
 * `onConfirm`, or, with neither, nothing: the dialog only tells, and its one button, Close, has
 * the focus. One without the other is refused by the type: a button that would do nothing, or
 * an action no button runs.
 */
type Answer =
  | {
      readonly confirmLabel: string
      readonly onConfirm: () => Promise<void> | void
      readonly tone?: 'default' | 'danger'
      /**
       * Where focus starts: `confirm` (default), `cancel` (so Enter never destroys by accident),
       * or `field`, a child marked `data-autofocus`.
       */
      readonly initialFocus?: 'confirm' | 'cancel' | 'field'
      /** A third answer between Cancel and the confirm button (such as Discard). */
      readonly alternative?: { readonly label: string; readonly run: () => void }
    }
  | {
      readonly confirmLabel?: undefined
      readonly onConfirm?: undefined
      readonly tone?: undefined
      readonly initialFocus?: undefined
      readonly alternative?: undefined
    }

/**
 * A modal question that says exactly what will happen, with the confirm button named after the
 * action. The native `<dialog>` keeps focus inside, Escape cancels, and closing it returns
 * focus to where it was. While `onConfirm` runs, both buttons wait.
 */
export function ConfirmDialog(
  props: {
    readonly title: string
    readonly children: ReactNode
    readonly onCancel: () => void
  } & Answer,
) {
  const ref = useModalDialog()
  const titleId = useId()
  const bodyId = useId()
  const [busy, setBusy] = useState(false)
  const { onCancel, confirmLabel } = props
  const initialFocus = confirmLabel === undefined ? 'cancel' : (props.initialFocus ?? 'confirm')

  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={(event) => {
        event.preventDefault()
        if (!busy) onCancel()
      }}
    >
      {/* A form, so Enter in a field confirms and the fields' own validation runs first. */}
      <form
        method="dialog"
        onSubmit={async (event) => {
          event.preventDefault()
          setBusy(true)
          try {
            await props.onConfirm?.()
          } finally {
            setBusy(false)
          }
        }}
      >
        <h2 id={titleId}>{props.title}</h2>
        <div id={bodyId} className="confirm-body">
          {props.children}
        </div>
        <div className="dialog-actions">
          <button
            type="button"
            className="button"
            onClick={onCancel}
            disabled={busy}
            data-autofocus={initialFocus === 'cancel' || undefined}
          >
            {confirmLabel === undefined ? 'Close' : 'Cancel'}
          </button>
          {props.alternative && (
            <button
              type="button"
              className="button"
              onClick={props.alternative.run}
              disabled={busy}
            >
              {props.alternative.label}
            </button>
          )}
          {confirmLabel !== undefined && (
            <button
              type="submit"
              className={`button ${props.tone === 'danger' ? 'button-danger' : 'button-primary'}`}
              disabled={busy}
              data-autofocus={initialFocus === 'confirm' || undefined}
            >
              {confirmLabel}
            </button>
          )}
        </div>
      </form>
    </dialog>
  )
}
