import {
  createContext,
  useCallback,
  useContext,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react'
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

/**
 * What the person has begun on one pending change: the step they are at (editing its text, or
 * giving a reason to decline), the text and the reason typed so far. Kept per change id for as
 * long as the change waits, so looking at another chat, or folding the memory pane's list,
 * loses none of it (review hunt13 D6).
 */
export interface ReviewDraft {
  readonly step: 'view' | 'edit' | 'decline'
  /** For `edit`: the revision of the change the text was written against. */
  readonly basis: number
  readonly text: string
  readonly reason: string
}

interface PendingChanges {
  /** Every change waiting for the person, oldest first. */
  readonly changes: ReadonlyArray<PendingChange>
  /** Null until main answered the first time. */
  readonly loaded: boolean
  decide(id: string, decision: Decision): Promise<ChangeResult>
  /** The draft kept for change `id` (undefined: none begun). */
  draftOf(id: string): ReviewDraft | undefined
  /** Keeps (or, with undefined, forgets) the draft of change `id`. */
  keepDraft(id: string, draft: ReviewDraft | undefined): void
}

const PendingContext = createContext<PendingChanges | null>(null)

/**
 * The changes waiting for review, for the whole app: the chat shows Claude's on their tool
 * cards, the memory pane lists them all. Main's `review:pending` event keeps the list current.
 */
export function PendingChangesProvider({ children }: { readonly children: ReactNode }) {
  const [changes, setChanges] = useState<ReadonlyArray<PendingChange>>([])
  const [loaded, setLoaded] = useState(false)
  const drafts = useRef(new Map<string, ReviewDraft>())

  useMainEvent(
    'review:pending',
    (list) => {
      // A change that left the list (decided, its turn ended) takes its draft with it.
      const waiting = new Set(list.map((change) => change.id))
      for (const id of drafts.current.keys()) if (!waiting.has(id)) drafts.current.delete(id)
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

  const draftOf = useCallback((id: string) => drafts.current.get(id), [])
  const keepDraft = useCallback((id: string, draft: ReviewDraft | undefined) => {
    if (draft) drafts.current.set(id, draft)
    else drafts.current.delete(id)
  }, [])

  const value = useMemo(
    () => ({ changes, loaded, decide, draftOf, keepDraft }),
    [changes, loaded, decide, draftOf, keepDraft],
  )
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
