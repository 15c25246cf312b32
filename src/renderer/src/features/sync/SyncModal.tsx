import { useId, type ReactNode } from 'react'
import { icons } from '../../components/icons'
import { useModalDialog } from '../../lib/use-modal-dialog'

/**
 * The frame of sync's dialogs: a native modal `<dialog>` (focus kept inside, Escape closes
 * unless `busy`), its title and close button. Focus starts on the child marked
 * `data-autofocus`.
 */
export function SyncModal(props: {
  readonly title: string
  readonly className?: string
  readonly busy?: boolean
  readonly onClose: () => void
  readonly children: ReactNode
}) {
  const ref = useModalDialog()
  const titleId = useId()
  return (
    <dialog
      ref={ref}
      className={`sync-dialog ${props.className ?? ''}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault()
        if (!props.busy) props.onClose()
      }}
    >
      <header className="sync-dialog-header">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={props.onClose}>
          <icons.close />
        </button>
      </header>
      {props.children}
    </dialog>
  )
}
