import { createContext, useContext, useMemo, useState, type ReactNode } from 'react'

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

/** What is open where: every field of `Navigation` that is not an action. */
type NavigationState = Pick<
  Navigation,
  | 'conversationId'
  | 'view'
  | 'sidePane'
  | 'memoryPath'
  | 'historyTarget'
  | 'fullHistoryTarget'
  | 'replyTarget'
  | 'memoryAt'
  | 'settingsOpen'
  | 'composerFocusRequest'
>

type NavigationActions = Omit<Navigation, keyof NavigationState>

const START: NavigationState = {
  conversationId: null,
  view: 'chat',
  sidePane: 'memory',
  memoryPath: null,
  historyTarget: null,
  fullHistoryTarget: null,
  replyTarget: null,
  memoryAt: null,
  settingsOpen: false,
  composerFocusRequest: 0,
}

/** `state` with `change` applied; `state` itself when nothing changes (no render follows). */
function changed(state: NavigationState, change: Partial<NavigationState>): NavigationState {
  const keys = Object.keys(change) as Array<keyof NavigationState>
  return keys.every((key) => Object.is(state[key], change[key])) ? state : { ...state, ...change }
}

/** App-wide navigation state: what is open where. Data itself always comes from main. */
export function NavigationProvider({ children }: { readonly children: ReactNode }) {
  const [state, setState] = useState<NavigationState>(START)
  const actions = useMemo<NavigationActions>(() => {
    const update = (change: (state: NavigationState) => Partial<NavigationState>) =>
      setState((state) => changed(state, change(state)))
    return {
      openConversation: (id) => update(() => ({ conversationId: id, view: 'chat' })),
      showSidePane: (pane) => update(() => ({ sidePane: pane, view: 'chat' })),
      showMemory: (path) =>
        update(() => ({ memoryPath: path, memoryAt: null, sidePane: 'memory', view: 'chat' })),
      showHistory: (target) =>
        update(() => ({ historyTarget: target, sidePane: 'history', view: 'chat' })),
      openFullHistory: (target = null) =>
        update(() => ({ ...(target ? { fullHistoryTarget: target } : {}), view: 'history' })),
      closeFullHistory: () => update(() => ({ view: 'chat' })),
      showReply: (id, toolUseId) =>
        update((state) => ({
          conversationId: id,
          view: 'chat',
          replyTarget: {
            conversationId: id,
            toolUseId,
            token: (state.replyTarget?.token ?? 0) + 1,
          },
        })),
      showMemoryAt: (target) =>
        update((state) => ({
          memoryAt: { ...target, token: (state.memoryAt?.token ?? 0) + 1 },
          memoryPath: target.viewed.find((path) => path !== '/memories') ?? null,
          sidePane: 'memory',
          view: 'chat',
        })),
      backToNow: () => update(() => ({ memoryAt: null })),
      openSettings: (open) => update(() => ({ settingsOpen: open })),
      focusComposer: () =>
        update((state) => ({ composerFocusRequest: state.composerFocusRequest + 1 })),
    }
  }, [])
  const value = useMemo<Navigation>(() => ({ ...state, ...actions }), [state, actions])
  return <NavigationContext.Provider value={value}>{children}</NavigationContext.Provider>
}

export function useNavigation(): Navigation {
  const navigation = useContext(NavigationContext)
  if (!navigation) throw new Error('useNavigation must be used inside NavigationProvider')
  return navigation
}
