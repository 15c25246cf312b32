/**
 * Turns whatever ended a turn badly into a code and a sentence for people: no stack, no host
 * path, and for rate limits the time to wait.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AnthropicError,
} from '@anthropic-ai/sdk'
import type { ErrorCode } from '../../shared/errors'
import { cutWithEllipsis, escapeInvisible } from '../lib/text'
import { ReplySilenceError } from './reply-limits'

export interface TurnError {
  /**
   * Why the turn ended badly; `internal` when it is not one of the known reasons. A turn whose
   * messages could not be saved carries the store's code (`disk-full`, …).
   */
  readonly code: ErrorCode
  readonly message: string
}

export const noApiKeyError = (): TurnError => ({
  code: 'no-api-key',
  message: 'No Anthropic API key is set. Add your API key in Settings to start chatting.',
})

export const maxTokensError = (maxTokens: number): TurnError => ({
  code: 'max-tokens',
  message: `Claude's reply reached the limit of ${maxTokens} output tokens and was cut off. Raise "Max tokens" in Settings, or ask Claude to continue.`,
})

/**
 * The API refused the key (401), named by where it came from, so the person fixes the key that
 * was actually sent: a key saved in Settings wins over `ANTHROPIC_API_KEY`, so saving a working
 * key always helps, and fixing the variable helps only while none is saved.
 */
export function rejectedKeyError(source: 'saved' | 'env' | null): TurnError {
  const message =
    source === 'env'
      ? 'The Anthropic API rejected the API key from the ANTHROPIC_API_KEY environment variable (401). Save a working key in Settings (a saved key is used instead), or fix the variable where it is set and restart Cairn.'
      : source === 'saved'
        ? 'The Anthropic API rejected the API key saved in Settings (401). Check or replace it in Settings.'
        : 'The Anthropic API rejected the API key (401). Check or replace it in Settings.'
  return { code: 'invalid-api-key', message }
}

/** Claude's reply ended as a refusal (stop reason `refusal`). */
export const refusalError = (): TurnError => ({
  code: 'refusal',
  message:
    'The reply ended as a refusal. What Claude said is kept; you can rephrase your message and send it again.',
})

/**
 * The reply ended with a stop reason this build does not know (quoted, cut short, its control
 * and format characters written as escapes: a bidi override would reorder the notice's words).
 */
export const unknownStopError = (reason: unknown): TurnError => ({
  code: 'unknown-stop-reason',
  message: `Claude's reply ended for a reason Cairn does not know ("${cutWithEllipsis(escapeInvisible(String(reason).replace(/\s+/g, ' ')), 60)}"). What arrived is kept; send a message to continue.`,
})

/** The stop reasons a reply may end with that need no word to the person (or have their own). */
export const KNOWN_STOP_REASONS: ReadonlySet<string> = new Set([
  'end_turn',
  'tool_use',
  'stop_sequence',
  'pause_turn',
  'max_tokens',
  'model_context_window_exceeded',
  'refusal',
])

/**
 * `streamStarted`: whether part of a reply had arrived when the error happened; `emptyReply`:
 * whether the API answered (a reply was being read) and the reply had held no event at all.
 */
