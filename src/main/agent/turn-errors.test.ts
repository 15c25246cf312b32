import { inspect } from 'node:util'
import { APIConnectionError, APIError, AnthropicError, RateLimitError } from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { classifyTurnError, hideKeys, retryAfterSeconds, unknownStopError } from './turn-errors'

const context = { streamStarted: false, model: 'claude-sonnet-4-6' }
const body = (type: string, message = 'x') => ({ type: 'error', error: { type, message } })

describe('classifyTurnError', () => {
  it('reads the wait time of a rate limit in minutes when it is long', () => {
    const error = new RateLimitError(
      429,
      body('rate_limit_error'),
      undefined,
      new Headers({ 'retry-after': '90' }),
    )
    expect(classifyTurnError(error, context)).toEqual({
      code: 'rate-limited',
      message: 'Rate limit reached for your API key. Try again in 2 minutes.',
    })
  })

  it('tells a broken stream from a connection that never opened', () => {
    const broken = new AnthropicError('terminated')
    expect(classifyTurnError(broken, { ...context, streamStarted: true }).code).toBe(
      'stream-interrupted',
    )
    expect(classifyTurnError(new APIConnectionError({ cause: new Error('x') }), context).code).toBe(
      'network',
    )
  })

  it('recognises a prompt that is too long and an unknown model', () => {
    const long = APIError.generate(
      400,
      body('invalid_request_error', 'prompt is too long: 210000 tokens'),
      undefined,
      new Headers(),
    )
    expect(classifyTurnError(long, context).code).toBe('request-too-large')
    const missing = APIError.generate(404, body('not_found_error'), undefined, new Headers())
    expect(classifyTurnError(missing, context)).toMatchObject({ code: 'model-not-found' })
    expect(classifyTurnError(missing, context).message).toContain('claude-sonnet-4-6')
  })

  it('knows an empty reply by what it held, whatever the SDK calls it', () => {
    // Another SDK's words for the same empty body: still an empty reply.
    const reworded = new AnthropicError('stream closed before any message')
    expect(classifyTurnError(reworded, { ...context, emptyReply: true }).code).toBe('empty-reply')
    // An event that could not be read is something, not nothing.
    const garbled = new AnthropicError('Could not parse message into JSON', {
      cause: new SyntaxError('x'),
    })
    expect(classifyTurnError(garbled, { ...context, emptyReply: true }).code).toBe('internal')
    // A body cut before any event (the SDK wraps the network's error): the connection broke.
    const cut = new AnthropicError('terminated', { cause: new TypeError('terminated') })
    expect(classifyTurnError(cut, { ...context, emptyReply: true }).code).toBe('network')
    // The same words where the reply held events are not an empty reply.
    const worded = new AnthropicError('request ended without sending any chunks')
    expect(classifyTurnError(worded, { ...context, streamStarted: true }).code).toBe(
      'stream-interrupted',
    )
  })

  it('names the type of an error inside a stream with nothing invisible in it', () => {
    const inside = new APIError(
      undefined,
      body('over\u202Eloaded\nerror'),
      undefined,
      new Headers(),
    )
    expect(classifyTurnError(inside, { ...context, streamStarted: true })).toEqual({
      code: 'stream-interrupted',
      message:
        'The reply was interrupted by an API error (over\\u202Eloaded error). Send your message again to continue.',
    })
  })

  it('keeps unknown failures vague', () => {
    expect(classifyTurnError(new Error('/home/me/secret path'), context)).toEqual({
      code: 'internal',
      message: 'Something went wrong while talking to Claude. Please try again.',
    })
  })
})

describe('retryAfterSeconds', () => {
  it('accepts seconds, milliseconds and HTTP dates', () => {
    expect(retryAfterSeconds(new Headers({ 'retry-after': '12' }))).toBe(12)
    expect(retryAfterSeconds(new Headers({ 'retry-after-ms': '1500' }))).toBe(2)
    const now = Date.parse('2025-01-01T00:00:00Z')
    expect(
      retryAfterSeconds(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now),
    ).toBe(30)
    expect(retryAfterSeconds(new Headers())).toBeNull()
  })
})

