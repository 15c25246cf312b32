import {
  useCallback,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type RefObject,
} from 'react'
import type { MemoryEntry } from '../../../../shared/types'
import { FileIcon, FolderIcon, ImageIcon } from '../../components/icons'
import { visibleName } from '../../lib/format'
import { useWindowedRows } from '../../lib/use-windowed-rows'
import { formatSize, visibleRows, type TreeRow } from './tree-model'

/** Each row's height (`.mem-tree-row`): the tree draws only the rows in view plus a margin. */
const ROW_HEIGHT = 26

const UNREADABLE = { label: 'Cannot be read', tone: 'unreadable' }
// A version the history cannot read (memory at a reply): the rest of that memory still shows.
const DAMAGED = { label: 'Damaged', tone: 'deleted' }
const UNREADABLE_WHY =
  'The system denies Cairn permission to read this (it may belong to another account). It stays as it is; give your account read access to see it here.'

/**
 * The /memories folder as a keyboard-navigable tree (arrows move, Left/Right fold, Home/End).
 * Selection follows focus, like a file explorer's preview. Only the rows in view (plus a
 * margin, plus the focused row) are in the DOM, so a folder of 20,000 files shows as quickly
 * as one of twenty; each row tells a screen reader its place (`aria-setsize`, `aria-posinset`).
 */
