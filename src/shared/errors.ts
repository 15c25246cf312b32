/**
 * Every error code main reports to the renderer, grouped by where it arises, each with when
 * it happens. Codes are stable: the renderer switches on them exhaustively, so a new code is
 * a compile error wherever it is not handled yet. Adding a code is one line in its group.
 * (Interfaces rather than unions of strings: one member per line, whatever its length.)
 */

/** Refusals of the request itself: the dispatcher, the IPC layer, the desktop shell. */
interface RequestErrors {
  /** No such request channel. */
  'unknown-channel': true
  /** The payload does not match the channel's schema. */
  'invalid-payload': true
  /** The request came from a frame other than the app's own page. */
  forbidden: true
  /** Only the desktop app can do this (opening a folder or a link). */
  unsupported: true
  /** The system could not open the data folder. */
  'open-failed': true
  /** Only https links can be opened. */
  'invalid-link': true
  /** Anything not meant for people; the details go to the log only. */
  internal: true
}

/** Why a Memory tool command (Claude's, or the person's edit in the browser) was refused. */
interface MemoryErrors {
  /** Not a valid command: unknown command, missing, unexpected or mistyped parameter. */
  'invalid-input': true
  /** A path the rules refuse (outside /memories, hidden, too long), or the root itself. */
  'invalid-path': true
  'not-found': true
  exists: true
  /** Something is in the way: a file where a folder is needed, or a change made since. */
  conflict: true
  /** A folder where the command needs a file. */
  'not-a-file': true
  /** A symbolic link or special file, which memory never follows. */
  'special-file': true
  /** `str_replace` found no occurrence of `old_str`. */
  'no-match': true
  /** `str_replace` found more than one occurrence of `old_str`. */
  'ambiguous-match': true
  /** A `view_range` or `insert_line` outside the file. */
  'invalid-range': true
  /** A file too large to write, view or edit. */
  'too-large': true
  /** Memory would exceed its total size or number of files. */
  'limit-reached': true
  /** Not UTF-8 text (or not a valid image). */
  'not-text': true
  /** The text holds what looks like a credential. */
  'secret-detected': true
  'disk-full': true
  /** The operating system denied permission. */
  'access-denied': true
  'read-only': true
  /** Any other file-system failure. */
  'io-error': true
}

/** Failures of the versioned memory itself. */
interface HistoryErrors {
  /** The memory folder was closed (the app is quitting). */
  closed: true
  /** Another Cairn has this data folder open (its lock file names the process). */
  locked: true
  /** A version's stored objects are missing, corrupt, or name entries Cairn never writes. */
  'history-damaged': true
  /** Part of the history index was found damaged; it is being rebuilt from the commits. */
  'index-rebuilding': true
  /** Cairn is still opening the memory (its window shows how far); the request came too early. */
  starting: true
}

/** Changes waiting for the person's review. */
interface ReviewErrors {
  /** No pending change has this id (it was decided already, or its turn ended). */
  'review-not-found': true
  /** The memory changed since the change was proposed: review it again, or decline it. */
  'review-outdated': true
  /** A problem found since the change was proposed (its file gone, its text changed): it can only be declined. */
  'review-unappliable': true
}

/** Stored conversations and the chat around them. */
interface ConversationErrors {
  'conversation-not-found': true
  /** The conversation file cannot be read. */
  'conversation-corrupt': true
  /** A turn is still running in this conversation. */
  'turn-running': true
}

/** Why a chat turn with Claude ended badly. */
interface TurnErrors {
  'no-api-key': true
  /** The API refused the key (401). */
  'invalid-api-key': true
  /** The key may not use this model or feature (403). */
  'permission-denied': true
  'rate-limited': true
  overloaded: true
  /** `ANTHROPIC_BASE_URL` is not an http(s) address, so no request can be made. */
  'invalid-base-url': true
  /** The API could not be reached. */
  network: true
  timeout: true
  /** The conversation no longer fits in one request or in the context window. */
  'request-too-large': true
  'model-not-found': true
  /** The API refused the request (400). */
  'bad-request': true
  /** The API failed (5xx). */
  'api-error': true
  /** The reply reached the max-tokens limit. */
  'max-tokens': true
  /** The stream broke part-way through the reply. */
  'stream-interrupted': true
  /** The turn made more API requests than Cairn allows one turn. */
  'too-many-steps': true
  /** The API answered (200) with no reply in it at all. */
  'empty-reply': true
  /** Claude declined to answer (the reply's stop reason is `refusal`). */
  refusal: true
  /** The reply ended with a stop reason this build does not know. */
  'unknown-stop-reason': true
}

