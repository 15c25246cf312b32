import { useEffect, useRef, useState } from 'react'

/**
 * Whether the scrolled element behind the returned ref holds more below what it shows: true
 * while part of its content is scrolled out of view under its bottom edge. Follows its scrolling,
 * its size and its children (a banner added or dismissed). A scrollbar alone does not say it:
 * overlay scrollbars (macOS, headless Chromium) show only while scrolling.
 */
export function useMoreBelow<T extends HTMLElement>() {
  const ref = useRef<T>(null)
  const [more, setMore] = useState(false)
  useEffect(() => {
    const element = ref.current
    if (!element) return
    // A pixel of rounding is not content.
    const measure = () =>
      setMore(element.scrollHeight - element.scrollTop - element.clientHeight > 1)
    measure()
    element.addEventListener('scroll', measure, { passive: true })
    // Its children's sizes too: a banner can grow with no change to the tree (a late font).
    const resized = new ResizeObserver(measure)
    const observe = () => {
      resized.observe(element)
      for (const child of element.children) resized.observe(child)
    }
    observe()
    const changed = new MutationObserver(() => {
      observe()
      measure()
    })
    changed.observe(element, { childList: true, subtree: true, characterData: true })
    return () => {
      element.removeEventListener('scroll', measure)
      resized.disconnect()
      changed.disconnect()
    }
  }, [])
  return [ref, more] as const
}
