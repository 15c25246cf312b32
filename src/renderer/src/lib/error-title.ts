import type { ErrorCode } from '../../../shared/errors'

/**
 * The title of an error banner: what went wrong, in a few words (the message says the rest).
 * Exhaustive on purpose: a new code does not compile until it is given a title here.
 */
export function errorTitle(code: ErrorCode): string {
  switch (code) {
    case 'no-api-key':
      return 'Add your API key to start'
    case 'invalid-api-key':
      return 'Your API key was not accepted'
    case 'permission-denied':
      return 'Your API key cannot use this'
    case 'model-not-found':
      return 'Model not available'
    case 'rate-limited':
      return 'Rate limit reached'
    case 'overloaded':
      return 'Claude is busy'
    case 'invalid-base-url':
      return 'Check ANTHROPIC_BASE_URL'
    case 'network':
    case 'timeout':
      return 'Could not reach Claude'
    case 'max-tokens':
      return 'The reply was cut off'
    case 'request-too-large':
      return 'Conversation too long'
    case 'stream-interrupted':
      return 'The reply was interrupted'
    case 'empty-reply':
      return 'The reply was empty'
    case 'refusal':
      return 'Claude declined to answer'
    case 'unknown-stop-reason':
      return 'The reply ended unexpectedly'
    case 'disk-full':
      return 'The disk is full'
    case 'locked':
      return 'Cairn is already open'
    case 'history-damaged':
      return 'This version is damaged'
    case 'sync-invalid-url':
      return 'Check the remote’s address'
    case 'sync-unreachable':
      return 'Could not reach the remote'
    case 'sync-auth':
      return 'The remote refused the token'
    case 'sync-redirected':
      return 'The remote sent Cairn elsewhere'
    case 'sync-not-a-repository':
      return 'Not a git repository'
    case 'sync-interrupted':
      return 'Sync was interrupted'
    case 'sync-rejected':
      return 'The remote refused the update'
    case 'sync-push-refused':
      return 'The server refused the upload'
    case 'sync-rewritten':
      return 'The remote’s history was rewritten'
    case 'sync-join-needed':
      return 'Choose how to join the memories'
    case 'sync-unsafe-content':
      return 'The remote holds files Cairn refuses'
    case 'sync-no-conflict':
      return 'Nothing left to resolve'
    case 'sync-stopped':
      return 'Sync stopped'
    case 'import-invalid':
    case 'import-empty':
      return 'Nothing was imported'
    case 'review-not-found':
      return 'This change is no longer waiting'
    case 'review-outdated':
      return 'The memory changed meanwhile'
    case 'review-unappliable':
      return 'This change can only be declined'
    case 'bad-request':
    case 'api-error':
    case 'too-many-steps':
    case 'turn-running':
    case 'conversation-not-found':
    case 'conversation-corrupt':
    case 'unknown-channel':
    case 'invalid-payload':
    case 'forbidden':
    case 'unsupported':
    case 'open-failed':
    case 'invalid-link':
    case 'internal':
    case 'invalid-input':
    case 'invalid-path':
    case 'not-found':
    case 'exists':
    case 'conflict':
    case 'not-a-file':
    case 'special-file':
    case 'no-match':
    case 'ambiguous-match':
    case 'invalid-range':
    case 'too-large':
    case 'limit-reached':
    case 'not-text':
    case 'secret-detected':
    case 'access-denied':
    case 'read-only':
    case 'io-error':
    case 'closed':
      return 'Something went wrong'
    case 'index-rebuilding':
      return 'History is being rebuilt'
    case 'starting':
      return 'Cairn is still opening'
    default:
      return unhandled(code)
  }
}

function unhandled(code: never): never {
  throw new Error(`No title for error code ${String(code)}`)
}