/** Syncing memory through a git remote, and moving memory in or out of Cairn. */
interface SyncErrors {
  /** The remote's address is not a usable http(s) URL (or carries a password in it). */
  'sync-invalid-url': true
  /** The remote could not be reached: no network, an unknown host, or the server is down. */
  'sync-unreachable': true
  /** The remote refused the username or token (HTTP 401 or 403). */
  'sync-auth': true
  /** The remote redirected to another address, which Cairn does not follow with the token. */
  'sync-redirected': true
  /** The address answers, but not as a git repository. */
  'sync-not-a-repository': true
  /** The connection broke part-way; nothing local changed and the next sync completes it. */
  'sync-interrupted': true
  /** The remote refused the update (it changed meanwhile, or the branch is protected). */
  'sync-rejected': true
  /** The server refused the upload itself (HTTP 4xx on push: too large, a policy); not retried at once. */
  'sync-push-refused': true
  /** The remote's history was rewritten (force-pushed) since the last sync. */
  'sync-rewritten': true
  /** The remote holds another machine's memory: the person chooses how to join them. */
  'sync-join-needed': true
  /** The remote holds files Cairn will not put in the memory folder. */
  'sync-unsafe-content': true
  /** The person stopped a running sync; its message says what, if anything, it had done. */
  'sync-stopped': true
  /** There is no conflict (left) at that path. */
  'sync-no-conflict': true
  /** A file chosen for import is not what it claims to be (not a bundle, zip or repository). */
  'import-invalid': true
  /** Nothing in the chosen import could become a memory file. */
  'import-empty': true
}

export type RequestErrorCode = keyof RequestErrors
export type MemoryErrorCode = keyof MemoryErrors
export type HistoryErrorCode = keyof HistoryErrors
export type ReviewErrorCode = keyof ReviewErrors
export type ConversationErrorCode = keyof ConversationErrors
export type TurnErrorCode = keyof TurnErrors
export type SyncErrorCode = keyof SyncErrors

/** Any code an `ApiErrorData` or an agent `error` event may carry. */
export type ErrorCode =
  | RequestErrorCode
  | MemoryErrorCode
  | HistoryErrorCode
  | ReviewErrorCode
  | ConversationErrorCode
  | TurnErrorCode
  | SyncErrorCode

/**
 * Every code, known at run time: what a stored turn error (`Conversation.lastError`) is read
 * against, since a file a newer build wrote may name a code this one does not know. Typed as a
 * record of every `ErrorCode`, so a code added above and not here does not compile.
 */
const ERROR_CODES: Readonly<Record<ErrorCode, true>> = {
  'unknown-channel': true,
  'invalid-payload': true,
  forbidden: true,
  unsupported: true,
  'open-failed': true,
  'invalid-link': true,
  internal: true,
  'invalid-input': true,
  'invalid-path': true,
  'not-found': true,
  exists: true,
  conflict: true,
  'not-a-file': true,
  'special-file': true,
  'no-match': true,
  'ambiguous-match': true,
  'invalid-range': true,
  'too-large': true,
  'limit-reached': true,
  'not-text': true,
  'secret-detected': true,
  'disk-full': true,
  'access-denied': true,
  'read-only': true,
  'io-error': true,
  closed: true,
  starting: true,
  locked: true,
  'history-damaged': true,
  'index-rebuilding': true,
  'review-not-found': true,
  'review-outdated': true,
  'review-unappliable': true,
  'conversation-not-found': true,
  'conversation-corrupt': true,
  'turn-running': true,
  'no-api-key': true,
  'invalid-api-key': true,
  'permission-denied': true,
  'rate-limited': true,
  overloaded: true,
  'invalid-base-url': true,
  network: true,
  timeout: true,
  'request-too-large': true,
  'model-not-found': true,
  'bad-request': true,
  'api-error': true,
  'max-tokens': true,
  'stream-interrupted': true,
  'too-many-steps': true,
  'empty-reply': true,
  refusal: true,
  'unknown-stop-reason': true,
  'sync-invalid-url': true,
  'sync-unreachable': true,
  'sync-auth': true,
  'sync-redirected': true,
  'sync-not-a-repository': true,
  'sync-interrupted': true,
  'sync-rejected': true,
  'sync-push-refused': true,
  'sync-rewritten': true,
  'sync-join-needed': true,
  'sync-stopped': true,
  'sync-unsafe-content': true,
  'sync-no-conflict': true,
  'import-invalid': true,
  'import-empty': true,
}

/** True when `value` is a code this build knows. */
export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value)
}
