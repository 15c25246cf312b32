import { APIConnectionError, APIError, AnthropicError, RateLimitError } from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { classifyTurnError, retryAfterSeconds } from './turn-errors'

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