describe('hideKeys', () => {
  const key = 'sk-ant-api03-' + 'Zx9Qw_e-R7k'.repeat(8) + 'AA'
  /** Hex digits of `sk-ant-api03-`. */
  const PUBLIC_HEX = 26

  it('hides the key as it is, URL-encoded and in base64 wherever it starts', () => {
    const basic = Buffer.from(`user:${key}`).toString('base64')
    const quoted = [
      `key ${key}`,
      `x-api-key=${encodeURIComponent(key)}`,
      `Authorization: Basic ${basic}`,
      `b64 ${Buffer.from(key).toString('base64')}`,
      `b64url ${Buffer.from(`xy${key}`).toString('base64url')}`,
    ].join('\n')
    const hidden = hideKeys(quoted, key)
    expect(hidden).not.toContain(key.slice(13, 21))
    expect(hidden).not.toContain(encodeURIComponent(key).slice(13, 21))
    for (const encoded of [
      basic,
      Buffer.from(key).toString('base64'),
      Buffer.from(`xy${key}`).toString('base64url'),
    ]) {
      // At most the few letters that also carry the bytes around the key remain.
      expect(hidden).not.toContain(encoded.slice(12, 20))
    }
    expect(hidden.split('\n')[0]).toBe('key your API key')
  })

  it('hides a part of the key, and any token that looks like an Anthropic key', () => {
    const other = 'sk-ant-admin01-' + 'q'.repeat(40)
    const hidden = hideKeys(
      `the key starting ${key.slice(0, 30)}… is not allowed; nor is ${other}.`,
      key,
    )
    expect(hidden).toBe('the key starting an API key… is not allowed; nor is an API key.')
    // A key of another shape: a run of 8 of its characters is hidden, 7 are not a secret's part.
    const plain = 'proxy-secret-0123456789'
    expect(hideKeys(`got proxy-secret-01 and 6789`, plain)).toBe('got your API key and 6789')
    expect(hideKeys('nothing here', '')).toBe('nothing here')
  })

  it('hides base64 of the key cut into lines or escaped, as it hides a part of the key', () => {
    // A proxy quoting a Basic header the MIME way (lines of 76) or in JSON that escapes '/'.
    const basic = Buffer.from(`user:${key}`).toString('base64')
    const wrapped = basic.replace(/(.{76})/g, '$1\n')
    const escaped = Buffer.from(`xyz${key}`).toString('base64').replaceAll('/', '\\/')
    // Or cut short (an API error's words are cut to 300 characters before the key is hidden).
    const cut = `Basic ${basic.slice(0, 100)}…`
    for (const quoted of [`Authorization: Basic ${wrapped}`, `{"auth":"Basic ${escaped}"}`, cut]) {
      const hidden = hideKeys(quoted, key)
      // No 8 letters of the key's own base64 are left (at most 6 bytes of the key).
      for (const encoded of [basic, Buffer.from(`xyz${key}`).toString('base64')]) {
        for (
          let i = 12;
          i + 8 <= Math.min(encoded.length - 4, quoted === cut ? 100 : Infinity);
          i++
        ) {
          expect(hidden.replaceAll('\n', '').replaceAll('\\/', '/')).not.toContain(
            encoded.slice(i, i + 8),
          )
        }
      }
    }
  })

  it('hides the key in hex, either case, whole or a run of it', () => {
    const hex = Buffer.from(key).toString('hex')
    const quoted = [
      `sent ${hex}`,
      `SENT ${hex.toUpperCase()}`,
      // A dump cut into lines, or cut short.
      `dump ${hex.replace(/(.{64})/g, '$1\n')}`,
      `cut ${hex.slice(30, 120)}…`,
    ].join('\n')
    const hidden = hideKeys(quoted, key)
    expect(hidden.split('\n').slice(0, 2)).toEqual(['sent your API key', 'SENT your API key'])
    // No 8 hex digits of the key are left anywhere (at most 4 bytes of it).
    // (The hex of `sk-ant-api03-`, which every key starts with, tells nothing and may remain.)
    const flat = hidden.replaceAll('\n', '').toLowerCase()
    for (let i = PUBLIC_HEX - 7; i + 8 <= hex.length; i++) {
      expect(flat).not.toContain(hex.slice(i, i + 8))
    }
  })

  it('hides the key in hex with its bytes set apart or in mixed case', () => {
    const hex = Buffer.from(key).toString('hex')
    const bytes = hex.match(/../g)!
    const quoted = [
      // A proxy's byte dump (hexdump -C, xxd), a URL path with every byte %-encoded, C escapes,
      // digits in mixed case.
      `dump ${bytes.join(' ')}`,
      `xxd ${hex.match(/.{1,4}/g)!.join(' ')}`,
      `path /v1/${bytes.map((b) => `%${b.toUpperCase()}`).join('')}/messages`,
      `c "${bytes.map((b) => `\\x${b}`).join('')}"`,
      `colons ${bytes.join(':')}`,
      `mixed ${[...hex].map((c, i) => (i % 3 === 0 ? c.toUpperCase() : c)).join('')}`,
    ]
    for (const line of quoted) {
      const hidden = hideKeys(line, key)
      // No 8 hex digits of the key are left (at most 4 bytes of it), whatever stands between.
      const digits = hidden
        .replaceAll('your API key', '|')
        .replace(/\\x|[ :%]/g, '')
        .toLowerCase()
      for (let i = PUBLIC_HEX - 7; i + 8 <= hex.length; i++) {
        expect(digits, line.slice(0, 12)).not.toContain(hex.slice(i, i + 8))
      }
    }
  })

  it('hides a token in an address as a URL parser or git writes it, escapes in either case', () => {
    // A forge's token of base64 letters: '/' and '+' every few characters. An address's user
    // part escapes '/' and '@' but keeps '+' and '$', so it is not encodeURIComponent's form,
    // and the pieces between two escapes are shorter than a run of 8.
    const token = 'ab/cd+ef/gh+ij$kl@mn/op+qr/st+uv@wx$yz'
    const address = new URL('https://example.com/memory.git')
    address.username = 'me'
    address.password = token
    const lowerEscapes = encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (escape) =>
      escape.toLowerCase(),
    )
    const lines = [
      `fatal: Authentication failed for '${address.href}'`,
      `GET ${address.href.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())}`,
      `token=${lowerEscapes}`,
      `token=${new URLSearchParams({ token }).toString()}`,
      `cut short: ${address.password.slice(0, 30)}`,
    ]
    for (const line of lines) {
      const decoded = hideKeys(line, token, 'the sync token').replace(
        /%([0-9a-f]{2})/gi,
        (_, hex) => String.fromCharCode(Number.parseInt(hex as string, 16)),
      )
      for (let i = 0; i + 8 <= token.length; i++) {
        expect(decoded, line).not.toContain(token.slice(i, i + 8))
      }
    }
    expect(hideKeys(lines[0]!, token, 'the sync token')).toBe(
      "fatal: Authentication failed for 'https://me:the sync token@example.com/memory.git'",
    )
  })

  it('hides a token holding " and \\ as JSON and a printed string escape them, whole or a run', () => {
    // A token of a forge that allows any visible character: '"' or '\\' every few characters,
    // so the pieces between two of JSON's escapes are all shorter than a run of 8.
    const token = 'ab"cd\\ef"gh\\ij\'kl"mn\\op"qr\\st"uv'
    const short = 'a"b\\c'
    const lines = [
      JSON.stringify({ url: 'https://example.com/memory.git', token }),
      // Cut short: its start only.
      JSON.stringify({ token }).slice(0, 30),
      inspect({ token }),
      `token=${token.replaceAll('\\', '\\\\').replaceAll('"', '\\u0022')}`,
    ]
    for (const line of lines) {
      const hidden = hideKeys(line, token, 'the sync token')
      expect(hidden, line).toContain('the sync token')
      // However its escapes are read, no 8 of the token's characters stand together.
      const plain = hidden.replace(/\\u0022/g, '"').replace(/\\(["\\'])/g, '$1')
      for (let i = 0; i + 8 <= token.length; i++) {
        expect(plain, line).not.toContain(token.slice(i, i + 8))
      }
    }
    // A token under 8 characters is found whole in its escaped form too.
    expect(hideKeys(JSON.stringify({ token: short }), short, 'the sync token')).toBe(
      '{"token":"the sync token"}',
    )
  })

  it('hides a token inside URL-encoded JSON, encoded once and twice (%5C%22, %255C%2522)', () => {
    const token = 'ab"cd\\ef"gh\\ij\'kl"mn\\op"qr\\st"uv'
    const json = JSON.stringify({ token })
    const once = encodeURIComponent(json)
    const twice = encodeURIComponent(once)
    expect(once).toContain('%5C%22')
    expect(twice).toContain('%255C%2522')
    // Every %-escape and backslash escape read, as many times as they nest.
    const read = (text: string): string => {
      let out = text
      for (let level = 0; level < 4; level++) {
        out = out.replace(/%([0-7][0-9a-fA-F])/g, (_, hex: string) =>
          String.fromCharCode(Number.parseInt(hex, 16)),
        )
      }
      return out.replace(/\\(["\\'])/g, '$1')
    }
    for (const line of [`body=${once}`, `body=${twice}`, `q=${once.slice(0, 40)}`]) {
      expect(read(line)).toContain(token.slice(0, 8))
      const hidden = hideKeys(line, token, 'the sync token')
      expect(hidden, line).toContain('the sync token')
      for (let i = 0; i + 8 <= token.length; i++) {
        expect(read(hidden), line).not.toContain(token.slice(i, i + 8))
      }
    }
  })

  it('leaves numbers and hashes alone that only share the hex of the part every key has', () => {
    // The hex of `sk-ant-api03-` holds runs of decimal digits: 'pi03' is 70693033.
    const text =
      'took 17069303 ms at 1706930332; commit 61706930332dabcdef0123456789abcdef012345 failed'
    expect(hideKeys(text, key)).toBe(text)
  })
})

describe('unknownStopError', () => {
  it('quotes a hostile stop reason short, its invisible characters written as escapes', () => {
    // A bidi override would reorder the notice's own words on screen; ESC and NUL draw nothing.
    const reason = '\u202Eevil\u0000\u001b[31m' + 'x'.repeat(10_000)
    const { message } = unknownStopError(reason)
    expect(message).not.toMatch(/[\p{Cc}\p{Cf}]/u)
    expect(message).toContain('\\u202Eevil\\u0000\\u001B[31m')
    expect(message.length).toBeLessThan(200)
  })
})
