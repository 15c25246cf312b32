import { useRef, useState, type KeyboardEvent } from 'react'
import { Loading } from '../../components/Feedback'
import { LazyPart, retryableLazy } from '../../components/LazyPart'
import { MemoryBrowser } from '../memory/MemoryBrowser'
import { useNavigation, type SidePane as Pane } from '../../lib/navigation'
import { usePendingChanges } from '../../lib/pending-changes'

// The history tab (timeline, diffs) is not part of the first screen: its code loads the first
// time the tab opens, so the window starts on less JavaScript.
const HistoryPane = retryableLazy(() =>
  import('../history/HistoryPane').then((module) => ({ default: module.HistoryPane })),
)

const PANES: ReadonlyArray<{ readonly id: Pane; readonly label: string }> = [
  { id: 'memory', label: 'Memory' },
  { id: 'history', label: 'History' },
]

/**
 * The secondary pane: the memory browser and the history timeline, as two tabs. Once shown,
 * both stay mounted (the hidden one keeps its selection and scroll position) and update live.
 */
export function SidePane() {
  const { sidePane, showSidePane } = useNavigation()
  const { changes } = usePendingChanges()
  const tabs = useRef(new Map<Pane, HTMLButtonElement>())
  // Each tab mounts the first time it is shown, and stays.
  const [shown, setShown] = useState<ReadonlySet<Pane>>(() => new Set([sidePane]))
  if (!shown.has(sidePane)) setShown(new Set([...shown, sidePane]))

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return
    event.preventDefault()
    const index = PANES.findIndex((pane) => pane.id === sidePane)
    const next = PANES[(index + (event.key === 'ArrowRight' ? 1 : PANES.length - 1)) % PANES.length]
    if (!next) return
    showSidePane(next.id)
    tabs.current.get(next.id)?.focus()
  }

  return (
    <>
      <div role="tablist" aria-label="Side pane" className="tabs" onKeyDown={onKeyDown}>
        {PANES.map((pane) => (
          <button
            key={pane.id}
            ref={(element) => {
              if (element) tabs.current.set(pane.id, element)
            }}
            id={`side-tab-${pane.id}`}
            role="tab"
            aria-selected={sidePane === pane.id}
            aria-controls={`side-panel-${pane.id}`}
            tabIndex={sidePane === pane.id ? 0 : -1}
            className="tab"
            onClick={() => showSidePane(pane.id)}
          >
            {pane.label}
            {pane.id === 'memory' && changes.length > 0 && (
              <span className="tab-count" title={`${changes.length} waiting for your review`}>
                {changes.length}
                <span className="visually-hidden"> waiting for review</span>
              </span>
            )}
          </button>
        ))}
      </div>
      {PANES.map((pane) => (
        <div
          key={pane.id}
          id={`side-panel-${pane.id}`}
          role="tabpanel"
          aria-label={pane.label}
          className="tab-panel"
          hidden={sidePane !== pane.id}
        >
          {!shown.has(pane.id) ? null : pane.id === 'memory' ? (
            <MemoryBrowser />
          ) : (
            <LazyPart fallback={<Loading active label="Loading history…" />}>
              <HistoryPane />
            </LazyPart>
          )}
        </div>
      ))}
    </>
  )
}
