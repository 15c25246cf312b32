import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'

export type SidePane = 'memory' | 'history'

/** The window's main view: the chat (with the side pane), or the full history. */
export type MainView = 'chat' | 'history'

/** Where the timeline should land: a commit to select and/or filters to apply. */
export interface HistoryTarget {
  readonly oid?: string
  readonly path?: string
  readonly conversationId?: string
}

/** A reply's tool card to scroll the chat to (the one that wrote a line). */
export interface ReplyTarget {
  readonly conversationId: string
  readonly toolUseId: string
  /** Grows with each request, so asking twice scrolls twice. */
  readonly token: number
}

/** Memory as it was at a reply ("Memory at this reply"): shown read-only. */
export interface MemoryAtTarget {
  /** The commit memory was at; null when memory was empty. */
  readonly at: string | null
  /** The conversation of the reply, for the banner's link back. */
  readonly conversationId: string | null
  /** The paths Claude viewed in that turn. */
  readonly viewed: ReadonlyArray<string>
  readonly token: number
}

export interface Navigation {
  readonly conversationId: string | null
  readonly view: MainView
  readonly sidePane: SidePane
  readonly memoryPath: string | null
  readonly historyTarget: HistoryTarget | null
  /** What the full history view should show when it opens (or now, if open). */
  readonly fullHistoryTarget: HistoryTarget | null
  readonly replyTarget: ReplyTarget | null
  readonly memoryAt: MemoryAtTarget | null
  readonly settingsOpen: boolean
  /** Grows each time something asks for the composer's focus (Ctrl/Cmd+L, new chat). */
  readonly composerFocusRequest: number
  /** Opens a conversation in the chat pane (null: a new, empty chat). */
  openConversation(id: string | null): void
  showSidePane(pane: SidePane): void
  /** Opens the memory browser on a file (and back on memory as it is now). */
  showMemory(path: string | null): void
  /** Opens the history pane, e.g. on the commit a tool card made, or on one file's history. */
  showHistory(target: HistoryTarget | null): void
  /** Opens the full history view (the timeline beside the whole change), on `target`. */
  openFullHistory(target?: HistoryTarget | null): void
  /** Back from the full history view to the chat. */
  closeFullHistory(): void
  /** Opens a conversation and scrolls it to the tool card of `toolUseId`. */
  showReply(conversationId: string, toolUseId: string): void
  /** Opens the memory browser read-only on memory as it was at a reply. */
  showMemoryAt(target: Omit<MemoryAtTarget, 'token'>): void
  /** Leaves memory-at-a-reply: the browser shows memory as it is now. */
  backToNow(): void
  openSettings(open: boolean): void
  /** Moves keyboard focus to the chat composer. */
  focusComposer(): void
}

const NavigationContext = createContext<Navigation | null>(null)

/** App-wide navigation state: what is open where. Data itself always comes from main. */
export function NavigationProvider({ children }: { readonly children: ReactNode }) {
  const [conversationId, setConversationId] = useState<string | null>(null)
  const [view, setView] = useState<MainView>('chat')
  const [sidePane, setSidePane] = useState<SidePane>('memory')
  const [memoryPath, setMemoryPath] = useState<string | null>(null)
  const [historyTarget, setHistoryTarget] = useState<HistoryTarget | null>(null)
  const [fullHistoryTarget, setFullHistoryTarget] = useState<HistoryTarget | null>(null)
  const [replyTarget, setReplyTarget] = useState<ReplyTarget | null>(null)
  const [memoryAt, setMemoryAt] = useState<MemoryAtTarget | null>(null)
  const [settingsOpen, setSettingsOpen] = useState(false)
  const [composerFocusRequest, setComposerFocusRequest] = useState(0)

  const showMemory = useCallback((path: string | null) => {
    setMemoryPath(path)
    setMemoryAt(null)
    setSidePane('memory')
    setView('chat')
  }, [])
  const showHistory = useCallback((target: HistoryTarget | null) => {
    setHistoryTarget(target)
    setSidePane('history')
    setView('chat')
  }, [])
  const showSidePane = useCallback((pane: SidePane) => {
    setSidePane(pane)
    setView('chat')
  }, [])
  const openFullHistory = useCallback((target: HistoryTarget | null = null) => {
    if (target) setFullHistoryTarget(target)
    setView('history')
  }, [])
  const closeFullHistory = useCallback(() => setView('chat'), [])
  const openConversation = useCallback((id: string | null) => {
    setConversationId(id)
    setView('chat')
  }, [])
  const showReply = useCallback((id: string, toolUseId: string) => {
    setConversationId(id)
    setView('chat')
    setReplyTarget((previous) => ({
      conversationId: id,
      toolUseId,
      token: (previous?.token ?? 0) + 1,
    }))
  }, [])
  const showMemoryAt = useCallback((target: Omit<MemoryAtTarget, 'token'>) => {
    setMemoryAt((previous) => ({ ...target, token: (previous?.token ?? 0) + 1 }))
    setMemoryPath(target.viewed.find((path) => path !== '/memories') ?? null)
    setSidePane('memory')
    setView('chat')
  }, [])
  const backToNow = useCallback(() => setMemoryAt(null), [])
  const focusComposer = useCallback(() => setComposerFocusRequest((n) => n + 1), [])

  const value = useMemo<Navigation>(
    () => ({
      conversationId,
      view,
      sidePane,
      memoryPath,
      historyTarget,
      fullHistoryTarget,
      replyTarget,
      memoryAt,
      settingsOpen,
      composerFocusRequest,
      openConversation,
      showSidePane,
      showMemory,
      showHistory,
      openFullHistory,
      closeFullHistory,
      showReply,
      showMemoryAt,
      backToNow,
      openSettings: setSettingsOpen,
      focusComposer,
    }),
    [
      conversationId,
      view,
      sidePane,
      memoryPath,
      historyTarget,
      fullHistoryTarget,
      replyTarget,
      memoryAt,
      settingsOpen,
      composerFocusRequest,
      openConversation,
      showSidePane,
      showMemory,
      showHistory,
      openFullHistory,
      closeFullHistory,
      showReply,
      showMemoryAt,
      backToNow,
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
