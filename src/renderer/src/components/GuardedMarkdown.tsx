import { Component, type ReactNode } from 'react'
import { unformattable } from '../lib/markdown-depth'
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

const NOTES = {
  depth: 'Shown as plain text: it nests quotes or lists too deeply to format.',
  marks: 'Shown as plain text: it nests too many *, _, ~ or [ marks to format quickly.',
  streaming: 'Shown as plain text until the reply is complete, then formatted.',
} as const

/**
 * Formatted markdown (`children`, rendered from `text`) that can never blank or freeze the
 * window: text nested too deeply for the parser, a paragraph of thousands of nested inline
 * marks, or any render error, shows `text` plain with a short note. While `streaming`, text
 * costly to format at every delta shows plain until it is complete.
 */
export function GuardedMarkdown({
  text,
  streaming = false,
  children,
}: BoundaryProps & { readonly streaming?: boolean }) {
  const why = unformattable(text, streaming)
  if (why) return <PlainText text={text} note={NOTES[why]} />
  return <Boundary text={text}>{children}</Boundary>
}
