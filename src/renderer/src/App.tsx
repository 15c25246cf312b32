import type { ReactNode } from 'react'
import { Loading } from './components/Feedback'
import { LazyPart, retryableLazy } from './components/LazyPart'
import { NavigationProvider, useNavigation } from './lib/navigation'
import { MemoryNotices } from './features/app/MemoryNotices'
import { PendingChangesProvider } from './lib/pending-changes'
import { ThisMachineProvider } from './lib/this-machine'
import { RecoveryNotice } from './features/app/RecoveryNotice'
import { SidePane } from './features/app/SidePane'
import { CairnMark, icons } from './components/icons'
import { useAppInfo } from './features/app/use-app-info'
import { useShortcuts } from './features/app/use-shortcuts'
import { useMoreBelow } from './lib/use-more-below'
import { ChatPane } from './features/chat/ChatPane'
import { ConversationSidebar } from './features/chat/ConversationSidebar'
import { LiveTurnsProvider } from './features/chat/live-turns'
import { SettingsProvider, useSettings } from './features/settings/settings-context'
import { useTheme } from './features/settings/use-theme'
import { SyncProvider, useSync } from './features/sync/sync-context'
import { SyncIndicator } from './features/sync/SyncIndicator'
import { FollowIndicator } from './features/history/FollowIndicator'
// Settings' field styles stay with the first screen's: the sync dialogs use them too, and may open
// (lazily, below) before Settings ever has.
import './features/settings/settings.css'

// The full history view (timeline, diffs, blame, search) is not part of the first screen: its
// code loads the first time it opens, as the side pane's history tab does.
const FullHistoryView = retryableLazy(() =>
  import('./features/history/FullHistoryView').then((module) => ({
    default: module.FullHistoryView,
  })),
)

// Settings (with its sync section) and the two sync dialogs open only when asked for: their code
// loads then, in one step each.
const Settings = retryableLazy(async () => {
  const [{ SettingsDialog }, { SyncSettings }] = await Promise.all([
    import('./features/settings/SettingsDialog'),
    import('./features/sync/SyncSettings'),
  ])
  return { default: () => <SettingsDialog extraSections={<SyncSettings />} /> }
})
const ConflictDialog = retryableLazy(() =>
  import('./features/sync/ConflictDialog').then((module) => ({ default: module.ConflictDialog })),
)
const JoinDialog = retryableLazy(() =>
  import('./features/sync/JoinDialog').then((module) => ({ default: module.JoinDialog })),
)

/** The window's frame: conversations sidebar, chat in the middle, memory and history beside. */
export function App() {
  return (
    <NavigationProvider>
      <SettingsProvider>
        <SyncProvider>
          <ThisMachineProvider>
            <LiveTurnsProvider>
              <PendingChangesProvider>
                <Frame />
              </PendingChangesProvider>
            </LiveTurnsProvider>
          </ThisMachineProvider>
        </SyncProvider>
      </SettingsProvider>
    </NavigationProvider>
  )
}

function Frame() {
  const appInfo = useAppInfo()
  const { state: settings } = useSettings()
  const { settingsOpen, openSettings, view } = useNavigation()
  const { dialog, openDialog } = useSync()
  const [noticesRef, moreNotices] = useMoreBelow<HTMLDivElement>()
  useTheme(settings.status === 'ready' ? settings.settings.theme : null)
  useShortcuts()

  const fullHistory = view === 'history'
  return (
    <div className="app-frame" data-view={view}>
      {/* The chat stays mounted under the full history view: its draft and scroll survive. */}
      <nav className="sidebar" aria-label="Conversations" hidden={fullHistory}>
        <header className="sidebar-header">
          <span className="brand">
            <CairnMark />
            Cairn
          </span>
        </header>
        <div className="sidebar-body">
          <ConversationSidebar />
        </div>
        <footer className="sidebar-bottom">
          <FollowIndicator />
          <SyncIndicator />
          <button
            type="button"
            className="settings-button"
            onClick={() => openSettings(true)}
            aria-keyshortcuts="Control+Comma Meta+Comma"
            title="Settings (Ctrl/⌘ ,)"
          >
            <icons.gear />
            Settings
            {settings.status === 'ready' && !settings.settings.hasApiKey && (
              <span className="attention" aria-label="API key needed" />
            )}
          </button>
          <section className="sidebar-footer" aria-label="About">
            {appInfo.status === 'ready' && (
              <>
                <span>Cairn {appInfo.info.version}</span>
                <span className="data-dir" title={appInfo.info.dataDir}>
                  {appInfo.info.dataDir}
                </span>
              </>
            )}
            {appInfo.status === 'error' && <span role="alert">{appInfo.message}</span>}
          </section>
        </footer>
      </nav>

      <main className="main-pane" aria-label="Chat" hidden={fullHistory}>
        {/* Capped at a third of the window and scrolled on its own: never over the chat. Its
            bottom edge fades while more notices are scrolled out of view below it; the line
            under it is drawn by the frame, outside the fade, so it stays whole. */}
        <div className="notices-frame">
          <div
            ref={noticesRef}
            className="notices"
            role="region"
            aria-label="Notices"
            data-banner-group=""
            data-more-below={moreNotices ? '' : undefined}
          >
            {appInfo.status === 'ready' && <RecoveryNotice />}
            {appInfo.status === 'ready' && <MemoryNotices />}
          </div>
        </div>
        <ChatPane />
      </main>

      <aside className="side-pane" aria-label="Memory and history" hidden={fullHistory}>
        <SidePane />
      </aside>

      {fullHistory && (
        <LazyPart fallback={<Loading active label="Loading history…" />}>
          <FullHistoryView />
        </LazyPart>
      )}

      {/* One boundary each: a dialog whose code is loading (Join opens by itself once sync
          settings are saved) never hides another that is open, nor takes its focus. */}
      {settingsOpen && (
        <LazyDialog onClose={() => openSettings(false)}>
          <Settings />
        </LazyDialog>
      )}
      {dialog === 'conflicts' && (
        <LazyDialog onClose={() => openDialog(null)}>
          <ConflictDialog />
        </LazyDialog>
      )}
      {dialog === 'join' && (
        <LazyDialog onClose={() => openDialog(null)}>
          <JoinDialog />
        </LazyDialog>
      )}
    </div>
  )
}

/** A dialog whose code loads when it opens: its wait over the window, its failure closed by Escape. */
function LazyDialog({
  onClose,
  children,
}: {
  readonly onClose: () => void
  readonly children: ReactNode
}) {
  return (
    <LazyPart fallback={<DialogLoading />} overlay onClose={onClose}>
      {children}
    </LazyPart>
  )
}

/** Shown over the window while a dialog's code loads (only if that takes a moment). */
function DialogLoading() {
  return (
    <div className="dialog-loading">
      <Loading active label="Loading…" />
    </div>
  )
}
