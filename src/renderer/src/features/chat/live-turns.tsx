import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react'
import type { AgentEvent } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useMainEvent } from '../../lib/use-main-event'
import {
  withEvent,
  withRunning,
  type TrackedTurn,
  type TurnsByConversation,
} from './live-turn-state'
import { startLiveTurn } from './transcript-model'

export type { TrackedTurn } from './live-turn-state'

interface LiveTurns {
  readonly byConversation: TurnsByConversation
  /** The most recently started turn of any conversation (a new chat adopts its id). */
  readonly latestStarted: TrackedTurn | null
  /** Why the window could not learn which turns were already running when it opened. */
  readonly catchUpError: string | null
  /** Asks main again which turns run (after `catchUpError`). */
  retryCatchUp(): void
  settle(conversationId: string, turnId: string): void
  dismissError(conversationId: string): void
}

const LiveTurnsContext = createContext<LiveTurns | null>(null)

/**
 * Listens to `agent:event` for the whole app, so a turn keeps streaming while the person
 * looks at another conversation and shows complete when they come back. A window that opens
 * (or reloads) while turns run asks main for them (`chat:running`) and follows on from there.
 */
export function LiveTurnsProvider({ children }: { readonly children: ReactNode }) {
  const [byConversation, setByConversation] = useState<TurnsByConversation>({})
  const [latestStarted, setLatestStarted] = useState<TrackedTurn | null>(null)
  const [catchUpError, setCatchUpError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  // The live events that came while `chat:running` was being asked (null: not asking).
  const since = useRef<AgentEvent[] | null>(null)

  useMainEvent('agent:event', (event: AgentEvent) => {
    since.current?.push(event)
    if (event.type === 'turn-started') {
      setLatestStarted({
        ...startLiveTurn(event),
        settled: false,
        errorDismissed: false,
        next: 1,
        fromStart: true,
      })
    }
    setByConversation((all) => withEvent(all, event))
  })

  useEffect(() => {
    let live = true
    since.current = []
    unwrap(api().chat.running()).then(
      (running) => {
        if (!live) return
        const arrived = since.current ?? []
        since.current = null
        setCatchUpError(null)
        setByConversation((all) => withRunning(all, running, arrived))
      },
      (error: unknown) => {
        if (!live) return
        since.current = null
        setCatchUpError(errorMessage(error))
      },
    )
    return () => {
      live = false
    }
  }, [attempt])

  const retryCatchUp = useCallback(() => setAttempt((n) => n + 1), [])

  const settle = useCallback((conversationId: string, turnId: string) => {
    setByConversation((all) => {
      const current = all[conversationId]
      if (!current || current.turnId !== turnId || current.settled) return all
      return { ...all, [conversationId]: { ...current, settled: true } }
    })
  }, [])

  const dismissError = useCallback((conversationId: string) => {
    setByConversation((all) => {
      const current = all[conversationId]
      if (!current) return all
      return { ...all, [conversationId]: { ...current, errorDismissed: true } }
    })
  }, [])

  const value = useMemo(
    () => ({
      byConversation,
      latestStarted,
      catchUpError,
      retryCatchUp,
      settle,
      dismissError,
    }),
    [byConversation, latestStarted, catchUpError, retryCatchUp, settle, dismissError],
  )
  return <LiveTurnsContext.Provider value={value}>{children}</LiveTurnsContext.Provider>
}

/** The live turns of the app (see `LiveTurnsProvider`). */
export function useLiveTurns(): LiveTurns {
  const value = useContext(LiveTurnsContext)
  if (!value) throw new Error('useLiveTurns must be used inside LiveTurnsProvider')
  return value
}
