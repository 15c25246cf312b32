import { useEffect, useRef, type RefObject } from 'react'
import { fallbackFocusIn } from '../components/focus-after-removal'

/**
 * Shows the `<dialog>` given the returned ref as a modal for as long as the component is
 * mounted (focus kept inside, the page behind inert), and closes it on unmount, which returns
 * focus to where it was. Focus starts on the element marked `data-autofocus`, else on the
 * first match of `fallbackFocus`, else where the browser puts it.
 *
 * Where it was may have gone with what the dialog did (a file's Delete button, gone with the
 * file): then the focus, fallen to the page's body, goes to the list of the pane it was in (its
 * current row, `data-banner-fallback`), else to that pane's screen, as a Result banner's does.
 */
export function useModalDialog(fallbackFocus?: string): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current
    // Before the modal takes it: the control that opened the dialog, and the pane it is in.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    const pane = opener?.closest<HTMLElement>('[data-banner-group]') ?? null
    if (dialog && !dialog.open) dialog.showModal()
    // React's autoFocus runs before showModal, so focus the marked element now.
    const target =
      dialog?.querySelector<HTMLElement>('[data-autofocus]') ??
      (fallbackFocus ? dialog?.querySelector<HTMLElement>(fallbackFocus) : null)
    target?.focus()
    return () => {
      dialog?.close()
      // Unmounted, the dialog left the page before this runs, and its `close` gives the focus
      // back to nothing: it fell to the page's body, and a keyboard user started over from the
      // top after a Cancel, an Escape or a Close (rnotices27). The opener, still there, has it.
      const now = document.activeElement
      if (opener?.isConnected && (now === null || now === document.body)) opener.focus()
      if (opener && pane) keepFocusInPane(opener, pane)
    }
  }, [fallbackFocus])
  return ref
}

/**
 * Watches the control focus went back to (`opener`) as long as it holds the focus, or would (a
 * button disabled while its change runs): when it goes (with the file the dialog deleted, now or
 * when the pane's list catches up) and the focus falls to the page's body, the pane's list takes
 * it (`fallbackFocusIn`), and that row is watched in turn (it may be the deleted file's, on its
 * way out). Ends as soon as the focus is anywhere else, or when the pane has nothing to take it.
 */
function keepFocusInPane(opener: HTMLElement, pane: HTMLElement): void {
  let watched = opener
  // True when there is nothing more to watch.
  const settled = (): boolean => {
    const now = document.activeElement
    const fallen = now === null || now === document.body
    if (watched.isConnected) return !fallen && now !== watched
    if (!fallen) return true
    const next = fallbackFocusIn(pane)
    if (!next) return true
    // Watched before it takes the focus: the hand-off is not a move elsewhere.
    watched = next
    next.focus()
    return document.activeElement !== next
  }
  // After the change that closed it is done (the opener may go in the same render).
  queueMicrotask(() => {
    if (settled()) return
    const observer = new MutationObserver(() => {
      if (settled()) stop()
    })
    const moved = (event: FocusEvent) => {
      if (event.target !== watched) stop()
    }
    const stop = () => {
      observer.disconnect()
      document.removeEventListener('focusin', moved, true)
    }
    observer.observe(pane, { childList: true, subtree: true })
    document.addEventListener('focusin', moved, true)
  })
}
