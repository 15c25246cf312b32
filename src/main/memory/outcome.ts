/** Results of one command, and the error type for refusals written for Claude. */

import type { MemoryContentBlock, MemoryExecution, MemoryMutation } from './types'

/** A refusal whose message goes to Claude exactly as written. */
export class CommandError extends Error {
  readonly code = 'memory_command_refused'
  constructor(readonly content: string) {
    super(content)
    this.name = 'CommandError'
  }
}

/** A successful command's result. */
export function success(
  content: string | ReadonlyArray<MemoryContentBlock>,
  mutation: MemoryMutation | null = null,
): MemoryExecution {
  return { content, isError: false, mutation }
}

/** A failed command's result. */
export function failure(content: string): MemoryExecution {
  return { content, isError: true, mutation: null }
}

/** Message for a path that is, or passes through, a symlink or special file. */
export function specialMessage(virtualPath: string): string {
  return `Error: The path ${virtualPath} is (or passes through) a symbolic link or special file. Memory only works with regular files and folders and never follows links.`
}

/** Turns an unexpected file-system error into words, never a host path or raw errno text. */
export function unexpectedMessage(error: unknown): string {
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  const reason =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'the disk is full'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission was denied by the operating system'
        : code === 'EROFS'
          ? 'the memory folder is read-only'
          : code === 'EBUSY'
            ? 'a file is in use by another program'
            : code === 'ENAMETOOLONG'
              ? 'the path is too long for this system'
              : 'of an unexpected file system error'
  return `Error: The memory command failed because ${reason}. Nothing was changed.`
}
