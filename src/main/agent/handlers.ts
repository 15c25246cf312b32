import type { DomainHandlers } from '../lib/handlers'
import type { ChatService } from './chat-service'

/** Request handlers for the `chat:*` channels (payloads already validated). */
export function chatHandlers(chat: ChatService): DomainHandlers<'chat'> {
  return {
    'chat:send': ({ conversationId, text, clientId, retryOf }) =>
      chat.send(conversationId, text, clientId, retryOf),
    'chat:stop': ({ conversationId }) => {
      chat.stop(conversationId)
      return null
    },
    'chat:running': () => chat.running(),
    'chat:dismiss': async ({ conversationId, turnId }) => {
      await chat.dismiss(conversationId, turnId)
      return null
    },
  }
}
