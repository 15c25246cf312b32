import { useNavigation } from './navigation'

/** The secondary pane: the memory browser and the history timeline, as two tabs. */
export function SidePane() {
  const { sidePane, showSidePane } = useNavigation()
  return (
    <>
      <div role="tablist" aria-label="Side pane" className="tabs">
        {(['memory', 'history'] as const).map((pane) => (
          <button
            key={pane}
            role="tab"
            aria-selected={sidePane === pane}
            className="tab"
            onClick={() => showSidePane(pane)}
          >
            {pane === 'memory' ? 'Memory' : 'History'}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        aria-label={sidePane === 'memory' ? 'Memory' : 'History'}
        className="tab-panel"
      >
        <p className="empty-hint">
          {sidePane === 'memory'
            ? 'Memory files Claude writes will show here.'
            : 'Every change to memory will show here, newest first.'}
        </p>
      </div>
    </>
  )
}
