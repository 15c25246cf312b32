import { Component, type ReactNode } from 'react'
import './components.css'

/**
 * The last line of defence: a render error anywhere shows a way back (Reload) instead of a
 * blank window. Never shows the error itself (no stack reaches people).
 */
export class AppBoundary extends Component<{ readonly children: ReactNode }, { failed: boolean }> {
  override state = { failed: false }

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true }
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children
    return (
      <div className="app-failed" role="alert">
        <h1>Cairn could not show this window</h1>
        <p>
          Something went wrong while drawing it. Your conversations and memory are not affected.
        </p>
        <button type="button" className="button button-primary" onClick={() => location.reload()}>
          Reload
        </button>
      </div>
    )
  }
}
