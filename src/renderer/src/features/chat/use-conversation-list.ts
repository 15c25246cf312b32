import { useCallback, useEffect, useState } from 'react'
import type { ConversationSearchHit } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'

export interface ConversationListState {
  readonly hits: ReadonlyArray<ConversationSearchHit>
  /** True until the first answer for the current query arrived. */
  readonly loading: boolean
  readonly error: string | null
  /** When the shown list was fetched (for "Today"/"Yesterday" headings). */
  readonly fetchedAt: number
  retry(): void
}

/**
 * The conversation list for a search query (empty: all, newest first), refreshed whenever main
 * reports `conversations:changed`, and when the window gets the focus back.
 */
export function useConversationList(query: string): ConversationListState {
  const [hits, setHits] = useState<ReadonlyArray<ConversationSearchHit>>([])
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<string | null>(null)
  const [version, setVersion] = useState(0)
  const [fetchedAt, setFetchedAt] = useState(0)

  useEffect(() => api().on('conversations:changed', () => setVersion((n) => n + 1)), [])
  // Coming back to Cairn: another program (an editor, a sync tool) may have changed a
  // conversation's file meanwhile; listing again looks (main takes such a change up and says so).
  useEffect(() => {
    const again = () => setVersion((n) => n + 1)
    window.addEventListener('focus', again)
    return () => window.removeEventListener('focus', again)
  }, [])

  useEffect(() => {
    let live = true
    const trimmed = query.trim()
    unwrap(api().conversations.list(trimmed ? { query: trimmed } : {})).then(
      (next) => {
        if (!live) return
        setHits(next)
        setFetchedAt(Date.now())
        setError(null)
        setLoading(false)
      },
      (failure: unknown) => {
        if (!live) return
        setError(errorMessage(failure))
        setLoading(false)
      },
    )
    return () => {
      live = false
    }
  }, [query, version])

  const retry = useCallback(() => {
    setLoading(true)
    setError(null)
    setVersion((n) => n + 1)
  }, [])

  return { hits, loading, error, fetchedAt, retry }
}
