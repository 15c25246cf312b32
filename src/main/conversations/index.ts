/** Stored conversations: see `createConversationStore`. */
export { createConversationStore } from './conversation-store'
export type { ConversationStore, ConversationStoreOptions } from './conversation-store'
export { deriveTitle, MAX_ERROR_MESSAGE, replyEnded, withoutOpenTurn } from './conversation-file'
export { conversationHandlers, type ConversationHandlerOptions } from './handlers'
