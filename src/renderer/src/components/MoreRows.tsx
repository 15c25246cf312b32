import './components.css'

/**
 * "Showing the first N of M lines (of …)." and a button that draws the next `step`, under a long
 * view drawn in parts (a diff, a blame, a memory file); nothing once every row is drawn.
 */
export function MoreRows(props: {
  readonly shown: number
  readonly all: number
  /** How many rows the button adds. */
  readonly step: number
  /** What the lines are of ("this diff"), when the view shows more than one thing. */
  readonly of?: string
  readonly onMore: () => void
  /** The view's own spacing, beside the shared one. */
  readonly className?: string
}) {
  const { shown, all, step } = props
  if (all <= shown) return null
  return (
    <div className={props.className ? `more-rows ${props.className}` : 'more-rows'}>
      <p className="hint view-note">
        Showing the first {shown.toLocaleString('en-US')} of {all.toLocaleString('en-US')} lines
        {props.of ? ` of ${props.of}` : ''}.
      </p>
      <button type="button" className="button button-small" onClick={props.onMore}>
        Show {Math.min(step, all - shown).toLocaleString('en-US')} more lines
      </button>
    </div>
  )
}
