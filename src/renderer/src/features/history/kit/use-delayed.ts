import { useEffect, useState } from 'react'

/** True once `active` has stayed true for `delayMs`: loading indicators that do not flicker. */
export function useDelayed(active: boolean, delayMs = 150): boolean {
  const [shown, setShown] = useState(false)
  useEffect(() => {
    if (!active) return
    const timer = setTimeout(() => setShown(true), delayMs)
    return () => {
      clearTimeout(timer)
      setShown(false)
    }
  }, [active, delayMs])
  return active && shown
}

/** The current time, refreshed every `everyMs`, for relative timestamps. */
export function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}
