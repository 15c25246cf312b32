import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import type { ConversationSummary } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { Loading } from '../../components/Feedback'
import { icons } from '../../components/icons'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useDebounced } from '../../lib/use-debounced'
import { useNavigation } from '../../lib/navigation'
import { shownTitle } from '../../lib/shown-title'
import { groupByAge } from './conversation-groups'
import { DeleteConversationDialog } from './DeleteConversationDialog'
import { useConversationList } from './use-conversation-list'
import './sidebar.css'

/** The conversation list: new chat, search, rename, delete. */
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

      <div className="conv-groups" data-banner-fallback="">
        {groups.map((group) => (
          <section key={group.label} aria-label={group.label} className="conv-group">
            <h2 className="conv-group-label">{group.label}</h2>
            <ul className="conv-list" aria-label={`${group.label} conversations`}>
              {group.hits.map(({ conversation, excerpt }) => {
                const title = shownTitle(conversation.title)
                return (
                  <li key={conversation.id}>
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
                          ref={(button) => {
                            if (!button || refocus.current !== conversation.id) return
                            refocused.current = button
                            button.focus()
                          }}
                          aria-current={conversation.id === conversationId ? 'page' : undefined}
                          onClick={() => openConversation(conversation.id)}
                          onKeyDown={(event) => {
                            if (event.key === 'F2' && !conversation.unreadable) {
                              event.preventDefault()
                              setRenaming(conversation.id)
                            } else if (event.key === 'Delete') {
                              event.preventDefault()
                              setDeleting(conversation)
                            }
                          }}
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
                            <span className="conv-unreadable" id={`unreadable-${conversation.id}`}>
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