export function classifyTurnError(
  error: unknown,
  context: {
    readonly streamStarted: boolean
    readonly model: string
    readonly emptyReply?: boolean
  },
): TurnError {
  const silence = silenceOf(error)
  if (silence) {
    const quiet = formatWait(Math.max(1, Math.round(silence.silenceMs / 1000)))
    return {
      code: 'timeout',
      message: context.streamStarted
        ? `Claude's reply stopped coming: the Anthropic API sent nothing for ${quiet}, so Cairn ended it. What arrived so far was kept; send your message again to continue.`
        : `The Anthropic API did not answer in time: it sent nothing for ${quiet}. Check your connection and try again.`,
    }
  }
  if (error instanceof APIConnectionTimeoutError) {
    return {
      code: 'timeout',
      message: 'The Anthropic API did not answer in time. Check your connection and try again.',
    }
  }
  if (error instanceof APIConnectionError) {
    return {
      code: 'network',
      message: 'Could not reach the Anthropic API. Check your internet connection and try again.',
    }
  }
  if (error instanceof APIError) return classifyApiError(error, context.model)
  // A response that held no event at all (a 200 with an empty or non-SSE body, from a proxy
  // say): nothing of a reply came. Known by what the reply held, not by the SDK's words for it;
  // an event that could not be read (the parser's error as its cause) is something, damaged,
  // and a body the network cut (its error as the cause) is a broken connection, told below.
  if (
    context.emptyReply &&
    error instanceof AnthropicError &&
    !(error.cause instanceof SyntaxError) &&
    !(error.cause instanceof TypeError)
  ) {
    return {
      code: 'empty-reply',
      message:
        'The Anthropic API answered with an empty reply: nothing of Claude’s answer came. Send your message again to try again.',
    }
  }
  if (
    context.streamStarted &&
    (error instanceof SyntaxError ||
      (error instanceof AnthropicError &&
        (error.cause instanceof SyntaxError ||
          error.message.startsWith('Unable to parse tool parameter JSON'))))
  ) {
    // An event that is not JSON (the SDK wraps the parser's error), or a tool call's input that
    // is not: the connection itself is fine.
    return {
      code: 'stream-interrupted',
      message:
        "Claude's reply arrived damaged: the API sent something Cairn could not read. What arrived so far was kept; send your message again to continue.",
    }
  }
  if (context.streamStarted && (error instanceof AnthropicError || error instanceof TypeError)) {
    return {
      code: 'stream-interrupted',
      message:
        'The connection broke while Claude was replying. What arrived so far was kept; send your message again to continue.',
    }
  }
  // The network's own error, or the SDK's wrapping of it when the body was cut before any event.
  const cause =
    error instanceof AnthropicError && error.cause instanceof TypeError ? error.cause : error
  if (cause instanceof TypeError && /fetch failed|terminated|network/i.test(cause.message)) {
    return {
      code: 'network',
      message: 'Could not reach the Anthropic API. Check your internet connection and try again.',
    }
  }
  return {
    code: 'internal',
    message: 'Something went wrong while talking to Claude. Please try again.',
  }
}

function classifyApiError(error: APIError, model: string): TurnError {
  const type = errorType(error)
  const apiMessage = errorMessage(error)
  if (error.status === 401 || type === 'authentication_error') return rejectedKeyError(null)
  if (error.status === 403 || type === 'permission_error') {
    return {
      code: 'permission-denied',
      message:
        'This API key is not allowed to use this model or feature (403). Check your key in Settings.',
    }
  }
  if (error.status === 429 || type === 'rate_limit_error') {
    const seconds = retryAfterSeconds(error.headers)
    // A wait of 0 (or one already past) is no wait to name.
    const wait = !seconds ? 'Wait a moment' : `Try again in ${formatWait(seconds)}`
    return { code: 'rate-limited', message: `Rate limit reached for your API key. ${wait}.` }
  }
  if (error.status === 529 || type === 'overloaded_error') {
    return {
      code: 'overloaded',
      message: "Anthropic's API is overloaded right now. Please try again in a little while.",
    }
  }
  if (
    error.status === 413 ||
    type === 'request_too_large' ||
    /prompt is too long/i.test(apiMessage)
  ) {
    return {
      code: 'request-too-large',
      message:
        'This conversation has become too large for one request. Start a new conversation; your memory carries over.',
    }
  }
  if (error.status === 404 || type === 'not_found_error') {
    return {
      code: 'model-not-found',
      message: `The model "${model}" is not available for this API key. Choose another model in Settings.`,
    }
  }
  if (error.status === 400 || type === 'invalid_request_error') {
    return {
      code: 'bad-request',
      message: `The Anthropic API refused the request: ${clip(apiMessage)}`,
    }
  }
  if (error.status === undefined) {
    // An `error` event inside a stream that had started (e.g. api_error mid-reply).
    return {
      code: 'stream-interrupted',
      message: `The reply was interrupted by an API error (${type === undefined ? 'unknown' : clip(type)}). Send your message again to continue.`,
    }
  }
  return {
    code: 'api-error',
    message: `The Anthropic API had a problem (${error.status}). Please try again.`,
  }
}

/** What the configured key is shown as, and any other Anthropic key found in a message. */
const YOUR_KEY = 'your API key'
const SOME_KEY = 'an API key'

/** The shortest run of the key's characters hidden wherever it stands (a prefix, say). */
const KEY_RUN = 8

/**
 * `text` (an error's words: the API's, or a proxy's quoting what it was sent) with the API key
 * hidden. The key `apiKey` as it is, URL-encoded, in hex (either case: a proxy dumping the
 * bytes it was sent) and in base64 (standard or URL-safe, wherever it starts in the encoded
 * bytes: a `Basic` header holds `user:key`); any run of 8 or more of its characters (a prefix
 * quoted to "help"), of its hex digits (in any case, its bytes set apart or not: a dump, a
 * URL's `%XX`) or of its base64 letters (an encoded form cut into lines, escaped, or cut
 * short); and any token that looks like an Anthropic key
 * (`sk-ant-…`), configured or not. Never a prefix long enough to matter: 8 characters of a
 * 100-character key, or `sk-ant-api03-`, which every key starts with, are all that can remain.
 * Another secret (the sync token) is hidden the same ways, shown as `shownAs`.
 */
