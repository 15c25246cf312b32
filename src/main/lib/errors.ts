import type { ErrorCode } from '../../shared/errors'
import type { ApiErrorData } from '../../shared/types'

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

/** Turns anything thrown into what may cross to the renderer. Unknown errors stay vague. */
export function toApiError(error: unknown): ApiErrorData {
  if (error instanceof CairnError) return { code: error.code, message: error.message }
  return { code: 'internal', message: 'Something went wrong inside Cairn. Please try again.' }
}
