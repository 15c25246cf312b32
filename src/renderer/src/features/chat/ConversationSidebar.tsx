import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
} from 'react'
import type { VirtualItem } from '@tanstack/react-virtual'
import type { ConversationSummary } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { Loading } from '../../components/Feedback'
import { icons } from '../../components/icons'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useDebounced } from '../../lib/use-debounced'
import { useNavigation } from '../../lib/navigation'
import { useWindowedRows } from '../../lib/use-windowed-rows'
import { shownTitle } from '../../lib/shown-title'
import { groupByAge, listItems, type ConversationListItem } from './conversation-groups'
import { DeleteConversationDialog } from './DeleteConversationDialog'
import { useConversationList } from './use-conversation-list'
import './sidebar.css'

/**
 * Each line's height before it is drawn and measured (`.conv-group-label`, `.conv-open`, with an
 * excerpt or the unreadable warning under the title, `.conv-rename`).
 */
function lineHeight(item: ConversationListItem | undefined, renaming: string | null): number {
  if (!item) return 34
  if (item.kind === 'label') return item.first ? 26 : 36
  const { conversation, excerpt } = item.hit
  if (conversation.id === renaming) return 34
  return conversation.unreadable || excerpt ? 51 : 34
}

function lineKey(item: ConversationListItem | undefined): string {
  return !item ? '' : item.kind === 'label' ? `label:${item.group}` : item.hit.conversation.id
}

/** The drawn lines, by group in order (a group is drawn when any of its lines is). */
function drawnGroups(
  items: ReadonlyArray<ConversationListItem>,
  drawn: ReadonlyArray<VirtualItem>,
): ReadonlyArray<{
  readonly group: string
  readonly lines: ReadonlyArray<{ item: ConversationListItem; index: number; start: number }>
}> {
  const groups: {
    group: string
    lines: { item: ConversationListItem; index: number; start: number }[]
  }[] = []
  for (const { index, start } of drawn) {
    const item = items[index]
    if (!item) continue
    const last = groups.at(-1)
    if (last?.group === item.group) last.lines.push({ item, index, start })
    else groups.push({ group: item.group, lines: [{ item, index, start }] })
  }
  return groups
}

/**
 * The conversation list: new chat, search, rename, delete. Windowed: only the lines in view
 * (plus a margin, the row with the keyboard, the open conversation and the one being renamed)
 * are in the DOM, so 10,000 conversations list as quickly as ten. The list is one Tab stop (its
 * row's Rename and Delete follow it); the arrows, Home and End move along it, F2 renames and
 * Delete deletes.
 */
