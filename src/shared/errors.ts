/**
 * Every error code main reports to the renderer, grouped by where it arises. Codes are
 * stable: the renderer switches on them (exhaustively, so a new code is a compile error
 * where it is not handled). Adding a code is one line in its group.
 */

/** Refusals of the request itself: the dispatcher, the IPC layer, the desktop shell. */
export type RequestErrorCode =
  | 'unknown-channel'
  | 'invalid-payload'
  | 'forbidden'
  | 'unsupported'
  | 'open-failed'
  | 'invalid-link'
  | 'internal'

/** Why a Memory tool command (Claude's, or the user's edit in the browser) was refused. */
export type MemoryErrorCode =
  | 'invalid-input'
  | 'invalid-path'
  | 'not-found'
  | 'exists'
  | 'conflict'
  | 'not-a-file'
  | 'special-file'
  | 'no-match'
  | 'ambiguous-match'
  | 'invalid-range'
  | 'too-large'
  | 'limit-reached'
  | 'not-text'
  | 'secret-detected'
  | 'disk-full'
  | 'access-denied'
  | 'read-only'
  | 'io-error'

/** Failures of the versioned memory: restores, reverts, and the history itself. */
export type HistoryErrorCode = 'closed'

/** Stored conversations and the chat around them. */
export type ConversationErrorCode =
  'conversation-not-found' | 'conversation-corrupt' | 'turn-running'

/** Why a chat turn with Claude ended badly. */
export type TurnErrorCode =
  | 'no-api-key'
  | 'invalid-api-key'
  | 'permission-denied'
  | 'rate-limited'
  | 'overloaded'
  | 'network'
  | 'timeout'
  | 'request-too-large'
  | 'model-not-found'
  | 'bad-request'
  | 'api-error'
  | 'max-tokens'
  | 'stream-interrupted'
  | 'too-many-steps'

/** Any code an `ApiErrorData` or an agent `error` event may carry. */
export type ErrorCode =
  RequestErrorCode | MemoryErrorCode | HistoryErrorCode | ConversationErrorCode | TurnErrorCode
