import { useEffect, useState, type ReactNode } from 'react'
import type { OpeningProgress, OpeningState } from '../../../../shared/types'
import { api } from '../../lib/api'
import { useDelayed } from '../../lib/use-delayed'
import './opening.css'

/** What each step of the opening is called on the screen, and why it may take a while. */
const STEPS: Readonly<
  Record<OpeningProgress['step'], { readonly doing: string; readonly why?: string }>
> = {
  checking: { doing: 'Checking your memory’s history' },
  recovering: {
    doing: 'Recovering after an unclean stop',
    why: 'Cairn did not close properly last time. It is checking that every change was saved to the history.',
  },
  'rebuilding-index': {
    doing: 'Rebuilding the history’s index',
    why: 'The index that makes the history quick to browse was missing or damaged, so it is built again from every version. This happens once; your memory files are not touched.',
  },
  'updating-index': {
    doing: 'Updating the history’s index to this version of Cairn',
    why: 'This happens once after an update; your memory files are not touched.',
  },
  starting: { doing: 'Starting' },
}

const count = new Intl.NumberFormat()

/** "1,234 of 10,000 versions", or what is being done while the number is not known yet. */
function countLine(progress: OpeningProgress): string | null {
  if (progress.step !== 'rebuilding-index' && progress.step !== 'updating-index') return null
  if (progress.total === null) return 'Finding every version…'
  return `${count.format(progress.done)} of ${count.format(progress.total)} versions`
}

/**
 * Shows the app once main's memory is open, and until then what the opening is doing and how
 * far it is. Nothing in the app calls main before that (main would refuse it: `starting`).
 * A quick open shows no opening screen at all: it appears only after a noticeable wait.
 */
export function OpeningGate(props: { readonly children: ReactNode }) {
  const [state, setState] = useState<OpeningState | null>(null)
  useEffect(() => {
    let live = true
    // Ready wins over anything that comes after it; a progress event is newer than an answer.
    const take = (next: OpeningState, answer: boolean) =>
      live &&
      setState((current) =>
        current?.state === 'ready' ? current : answer && current !== null ? current : next,
      )
    const offProgress = api().on('app:opening', (update) =>
      take({ state: 'opening', ...update }, false),
    )
    const offReady = api().on('app:ready', () => take({ state: 'ready' }, false))
    // Subscribed first, so a ready told while the question travels is not missed. A question
    // that fails leaves the app to say what failed (it asks main for everything itself).
    api()
      .app.opening()
      .then(
        (result) => take(result.ok ? result.value : { state: 'ready' }, true),
        () => take({ state: 'ready' }, true),
      )
    return () => {
      live = false
      offProgress()
      offReady()
    }
  }, [])
  const waiting = state === null || state.state === 'opening'
  const shown = useDelayed(waiting, 300)
  if (state?.state === 'ready') return props.children
  if (!shown || state === null) return <div className="opening" aria-busy="true" />
  return <OpeningScreen progress={state.progress} closing={state.closing} />
}

/** The screen itself: the step in words, a bar, and "n of N" for the steps that count. */
export function OpeningScreen(props: {
  readonly progress: OpeningProgress
  readonly closing: boolean
}) {
  const { progress, closing } = props
  const step = STEPS[progress.step]
  const counted = countLine(progress)
  const known = progress.total !== null && progress.total > 0
  return (
    <main className="opening" aria-busy="true" aria-labelledby="opening-title">
      <div className="opening-card">
        {/* A quit while the memory opens waits for the open: the heading says Cairn is closing. */}
        <h1 id="opening-title">{closing ? 'Closing…' : 'Opening your memory…'}</h1>
        <p className="opening-step" role="status" aria-label="Opening">
          {step.doing}
          {counted ? ` — ${counted}` : ''}
        </p>
        {known ? (
          <progress
            className="opening-bar"
            aria-label={step.doing}
            max={progress.total ?? 1}
            value={progress.done}
          />
        ) : (
          <progress className="opening-bar" aria-label={step.doing} />
        )}
        {step.why && <p className="opening-why">{step.why}</p>}
        {closing && (
          <p className="opening-closing" role="note">
            Cairn is waiting for your memory to finish opening, then closes, so nothing is left half
            done.
          </p>
        )}
      </div>
    </main>
  )
}
