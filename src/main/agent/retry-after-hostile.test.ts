/**
 * The wait a 429 names, from `retry-after` values an unkind server (or proxy) sends: a date
 * that is not an HTTP date was read by its year as a number of seconds, "1e300" and 400 nines
 * as waits of that many minutes (printed in exponent form or as "Infinity"), and 0 as "Try
 * again in 0 seconds". Through `classifyTurnError`, as the chat tells it.
 */
import { RateLimitError } from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { classifyTurnError, retryAfterSeconds } from './turn-errors'

function told(headers: Record<string, string>): string {
  const error = new RateLimitError(
    429,
    { type: 'error', error: { type: 'rate_limit_error', message: 'x' } },
    undefined,
    new Headers(headers),
  )
  return classifyTurnError(error, { streamStarted: false, model: 'claude-sonnet-4-6' }).message
}

const LIMIT = 'Rate limit reached for your API key.'

describe('a 429 with a hostile retry-after', () => {
  it('names no wait it cannot read, nor one of 0', () => {
    for (const value of ['1e300', '9'.repeat(400), '-5', '12abc', 'soon', '0', '0.0']) {
      expect(told({ 'retry-after': value }), value).toBe(`${LIMIT} Wait a moment.`)
    }
    expect(told({ 'retry-after-ms': '1e9' })).toBe(`${LIMIT} Wait a moment.`)
  })

  it('reads no negative number as a date (V8 reads "-3600" as the year 3600)', () => {
    const now = Date.parse('2026-12-05T22:00:00Z')
    const numbers = ['-3600', '-2030', '-10000', '-60', '1.5.', '5, 6']
    for (const value of [...numbers, 'in 3600', '-3600Z', '-9999 GMT', '+275760']) {
      expect(retryAfterSeconds(new Headers({ 'retry-after': value }), now), value).toBeNull()
      expect(told({ 'retry-after': value }), value).toBe(`${LIMIT} Wait a moment.`)
    }
    // A real HTTP date still counts, past (no wait) or future.
    const date = (value: string) => retryAfterSeconds(new Headers({ 'retry-after': value }), now)
    expect(date('Sat, 05 Dec 2026 22:02:00 GMT')).toBe(120)
    expect(date('Sat, 05 Dec 2026 21:00:00 GMT')).toBe(0)
    expect(date('Saturday, 05-Dec-26 22:00:30 GMT')).toBe(30)
  })

  it('reads an ISO date as the date it is, not its year as seconds', () => {
    const now = Date.parse('2026-12-05T22:00:00Z')
    const headers = new Headers({ 'retry-after': '2026-12-05T22:00:45Z' })
    expect(retryAfterSeconds(headers, now)).toBe(45)
  })

  it('names a long wait in hours, and a very long one as more than two days', () => {
    expect(told({ 'retry-after': '3600' })).toBe(`${LIMIT} Try again in 60 minutes.`)
    expect(told({ 'retry-after': '7201' })).toBe(`${LIMIT} Try again in 3 hours.`)
    expect(told({ 'retry-after': String(10 ** 12) })).toBe(
      `${LIMIT} Try again in more than two days.`,
    )
    expect(told({ 'retry-after': ' 30 ' })).toBe(`${LIMIT} Try again in 30 seconds.`)
    expect(told({ 'retry-after-ms': '1500' })).toBe(`${LIMIT} Try again in 2 seconds.`)
  })
})
