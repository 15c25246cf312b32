import {
  Component,
  lazy,
  Suspense,
  type ComponentProps,
  type ComponentType,
  type KeyboardEvent,
  type ReactNode,
} from 'react'
import './components.css'

/** Every `retryableLazy` part whose code failed to load, each renewing its `lazy` when called. */
const failedLoads = new Set<() => void>()

/** Gives every part whose code failed to load a new `lazy`, so its next render asks again. */
function renewFailedLoads() {
  for (const renew of [...failedLoads]) renew()
}

/**
 * `React.lazy` that can be asked again: React keeps a failed `lazy` failed, so this one makes a
 * new `lazy` for its part after a failure when a `LazyPart` mounts again or its Retry asks (a part
 * that loaded is left as it is, its state kept).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as React.lazy's own signature
export function retryableLazy<T extends ComponentType<any>>(
  load: () => Promise<{ default: T }>,
): ComponentType<ComponentProps<T>> {
  const fresh = () =>
    lazy(() =>
      load().catch((error: unknown) => {
        failedLoads.add(renew)
        throw error
      }),
    )
  let current = fresh()
  function renew() {
    failedLoads.delete(renew)
    current = fresh()
  }
  function Retryable(props: ComponentProps<T>) {
    const Part = current as ComponentType<ComponentProps<T>>
    return <Part {...props} />
  }
  return Retryable
}

interface Props {
  /** Shown while the part's code loads. */
  readonly fallback: ReactNode
  /** A dialog's part: its failure shows over the window, as the dialog would have. */
  readonly overlay?: boolean
  /** A dialog's way out: Escape (and Close) on its failure close it, as on the dialog. */
  readonly onClose?: () => void
  readonly children: ReactNode
}

/**
 * A part of the window whose code loads on first use (`retryableLazy`): its wait, and if its
 * code cannot be loaded (a chunk refused or missing), a local message with Retry in its place
 * while the rest of the window stays; Retry loads the code again, and so does the part shown
 * again (a dialog closed and reopened). A dialog's failure also closes by Escape or Close. Never
 * shows the error itself.
 */
export class LazyPart extends Component<Props, { failed: boolean }> {
  override state = { failed: false }

  constructor(props: Props) {
    super(props)
    // Shown again after a failure (closed and reopened), the part asks for its code again
    // rather than throwing React's stored failure at once.
    renewFailedLoads()
  }

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true }
  }

  private readonly retry = () => {
    renewFailedLoads()
    this.setState({ failed: false })
  }

  private readonly onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || !this.props.onClose) return
    event.preventDefault()
    event.stopPropagation()
    this.props.onClose()
  }

  override render(): ReactNode {
    if (!this.state.failed) {
      return <Suspense fallback={this.props.fallback}>{this.props.children}</Suspense>
    }
    const { overlay, onClose } = this.props
    return (
      <div className={overlay ? 'lazy-failed lazy-failed-overlay' : 'lazy-failed'}>
        <div className="lazy-failed-box" role="alert" onKeyDown={this.onKeyDown}>
          <p>This part of Cairn could not be loaded. Retry loads it again.</p>
          <div className="lazy-failed-actions">
            <button
              type="button"
              className="button button-primary"
              // A dialog's part had the focus: it moves to the way on, not to the page's body.
              autoFocus={overlay}
              onClick={this.retry}
            >
              Retry
            </button>
            {onClose && (
              <button type="button" className="button" onClick={onClose}>
                Close
              </button>
            )}
          </div>
        </div>
      </div>
    )
  }
}
