import type { ReactNode } from 'react'
import { icons } from './icons'
import './app.css'

export type BannerTone = 'error' | 'warning' | 'info' | 'success'

/**
 * A message strip: errors are announced (`role="alert"`), the rest politely (`status`).
 * `actions` holds buttons such as Retry or Open Settings.
 */
export function Banner({
  tone,
  title,
  children,
  actions,
  onDismiss,
  label,
}: {
  readonly tone: BannerTone
  readonly title?: string
  readonly children?: ReactNode
  readonly actions?: ReactNode
  readonly onDismiss?: () => void
  /** Accessible name; defaults to the title. */
  readonly label?: string
}) {
  const Icon =
    tone === 'error' || tone === 'warning'
      ? icons.alert
      : tone === 'success'
        ? icons.check
        : icons.info
  return (
    <div
      className={`banner banner-${tone}`}
      role={tone === 'error' ? 'alert' : 'status'}
      aria-label={label ?? title}
    >
      <Icon className="banner-icon" />
      <div className="banner-body">
        {title && <strong className="banner-title">{title}</strong>}
        {children && <div className="banner-text">{children}</div>}
        {actions && <div className="banner-actions">{actions}</div>}
      </div>
      {onDismiss && (
        <button type="button" className="icon-button" aria-label="Dismiss" onClick={onDismiss}>
          <icons.close />
        </button>
      )}
    </div>
  )
}

/** A small spinner with a text for screen readers and a visible caption. */
export function Spinner({ label }: { readonly label: string }) {
  return (
    <div className="spinner-row" role="status" aria-label={label}>
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  )
}
