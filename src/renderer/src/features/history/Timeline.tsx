import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useId, useRef, type KeyboardEvent } from 'react'
import type { CommitSummary } from '../../../../shared/types'
import { dayHeading, dayKey } from '../../lib/format'
import type { TimelineStore } from './timeline-store'
import { TimelineRow } from './TimelineRow'

const ROW_HEIGHT = 54
/** Extra height of a row that opens a new day with its heading. */
const HEADING_HEIGHT = 30

/**
 * The commits, newest first, as a virtualized grid under day headings ("Today", "Yesterday",
 * "3 November"): only the rows on screen exist in the DOM and only their pages are
 * requested. Arrow keys, Page Up/Down, Home and End move the selection; the grid keeps focus
 * and points at the selected row.
 */
export function Timeline(props: {
  readonly store: TimelineStore
  readonly total: number
  readonly selectedOid: string | null
  readonly scrollTo: { readonly index: number; readonly token: number } | null
  readonly now: number
  /** Changes whenever the store loaded something (re-checks a pending keyboard move). */
  readonly version: number
  readonly conversationTitle: (id: string) => string
  readonly conversationDeleted: (id: string) => boolean
  readonly onSelect: (commit: CommitSummary, index: number) => void
  readonly onOpenConversation: (id: string) => void
}) {
  const { store, total, selectedOid } = props
  const scrollRef = useRef<HTMLDivElement>(null)
  const baseId = useId()
  /** A row opens a day when the row above it (once loaded) is from another day. */
  const opensDay = (index: number): boolean => {
    const entry = store.entryAt(index)
    if (!entry) return false
    if (index === 0) return true
    const above = store.entryAt(index - 1)
    return above !== undefined && dayKey(above.time) !== dayKey(entry.time)
  }
  // eslint-disable-next-line react-hooks/incompatible-library -- virtual rows are read fresh each render
  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => ROW_HEIGHT + (opensDay(index) ? HEADING_HEIGHT : 0),
    overscan: 6,
  })
  // Loaded pages decide where days begin: the rows are measured again.
  const { version } = props
  useEffect(() => {
    virtualizer.measure()
  }, [virtualizer, version, total])
  const items = virtualizer.getVirtualItems()
  const first = items[0]?.index ?? 0
  const last = items.at(-1)?.index ?? 0

  useEffect(() => {
    store.ensure(first, last)
  }, [store, first, last, total])

  const { scrollTo } = props
  useEffect(() => {
    if (scrollTo) virtualizer.scrollToIndex(scrollTo.index, { align: 'auto' })
  }, [scrollTo, virtualizer])

  let selectedIndex = -1
  for (const item of items)
    if (store.entryAt(item.index)?.oid === selectedOid) selectedIndex = item.index

  // A keyboard move to a row whose page is still loading selects it once it arrives.
  const pending = useRef<number | null>(null)
  const { onSelect } = props
  useEffect(() => {
    if (pending.current === null) return
    const entry = store.entryAt(pending.current)
    if (!entry) return
    onSelect(entry, pending.current)
    pending.current = null
  }, [store, version, onSelect])

  const moveTo = (index: number) => {
    const target = Math.max(0, Math.min(total - 1, index))
    virtualizer.scrollToIndex(target, { align: 'auto' })
    const entry = store.entryAt(target)
    pending.current = entry ? null : target
    if (entry) onSelect(entry, target)
  }

  const onKeyDown = (event: KeyboardEvent) => {
    const from = selectedIndex >= 0 ? selectedIndex : first - 1
    const pageRows = Math.max(
      1,
      Math.floor((scrollRef.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1,
    )
    const keys: Record<string, () => void> = {
      ArrowDown: () => moveTo(from + 1),
      ArrowUp: () => moveTo(from - 1),
      PageDown: () => moveTo(from + pageRows),
      PageUp: () => moveTo(from - pageRows),
      Home: () => moveTo(0),
      End: () => moveTo(total - 1),
    }
    const action = keys[event.key]
    if (!action) return
    event.preventDefault()
    action()
  }

  return (
    <div
      ref={scrollRef}
      role="grid"
      aria-label="Commits"
      aria-rowcount={total}
      aria-activedescendant={selectedIndex >= 0 ? `${baseId}-row-${selectedIndex}` : undefined}
      tabIndex={0}
      className="hist-timeline"
      onKeyDown={onKeyDown}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {items.map((item) => {
          const commit = store.entryAt(item.index)
          return (
            <div
              key={item.key}
              id={`${baseId}-row-${item.index}`}
              role="row"
              aria-rowindex={item.index + 1}
              aria-selected={commit ? commit.oid === selectedOid : false}
              className="hist-row"
              style={{ transform: `translateY(${item.start}px)`, height: item.size }}
              onClick={() => commit && onSelect(commit, item.index)}
            >
              {commit ? (
                <TimelineRow
                  commit={commit}
                  now={props.now}
                  heading={opensDay(item.index) ? dayHeading(commit.time, props.now) : null}
                  conversationTitle={props.conversationTitle}
                  conversationDeleted={props.conversationDeleted}
                  onOpenConversation={props.onOpenConversation}
                />
              ) : (
                <div role="gridcell" className="hist-cell hist-placeholder" aria-label="Loading">
                  <span className="hist-skeleton hist-skeleton-wide" />
                  <span className="hist-skeleton" />
                </div>
              )}
            </div>
          )
        })}
      </div>
    </div>
  )
}
