import { useEffect } from 'react'
import type { MemoryStats } from '../../../../shared/types'
import { api, unwrap } from '../../lib/api'
import { useResource, type Resource } from '../../lib/use-resource'

const loadStats = () => unwrap(api().hygiene.stats())

/**
 * The size meter and per-file use, kept current: every commit may change sizes, and every
 * command Claude finishes may be a read.
 */
export function useMemoryStats(): Resource<MemoryStats> {
  const stats = useResource('stats', loadStats)
  const { reload } = stats
  useEffect(() => {
    const stopCommits = api().on('history:commit', reload)
    const stopReads = api().on('agent:event', (event) => {
      if (event.type === 'tool-result' && event.commitOid === null && !event.isError) reload()
    })
    return () => {
      stopCommits()
      stopReads()
    }
  }, [reload])
  return stats
}