export function ConversationSidebar() {
  const { conversationId, openConversation, focusComposer } = useNavigation()
  const [search, setSearch] = useState('')
  // Search as the person types, without a request per keystroke.
  const query = useDebounced(search)
  const list = useConversationList(query)
  const [renaming, setRenaming] = useState<string | null>(null)
  // The row whose rename field was closed by Enter or Escape: it takes the focus back, which the
  // field had (the field was gone from the page, and the focus with it). Kept by conversation id
  // until the focus goes elsewhere: a renamed row from an older group moves to "Today" once the
  // list reloads, drawn anew there, and takes the focus again.
  const refocus = useRef<string | null>(null)
  const refocused = useRef<HTMLButtonElement | null>(null)
  const closeRename = (id: string, byKey: boolean) => {
    setRenaming(null)
    refocus.current = byKey ? id : null
    if (byKey) setActive(id)
  }
  useEffect(() => {
    const elsewhere = (event: FocusEvent) => {
      if (event.target !== refocused.current) refocus.current = null
    }
    document.addEventListener('focusin', elsewhere)
    return () => document.removeEventListener('focusin', elsewhere)
  }, [])
  const [deleting, setDeleting] = useState<ConversationSummary | null>(null)
  const [actionError, setActionError] = useState<string | null>(null)

  const groups = useMemo(
    () =>
      query.trim()
        ? [{ label: 'Results', hits: list.hits }]
        : groupByAge(list.hits, list.fetchedAt),
    [list.hits, list.fetchedAt, query],
  )

  const items = useMemo(() => listItems(groups), [groups])
  // Conversations in the order the arrows walk them, and each one's line in `items`.
  const order = useMemo(
    () => items.flatMap((item) => (item.kind === 'row' ? [item.hit.conversation.id] : [])),
    [items],
  )
  const lineOf = useMemo(
    () =>
      new Map(
        items.flatMap((item, index) =>
          item.kind === 'row' ? [[item.hit.conversation.id, index] as const] : [],
        ),
      ),
    [items],
  )
  // The row the keyboard is on (the list's one Tab stop): the last one focused or moved to; a
  // conversation opened elsewhere takes it over.
  const [active, setActive] = useState<string | null>(conversationId)
  const [seenOpen, setSeenOpen] = useState(conversationId)
  if (seenOpen !== conversationId) {
    setSeenOpen(conversationId)
    setActive(conversationId)
  }
  const focusable =
    active !== null && lineOf.has(active)
      ? active
      : conversationId !== null && lineOf.has(conversationId)
        ? conversationId
        : order[0]
  const scrollRef = useRef<HTMLDivElement>(null)
  const listRef = useRef<HTMLDivElement>(null)
  const buttons = useRef(new Map<string, HTMLButtonElement>())
  // Drawn wherever they are: the Tab stop (so scrolling never drops the focus), the open
  // conversation, the one being renamed (its field keeps what is typed).
  const pinned = [focusable, conversationId, renaming].flatMap((id) =>
    id === null || id === undefined ? [] : (lineOf.get(id) ?? []),
  )
  // The open conversation is scrolled into view when it changes or moves (a reply puts it first).
  const openLine = conversationId === null ? undefined : lineOf.get(conversationId)
  // One function while the lines stay the same: the virtualizer re-keys every line (10,000 key
  // look-ups at 10,000 conversations) whenever it changes. It follows `items`, not their count:
  // a rename reorders the lines without changing how many there are.
  const keyOf = useCallback((index: number) => lineKey(items[index]), [items])
  const { virtualizer, margin } = useWindowedRows({
    count: items.length,
    rowHeight: (index) => lineHeight(items[index], renaming),
    keyOf,
    listRef,
    scrollRef,
    pinned,
    selectedIndex: openLine,
  })

  // A keyboard move focuses its row once the row is drawn (it may be far out of view).
  const wantFocus = useRef(false)
  const drawn = virtualizer.getVirtualItems()
  const drawnKey = `${drawn[0]?.index}-${drawn.at(-1)?.index}-${drawn.length}`
  useLayoutEffect(() => {
    if (!wantFocus.current || focusable === undefined) return
    const button = buttons.current.get(focusable)
    if (!button) return
    button.focus({ preventScroll: true })
    if (document.activeElement === button) wantFocus.current = false
  }, [focusable, drawnKey])

  const move = (id: string | undefined) => {
    if (id === undefined) return
    wantFocus.current = true
    setActive(id)
    const line = lineOf.get(id)
    if (line !== undefined) virtualizer.scrollToIndex(line, { align: 'auto' })
  }

  const onRowKey = (event: KeyboardEvent, conversation: ConversationSummary) => {
    const at = order.indexOf(conversation.id)
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(order[at + 1]),
      ArrowUp: () => move(order[at - 1]),
      Home: () => move(order[0]),
      End: () => move(order.at(-1)),
      F2: () => {
        if (!conversation.unreadable) setRenaming(conversation.id)
      },
      Delete: () => setDeleting(conversation),
    }
    const action = keys[event.key]
    if (!action) return
    event.preventDefault()
    action()
  }

  const newChat = () => {
    openConversation(null)
    focusComposer()
  }

  const rename = async (id: string, title: string) => {
    const current = list.hits.find((h) => h.conversation.id === id)?.conversation.title
    if (!title.trim() || title.trim() === current) return
    try {
      await unwrap(api().conversations.rename({ id, title: title.trim() }))
      setActionError(null)
    } catch (error) {
      setActionError(`Could not rename the conversation. ${errorMessage(error)}`)
    }
  }

  const confirmDelete = async () => {
    if (!deleting) return
    try {
      await unwrap(api().conversations.delete({ id: deleting.id }))
      if (conversationId === deleting.id) openConversation(null)
      setActionError(null)
    } catch (error) {
      setActionError(`Could not delete the conversation. ${errorMessage(error)}`)
    } finally {
      setDeleting(null)
    }
  }

  return (
    // A group for the focus: when a dialog's change takes the control it went back to (the row
    // of a deleted conversation), the list takes the focus, not the page's body.
    <div className="conv-sidebar" data-banner-group="">
      <div className="conv-top">
        <button
          type="button"
          className="button new-chat"
          onClick={newChat}
          aria-keyshortcuts="Control+N Meta+N"
          title="New chat (Ctrl/⌘ N)"
        >
          <icons.plus />
          New chat
        </button>
        <label className="conv-search">
          <icons.search className="conv-search-icon" />
          <input
            type="search"
            aria-label="Search conversations"
            placeholder="Search conversations"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape' && search) {
                event.stopPropagation()
                setSearch('')
              }
            }}
          />
        </label>
      </div>

      {actionError && (
        <Banner tone="error" title="Something went wrong" onDismiss={() => setActionError(null)}>
          {actionError}
        </Banner>
      )}
      {list.error && (
        <Banner tone="error" title="Could not load conversations" onRetry={list.retry}>
          {list.error}
        </Banner>
      )}
      <Loading active={list.loading} label="Loading conversations…" />

      {!list.loading && !list.error && list.hits.length === 0 && (
        <p className="conv-empty">
          {query.trim()
            ? `No conversation mentions “${query.trim()}”.`
            : 'No conversations yet. Start one with New chat — Claude remembers what matters across chats.'}
        </p>
      )}

      <div className="conv-groups" data-banner-fallback="" ref={scrollRef}>
        <div ref={listRef} className="conv-window" style={{ height: virtualizer.getTotalSize() }}>
          {drawnGroups(items, drawn).map(({ group, lines }) => (
            <section key={group} aria-label={group}>
              {lines.map(({ item, index, start }) =>
                item.kind === 'label' ? (
                  <h2
                    key="label"
                    data-index={index}
                    ref={virtualizer.measureElement}
                    className="conv-group-label conv-placed"
                    data-first={item.first || undefined}
                    style={{ transform: `translateY(${start - margin}px)` }}
                  >
                    {group}
                  </h2>
                ) : null,
              )}
              <ul className="conv-list" aria-label={`${group} conversations`}>
                {lines.map(({ item, index, start }) => {
                  if (item.kind !== 'row') return null
                  const { conversation, excerpt } = item.hit
                  const title = shownTitle(conversation.title)
                  const stop = conversation.id === focusable ? 0 : -1
                  return (
                    <li
                      key={conversation.id}
                      data-index={index}
                      ref={virtualizer.measureElement}
                      className="conv-placed"
                      aria-setsize={item.setSize}
                      aria-posinset={item.posInSet}
                      style={{ transform: `translateY(${start - margin}px)` }}
                      onFocus={() => setActive(conversation.id)}
                    >
                      {renaming === conversation.id ? (
                        <RenameField
                          title={conversation.title}
                          onDone={(title, byKey) => {
                            closeRename(conversation.id, byKey)
                            void rename(conversation.id, title)
                          }}
                          onCancel={() => closeRename(conversation.id, true)}
                        />
                      ) : (
                        <div
                          className="conv-row"
                          data-active={conversation.id === conversationId || undefined}
                        >
                          <button
                            type="button"
                            className="conv-open"
                            tabIndex={stop}
                            ref={(button) => {
                              if (button) buttons.current.set(conversation.id, button)
                              else buttons.current.delete(conversation.id)
                              if (!button || refocus.current !== conversation.id) return
                              refocused.current = button
                              button.focus()
                            }}
                            aria-current={conversation.id === conversationId ? 'page' : undefined}
                            onClick={() => openConversation(conversation.id)}
                            onKeyDown={(event) => onRowKey(event, conversation)}
                            title={
                              conversation.unreadable
                                ? `${title} — this conversation could not be read`
                                : title
                            }
                            aria-label={title}
                            aria-describedby={
                              conversation.unreadable
                                ? `unreadable-${conversation.id}`
                                : excerpt
                                  ? `excerpt-${conversation.id}`
                                  : undefined
                            }
                          >
                            <span className="conv-title" dir="auto">
                              {title}
                            </span>
                            {conversation.unreadable && (
                              <span
                                className="conv-unreadable"
                                id={`unreadable-${conversation.id}`}
                              >
                                <icons.alert />
                                Could not be read
                              </span>
                            )}
                            {excerpt && !conversation.unreadable && (
                              <span className="conv-excerpt" id={`excerpt-${conversation.id}`}>
                                {excerpt}
                              </span>
                            )}
                          </button>
                          <span className="conv-actions">
                            {!conversation.unreadable && (
                              <button
                                type="button"
                                className="icon-button"
                                tabIndex={stop}
                                aria-label={`Rename ${title}`}
                                title="Rename (F2)"
                                onClick={() => setRenaming(conversation.id)}
                              >
                                <icons.pencil />
                              </button>
                            )}
                            <button
                              type="button"
                              className="icon-button"
                              tabIndex={stop}
                              aria-label={`Delete ${title}`}
                              title="Delete (Del)"
                              onClick={() => setDeleting(conversation)}
                            >
                              <icons.trash />
                            </button>
                          </span>
                        </div>
                      )}
                    </li>
                  )
                })}
              </ul>
            </section>
          ))}
        </div>
      </div>

      {deleting && (
        <DeleteConversationDialog
          conversation={deleting}
          onConfirm={confirmDelete}
          onCancel={() => setDeleting(null)}
        />
      )}
    </div>
  )
}

function RenameField({
  title,
  onDone,
  onCancel,
}: {
  readonly title: string
  /** `byKey`: closed by Enter (the focus goes back to the row), not by leaving the field. */
  readonly onDone: (title: string, byKey: boolean) => void
  readonly onCancel: () => void
}) {
  const [value, setValue] = useState(title)
  const finished = useRef(false)
  const finish = (save: boolean, byKey = true) => {
    if (finished.current) return
    finished.current = true
    if (save) onDone(value, byKey)
    else onCancel()
  }
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault()
      finish(true)
    } else if (event.key === 'Escape') {
      event.preventDefault()
      event.stopPropagation()
      finish(false)
    }
  }
  return (
    <input
      className="conv-rename"
      aria-label="Conversation title"
      value={value}
      maxLength={200}
      // Inline rename starts typing at once, like a file rename.
      autoFocus
      onFocus={(event) => event.target.select()}
      onChange={(event) => setValue(event.target.value)}
      onKeyDown={onKeyDown}
      onBlur={() => finish(true, false)}
    />
  )
}
