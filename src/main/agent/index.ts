/** The agent loop: chat turns over the SDK's tool runner with the versioned memory. */
export { createChatService } from './chat-service'
export type { ChatService, ChatServiceOptions } from './chat-service'
export { createAnthropicClient, listModels, FALLBACK_MODELS, DEFAULT_BASE_URL } from './client'
export type { AnthropicFetch, ClientConfig } from './client'
export { runTurn, CONTEXT_EDITS, CONTEXT_MANAGEMENT_BETA, MAX_REQUESTS_PER_TURN } from './run-turn'
export type {
  MemoryExecute,
  MemoryToolFactory,
  TurnEvent,
  TurnOptions,
  TurnOutcome,
} from './run-turn'
export { buildSystemPrompt, BASE_SYSTEM_PROMPT } from './system-prompt'
export type { TurnError, TurnErrorCode } from './turn-errors'
