import { useState, type ReactNode } from 'react'
import type { TimelineFilters } from './timeline-store'
import { visibleName } from '../../lib/format'

/** File, conversation and author filters above the timeline. */
export function HistoryFilters(props: {
  readonly filters: TimelineFilters
  readonly onChange: (filters: TimelineFilters) => void
  readonly filePaths: ReadonlyArray<string>
  readonly conversations: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly total: number | null
  /** More controls at the end of the bar (the side pane's "Open full history"). */
  readonly children?: ReactNode
}) {
  const { filters, onChange } = props
  // The box and its suggestions draw names as `visibleName` writes them (a bidi override must
  // not reorder them); what is applied is the name itself (backslashes are refused in names,
  // so an escape never stands for a real name).
  const realPath = (shown: string) => props.filePaths.find((p) => visibleName(p) === shown) ?? shown
  const [pathDraft, setPathDraft] = useState(visibleName(filters.path ?? ''))
  const [shownPath, setShownPath] = useState(filters.path)
  if (filters.path !== shownPath) {
    setShownPath(filters.path)
    setPathDraft(visibleName(filters.path ?? ''))
  }
  const applyPath = (value: string) => {
    const path = realPath(value.trim()).replace(/\/$/, '')
    const next = path === '' ? undefined : path.startsWith('/memories') ? path : `/memories/${path}`
    if (next !== filters.path) onChange({ ...filters, path: next })
  }
  const conversations = props.conversations.some((c) => c.id === filters.conversationId)
    ? props.conversations
    : filters.conversationId
      ? [{ id: filters.conversationId, title: 'This conversation' }, ...props.conversations]
      : props.conversations
  const active = Boolean(filters.path || filters.conversationId || filters.actor)

  return (
    <div className="hist-filters" role="search" aria-label="Filter history">
      <input
        type="text"
        className="input input-small hist-filter-file"
        aria-label="Filter by file"
        placeholder="Filter by file…"
        list="hist-file-paths"
        value={pathDraft}
        spellCheck={false}
        onChange={(event) => {
          setPathDraft(event.target.value)
          if (
            event.target.value === '' ||
            props.filePaths.some((p) => visibleName(p) === event.target.value)
          ) {
            applyPath(event.target.value)
          }
        }}
        onKeyDown={(event) => {
          if (event.key === 'Enter') applyPath(pathDraft)
          if (event.key === 'Escape') {
            setPathDraft('')
            applyPath('')
          }
        }}
        onBlur={() => applyPath(pathDraft)}
      />
      <datalist id="hist-file-paths">
        {props.filePaths.map((path) => (
          <option key={path} value={visibleName(path)} />
        ))}
      </datalist>
      <select
        className="input input-small"
        aria-label="Filter by author"
        value={filters.actor ?? ''}
        onChange={(event) =>
          onChange({
            ...filters,
            actor: (event.target.value || undefined) as TimelineFilters['actor'],
          })
        }
      >
        <option value="">All authors</option>
        <option value="claude">Claude</option>
        <option value="user">You</option>
        <option value="system">Cairn (recovery, outside edits)</option>
        <option value="outside">Others (commits made with git)</option>
      </select>
      <select
        className="input input-small hist-filter-conversation"
        aria-label="Filter by conversation"
        // A long title chosen can be wider than the column: the tooltip says it whole.
        title={conversations.find((c) => c.id === filters.conversationId)?.title}
        value={filters.conversationId ?? ''}
        onChange={(event) =>
          onChange({ ...filters, conversationId: event.target.value || undefined })
        }
      >
        <option value="">All conversations</option>
        {conversations.map((c) => (
          <option key={c.id} value={c.id}>
            {c.title}
          </option>
        ))}
      </select>
      <span className="hist-count" role="status" aria-label="Number of changes">
        {props.total === null
          ? ''
          : `${props.total.toLocaleString()} ${props.total === 1 ? 'change' : 'changes'}`}
      </span>
      {active && (
        <button type="button" className="button button-small" onClick={() => onChange({})}>
          Clear filters
        </button>
      )}
      {props.children}
    </div>
  )
}
