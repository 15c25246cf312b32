import { useEffect, useEffectEvent } from 'react'
import type { EventMap, EventName } from '../../../shared/contract'
import { api } from './api'

/** How a value main owns is read before its events take over (see `useMainEvent`). */
export interface FirstLoad<T> {
  /** Asks main for the value as it is now. */
  readonly load: () => Promise<T>
  /** Told why `load` failed (not once the component is gone). */
  readonly failed?: (error: unknown) => void
  /** Read and subscribe again whenever this changes (a Retry button's attempt count). */
  readonly key?: unknown
}

/**
 * Follows main's `event` while the component is mounted: `listener` (its latest version, so
 * a new one does not subscribe again) gets each one.
 *
 * With `first`, for state main owns and announces when it changes (a status, a list): the
 * value as it is now is read as the subscription starts and handed to `listener` as well,
 * unless the component is gone by the time it comes.
 */
export function useMainEvent<E extends EventName>(
  event: E,
  listener: (data: EventMap[E]) => void,
  first?: FirstLoad<EventMap[E]>,
): void {
  const onData = useEffectEvent(listener)
  const load = useEffectEvent(() => first?.load())
  const onFailure = useEffectEvent((error: unknown) => first?.failed?.(error))
  const key = first?.key
  useEffect(() => {
    let live = true
    load()?.then(
      (value) => live && onData(value),
      (error: unknown) => live && onFailure(error),
    )
    const off = api().on(event, (data) => onData(data))
    return () => {
      live = false
      off()
    }
    // A new `key` reads the value again.
  }, [event, key])
}
