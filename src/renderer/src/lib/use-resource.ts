import { useCallback, useEffect, useRef, useState } from 'react'
import type { ErrorCode } from '../../../shared/errors'
import { ApiError, errorMessage } from './api'

export interface Resource<T> {
  /** The value loaded for the current key (kept while a reload of the same key runs). */
  readonly value: T | undefined
  readonly error: string | null
  /** The code of main's error, when it gave one (a view may word a refusal as a fact). */
  readonly errorCode: ErrorCode | null
  readonly loading: boolean
  /** Loads the current key again (after a commit, or from a Retry button). */
  reload(): void
}

interface Settled<T> {
  readonly key: string
  readonly version: number
  readonly value: T | undefined
  readonly error: string | null
  readonly code: ErrorCode | null
}

/**
 * Data from main for one key (e.g. a file path), loaded when the key changes and on
 * `reload()`. `key === null` loads nothing. Late answers for an older key are dropped.
 */
export function useResource<T>(key: string | null, load: (key: string) => Promise<T>): Resource<T> {
  const [version, setVersion] = useState(0)
  const [settled, setSettled] = useState<Settled<T> | null>(null)
  const loadRef = useRef(load)
  useEffect(() => {
    loadRef.current = load
  })

  useEffect(() => {
    if (key === null) return
    let current = true
    loadRef.current(key).then(
      (value) => current && setSettled({ key, version, value, error: null, code: null }),
      (error: unknown) =>
        current &&
        setSettled((previous) => ({
          key,
          version,
          value: previous?.key === key ? previous.value : undefined,
          error: errorMessage(error),
          code: error instanceof ApiError ? error.code : null,
        })),
    )
    return () => {
      current = false
    }
  }, [key, version])

  const reload = useCallback(() => setVersion((v) => v + 1), [])
  const sameKey = key !== null && settled?.key === key
  const current = sameKey && settled.version === version
  return {
    value: sameKey ? settled.value : undefined,
    error: current ? settled.error : null,
    errorCode: current ? settled.code : null,
    loading: key !== null && (!sameKey || settled.version !== version),
    reload,
  }
}
