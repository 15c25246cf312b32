import { useEffect, useRef, type RefObject } from 'react'

/**
 * Shows the `<dialog>` given the returned ref as a modal for as long as the component is
 * mounted (focus kept inside, the page behind inert), and closes it on unmount, which returns
 * focus to where it was. Focus starts on the element marked `data-autofocus`, else on the
 * first match of `fallbackFocus`, else where the browser puts it.
 */
export function useModalDialog(fallbackFocus?: string): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current
    if (dialog && !dialog.open) dialog.showModal()
    // React's autoFocus runs before showModal, so focus the marked element now.
    const target =
      dialog?.querySelector<HTMLElement>('[data-autofocus]') ??
      (fallbackFocus ? dialog?.querySelector<HTMLElement>(fallbackFocus) : null)
    target?.focus()
    return () => dialog?.close()
  }, [fallbackFocus])
  return ref
}
