import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import type { AgentEvent } from '../../../../shared/types'
import { applyAgentEvent, startLiveTurn, type LiveTurn } from './transcript-model'
import { useMainEvent } from '../../lib/use-main-event'

/** A live turn plus whether the stored conversation has caught up with it. */
export interface TrackedTurn extends LiveTurn {
  /** True once the pane reloaded the stored conversation after the turn finished. */
  readonly settled: boolean
  readonly errorDismissed: boolean
}

interface LiveTurns {
  readonly byConversation: Readonly<Record<string, TrackedTurn>>
  /** The most recently started turn of any conversation (a new chat adopts its id). */
  readonly latestStarted: TrackedTurn | null
  settle(conversationId: string, turnId: string): void
  dismissError(conversationId: string): void
}

const LiveTurnsContext = createContext<LiveTurns | null>(null)

function track(turn: LiveTurn, previous?: TrackedTurn): TrackedTurn {
  const sameTurn = previous?.turnId === turn.turnId
  return {
    ...turn,
    settled: sameTurn ? previous.settled : false,
    errorDismissed: sameTurn ? previous.errorDismissed : false,
  }
}

/**
 * Listens to `agent:event` for the whole app, so a turn keeps streaming while the person
 * looks at another conversation and shows complete when they come back.
 */
export function LiveTurnsProvider({ children }: { readonly children: ReactNode }) {
  const [byConversation, setByConversation] = useState<Record<string, TrackedTurn>>({})
  const [latestStarted, setLatestStarted] = useState<TrackedTurn | null>(null)

  useMainEvent('agent:event', (event: AgentEvent) => {
    if (event.type === 'turn-started') setLatestStarted(track(startLiveTurn(event)))
    setByConversation((all) => {
      const current = all[event.conversationId]
      const base =
        current && current.turnId === event.turnId ? current : track(startLiveTurn(event))
      return { ...all, [event.conversationId]: track(applyAgentEvent(base, event), base) }
    })
  })

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
    () => ({ byConversation, latestStarted, settle, dismissError }),
    [byConversation, latestStarted, settle, dismissError],
  )
  return <LiveTurnsContext.Provider value={value}>{children}</LiveTurnsContext.Provider>
}

/** The live turns of the app (see `LiveTurnsProvider`). */
export function useLiveTurns(): LiveTurns {
  const value = useContext(LiveTurnsContext)
  if (!value) throw new Error('useLiveTurns must be used inside LiveTurnsProvider')
  return value
}
