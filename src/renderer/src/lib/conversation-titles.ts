import { useCallback, useEffect, useMemo } from 'react'
import { api, unwrap } from './api'
import { shownTitle } from './shown-title'
import { useResource } from './use-resource'

const loadConversations = async () =>
  (await unwrap(api().conversations.list({}))).map((hit) => ({
    id: hit.conversation.id,
    title: shownTitle(hit.conversation.title),
  }))

/**
 * Every conversation's id and title as drawn (`shownTitle`), kept current (`conversations:changed`), and a function
 * naming one: links to the conversation a change came from read by its title. `deleted` is true
 * for a conversation the loaded list does not hold (false while it loads): a link to it would
 * lead nowhere.
 */
export function useConversationTitles(): {
  readonly conversations: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly titleOf: (id: string) => string
  readonly deleted: (id: string) => boolean
} {
  const resource = useResource('conversations', loadConversations)
  const { reload } = resource
  useEffect(() => api().on('conversations:changed', () => reload()), [reload])
  const titles = useMemo(
    () => new Map((resource.value ?? []).map((c) => [c.id, c.title])),
    [resource.value],
  )
  const titleOf = useCallback((id: string) => titles.get(id) ?? 'A conversation', [titles])
  const loaded = resource.value !== undefined
  const deleted = useCallback((id: string) => loaded && !titles.has(id), [loaded, titles])
  return { conversations: resource.value ?? [], titleOf, deleted }
}
