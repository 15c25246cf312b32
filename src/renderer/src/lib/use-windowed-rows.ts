import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react'
import { rowsToDraw } from './windowing'

/** Rows drawn above and below the view, so a quick scroll or a Page key shows no blank. */
const OVERSCAN = 12

/**
 * A windowed list of rows inside a scrolling parent (the memory tree, the By use list, the
 * conversation list): only the rows in view plus a margin are drawn, and the `pinned` rows wherever they are
 * (the focused one, so scrolling never drops the keyboard focus; the selected one). The row at
 * `selectedIndex` is scrolled into view when it changes (a file chosen from search or History);
 * a row that only moved (the same `keyOf`) is followed only if it was in view.
 * Gives the virtualizer and where the list starts inside its parent (`margin`: a notice may sit
 * above it), which each row's offset subtracts. Rows of one height give `rowHeight` as a number;
 * rows of several heights give each row's estimate, name each row (`keyOf`, so a measured height
 * follows its row when the list changes: one function while the rows stay the same, as every new
 * one re-keys every row) and hand each drawn row to `virtualizer.measureElement`.
 */
export function useWindowedRows(options: {
  readonly count: number
  readonly rowHeight: number | ((index: number) => number)
  readonly keyOf?: (index: number) => string
  readonly listRef: RefObject<HTMLElement | null>
  readonly scrollRef: RefObject<HTMLElement | null>
  readonly pinned: ReadonlyArray<number>
  readonly selectedIndex: number | undefined
}) {
  const { count, rowHeight, keyOf, listRef, scrollRef, pinned, selectedIndex } = options
  const [margin, setMargin] = useState(0)
  useLayoutEffect(() => {
    const list = listRef.current
    const scroller = scrollRef.current
    if (!list || !scroller) return
    const top =
      list.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop
    setMargin((current) => (Math.abs(current - top) < 0.5 ? current : top))
  }, [listRef, scrollRef, count])

  const pinnedKey = pinned.join(',')
  // eslint-disable-next-line react-hooks/incompatible-library -- virtual rows are read fresh each render
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: typeof rowHeight === 'number' ? () => rowHeight : rowHeight,
    ...(keyOf ? { getItemKey: keyOf } : {}),
    overscan: OVERSCAN,
    scrollMargin: margin,
    rangeExtractor: (range) => {
      const shown = defaultRangeExtractor(range)
      return [
        ...rowsToDraw({ start: shown[0] ?? -1, end: shown.at(-1) ?? -1 }, range.count, pinned),
      ]
    },
  })
  // The pinned rows change what is drawn even when nothing scrolled.
  useEffect(() => {
    virtualizer.measure()
  }, [virtualizer, pinnedKey])

  // The selected row is scrolled into view when the selection changes; when it only moves (a
  // reply puts the open conversation first, a search is cleared), it is followed if it was in
  // view, not when the list was scrolled away from it: a row added or renamed elsewhere must not
  // pull the list from where one reads.
  const selectedKey =
    selectedIndex === undefined ? undefined : keyOf ? keyOf(selectedIndex) : selectedIndex
  const seen = useRef<{ key: string | number | undefined; inView: boolean }>({
    key: undefined,
    inView: false,
  })
  useEffect(() => {
    const before = seen.current
    if (selectedIndex === undefined) return
    if (selectedKey !== before.key || before.inView) {
      virtualizer.scrollToIndex(selectedIndex, { align: 'auto' })
    }
  }, [selectedIndex, selectedKey, virtualizer])
  useEffect(() => {
    const range = virtualizer.range
    seen.current = {
      key: selectedKey,
      inView:
        selectedIndex !== undefined &&
        range !== null &&
        selectedIndex >= range.startIndex &&
        selectedIndex <= range.endIndex,
    }
  })

  return { virtualizer, margin }
}
