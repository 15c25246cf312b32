import type { ErrorCode } from '../../../shared/errors'
import type { ApiErrorData, ApiResult } from '../../../shared/types'

/** An error main reported, with its stable code (e.g. `invalid-payload`, `no-api-key`). */
export class ApiError extends Error {
  readonly code: ErrorCode
  constructor(data: ApiErrorData) {
    super(data.message)
    this.name = 'ApiError'
    this.code = data.code
  }
}

/** Unwraps a `window.api` result: the value, or a thrown `ApiError`. */
export async function unwrap<T>(result: Promise<ApiResult<T>>): Promise<T> {
  const settled = await result
  if (settled.ok) return settled.value
  throw new ApiError(settled.error)
}

/** The message to show for anything thrown while talking to main. */
export function errorMessage(error: unknown): string {
  // A request main's schema refused: its text names channels and schema rules, for
  // developers. Each screen checks its own limits first, in words; this is the backstop.
  if (error instanceof ApiError && error.code === 'invalid-payload') {
    return 'Cairn could not accept that: a value is outside what it allows. Nothing was changed.'
  }
  if (error instanceof ApiError) return error.message
  return 'Something went wrong. Please try again.'
}

/**
 * The one way the renderer reaches main: `window.api`, built by the preload from the shared
 * contract. Read at call time, so modules that import this load in tests without a window.
 */
export const api = (): Window['api'] => window.api
