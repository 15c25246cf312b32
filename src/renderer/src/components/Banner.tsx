import { useCallback, useLayoutEffect, useRef, useState, type ReactNode } from 'react'
import { handOffFocus } from './focus-after-removal'
import { icons } from './icons'
import './components.css'

export type BannerTone = 'error' | 'warning' | 'info' | 'success'

/**
 * A message strip: errors are announced (`role="alert"`), the rest politely (`status`).
 * `actions` holds buttons such as Open Settings; `onRetry` adds the usual Retry button.
 * `compact` fits narrow panes: one line, the buttons beside the text.
 * In a group (`data-banner-group`), a banner that goes away with the focus inside it hands the
 * focus on (`handOffFocus`): to another banner, else to `focusOrigin` (the control that produced
 * it), else to the group's list.
 */
export function Banner({
  tone,
  title,
  children,
  actions,
  onRetry,
  onDismiss,
  label,
  compact = false,
  focusOrigin,
}: {
  readonly tone: BannerTone
  readonly title?: string
  readonly children?: ReactNode
  readonly actions?: ReactNode
  readonly onRetry?: () => void
  readonly onDismiss?: () => void
  /** Accessible name; defaults to the title. */
  readonly label?: string
  readonly compact?: boolean
  /** Where the focus was when this came (an action's result): it goes back there. */
  readonly focusOrigin?: HTMLElement | null
}) {
  const Icon =
    tone === 'error' || tone === 'warning'
      ? icons.alert
      : tone === 'success'
        ? icons.check
        : icons.info
  const hasActions = Boolean(actions) || onRetry !== undefined
  const ref = useRef<HTMLDivElement>(null)
  const origin = useRef(focusOrigin)
  useLayoutEffect(() => {
    origin.current = focusOrigin
  }, [focusOrigin])
  useLayoutEffect(() => {
    const banner = ref.current
    // Run as it unmounts, while it is still in the page.
    return () => {
      if (banner) handOffFocus(banner, origin.current)
    }
  }, [])
  return (
    <div
      ref={ref}
      className={`banner banner-${tone}${compact ? ' banner-compact' : ''}`}
      role={tone === 'error' ? 'alert' : 'status'}
      aria-label={label ?? title}
    >
      <Icon className="banner-icon" />
      <div className="banner-body">
        {title && <strong className="banner-title">{title}</strong>}
        {children && <div className="banner-text">{children}</div>}
        {hasActions && (
          <div className="banner-actions">
            {actions}
            {onRetry && (
              <button type="button" className="button button-small" onClick={onRetry}>
                Retry
              </button>
            )}
          </div>
        )}
      </div>
      {onDismiss && (
        <button type="button" className="icon-button" aria-label="Dismiss" onClick={onDismiss}>
          <icons.close />
        </button>
      )}
    </div>
  )
}

/** The result of an action, and at most one follow-up (such as Undo). */
export interface NoticeData {
  readonly id: number
  readonly message: string
  /** `warning`: done, but not quite as asked (a file kept aside, say). */
  readonly tone: 'success' | 'warning' | 'error'
  readonly action?: { readonly label: string; readonly run: () => void }
  /**
   * Where the focus was when the result came (the control that produced it, as a rule): the
   * focus goes back there when the banner goes with the focus inside it.
   */
  readonly origin: HTMLElement | null
}

/**
 * The latest action result of a pane: `show()` replaces it (a new one is announced again),
 * `dismiss()` clears it. Render it with `<Notice>`.
 */
export function useNotice() {
  const [notice, setNotice] = useState<NoticeData | null>(null)
  const show = useCallback(
    (message: string, tone: NoticeData['tone'], action?: NoticeData['action']) =>
      setNotice({
        id: Date.now(),
        message,
        tone,
        ...(action ? { action } : {}),
        origin: focusedControl(),
      }),
    [],
  )
  const dismiss = useCallback(() => setNotice(null), [])
  return { notice, show, dismiss }
}

/** The element holding the focus, unless none does (the page's body). */
function focusedControl(): HTMLElement | null {
  const focused = document.activeElement
  return focused instanceof HTMLElement && focused !== document.body ? focused : null
}

/**
 * A compact banner named "Result" for a `useNotice()` result, with its follow-up button. Put in
 * a group (`data-banner-group`, the pane), it hands the focus on when it goes with the focus
 * inside it: to another banner of the pane, else back to where the focus was when the result
 * came, else to the pane's list (`data-banner-fallback`).
 */
export function Notice(props: {
  readonly notice: NoticeData | null
  readonly onDismiss: () => void
}) {
  const { notice } = props
  if (!notice) return null
  return (
    <Banner
      key={notice.id}
      tone={notice.tone}
      label="Result"
      compact
      focusOrigin={notice.origin}
      onDismiss={props.onDismiss}
      actions={
        notice.action && (
          <button type="button" className="button button-small" onClick={notice.action.run}>
            {notice.action.label}
          </button>
        )
      }
    >
      {notice.message}
    </Banner>
  )
}
