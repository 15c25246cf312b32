/**
 * Stop while the SDK waits to retry (issue #5: the user can stop a turn at any moment; Cairn
 * uses the SDK's retries). The API answers 529 and asks for a 59-second wait; Stop ends the turn
 * during that wait, no second request goes out, and the conversation goes on. Through the real
 * core with the SDK's retries on, against the fake Messages API.
 */
import { expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'

const t = coreThroughFakeApi({ prefix: 'cairn-retry-wait-', quiet: true, maxRetries: 2 })

it('ends the turn at Stop while the SDK waits to retry an overloaded API', async () => {
  // The SDK honours a retry-after-ms under a minute: a wait no test would sit through.
  t.fake.script(reply.error(529, { retryAfterMs: 59_000 }), reply.text('Never sent'))
  const { conversationId, turnId } = await t.send(null, 'hi')
  const done = t.finished(turnId)
  await t.fake.waitForMessageRequests(1)
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
