import { useLayoutEffect, useRef, useState } from 'react'

/**
 * Whether the element behind the returned ref may stay pinned (sticky) at the top of the pane
 * that scrolls it: only while it leaves that pane `room` pixels below it. A pinned header
 * taller than its pane hides its own last rows for good (scrolling moves only what is under
 * it), so once it no longer fits it scrolls away with the rest. While pinned, the pane's
 * scroll-padding-top is its height, so focus never lands under it. Follows both sizes (a resized
 * window or splitter, a note that wraps); measured before paint, so a fitting header never
 * jumps.
 */
export function usePinnedIfRoom<T extends HTMLElement>(room: number) {
  const ref = useRef<T>(null)
  const [pinned, setPinned] = useState(true)
  useLayoutEffect(() => {
    const element = ref.current
    const pane = element && scrollingParent(element)
    if (!element || !pane) return
    const measure = () => {
      const fits = element.offsetHeight + room <= pane.clientHeight
      setPinned(fits)
      // A control reached by Tab (or Shift+Tab from below) is scrolled into view below the
      // pinned element, not under it.
      pane.style.scrollPaddingTop = fits ? `${element.offsetHeight}px` : ''
    }
    measure()
    const resized = new ResizeObserver(measure)
    resized.observe(element)
    resized.observe(pane)
    return () => {
      resized.disconnect()
      pane.style.scrollPaddingTop = ''
    }
  }, [room])
  return [ref, pinned] as const
}

function scrollingParent(element: HTMLElement): HTMLElement | null {
  for (let parent = element.parentElement; parent; parent = parent.parentElement) {
    const { overflowY } = getComputedStyle(parent)
    if (overflowY === 'auto' || overflowY === 'scroll') return parent
  }
  return null
}
