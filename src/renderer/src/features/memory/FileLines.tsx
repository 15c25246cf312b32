import {
  useDeferredValue,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ClipboardEvent,
  type KeyboardEvent,
  type ReactNode,
} from 'react'
import { Revealed } from '../../components/Revealed'
import { useWindowedRows } from '../../lib/use-windowed-rows'
import { findInLines, linesOf, selectedText, widestLine, type LineHit } from './file-lines'

/** One line's height (the CSS gives `.mem-code-line` the same): rows of one height window simply. */
const LINE_HEIGHT = 20

/**
 * A text file's lines with their numbers, windowed: only the lines in view (and a margin) are
 * drawn, so 100,000 lines cost what 50 do. What drawing all would give stays: a selection copies
 * every line it spans (drawn or not), Ctrl+A then Ctrl+C copies the whole file, Ctrl+F finds in
 * the whole file, the keys scroll it, and a line named by a search hit is scrolled into view.
 */
export function FileLines(props: {
  readonly text: string
  readonly name: string
  /** 1-based; the line a memory search chose. */
  readonly highlightLine: number | null
  /** What to draw above the lines (a note). */
  readonly note?: ReactNode
}) {
  const { text, name } = props
  const lines = useMemo(() => linesOf(text), [text])
  const scrollRef = useRef<HTMLDivElement>(null)
  const listRef = useRef<HTMLDivElement>(null)
  const findRef = useRef<HTMLInputElement>(null)
  const [finding, setFinding] = useState(false)
  const [query, setQuery] = useState('')
  const deferredQuery = useDeferredValue(query)
  const hits = useMemo(
    () => (finding ? findInLines(lines, deferredQuery) : null),
    [finding, lines, deferredQuery],
  )
  const [current, setCurrent] = useState(0)
  const hit: LineHit | undefined = hits?.hits[Math.min(current, hits.hits.length - 1)]
  // The lines the selection starts and ends on stay drawn while the rest scrolls, so a
  // selection extended far below (Shift+click, a drag) still starts where the person began it,
  // and still ends where they ended it once they scroll back (its end row, taken out of the
  // page, left the selection ending at the top of the lines: a copy gave lines 2 to 4).
  const [ends, setEnds] = useState<readonly [number | null, number | null]>([null, null])
  // Ctrl+A in the lines chose the whole file, which is more than is drawn.
  const wholeFile = useRef(false)

  const highlightIndex = props.highlightLine === null ? undefined : props.highlightLine - 1
  const selectedIndex = hit?.line ?? highlightIndex
  const pinned = [...ends, selectedIndex].filter((i): i is number => i !== null && i !== undefined)
  const { virtualizer, margin } = useWindowedRows({
    count: lines.length,
    rowHeight: LINE_HEIGHT,
    listRef,
    scrollRef,
    pinned,
    selectedIndex,
  })

  // The match Find stands on is brought into view across too: in a line of 100,000 characters
  // it may lie far to the right of what is in view (the rows only scroll it into view down).
  useEffect(() => {
    const region = scrollRef.current
    const mark = hit ? listRef.current?.querySelector('mark.mem-find-hit') : null
    if (!region || !mark) return
    const seen = region.getBoundingClientRect()
    const at = mark.getBoundingClientRect()
    if (at.left >= seen.left && at.right <= seen.right) return
    region.scrollLeft += at.left - seen.left - seen.width / 3
  }, [hit])

  useEffect(() => {
    const lineOf = (node: Node | null): number | null => {
      const row =
        node && (node instanceof Element ? node : node.parentElement)?.closest('[data-line]')
      return row && listRef.current?.contains(row) ? Number(row.getAttribute('data-line')) : null
    }
    const onSelection = () => {
      const list = listRef.current
      const selection = document.getSelection()
      const anchor = selection?.anchorNode ?? null
      if (!list || !anchor || !list.contains(anchor)) return
      const next = [lineOf(anchor), lineOf(selection?.focusNode ?? null)] as const
      setEnds((before) => (before[0] === next[0] && before[1] === next[1] ? before : next))
    }
    document.addEventListener('selectionchange', onSelection)
    return () => document.removeEventListener('selectionchange', onSelection)
  }, [])

  const onCopy = (event: ClipboardEvent) => {
    const list = listRef.current
    const selection = document.getSelection()
    if (!list || !selection || selection.isCollapsed) return
    const copied = wholeFile.current ? text : selectedText(list, selection, lines)
    if (copied === null) return
    event.clipboardData.setData('text/plain', copied)
    event.preventDefault()
  }

  const onKeyDown = (event: KeyboardEvent) => {
    const command = (event.ctrlKey || event.metaKey) && !event.altKey
    const key = event.key.toLowerCase()
    if (command && key === 'f') {
      event.preventDefault()
      setFinding(true)
      // The box exists after this render; it is focused (and its text chosen) then.
      requestAnimationFrame(() => {
        findRef.current?.focus()
        findRef.current?.select()
      })
      return
    }
    if (command && key === 'a' && event.target === scrollRef.current) {
      // The page's own Ctrl+A would choose the whole window; here it means the whole file.
      event.preventDefault()
      const list = listRef.current
      const selection = document.getSelection()
      if (!list || !selection) return
      selection.selectAllChildren(list)
      wholeFile.current = true
      return
    }
    if (!(command && key === 'c') && !['Control', 'Meta', 'Shift'].includes(event.key)) {
      wholeFile.current = false
    }
  }

  const step = (by: number) => {
    if (!hits || hits.hits.length === 0) return
    setCurrent(
      (at) => (Math.min(at, hits.hits.length - 1) + by + hits.hits.length) % hits.hits.length,
    )
  }
  const closeFind = () => {
    setFinding(false)
    setQuery('')
    setCurrent(0)
    scrollRef.current?.focus()
  }

  const widest = useMemo(() => widestLine(lines), [lines])
  const digits = String(lines.length).length
  const gutter = `max(44px, calc(${digits}ch + 14px))`
  return (
    <div className="mem-lines" onKeyDown={onKeyDown}>
      {finding && (
        <div className="mem-find" role="search" aria-label={`Find in ${name}`}>
          <input
            ref={findRef}
            className="input input-small mem-find-input"
            type="search"
            aria-label="Find in file"
            placeholder="Find in file"
            value={query}
            onChange={(event) => {
              setQuery(event.target.value)
              setCurrent(0)
            }}
            onKeyDown={(event) => {
              if (event.key === 'Enter') {
                event.preventDefault()
                step(event.shiftKey ? -1 : 1)
              } else if (event.key === 'Escape') {
                event.preventDefault()
                event.stopPropagation()
                closeFind()
              }
            }}
          />
          <span className="hint mem-find-count" role="status">
            {hits === null || deferredQuery === ''
              ? ''
              : hits.hits.length === 0
                ? 'No matches'
                : `${(Math.min(current, hits.hits.length - 1) + 1).toLocaleString('en-US')} of ${hits.hits.length.toLocaleString('en-US')}${hits.more ? '+' : ''}`}
          </span>
          <button
            type="button"
            className="button button-small"
            onClick={() => step(-1)}
            disabled={!hits || hits.hits.length === 0}
            title="Previous match (Shift+Enter)"
          >
            Previous
          </button>
          <button
            type="button"
            className="button button-small"
            onClick={() => step(1)}
            disabled={!hits || hits.hits.length === 0}
            title="Next match (Enter)"
          >
            Next
          </button>
          <button type="button" className="button button-small" onClick={closeFind}>
            Close
          </button>
        </div>
      )}
      <div
        ref={scrollRef}
        className="mem-code"
        role="region"
        aria-label={`Content of ${name}`}
        title="Ctrl+F finds in this file"
        tabIndex={0}
        onCopy={onCopy}
        onMouseDown={() => {
          wholeFile.current = false
        }}
      >
        {props.note}
        {text === '' ? (
          <p className="hint mem-file-note">This file is empty.</p>
        ) : (
          <div
            ref={listRef}
            className="mem-code-lines"
            style={{
              height: virtualizer.getTotalSize(),
              width: `max(100%, calc(${gutter} + ${widest}ch + 16px))`,
            }}
          >
            {virtualizer.getVirtualItems().map(({ index, start }) => {
              const line = lines[index]!
              const found = hit?.line === index ? hit : undefined
              return (
                <div
                  key={index}
                  data-line={index}
                  className={`mem-code-line${highlightIndex === index || found ? ' mem-code-hit' : ''}`}
                  style={{ transform: `translateY(${start - margin}px)` }}
                >
                  <span className="mem-gutter" aria-hidden="true" style={{ width: gutter }}>
                    {index + 1}
                  </span>
                  <span className="mem-code-text">
                    {line === '' ? '\u200b' : <LineText line={line} hit={found} />}
                  </span>
                </div>
              )
            })}
          </div>
        )}
      </div>
    </div>
  )
}

/** A line, with the match Find stands on marked. */
function LineText({ line, hit }: { readonly line: string; readonly hit: LineHit | undefined }) {
  if (!hit) return <Revealed text={line} />
  const end = hit.column + hit.length
  return (
    <>
      <Revealed text={line.slice(0, hit.column)} />
      <mark className="mem-find-hit">
        <Revealed text={line.slice(hit.column, end)} />
      </mark>
      <Revealed text={line.slice(end)} />
    </>
  )
}
