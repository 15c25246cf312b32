import type { DomainHandlers } from '../lib/handlers'
import type { EventBus } from '../lib/events'
import type { ConversationStore } from './conversation-store'
import { withoutOpenTurn } from './conversation-file'

export interface ConversationHandlerOptions {
  readonly store: ConversationStore
  readonly events: EventBus
  /** Runs before a conversation is deleted: the chat stops its turn and waits until it is stored. */
  readonly beforeDelete: (id: string) => Promise<void>
  /** Whether this Cairn started turn `turnId` (the chat's `startedHere`). */
  readonly startedHere: (turnId: string) => boolean
}

/** Request handlers for the `conversations:*` channels (payloads already validated). */
export function conversationHandlers(
  options: ConversationHandlerOptions,
): DomainHandlers<'conversations'> {
  const { store, events } = options
  return {
    'conversations:list': ({ query }) => store.list(query),
    'conversations:get': async ({ id }) => {
      const conversation = await store.get(id)
      // A turn this Cairn started runs, or ended here: only one left by a closed Cairn was cut off.
      if (conversation.openTurn === undefined || !options.startedHere(conversation.openTurn))
        return conversation
      return withoutOpenTurn(conversation)
    },
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