export function hideKeys(text: string, apiKey: string, shownAs: string = YOUR_KEY): string {
  let out = text
  // Worked out once per call: the whole forms and their runs are of the same encodings.
  const base64 = apiKey === '' ? [] : base64Forms(apiKey)
  if (apiKey !== '') {
    const forms = new Set([
      apiKey,
      encodeURIComponent(apiKey),
      // As JSON writes it (`JSON.stringify`: a `"` or `\` escaped), whole: a key too short for
      // the runs below is found only so.
      JSON.stringify(apiKey).slice(1, -1),
      ...hexForms(apiKey),
      ...base64,
    ])
    for (const form of [...forms].sort((a, b) => b.length - a.length)) {
      if (form.length >= Math.min(apiKey.length, KEY_RUN)) out = out.replaceAll(form, shownAs)
    }
  }
  // Before the runs: a run of the key could otherwise take the start of another key, leaving
  // the rest of it unlike a key.
  out = out.replace(/sk-ant-[A-Za-z0-9_-]*/g, SOME_KEY)
  if (apiKey.length < KEY_RUN) return out
  // Runs of its encoded letters too: an encoded form cut into lines (a MIME quote, 76 a line),
  // with its '/' escaped (JSON's '\/') or cut short is not whole anywhere, and would show all
  // but a few bytes.
  // And runs of it behind %-escapes: an address's user part escapes only some characters
  // ('/' and '@', not '+' or '$'), so it is not encodeURIComponent's form, and the pieces
  // between two escapes may all be shorter than a run; some write the escapes in lower case.
  // Likewise behind backslash escapes: JSON's (`\"`, `\\`, `\u0022`) and a printed string's
  // (`\'`), where a token holding `"` or `\` every few characters was shown but for them.
  const unescaped = hideEscapedRuns(out, apiKey, shownAs)
  return hideHexRuns(hideRuns(unescaped, [apiKey, ...base64], shownAs), apiKey, shownAs)
}

/**
 * `text` with every run of 8 or more of `key`'s characters hidden where some of them stand as
 * escapes: `%XX` (of a character below 128, its digits in either case), or a backslash escape
 * as JSON and printed strings write them (`\"`, `\\`, `\/`, `\'`, `\n`…, `\uXXXX`): each
 * escape is read as the character it stands for, and hidden whole with the run it is part of.
 * Escapes are read again where reading them made more (`%5C%22` is `\"`, which is `"`: JSON
 * URL-encoded, once or twice), up to `ESCAPE_LEVELS` deep, and runs are looked for at each.
 */
function hideEscapedRuns(text: string, key: string, shownAs: string): string {
  if (!text.includes('%') && !text.includes('\\')) return text
  const windows = keyWindows([key])
  const hidden = new Uint8Array(text.length)
  // The text at this level, and where each of its characters starts and ends in `text`.
  let level = text
  let from: Int32Array | null = null
  let to: Int32Array | null = null
  for (let depth = 0; depth < ESCAPE_LEVELS; depth++) {
    const read = readEscapes(level)
    if (read === null) break
    // Where each character read stands in `text`: its escape's first and last character.
    const start = new Int32Array(read.text.length)
    const end = new Int32Array(read.text.length)
    for (let k = 0; k < read.text.length; k++) {
      const first = read.from[k]!
      const last = read.to[k]! - 1
      start[k] = from ? from[first]! : first
      end[k] = to ? to[last]! : last + 1
    }
    for (let i = 0; i + KEY_RUN <= read.text.length; i++) {
      if (windows.has(read.text.slice(i, i + KEY_RUN)))
        hidden.fill(1, start[i]!, end[i + KEY_RUN - 1]!)
    }
    level = read.text
    from = start
    to = end
    if (!level.includes('%') && !level.includes('\\')) break
  }
  return hidden.includes(1) ? shownWith(text, hidden, shownAs) : text
}

/** How deep escapes are read again: JSON inside a URL inside a URL (`%255C%2522`), and one more. */
const ESCAPE_LEVELS = 4

/**
 * `text` with its escapes read (`escapeAt`), and where each character read starts and ends in
 * `text`; null when it holds no escape.
 */
