import {
  createContext,
  useCallback,
  useContext,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react'
import { PREVIEW_CHARS } from '../../../shared/review'
import type { ChangeResult, PendingChange } from '../../../shared/types'
import { api, errorMessage, unwrap } from './api'
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
  /** Why the list could not be read when the window opened (null: it was, or is on its way). */
  readonly loadError: string | null
  /** Reads the list again (after `loadError`). */
  retry(): void
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
  const [listed, setListed] = useState<ReadonlyArray<PendingChange>>([])
  const [loaded, setLoaded] = useState(false)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  const drafts = useRef(new Map<string, ReviewDraft>())
  // The text of each change main left out of a list only to keep the list short (each side
  // fits a preview): fetched once per revision, and kept while the change waits.
  const known = useRef(new Map<string, TextOf>())
  const asked = useRef(new Set<string>())
  const [texts, setTexts] = useState<ReadonlyMap<string, TextOf>>(new Map())
  // The ids of the latest list: a text that arrives after its change left it is dropped.
  const current = useRef<ReadonlySet<string>>(new Set())

  useMainEvent(
    'review:pending',
    (list) => {
      // A change that left the list (decided, its turn ended) takes its draft with it.
      const waiting = new Set(list.map((change) => change.id))
      current.current = waiting
      for (const id of drafts.current.keys()) if (!waiting.has(id)) drafts.current.delete(id)
      for (const id of known.current.keys()) if (!waiting.has(id)) known.current.delete(id)
      for (const key of asked.current) {
        if (!waiting.has(key.slice(0, key.lastIndexOf('@')))) asked.current.delete(key)
      }
      for (const change of list) {
        if (!change.omitted) {
          known.current.set(change.id, {
            revision: change.revision,
            before: change.before,
            after: change.after,
          })
          continue
        }
        if (!leftOutForLength(change) || known.current.get(change.id)?.revision === change.revision)
          continue
        const key = `${change.id}@${change.revision}`
        if (asked.current.has(key)) continue
        asked.current.add(key)
        void unwrap(api().review.text({ id: change.id }))
          .then((text) => {
            if (!current.current.has(change.id)) return
            known.current.set(change.id, text)
            setTexts(new Map(known.current))
          })
          // Gone meanwhile (decided) or failed: the card offers to show it.
          .catch(() => asked.current.delete(key))
      }
      setTexts(new Map(known.current))
      setListed(list)
      setLoaded(true)
      setLoadError(null)
    },
    {
      load: () => unwrap(api().review.list()),
      // Said, with Retry: a change waiting for the person must not look like none.
      failed: (error) => {
        setLoaded(true)
        setLoadError(errorMessage(error))
      },
      key: attempt,
    },
  )
  const retry = useCallback(() => setAttempt((n) => n + 1), [])

  const decide = useCallback(
    (id: string, decision: Decision) => unwrap(api().review.decide({ id, ...decision })),
    [],
  )

  const draftOf = useCallback((id: string) => drafts.current.get(id), [])
  const keepDraft = useCallback((id: string, draft: ReviewDraft | undefined) => {
    if (draft) drafts.current.set(id, draft)
    else drafts.current.delete(id)
  }, [])

  const changes = useMemo(
    () =>
      listed.map((change) => {
        if (!change.omitted || !leftOutForLength(change)) return change
        const text = texts.get(change.id)
        return text?.revision === change.revision
          ? { ...change, before: text.before, after: text.after, omitted: null }
          : change
      }),
    [listed, texts],
  )

  const value = useMemo(
    () => ({ changes, loaded, loadError, retry, decide, draftOf, keepDraft }),
    [changes, loaded, loadError, retry, decide, draftOf, keepDraft],
  )
  return <PendingContext.Provider value={value}>{children}</PendingContext.Provider>
}

interface TextOf {
  readonly revision: number
  readonly before: string | null
  readonly after: string | null
}

/**
 * True for a change whose text main left out of the list only because the list was long
 * (each side fits a preview), not because the text itself is too long to send.
 */
export function leftOutForLength(change: PendingChange): boolean {
  return (
    change.omitted !== null &&
    change.omitted.beforeChars <= PREVIEW_CHARS &&
    change.omitted.afterChars <= PREVIEW_CHARS
  )
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
