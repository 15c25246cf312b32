import { useEffect, useRef, type FormEvent, type KeyboardEvent } from 'react'
import { icons } from '../../components/icons'

/**
 * Where the person writes: Enter sends, Shift+Enter starts a new line. While a turn runs
 * the field is disabled and Send becomes Stop.
 */
export function Composer({
  value,
  onChange,
  onSend,
  onStop,
  running,
  focusRequest,
}: {
  readonly value: string
  readonly onChange: (value: string) => void
  readonly onSend: (text: string) => void
  readonly onStop: () => void
  readonly running: boolean
  /** Changes whenever something asks for the composer's focus. */
  readonly focusRequest: number
}) {
  const field = useRef<HTMLTextAreaElement>(null)

  useEffect(() => {
    if (!running) field.current?.focus()
  }, [focusRequest, running])

  const send = () => {
    const text = value.trim()
    if (!text || running) return
    onSend(text)
  }
  const onSubmit = (event: FormEvent) => {
    event.preventDefault()
    send()
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      send()
    }
  }

  return (
    <form className="composer" onSubmit={onSubmit} aria-label="Message composer">
      <div className="composer-box">
        <textarea
          ref={field}
          className="composer-field"
          aria-label="Message Claude"
          dir="auto"
          aria-keyshortcuts="Control+L Meta+L"
          placeholder={running ? 'Claude is replying…' : 'Message Claude…'}
          rows={1}
          value={value}
          disabled={running}
          onChange={(event) => onChange(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className="composer-bar">
          <span className="composer-hint">
            {running ? (
              <>
                <kbd>Esc</kbd> to stop
              </>
            ) : (
              <>
                <kbd>Enter</kbd> to send · <kbd>Shift</kbd>+<kbd>Enter</kbd> for a new line
              </>
            )}
          </span>
          {running ? (
            <button
              type="button"
              className="composer-button composer-stop"
              onClick={onStop}
              aria-label="Stop"
              aria-keyshortcuts="Escape"
              title="Stop (Esc)"
            >
              <icons.stop />
            </button>
          ) : (
            <button
              type="submit"
              className="composer-button"
              aria-label="Send"
              aria-keyshortcuts="Enter"
              title="Send (Enter)"
              disabled={!value.trim()}
            >
              <icons.send />
            </button>
          )}
        </div>
      </div>
    </form>
  )
}
