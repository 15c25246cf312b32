import type { DomainHandlers } from '../lib/handlers'
import type { EventBus } from '../lib/events'
import type { ConversationStore } from './conversation-store'

export interface ConversationHandlerOptions {
  readonly store: ConversationStore
  readonly events: EventBus
  /** Runs before a conversation is deleted: the chat stops its turn and waits until it is stored. */
  readonly beforeDelete: (id: string) => Promise<void>
}

/** Request handlers for the `conversations:*` channels (payloads already validated). */
export function conversationHandlers(
  options: ConversationHandlerOptions,
): DomainHandlers<'conversations'> {
  const { store, events } = options
  return {
    'conversations:list': ({ query }) => store.list(query),
    'conversations:get': ({ id }) => store.get(id),
    'conversations:rename': async ({ id, title }) => {
      const summary = await store.rename(id, title)
      events.emit('conversations:changed', { id, deleted: false })
      return summary
    },
    'conversations:delete': async ({ id }) => {
      await options.beforeDelete(id)
      await store.delete(id)
      events.emit('conversations:changed', { id, deleted: true })
      return null
    },
  }
}
