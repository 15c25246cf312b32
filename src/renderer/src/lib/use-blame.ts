import { useEffect } from 'react'
import type { BlameLine } from '../../../shared/types'
import { api, unwrap } from './api'
import { useResource, type Resource } from './use-resource'

const loadBlame = (key: string) => {
  const { path, oid } = JSON.parse(key) as { path: string; oid: string | null }
  return unwrap(api().history.blame(oid ? { path, oid } : { path }))
}

/**
 * Each line of `path` with the commit that last changed it, at commit `oid` or (null) as it
 * is now; the latter is loaded again after every commit. `path === null` loads nothing.
 */
export function useBlame(
  path: string | null,
  oid: string | null,
): Resource<ReadonlyArray<BlameLine>> {
  const key = path === null ? null : JSON.stringify({ path, oid })
  const resource = useResource(key, loadBlame)
  const { reload } = resource
  useEffect(() => {
    if (oid !== null || key === null) return
    return api().on('history:commit', () => reload())
  }, [oid, key, reload])
  return resource
}
