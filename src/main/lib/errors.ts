import type { ErrorCode } from '../../shared/errors'
import type { ApiErrorData } from '../../shared/types'
import { diskProblem, isDiskProblem } from './disk-errors'

export type { ErrorCode } from '../../shared/errors'

/** An error meant for people: a stable code and a message with no host path or stack. */
export class CairnError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'CairnError'
  }
}

/**
 * Turns anything thrown into what may cross to the renderer. A problem of the disk itself (full,
 * failing, denied) met anywhere (a conversation, the settings) gets its own code and words;
 * other unknown errors stay vague.
 */
export function toApiError(error: unknown): ApiErrorData {
  if (error instanceof CairnError) return { code: error.code, message: error.message }
  const disk = diskFailure(error)
  if (disk) return disk
  return { code: 'internal', message: 'Something went wrong inside Cairn. Please try again.' }
}

/**
 * A disk problem in plain words ("That did not work because the disk is full. …"), or
 * null when `error` is not one. Says nothing about what was being done: callers that know add it.
 */
export function diskFailure(
  error: unknown,
  what = 'That did not work',
  /** Said right after the reason (", so …"). */
  consequence = '',
): ApiErrorData | null {
  if (!isDiskProblem(error)) return null
  // Met outside the memory folder (a conversation, the settings): a read-only one is the data
  // folder.
  const problem = diskProblem(error, 'data')
  if (!problem) return null
  const next =
    problem.code === 'disk-full'
      ? 'Free some space on the disk, then try again.'
      : 'Please try again.'
  return { code: problem.code, message: `${what} because ${problem.reason}${consequence}. ${next}` }
}
