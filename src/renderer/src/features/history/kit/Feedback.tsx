import type { ReactNode } from 'react'
import { useDelayed } from './use-delayed'
import './kit.css'

/** An error for people, with a way to try again. */
export function ErrorBanner(props: {
  readonly message: string
  readonly onRetry?: () => void
  readonly onDismiss?: () => void
}) {
  return (
    <div role="alert" className="kit-banner kit-banner-error">
      <span className="kit-banner-text">{props.message}</span>
      {props.onRetry && (
        <button type="button" className="kit-button" onClick={props.onRetry}>
          Retry
        </button>
      )}
      {props.onDismiss && (
        <button
          type="button"
          className="kit-icon-button"
          aria-label="Dismiss"
          onClick={props.onDismiss}
        >
          ×
        </button>
      )}
    </div>
  )
}

export interface NoticeData {
  readonly id: number
  readonly message: string
  readonly tone: 'success' | 'error'
  readonly action?: { readonly label: string; readonly run: () => void }
}

/** The result of an action: what happened, and (for restores) how to undo it. */
export function Notice(props: { readonly notice: NoticeData; readonly onDismiss: () => void }) {
  const { notice } = props
  return (
    <div
      role={notice.tone === 'error' ? 'alert' : 'status'}
      aria-label="Result"
      className={`kit-banner kit-notice kit-notice-${notice.tone}`}
    >
      <span className="kit-banner-text">{notice.message}</span>
      {notice.action && (
        <button type="button" className="kit-button" onClick={notice.action.run}>
          {notice.action.label}
        </button>
      )}
      <button
        type="button"
        className="kit-icon-button"
        aria-label="Dismiss notice"
        onClick={props.onDismiss}
      >
        ×
      </button>
    </div>
  )
}

/** A spinner with a label, shown only when loading lasts longer than ~150 ms. */
export function Loading(props: { readonly active: boolean; readonly label: string }) {
  const shown = useDelayed(props.active)
  if (!shown) return null
  return (
    <div role="status" aria-label={props.label} className="kit-loading">
      <span className="kit-spinner" aria-hidden="true" />
      <span>{props.label}</span>
    </div>
  )
}

/** What to show when there is nothing yet, and what to do about it. */
export function EmptyState(props: { readonly title: string; readonly children?: ReactNode }) {
  return (
    <div className="kit-empty">
      <p className="kit-empty-title">{props.title}</p>
      {props.children && <div className="kit-empty-body">{props.children}</div>}
    </div>
  )
}
