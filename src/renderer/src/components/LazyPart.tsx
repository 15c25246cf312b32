import { Component, Suspense, type ReactNode } from 'react'
import './components.css'

interface Props {
  /** Shown while the part's code loads. */
  readonly fallback: ReactNode
  /** A dialog's part: its failure shows over the window, as the dialog would have. */
  readonly overlay?: boolean
  readonly children: ReactNode
}

/**
 * A part of the window whose code loads on first use (`lazy`): its wait, and if its code cannot
 * be loaded (a chunk refused or missing), a local message with Reload in its place while the
 * rest of the window stays. React keeps a failed `lazy` load failed, so reloading the window is
 * the way to try again. Never shows the error itself.
 */
export class LazyPart extends Component<Props, { failed: boolean }> {
  override state = { failed: false }

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true }
  }

  override render(): ReactNode {
    if (!this.state.failed) {
      return <Suspense fallback={this.props.fallback}>{this.props.children}</Suspense>
    }
    return (
      <div className={this.props.overlay ? 'lazy-failed lazy-failed-overlay' : 'lazy-failed'}>
        <div className="lazy-failed-box" role="alert">
          <p>This part of Cairn could not be loaded. Reload the window to try again.</p>
          <button
            type="button"
            className="button button-primary"
            // A dialog's part had the focus: it moves to the way out, not to the page's body.
            autoFocus={this.props.overlay}
            onClick={() => location.reload()}
          >
            Reload
          </button>
        </div>
      </div>
    )
  }
}
