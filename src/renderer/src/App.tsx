import { ChatPane } from './features/chat/ChatPane'
import { ConversationSidebar } from './features/chat/ConversationSidebar'
import { NavigationProvider } from './features/app/navigation'
import { SidePane } from './features/app/SidePane'
import { useAppInfo } from './features/app/use-app-info'

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
  return (
    <div className="app-frame">
      <nav className="sidebar" aria-label="Conversations">
        <header className="sidebar-header">
          <span className="brand">Cairn</span>
        </header>
        <div className="sidebar-body">
          <ConversationSidebar />
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
        <ChatPane />
      </main>

      <aside className="side-pane" aria-label="Memory and history">
        <SidePane />
      </aside>
    </div>
  )
}
