import { useCallback, useMemo, useRef, useState, type RefObject } from 'react'
import type { FileUse } from '../../../../shared/types'
import { FileIcon, icons } from '../../components/icons'
import { displayPath, relativeTime, visibleName } from '../../lib/format'
import { useWindowedRows } from '../../lib/use-windowed-rows'
import { formatSize } from './tree-model'

/** Each row's height (`.mem-use-row`): only the rows in view plus a margin are drawn. */
const ROW_HEIGHT = 26

/** "read 3 days ago", or "not read yet" for a file Claude has not viewed since the log began. */
export function readLabel(file: FileUse, now: number): string {
  return file.lastReadAt === null ? 'not read yet' : `read ${relativeTime(file.lastReadAt, now)}`
}

/**
 * The memory files as a flat list, when sorted by use or filtered by last read: each with
 * when Claude last read it and its size; a file one view cannot show whole is marked. Windowed
 * like the tree: only the rows in view (plus a margin, the selected row and the one with the
 * keyboard focus) are in the DOM, so 20,000 files list as quickly as twenty; each row tells a
 * screen reader its place (`aria-setsize`, `aria-posinset`).
 */
export function FileUseList(props: {
  readonly files: ReadonlyArray<FileUse>
  readonly selected: string | null
  readonly now: number
  readonly label: string
  readonly onSelect: (path: string) => void
  /** The element that scrolls the list (the list sits inside it, maybe below other things). */
  readonly scrollRef: RefObject<HTMLElement | null>
}) {
  const { files, now, selected, scrollRef } = props
  const listRef = useRef<HTMLUListElement>(null)
  const indexOf = useMemo(() => new Map(files.map((file, index) => [file.path, index])), [files])
  // The row whose button has the keyboard focus: kept drawn, so scrolling never drops it.
  const [focused, setFocused] = useState<string | null>(null)
  const pinned = [focused, selected].flatMap((path) =>
    path === null ? [] : (indexOf.get(path) ?? []),
  )
  // A file chosen elsewhere (a search hit, History's "Show in memory") is scrolled into view.
  const selectedIndex = selected === null ? undefined : indexOf.get(selected)
  // Rows named by path: a file added or read above the selected one moves it, and the list
  // stays where one reads instead of jumping back to it.
  const keyOf = useCallback((index: number) => files[index]!.path, [files])
  const { virtualizer, margin } = useWindowedRows({
    count: files.length,
    rowHeight: ROW_HEIGHT,
    keyOf,
    listRef,
    scrollRef,
    pinned,
    selectedIndex,
  })

  if (files.length === 0) {
    return <p className="hint mem-use-empty">No file matches.</p>
  }
  return (
    <ul
      ref={listRef}
      className="mem-use-list"
      aria-label={props.label}
      style={{ height: virtualizer.getTotalSize() }}
    >
      {virtualizer.getVirtualItems().map(({ index, start }) => {
        const file = files[index]!
        return (
          <li
            key={file.path}
            data-index={index}
            aria-setsize={files.length}
            aria-posinset={index + 1}
            className="mem-use-item"
            style={{ transform: `translateY(${start - margin}px)` }}
          >
            <button
              type="button"
              className="mem-use-row"
              aria-current={file.path === selected || undefined}
              aria-label={`${displayPath(file.path)}, ${readLabel(file, now)}, ${formatSize(file.size)}`}
              onClick={() => props.onSelect(file.path)}
              onFocus={() => setFocused(file.path)}
              onBlur={() => setFocused((current) => (current === file.path ? null : current))}
            >
              <span className="mem-tree-icon" aria-hidden="true">
                <FileIcon />
              </span>
              <span className="mem-use-name" title={visibleName(file.path)}>
                {displayPath(file.path)}
              </span>
              {file.overViewLimit && (
                <span
                  className="mem-use-warn"
                  title="Longer than one view: Claude reads it in parts"
                >
                  <icons.alert width={12} height={12} />
                </span>
              )}
              <span className="mem-use-read">{readLabel(file, now)}</span>
              <span className="mem-tree-size">{formatSize(file.size)}</span>
            </button>
          </li>
        )
      })}
    </ul>
  )
}
