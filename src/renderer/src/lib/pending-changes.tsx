import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import type { ChangeResult, PendingChange } from '../../../shared/types'
import { api, unwrap } from './api'
import { useMainEvent } from './use-main-event'

/** A decision on one pending change, as `review:decide` takes it. */
export interface Decision {
  readonly decision: 'approve' | 'decline'
  readonly reason?: string
  readonly editedText?: string
  /** The change's revision the person decided on (see `PendingChange.revision`). */
  readonly revision?: number
}

interface PendingChanges {
  /** Every change waiting for the person, oldest first. */
  readonly changes: ReadonlyArray<PendingChange>
  /** Null until main answered the first time. */
  readonly loaded: boolean
  decide(id: string, decision: Decision): Promise<ChangeResult>
}

const PendingContext = createContext<PendingChanges | null>(null)

/**
 * The changes waiting for review, for the whole app: the chat shows Claude's on their tool
 * cards, the memory pane lists them all. Main's `review:pending` event keeps the list current.
 */
export function PendingChangesProvider({ children }: { readonly children: ReactNode }) {
  const [changes, setChanges] = useState<ReadonlyArray<PendingChange>>([])
  const [loaded, setLoaded] = useState(false)

  useMainEvent(
    'review:pending',
    (list) => {
      setChanges(list)
      setLoaded(true)
    },
    {
      load: () => unwrap(api().review.list()),
      // The next event brings the list; until then nothing shows as waiting.
      failed: () => setLoaded(true),
    },
  )

  const decide = useCallback(
    (id: string, decision: Decision) => unwrap(api().review.decide({ id, ...decision })),
    [],
  )

  const value = useMemo(() => ({ changes, loaded, decide }), [changes, loaded, decide])
  return <PendingContext.Provider value={value}>{children}</PendingContext.Provider>
}

/** The pending changes (see `PendingChangesProvider`). */
export function usePendingChanges(): PendingChanges {
  const value = useContext(PendingContext)
  if (!value) throw new Error('usePendingChanges must be used inside PendingChangesProvider')
  return value
}

/** The change waiting for Claude's tool call `toolUseId`, if any. */
export function usePendingFor(toolUseId: string): PendingChange | undefined {
  const { changes } = usePendingChanges()
  return changes.find((change) => change.toolUseId === toolUseId)
}
