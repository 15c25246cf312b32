import { useEffect, useState } from 'react'

/**
 * True once `active` has stayed true for `delayMs`: loading indicators appear only for waits
 * people notice, and quick loads do not flash.
 */
export function useDelayed(active: boolean, delayMs = 150): boolean {
  const [shown, setShown] = useState(false)
  useEffect(() => {
    if (!active) return
    const timer = window.setTimeout(() => setShown(true), delayMs)
    return () => {
      window.clearTimeout(timer)
      setShown(false)
    }
  }, [active, delayMs])
  return active && shown
}
