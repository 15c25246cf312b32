/** Results of one command, and the error type for refusals written for Claude. */

import type { MemoryErrorCode } from '../../shared/errors'
import type { MemoryContentBlock, MemoryExecution, MemoryMutation, PlannedChange } from './types'

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

/** A successful command's result (with `planned` when it was a dry run). */
export function success(
  content: string | ReadonlyArray<MemoryContentBlock>,
  mutation: MemoryMutation | null = null,
  planned?: PlannedChange,
): MemoryExecution {
  return planned
    ? { content, isError: false, mutation, errorCode: null, planned }
    : { content, isError: false, mutation, errorCode: null }
}

/** A failed command's result. */
export function failure(refusal: CommandError): MemoryExecution {
  return { content: refusal.content, isError: true, mutation: null, errorCode: refusal.code }
}

/** Message for a path that is, or passes through, a symlink or special file. */
export function specialMessage(virtualPath: string): string {
  return `Error: The path ${virtualPath} is (or passes through) a symbolic link or special file. Memory only works with regular files and folders and never follows links.`
}

// What an errno means for the person, and the refusal's code.
const ERRNO_REASONS: Readonly<Record<string, readonly [MemoryErrorCode, string]>> = {
  ENOSPC: ['disk-full', 'the disk is full'],
  EDQUOT: ['disk-full', 'the disk is full'],
  EACCES: ['access-denied', 'permission was denied by the operating system'],
  EPERM: ['access-denied', 'permission was denied by the operating system'],
  EROFS: ['read-only', 'the memory folder is read-only'],
  ENOTDIR: ['conflict', 'a file is in the way of a folder on that path'],
  EBUSY: ['io-error', 'a file is in use by another program'],
  ENAMETOOLONG: ['invalid-path', 'the path is too long for this system'],
}

/**
 * Turns an unexpected file-system error into a refusal in words, never a host path or raw
 * errno text.
 */
export function unexpectedFailure(error: unknown): CommandError {
  const errno =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  const [code, reason] = (typeof errno === 'string' && Object.hasOwn(ERRNO_REASONS, errno)
    ? ERRNO_REASONS[errno]
    : undefined) ?? ['io-error', 'of an unexpected file system error']
  return new CommandError(
    code,
    `Error: The memory command failed because ${reason}. Nothing was changed.`,
  )
}
