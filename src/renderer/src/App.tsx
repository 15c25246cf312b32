import { useAppInfo } from './features/app/use-app-info'
import { NavigationProvider, useNavigation } from './features/app/navigation'

/** The window's frame: conversations sidebar, chat in the middle, memory and history beside. */
export function App() {
  return (
    <NavigationProvider>
      <Frame />
    </NavigationProvider>
  )
}

function Frame() {
  const appInfo = useAppInfo()
  const { sidePane, showSidePane } = useNavigation()

  return (
    <div className="app-frame">
      <nav className="sidebar" aria-label="Conversations">
        <header className="sidebar-header">
          <span className="brand">Cairn</span>
        </header>
        <div className="sidebar-body">
          <p className="empty-hint">Your conversations will appear here.</p>
        </div>
        <section className="sidebar-footer" aria-label="About">
          {appInfo.status === 'ready' && (
            <>
              <span>Cairn {appInfo.info.version}</span>
              <span className="data-dir" title={appInfo.info.dataDir}>
                Data folder: {appInfo.info.dataDir}
              </span>
            </>
          )}
          {appInfo.status === 'error' && <span role="alert">{appInfo.message}</span>}
        </section>
      </nav>

      <main className="main-pane" aria-label="Chat">
        <div className="empty-state">
          <h1>Chat with Claude</h1>
          <p>Claude keeps what matters in memory files you can read, compare and undo.</p>
        </div>
      </main>

      <aside className="side-pane" aria-label="Memory and history">
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
      </aside>
    </div>
  )
}
