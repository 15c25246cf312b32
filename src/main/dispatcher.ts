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
    // A payload that throws while it is read (a getter, a proxy's trap: an in-process caller's,
    // as IPC's clone carries neither) is refused like any unreadable one, its error unsaid.
    let parsed: ReturnType<z.ZodType['safeParse']>
    let notPlain: string | null
    try {
      parsed = schema.safeParse(payload)
      // Checked on what was sent, not on what zod made of it: zod takes a Date, a Map or
      // bytes as an object with no fields, so `{}` would reach the handler in its place.
      notPlain = parsed.success ? notPlainData(payload) : null
    } catch {
      return fail('invalid-payload', `Invalid request for ${name}: payload: could not be read`)
    }
    if (!parsed.success) {
      return fail('invalid-payload', `Invalid request for ${name}: ${formatIssues(parsed.error)}`)
    }
    if (notPlain) return fail('invalid-payload', `Invalid request for ${name}: ${notPlain}`)
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

/**
 * Why `payload` is not plain data (null when it is): every request is text, numbers, true or
 * false, lists and plain objects, as JSON holds. IPC's structured clone carries more (a Date,
 * a Map, a Set, bytes, a RegExp, an Error keep their kind) and the schemas, which check only
 * the fields they name, would take any of those as an object with none. Run after the schema
 * accepted the payload, so its size and depth are the schema's.
 */
function notPlainData(payload: unknown): string | null {
  const stack: Array<{ readonly value: unknown; readonly where: string }> = [
    { value: payload, where: 'payload' },
  ]
  while (stack.length > 0) {
    const { value, where } = stack.pop()!
    if (value === null || typeof value !== 'object') continue
    const proto: unknown = Object.getPrototypeOf(value)
    const list = Array.isArray(value) && proto === Array.prototype
    if (!list && proto !== Object.prototype && proto !== null) {
      const issue = `${where}: is ${kindOf(value)}, not plain data (text, numbers, true or false, lists and plain objects)`
      return cutWithEllipsis(escapeInvisible(issue), MAX_ISSUE_CHARS)
    }
    for (const [key, item] of Object.entries(value)) {
      stack.push({ value: item, where: `${where === 'payload' ? '' : `${where}.`}${key}` })
    }
  }
  return null
}

function kindOf(value: object): string {
  if (value instanceof Date) return 'a date'
  if (value instanceof Map) return 'a map'
  if (value instanceof Set) return 'a set'
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return 'binary data'
  if (value instanceof RegExp) return 'a regular expression'
  if (value instanceof Error) return 'an error'
  if (Array.isArray(value)) return 'a list of another kind'
  return 'an object made by a class'
}