function readEscapes(text: string): { text: string; from: Int32Array; to: Int32Array } | null {
  const parts: string[] = []
  const from = new Int32Array(text.length)
  const to = new Int32Array(text.length)
  let n = 0
  let plainFrom = 0
  let escapes = 0
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i)
    // Only `%` and `\` begin an escape: everything else stands for itself.
    const escape = code === 37 || code === 92 ? escapeAt(text, i) : null
    if (escape === null) {
      from[n] = i
      to[n] = i + 1
      n++
      i++
      continue
    }
    parts.push(text.slice(plainFrom, i), escape[0])
    from[n] = i
    to[n] = i + escape[1]
    n++
    i += escape[1]
    plainFrom = i
    escapes++
  }
  if (escapes === 0) return null
  parts.push(text.slice(plainFrom))
  return { text: parts.join(''), from: from.subarray(0, n), to: to.subarray(0, n) }
}

// What a backslash escape stands for (JSON's, and a printed string's `\'`).
const BACKSLASHED: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  "'": "'",
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
}

/** The character an escape at `i` of `text` stands for and the escape's length, or null. */
function escapeAt(text: string, i: number): [string, number] | null {
  if (text[i] === '%') {
    const digits = text.slice(i + 1, i + 3)
    return /^[0-7][0-9a-fA-F]$/.test(digits)
      ? [String.fromCharCode(Number.parseInt(digits, 16)), 3]
      : null
  }
  if (text[i] !== '\\') return null
  const next = text[i + 1] ?? ''
  const plain = BACKSLASHED[next]
  if (plain !== undefined) return [plain, 2]
  const digits = text.slice(i + 2, i + 6)
  return next === 'u' && /^[0-9a-fA-F]{4}$/.test(digits)
    ? [String.fromCharCode(Number.parseInt(digits, 16)), 6]
    : null
}

/** The start every Anthropic key shares (`sk-ant-api03-`): no secret, in any encoding. */
const PUBLIC_START = /^sk-ant-[a-z]+\d*-/

/**
 * `text` with every run of 8 or more of `key`'s hex digits hidden, in any case and whatever
 * stands between its bytes: a dump's spaces or colons, a URL's `%`, C's `\x`, a line break.
 * Runs wholly within the hex of the start every key shares are not looked for: they tell
 * nothing, and hold runs of decimal digits (`pi03` is 70693033) that an ordinary number or
 * commit id can hold too.
 */
function hideHexRuns(text: string, key: string, shownAs: string): string {
  const hex = Buffer.from(key, 'utf8').toString('hex')
  const publicDigits = 2 * Buffer.byteLength(PUBLIC_START.exec(key)?.[0] ?? '', 'utf8')
  const windows = new Set<string>()
  for (let j = Math.max(0, publicDigits - KEY_RUN + 1); j + KEY_RUN <= hex.length; j++) {
    windows.add(hex.slice(j, j + KEY_RUN))
  }
  // The text's hex digits in lower case, the separators between them left out; `at` maps
  // each digit back to where it stands. Any other character ends a run ('.').
  let digits = ''
  const at: number[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (/[0-9a-fA-F]/.test(c)) {
      digits += c.toLowerCase()
      at.push(i)
    } else if (c === '\\' && text[i + 1] === 'x') {
      i++
    } else if (!/[\s:%]/.test(c)) {
      digits += '.'
      at.push(i)
    }
  }
  const hidden = new Uint8Array(text.length)
  for (let i = 0; i + KEY_RUN <= digits.length; i++) {
    if (windows.has(digits.slice(i, i + KEY_RUN))) hidden.fill(1, at[i]!, at[i + KEY_RUN - 1]! + 1)
  }
  return shownWith(text, hidden, shownAs)
}

/** `key`'s bytes in hex, lower and upper case (each byte two digits, so no offset matters). */
function hexForms(key: string): string[] {
  const hex = Buffer.from(key, 'utf8').toString('hex')
  return [hex, hex.toUpperCase()]
}

/**
 * `key` in base64: whole, and the letters that stand for its bytes alone at each of the three
 * places it can start in encoded bytes (the letters at either end also carry the bytes around
 * it), in standard and URL-safe letters.
 */
function base64Forms(key: string): string[] {
  const bytes = Buffer.from(key, 'utf8')
  // The key encoded alone, whole (with its padding, if any, or without).
  const forms = [bytes.toString('base64'), bytes.toString('base64url')]
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
    // Each letter is 6 bits: those wholly within the key's bytes depend on nothing else.
    const inner = encoded.slice(
      Math.ceil((offset * 8) / 6),
      Math.floor(((offset + bytes.length) * 8) / 6),
    )
    if (inner.length >= KEY_RUN) forms.push(inner, inner.replaceAll('+', '-').replaceAll('/', '_'))
  }
  return forms
}