export function MemoryTree(props: {
  readonly entries: ReadonlyArray<MemoryEntry>
  readonly selected: string | null
  readonly onSelect: (path: string) => void
  /** A word beside some paths ("Viewed", "Changed since"), and its tone. */
  readonly marks?: ReadonlyMap<string, { readonly label: string; readonly tone: string }>
  /** The element that scrolls the tree (the tree sits inside it, maybe below other things). */
  readonly scrollRef: RefObject<HTMLElement | null>
}) {
  const { entries, selected, onSelect, scrollRef } = props
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set())
  const rows = useMemo(() => visibleRows(entries, collapsed), [entries, collapsed])
  const indexOf = useMemo(() => new Map(rows.map((row, index) => [row.entry.path, index])), [rows])
  const itemRefs = useRef(new Map<string, HTMLElement>())
  const listRef = useRef<HTMLUListElement>(null)
  // The row the keyboard is on: a move sets it at once, while the selection it asks for may
  // wait (unsaved text to keep); a new selection from elsewhere takes it over.
  const [active, setActive] = useState(selected)
  const [seenSelected, setSeenSelected] = useState(selected)
  if (seenSelected !== selected) {
    setSeenSelected(selected)
    setActive(selected)
  }
  const focusable =
    active !== null && indexOf.has(active)
      ? active
      : selected !== null && indexOf.has(selected)
        ? selected
        : rows[0]?.entry.path
  // A keyboard move focuses its row once the row is drawn (it may be far out of view).
  const wantFocus = useRef(false)
  const pinned = [focusable, selected].flatMap((path) =>
    path === null || path === undefined ? [] : (indexOf.get(path) ?? []),
  )
  // A file chosen elsewhere (a search hit, History's "Show in memory") is scrolled into view.
  const selectedIndex = selected === null ? undefined : indexOf.get(selected)
  // Rows named by path: a file added above the selected one (Claude writes while one reads)
  // moves it, and the tree stays where one reads instead of jumping back to it.
  const keyOf = useCallback((index: number) => rows[index]!.entry.path, [rows])
  const { virtualizer, margin } = useWindowedRows({
    count: rows.length,
    rowHeight: ROW_HEIGHT,
    keyOf,
    listRef,
    scrollRef,
    pinned,
    selectedIndex,
  })

  const toggle = (path: string, open?: boolean) =>
    setCollapsed((current) => {
      const next = new Set(current)
      const isOpen = !current.has(path)
      if (open ?? !isOpen) next.delete(path)
      else next.add(path)
      return next
    })

  const move = (path: string | undefined) => {
    if (!path) return
    wantFocus.current = true
    setActive(path)
    onSelect(path)
    const index = indexOf.get(path)
    if (index !== undefined) virtualizer.scrollToIndex(index, { align: 'auto' })
  }

  const items = virtualizer.getVirtualItems()
  const drawnKey = `${items[0]?.index}-${items.at(-1)?.index}-${items.length}`
  useLayoutEffect(() => {
    if (!wantFocus.current || focusable === undefined) return
    const element = itemRefs.current.get(focusable)
    if (!element) return
    element.focus({ preventScroll: true })
    if (document.activeElement === element) wantFocus.current = false
  }, [focusable, drawnKey])

  const onKeyDown = (event: KeyboardEvent, row: TreeRow, index: number) => {
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(rows[index + 1]?.entry.path),
      ArrowUp: () => move(rows[index - 1]?.entry.path),
      Home: () => move(rows[0]?.entry.path),
      End: () => move(rows.at(-1)?.entry.path),
      ArrowRight: () => {
        if (row.expanded === false) toggle(row.entry.path, true)
        else if (row.expanded) move(rows[index + 1]?.entry.path)
      },
      ArrowLeft: () => {
        if (row.expanded) toggle(row.entry.path, false)
        else if (row.parent) move(row.parent)
      },
      Enter: () => (row.expanded === null ? onSelect(row.entry.path) : toggle(row.entry.path)),
      ' ': () => (row.expanded === null ? onSelect(row.entry.path) : toggle(row.entry.path)),
    }
    const action = keys[event.key]
    if (!action) return
    event.preventDefault()
    action()
  }

  // A file or folder Cairn may not read is named as such; a word the browser gives wins.
  const markOf = (entry: MemoryEntry) =>
    props.marks?.get(entry.path) ??
    (entry.unreadable ? UNREADABLE : entry.damaged ? DAMAGED : undefined)

  return (
    <ul
      ref={listRef}
      role="tree"
      aria-label="Memory files"
      className="mem-tree"
      style={{ height: virtualizer.getTotalSize() }}
    >
      {items.map(({ index, start }) => {
        const row = rows[index]!
        return (
          <li
            key={row.entry.path}
            data-index={index}
            ref={(element) => {
              if (element) itemRefs.current.set(row.entry.path, element)
              else itemRefs.current.delete(row.entry.path)
            }}
            role="treeitem"
            aria-level={row.level}
            aria-setsize={row.setSize}
            aria-posinset={row.posInSet}
            aria-expanded={row.expanded ?? undefined}
            aria-selected={row.entry.path === selected}
            aria-label={`${visibleName(row.name)}, ${row.entry.kind === 'dir' ? 'folder' : 'file'}, ${formatSize(row.entry.size)}${
              markOf(row.entry) ? `, ${markOf(row.entry)?.label}` : ''
            }`}
            tabIndex={row.entry.path === focusable ? 0 : -1}
            className="mem-tree-row"
            style={{
              paddingLeft: 8 + (row.level - 1) * 14,
              transform: `translateY(${start - margin}px)`,
            }}
            onClick={() => {
              onSelect(row.entry.path)
              if (row.expanded !== null) toggle(row.entry.path)
            }}
            onKeyDown={(event) => onKeyDown(event, row, index)}
          >
            <span className="mem-tree-twisty" aria-hidden="true">
              {row.expanded === null ? '' : row.expanded ? '▾' : '▸'}
            </span>
            <span className={`mem-tree-icon mem-icon-${iconOf(row)}`} aria-hidden="true">
              {iconOf(row) === 'folder' ? (
                <FolderIcon open={row.expanded === true} />
              ) : iconOf(row) === 'image' ? (
                <ImageIcon />
              ) : (
                <FileIcon />
              )}
            </span>
            <span className="mem-tree-name" title={visibleName(row.entry.path)}>
              {visibleName(row.name)}
            </span>
            {markOf(row.entry) && (
              <span
                className={`mem-tree-mark mem-tree-mark-${markOf(row.entry)?.tone}`}
                title={row.entry.unreadable ? UNREADABLE_WHY : undefined}
                aria-hidden="true"
              >
                {markOf(row.entry)?.label}
              </span>
            )}
            <span className="mem-tree-size" aria-hidden="true">
              {formatSize(row.entry.size)}
            </span>
          </li>
        )
      })}
    </ul>
  )
}

function iconOf(row: TreeRow): 'folder' | 'image' | 'file' {
  if (row.entry.kind === 'dir') return 'folder'
  return /\.(png|jpe?g)$/i.test(row.name) ? 'image' : 'file'
}
