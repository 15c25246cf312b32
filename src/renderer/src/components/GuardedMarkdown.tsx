import { Component, type ReactNode } from 'react'
import {
  emphasisRuns,
  markdownDepth,
  MAX_EMPHASIS_RUNS,
  MAX_MARKDOWN_DEPTH,
} from '../lib/markdown-depth'
import './components.css'

/** `text` exactly as written, with a short note saying why it is not formatted. */
function PlainText({ text, note }: { readonly text: string; readonly note: string }) {
  return (
    <div className="md-plain">
      <p className="md-plain-note">{note}</p>
      <div className="md-plain-text">{text}</div>
    </div>
  )
}

interface BoundaryProps {
  readonly text: string
  readonly children: ReactNode
}

interface BoundaryState {
  readonly failed: boolean
  /**
   * The text that failed. A reply streaming on only adds to it, and would most likely fail
   * again (each try can cost a second): only a text that does not extend it is tried again.
   */
  readonly failedText: string | null
}

/** Catches a render error of one formatted text, so it never takes the window down with it. */
class Boundary extends Component<BoundaryProps, BoundaryState> {
  override state: BoundaryState = { failed: false, failedText: null }

  static getDerivedStateFromError(): Partial<BoundaryState> {
    return { failed: true }
  }

  static getDerivedStateFromProps(
    props: BoundaryProps,
    state: BoundaryState,
  ): Partial<BoundaryState> | null {
    return state.failed && state.failedText !== null && !props.text.startsWith(state.failedText)
      ? { failed: false, failedText: null }
      : null
  }

  override componentDidCatch(): void {
    this.setState({ failedText: this.props.text })
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children
    return (
      <PlainText text={this.props.text} note="Shown as plain text: it could not be formatted." />
    )
  }
}

/**
 * Formatted markdown (`children`, rendered from `text`) that can never blank or freeze the
 * window: text nested too deeply for the parser, a paragraph of thousands of emphasis marks, or
 * any render error, shows `text` plain with a short note.
 */
export function GuardedMarkdown({ text, children }: BoundaryProps) {
  if (markdownDepth(text) > MAX_MARKDOWN_DEPTH) {
    return (
      <PlainText
        text={text}
        note="Shown as plain text: it nests quotes or lists too deeply to format."
      />
    )
  }
  if (emphasisRuns(text) > MAX_EMPHASIS_RUNS) {
    return (
      <PlainText
        text={text}
        note="Shown as plain text: it holds too many * and _ marks to format quickly."
      />
    )
  }
  return <Boundary text={text}>{children}</Boundary>
}
