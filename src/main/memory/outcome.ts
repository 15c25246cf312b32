/** Results of one command, and the error type for refusals written for Claude. */

import type { MemoryErrorCode } from '../../shared/errors'
import { diskProblem } from '../lib/disk-errors'
import { FolderDeniedError } from '../lib/folders'
import { cutWithEllipsis, wellFormed } from '../lib/text'
import { MEMORY_ROOT } from './path-rules'
import type {
  MadeChange,
  MemoryContentBlock,
  MemoryExecution,
  MemoryMutation,
  PlannedChange,
} from './types'

/**
 * A refusal: `content` goes to Claude exactly as written, `code` tells the app (and the
 * person, for their own edits) which refusal it was without reading the words.
 */
export class CommandError extends Error {
  constructor(
    readonly code: MemoryErrorCode,
    readonly content: string,
  ) {
    super(content)
    this.name = 'CommandError'
  }
}

/**
 * A successful command's result, with what it changes when asked: `planned` from a dry run
 * (the change with its fingerprint), `made` from a run that describes what it did.
 */
export function success(
  content: string | ReadonlyArray<MemoryContentBlock>,
  mutation: MemoryMutation | null = null,
  change?: PlannedChange | MadeChange,
): MemoryExecution {
  const result = { content, isError: false, mutation, errorCode: null } as const
  if (!change) return result
  return 'fingerprint' in change ? { ...result, planned: change } : { ...result, made: change }
}

/** A failed command's result. */
export function failure(refusal: CommandError): MemoryExecution {
  return { content: refusal.content, isError: true, mutation: null, errorCode: refusal.code }
}

/**
 * `result` with every text Claude gets made well-formed (no lone surrogate): the backstop
 * behind every cut, since one bad string makes the API refuse the conversation for good.
 */
export function wellFormedResult(result: MemoryExecution): MemoryExecution {
  const { content } = result
  if (typeof content === 'string') return { ...result, content: wellFormed(content) }
  return {
    ...result,
    content: content.map((block) =>
      block.type === 'text' ? { ...block, text: wellFormed(block.text) } : block,
    ),
  }
}

/** Message for a path that is, or passes through, a symlink or special file. */
export function specialMessage(virtualPath: string): string {
  return `Error: The path ${virtualPath} is (or passes through) a symbolic link or special file. Memory only works with regular files and folders and never follows links.`
}

/**
 * Turns an unexpected file-system error into a refusal in words, never a host path or raw
 * errno text.
 */
export function unexpectedFailure(error: unknown): CommandError {
  const problem = diskProblem(error, 'memory')
  const code: MemoryErrorCode = problem?.code ?? 'io-error'
  const reason = problem?.reason ?? 'of an unexpected file system error'
  // A folder Cairn may not enter is named, so that the person knows what to fix.
  const where =
    error instanceof FolderDeniedError
      ? ` the folder ${MEMORY_ROOT}/${error.relative} could not be opened:`
      : ''
  return new CommandError(
    code,
    `Error: The memory command failed because${where} ${reason}. Nothing was changed.`,
  )
}

/** Most characters of an input quoted back in an error (a huge `old_str` must not flood the reply). */
export const MAX_QUOTE_CHARS = 200

/** `text` cut to `max` characters with an ellipsis, never splitting an emoji or a surrogate pair. */
export function quoteInput(text: string, max = MAX_QUOTE_CHARS): string {
  return cutWithEllipsis(text, max)
}
