/**
 * Commit summaries by id, for naming what a restore went back to or what wrote a line. A
 * commit never changes, so what was loaded once is kept (the number of ids asked for in a
 * session is small: restore targets on screen).
 */
import { useEffect, useState } from 'react'
import type { CommitSummary } from '../../../shared/types'
import { api, unwrap } from './api'

const known = new Map<string, CommitSummary>()
const missing = new Set<string>()

/** The summaries of `oids` that are in the history, loading the ones not seen yet. */
export async function loadSummaries(
  oids: ReadonlyArray<string | null | undefined>,
): Promise<ReadonlyMap<string, CommitSummary>> {
  const wanted = [...new Set(oids.filter((oid): oid is string => Boolean(oid)))]
  const unknown = wanted.filter((oid) => !known.has(oid) && !missing.has(oid))
  for (let i = 0; i < unknown.length; i += 500) {
    const batch = unknown.slice(i, i + 500)
    const found = await unwrap(api().history.summaries({ oids: batch }))
    for (const summary of found) known.set(summary.oid, summary)
    for (const oid of batch) if (!known.has(oid)) missing.add(oid)
  }
  return new Map(wanted.flatMap((oid) => (known.has(oid) ? [[oid, known.get(oid)!]] : [])))
}

/** A summary already loaded (synchronously), or undefined. */
export function knownSummary(oid: string | null | undefined): CommitSummary | undefined {
  return oid ? known.get(oid) : undefined
}

/** The summary of `oid` (null while loading, when unknown, or for a null id). */
export function useSummary(oid: string | null | undefined): CommitSummary | null {
  const [loaded, setLoaded] = useState<CommitSummary | null>(null)
  useEffect(() => {
    if (!oid || known.has(oid)) return
    let current = true
    loadSummaries([oid]).then(
      (found) => current && setLoaded(found.get(oid) ?? null),
      () => {
        // Only a description is missing: the sentence says "an earlier version" instead.
      },
    )
    return () => {
      current = false
    }
  }, [oid])
  if (!oid) return null
  return known.get(oid) ?? (loaded?.oid === oid ? loaded : null)
}
