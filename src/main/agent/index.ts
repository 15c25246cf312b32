/** The chat with Claude over the Anthropic SDK: the one entry other rooms and tests import. */

export { createChatService } from './chat-service'
export type { ChatService, ChatServiceOptions } from './chat-service'
export { availableModels, type AnthropicFetch } from './client'
export type { ReplyLimits } from './reply-limits'
export { chatHandlers } from './handlers'
export { hideKeys } from './turn-errors'
export type { TurnMemory } from './run-turn'
