import { useCallback, useEffect, useRef, useState } from 'react'
import { MAX_SEARCH_CHARS, type HistorySearchHit } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'
import { loadSummaries } from '../../lib/commit-summaries'

/** Most hits a search collects; past it the search stops and says so. */
export const MAX_SEARCH_HITS = 500

export interface HistorySearch {
  /** The text searched for, as it was when the search started (null: no search). */
  readonly text: string | null
  readonly matchCase: boolean
  readonly hits: ReadonlyArray<HistorySearchHit>
  readonly state: 'idle' | 'searching' | 'done' | 'stopped' | 'failed'
  /** Commits searched so far, out of `total` (progress). */
  readonly scanned: number
  readonly total: number
  /** True when the search stopped at `MAX_SEARCH_HITS`. */
  readonly capped: boolean
  /** File changes passed over so far because the history's copy of a version is damaged. */
  readonly damaged: number
  readonly error: string | null
}

const IDLE: HistorySearch = {
  text: null,
  matchCase: false,
  hits: [],
  state: 'idle',
  scanned: 0,
  total: 0,
  capped: false,
  damaged: 0,
  error: null,
}

/**
 * Why `text` cannot be searched for, in words for people, or null when it can. The input's
 * own limit stops typing past it; this covers text that reaches the search another way.
 */
export function searchTextProblem(text: string): string | null {
  if (text.length <= MAX_SEARCH_CHARS) return null
  // Shown after "The search failed: ".
  return `it can look for at most ${MAX_SEARCH_CHARS.toLocaleString('en-US')} characters, and this text has ${text.length.toLocaleString('en-US')}. Search for a shorter part of it.`
}

/**
 * "When did this text appear or disappear?" over the whole history, page by page
 * (`history:search`): hits arrive newest first as the search goes, with its progress, and
 * `cancel` stops it at once (keeping what was found). A new search replaces the running one.
 */
export function useHistorySearch(onFirstHit: (oid: string) => void) {
  const firstHit = useRef(onFirstHit)
  useEffect(() => {
    firstHit.current = onFirstHit
  })
  const [search, setSearch] = useState<HistorySearch>(IDLE)
  const generation = useRef(0)

  useEffect(
    () => () => {
      // Leaving the screen stops a running search.
      generation.current++
    },
    [],
  )

  const start = useCallback(async (text: string, matchCase: boolean) => {
    const mine = ++generation.current
    let current: HistorySearch = { ...IDLE, text, matchCase, state: 'searching' }
    const problem = searchTextProblem(text)
    if (problem) {
      setSearch({ ...current, state: 'failed', error: problem })
      return
    }
    setSearch(current)
    let before: string | undefined
    try {
      for (;;) {
        const page = await unwrap(
          api().history.search({ text, matchCase, ...(before ? { before } : {}) }),
        )
        // Restores among the hits are named by what they went back to.
        await loadSummaries(page.hits.map((hit) => hit.commit.restoredFrom)).catch(() => {})
        if (generation.current !== mine) return
        const first = current.hits.length === 0 ? page.hits[0] : undefined
        // The newest change that added or removed the text is shown at once.
        if (first) firstHit.current(first.commit.oid)
        const hits = [...current.hits, ...page.hits].slice(0, MAX_SEARCH_HITS)
        const capped = current.hits.length + page.hits.length > MAX_SEARCH_HITS
        const finished = page.next === null || capped
        current = {
          ...current,
          hits,
          scanned: page.scanned,
          total: page.total,
          capped,
          damaged: current.damaged + page.damaged,
          state: finished ? 'done' : 'searching',
        }
        setSearch(current)
        if (finished) return
        before = page.next ?? undefined
      }
    } catch (error) {
      if (generation.current !== mine) return
      setSearch({ ...current, state: 'failed', error: errorMessage(error) })
    }
  }, [])

  const cancel = useCallback(() => {
    generation.current++
    setSearch((current) =>
      current.state === 'searching' ? { ...current, state: 'stopped' } : current,
    )
  }, [])

  const clear = useCallback(() => {
    generation.current++
    setSearch(IDLE)
  }, [])

  return { search, start, cancel, clear }
}
