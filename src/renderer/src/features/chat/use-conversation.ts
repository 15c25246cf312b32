import { useCallback, useEffect, useRef, useState } from 'react'
import type { Conversation, ConversationSummary } from '../../../../shared/types'
import { api, ApiError, errorMessage, unwrap } from '../../lib/api'

export type ConversationState =
  | { readonly status: 'none' }
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly conversation: Conversation }
  | { readonly status: 'missing' }
  /** Its file could not be read: what the list recovered of it, and main's words why. */
  | {
      readonly status: 'unreadable'
      readonly summary: ConversationSummary | null
      readonly message: string
    }
  | { readonly status: 'error'; readonly message: string }

/**
 * The stored conversation `id` (`conversations:get`). `reload()` fetches it again and
 * resolves once the new copy is in state (the pane settles a finished turn after it).
 */
export function useConversation(id: string | null): {
  readonly state: ConversationState
  reload(): Promise<void>
} {
  const [state, setState] = useState<ConversationState>({ status: id ? 'loading' : 'none' })
  const [shownId, setShownId] = useState(id)
  if (shownId !== id) {
    // A different conversation: drop the old one at once rather than flash it.
    setShownId(id)
    setState({ status: id ? 'loading' : 'none' })
  }

  const fetch = useCallback(async (): Promise<ConversationState> => {
    if (!id) return { status: 'none' }
    try {
      return { status: 'ready', conversation: await unwrap(api().conversations.get({ id })) }
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conversation-not-found') {
        return { status: 'missing' }
      }
      if (error instanceof ApiError && error.code === 'conversation-corrupt') {
        // The list holds what could be recovered of it (its title); without it, none is shown.
        const listed = await unwrap(api().conversations.list({})).catch(() => [])
        const summary = listed.find((hit) => hit.conversation.id === id)?.conversation ?? null
        return { status: 'unreadable', summary, message: error.message }
      }
      return { status: 'error', message: errorMessage(error) }
    }
  }, [id])

  // The id on screen now: a reload that finishes after a switch must not overwrite it.
  const current = useRef(id)
  useEffect(() => {
    current.current = id
    let live = true
    fetch().then((next) => live && setState(next))
    return () => {
      live = false
    }
  }, [fetch, id])

  const reload = useCallback(async () => {
    const next = await fetch()
    if (current.current === id) setState(next)
  }, [fetch, id])
  return { state, reload }
}
