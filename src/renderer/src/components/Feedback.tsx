import type { ReactNode } from 'react'
import { useDelayed } from '../lib/use-delayed'
import './components.css'

/**
 * A spinner with a visible caption that also names it for screen readers. Shown only once
 * `active` has lasted ~150 ms, so quick loads do not flash.
 */
export function Loading({ active, label }: { readonly active: boolean; readonly label: string }) {
  const shown = useDelayed(active)
  if (!shown) return null
  return (
    <div className="spinner-row" role="status" aria-label={label}>
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  )
}

/** What to show when there is nothing yet, and what to do about it. */
export function EmptyState(props: { readonly title: string; readonly children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{props.title}</p>
      {props.children && <div className="empty-body">{props.children}</div>}
    </div>
  )
}
