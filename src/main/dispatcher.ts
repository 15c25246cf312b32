import type { z } from 'zod'
import { requestSchemas, type RequestChannel } from '../shared/contract'
import type { ApiResult } from '../shared/types'
import { toApiError, type ErrorCode } from './lib/errors'
import type { Handlers } from './lib/handlers'
import type { Logger } from './lib/logger'
import { cutText, cutWithEllipsis, escapeInvisible } from './lib/text'

export type { Handlers } from './lib/handlers'

export type Dispatch = (channel: unknown, payload: unknown) => Promise<ApiResult<unknown>>

/**
 * Routes a `(channel, payload)` pair to its handler after validating the payload.
 * Both the Electron IPC registration and the e2e harness call this, so they behave alike.
 * Never throws: failures become `{ ok: false, error: { code, message } }`; errors that were
 * not meant for people reach the UI as `internal` and the logger in full.
 */
export function createDispatcher(handlers: Handlers, options: { logger?: Logger } = {}): Dispatch {
  return async (channel, payload) => {
    if (typeof channel !== 'string' || !Object.hasOwn(requestSchemas, channel)) {
      return fail('unknown-channel', `Unknown request channel: ${describe(channel)}.`)
    }
    const name = channel as RequestChannel
    const schema: z.ZodType = requestSchemas[name]
    const parsed = schema.safeParse(payload)
    if (!parsed.success) {
      return fail('invalid-payload', `Invalid request for ${name}: ${formatIssues(parsed.error)}`)
    }
    const handler = handlers[name] as (payload: unknown) => unknown
    try {
      return { ok: true, value: await handler(parsed.data) }
    } catch (error) {
      const apiError = toApiError(error)
      if (apiError.code === 'internal') options.logger?.error(`${name} failed`, error)
      return { ok: false, error: apiError }
    }
  }
}

function fail(code: ErrorCode, message: string): ApiResult<never> {
  return { ok: false, error: { code, message } }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(cutText(value, 80)) : typeof value
}

/**
 * The first issues in words. Zod names unknown keys and the path to each issue, which the
 * sender chose: each issue is cut short, with nothing invisible in it (a key may be 100 KB
 * long, or hold a newline or a bidi override that would reorder the sentence on screen).
 */
function formatIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'payload'
      return cutWithEllipsis(escapeInvisible(`${where}: ${issue.message}`), MAX_ISSUE_CHARS)
    })
    .join('; ')
}

/** Most characters of one issue in an `invalid-payload` message. */
const MAX_ISSUE_CHARS = 160
