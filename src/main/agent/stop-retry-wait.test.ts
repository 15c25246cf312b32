/**
 * Stop while the SDK waits to retry (issue #5: the user can stop a turn at any moment; Cairn
 * uses the SDK's retries). The API answers 529 and asks for a 59-second wait; Stop ends the turn
 * during that wait, no second request goes out, and the conversation goes on. Through the real
 * core with the SDK's retries on, against the fake Messages API.
 *
 * The SDK's fetch is watched: the SDK throws a failed response's body away unread only when it
 * is going to try again (with retries off it reads it, to report the error), so Stop is pressed
 * once that has happened: inside the wait, not while the first request is still out (where it
 * would pass with retries off too).
 */
import { expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'
import type { AnthropicFetch } from './client'

let discarded: () => void = () => {}
let retrying: Promise<void> = Promise.resolve()

/** `fetch`, with a 529's body watched: `retrying` resolves when the SDK throws it away. */
const watched: AnthropicFetch = async (input, init) => {
  const response = await fetch(input, init)
  if (response.status !== 529 || !response.body) return response
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    async cancel(reason) {
      discarded()
      await reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}

const t = coreThroughFakeApi({
  prefix: 'cairn-retry-wait-',
  quiet: true,
  maxRetries: 2,
  fetch: watched,
})

it('ends the turn at Stop while the SDK waits to retry an overloaded API', async () => {
  retrying = new Promise<void>((resolve) => (discarded = resolve))
  // The SDK honours a retry-after-ms under a minute: a wait no test would sit through.
  t.fake.script(reply.error(529, { retryAfterMs: 59_000 }), reply.text('Never sent'))
  const { conversationId, turnId } = await t.send(null, 'hi')
  const done = t.finished(turnId)
  const first = await Promise.race([retrying.then(() => 'waiting'), done.then(() => 'ended')])
  expect(first).toBe('waiting')
  await t.call('chat:stop', { conversationId })
  const mine = await done
  expect(mine.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
  expect(mine.some((e) => e.type === 'error')).toBe(false)
  expect(t.fake.messageRequests()).toHaveLength(1)
  expect(t.fake.remaining()).toBe(1)

  const next = await t.turn(conversationId, 'again')
  expect(next.events.some((e) => e.type === 'error')).toBe(false)
  const stored = await t.call('conversations:get', { id: conversationId })
  expect(stored.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant'])
  expect(stored.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'Never sent' }])
})