/**
 * `text` with every run of `KEY_RUN` or more characters that stands in one of `keys` replaced
 * (runs that touch or overlap are one). Each window of `KEY_RUN` characters of `text` is looked
 * up among those of the keys: a character is hidden when a window holding it is one.
 */
function hideRuns(text: string, keys: ReadonlyArray<string>, shownAs: string): string {
  const windows = keyWindows(keys)
  const hidden = new Uint8Array(text.length)
  for (let i = 0; i + KEY_RUN <= text.length; i++) {
    if (windows.has(text.slice(i, i + KEY_RUN))) hidden.fill(1, i, i + KEY_RUN)
  }
  return shownWith(text, hidden, shownAs)
}

/** Every window of `KEY_RUN` characters of each of `keys`. */
function keyWindows(keys: ReadonlyArray<string>): Set<string> {
  const windows = new Set<string>()
  for (const key of keys) {
    for (let j = 0; j + KEY_RUN <= key.length; j++) windows.add(key.slice(j, j + KEY_RUN))
  }
  return windows
}

/** `text` with each stretch of characters marked in `hidden` written once as `shownAs`. */
function shownWith(text: string, hidden: Uint8Array, shownAs: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    if (hidden[i] === 0) out += text[i]
    else if (i === 0 || hidden[i - 1] === 0) out += shownAs
  }
  return out
}

/** Seconds to wait according to `retry-after-ms` / `retry-after` (seconds or an HTTP date). */
export function retryAfterSeconds(headers: Headers | undefined, now = Date.now()): number | null {
  const ms = plainNumber(headers?.get('retry-after-ms'))
  if (ms !== null) return Math.ceil(ms / 1000)
  const value = headers?.get('retry-after')
  if (!value) return null
  const seconds = plainNumber(value)
  if (seconds !== null) return Math.ceil(seconds)
  // An HTTP date starts with its day's name (all three forms HTTP allows), an ISO one with its
  // year-month-day: `Date.parse` also reads a number in other text as a year ("-3600" as the
  // year 3600, a wait of 1,600 years; "-2030", "in 3600", "-9999 GMT").
  if (!HTTP_OR_ISO_DATE.test(value)) return null
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000))
}

// The start of an HTTP date (`Sun, 06 Nov 1994 …`, `Sunday, 06-Nov-94 …`, `Sun Nov  6 …`) or
// of an ISO one (`2026-12-05T22:00:45Z`).
const HTTP_OR_ISO_DATE =
  /^\s*(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s|\d{4}-\d{2}-\d{2}(?:[T\s]|$))/i

// Digits, a fraction allowed, and a number JavaScript holds: `parseFloat` read a date such as
// "2026-12-05T22:00:00Z" as 2026 seconds, and "1e300" or 400 nines as a wait of that length.
function plainNumber(value: string | null | undefined): number | null {
  if (!value || !/^\s*\d+(?:\.\d+)?\s*$/.test(value)) return null
  const number = Number(value)
  return Number.isFinite(number) ? number : null
}

/** The silence that ended a reply, as thrown or as the SDK's wrapping's cause. */
function silenceOf(error: unknown): ReplySilenceError | null {
  for (let at = error, depth = 0; at && depth < 5; depth++) {
    if (at instanceof ReplySilenceError) return at
    at = at instanceof Error ? at.cause : undefined
  }
  return null
}

function formatWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`
  if (seconds < 2 * 3600) {
    const minutes = Math.ceil(seconds / 60)
    return `${minutes} minute${minutes === 1 ? '' : 's'}`
  }
  const hours = Math.ceil(seconds / 3600)
  return hours > 48 ? 'more than two days' : `${hours} hours`
}

function errorType(error: APIError): string | undefined {
  const body = error.error as { error?: { type?: unknown } } | undefined
  return typeof body?.error?.type === 'string' ? body.error.type : undefined
}

function errorMessage(error: APIError): string {
  const body = error.error as { error?: { message?: unknown } } | undefined
  return typeof body?.error?.message === 'string' ? body.error.message : ''
}

function clip(text: string): string {
  // Its format characters as escapes too: a bidi override would reorder the banner's words.
  const line = escapeInvisible(text.replace(/\s+/g, ' ').trim()) || 'no details given'
  return cutWithEllipsis(line, 300)
}
