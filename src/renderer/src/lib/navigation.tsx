import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'

export type SidePane = 'memory' | 'history'

/** Where the timeline should land: a commit to select and/or filters to apply. */
export interface HistoryTarget {
  readonly oid?: string
  readonly path?: string
  readonly conversationId?: string
}

export interface Navigation {
  readonly conversationId: string | null
  readonly sidePane: SidePane
  readonly memoryPath: string | null
  readonly historyTarget: HistoryTarget | null
  readonly settingsOpen: boolean
  /** Grows each time something asks for the composer's focus (Ctrl/Cmd+L, new chat). */
  readonly composerFocusRequest: number
  /** Opens a conversation in the chat pane (null: a new, empty chat). */
  openConversation(id: string | null): void
  showSidePane(pane: SidePane): void
  /** Opens the memory browser on a file. */
  showMemory(path: string | null): void
  /** Opens the history pane, e.g. on the commit a tool card made, or on one file's history. */
  showHistory(target: HistoryTarget | null): void
  openSettings(open: boolean): void
  /** Moves keyboard focus to the chat composer. */
  focusComposer(): void
}

const NavigationContext = createContext<Navigation | null>(null)

/** App-wide navigation state: what is open where. Data itself always comes from main. */
export function NavigationProvider({ children }: { readonly children: ReactNode }) {
  const [conversationId, setConversationId] = useState<string | null>(null)
  const [sidePane, setSidePane] = useState<SidePane>('memory')
  const [memoryPath, setMemoryPath] = useState<string | null>(null)
  const [historyTarget, setHistoryTarget] = useState<HistoryTarget | null>(null)
  const [settingsOpen, setSettingsOpen] = useState(false)
  const [composerFocusRequest, setComposerFocusRequest] = useState(0)

  const showMemory = useCallback((path: string | null) => {
    setMemoryPath(path)
    setSidePane('memory')
  }, [])
  const showHistory = useCallback((target: HistoryTarget | null) => {
    setHistoryTarget(target)
    setSidePane('history')
  }, [])
  const focusComposer = useCallback(() => setComposerFocusRequest((n) => n + 1), [])

  const value = useMemo<Navigation>(
    () => ({
      conversationId,
      sidePane,
      memoryPath,
      historyTarget,
      settingsOpen,
      composerFocusRequest,
      openConversation: setConversationId,
      showSidePane: setSidePane,
      showMemory,
      showHistory,
      openSettings: setSettingsOpen,
      focusComposer,
    }),
    [
      conversationId,
      sidePane,
      memoryPath,
      historyTarget,
      settingsOpen,
      composerFocusRequest,
      showMemory,
      showHistory,
      focusComposer,
    ],
  )
  return <NavigationContext.Provider value={value}>{children}</NavigationContext.Provider>
}

export function useNavigation(): Navigation {
  const navigation = useContext(NavigationContext)
  if (!navigation) throw new Error('useNavigation must be used inside NavigationProvider')
  return navigation
}
