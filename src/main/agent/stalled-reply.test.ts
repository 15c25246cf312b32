/**
 * A reply that goes silent ends (issue #15, stop 31). The SDK's timeout covers only the wait for
 * a response's head: a reply that stalled after it stayed "replying" until the person pressed
 * Stop, and a server that never answered was told after three 10-minute attempts. Cairn's limits
 * (the head's wait, the silence between bytes) are short here so the tests run in seconds.
 * Through the real core: the real SDK against the fake Messages API on 127.0.0.1.
 *
 * Each stall ends the turn as `timeout` in the person's words, keeps the words that had arrived
 * (never a half tool call), and leaves the next turn working. Pings, which the SDK drops before
 * Cairn's loop sees them, keep a slow reply alive; a Stop during a stall is a Stop.
 */
import { describe, expect, it } from 'vitest'
import { reply, sse } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent } from '../../shared/types'
import { coreThroughFakeApi, type CoreThroughFakeApi } from '../core-test-support'

const errorOf = (events: ReadonlyArray<AgentEvent>) => events.find((e) => e.type === 'error')

/** The silence limit of these tests: pings come twenty times as often. */
const SILENCE_MS = 2_000

/** A text block's start and its first words, the block left open. */
const openText = (index: number, text: string) =>
  sse.event('content_block_start', {
    type: 'content_block_start',
    index,
    content_block: { type: 'text', text: '' },
  }) +
  sse.event('content_block_delta', {
    type: 'content_block_delta',
    index,
    delta: { type: 'text_delta', text },
  })

/** No stack, no host path, no key in what the window is told. */
function expectPlain(t: CoreThroughFakeApi, events: ReadonlyArray<AgentEvent>): void {
  const shown = JSON.stringify(events)
  expect(shown).not.toMatch(/\bat \S+ \(|node_modules|\.mjs|\.ts:\d/)
  expect(shown).not.toContain(t.dataDir)
  expect(shown).not.toContain('sk-test')
}

/** The next message gets its answer: the stall left nothing behind. */
async function expectNextTurnWorks(t: CoreThroughFakeApi, conversationId: string): Promise<void> {
  t.fake.script(reply.text('Here again.'))
  const next = await t.turn(conversationId, 'Are you there?')
  expect(errorOf(next.events)).toBeUndefined()
  const stored = await t.call('conversations:get', { id: conversationId })
  expect(stored.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'Here again.' }])
}

describe('a reply that goes silent', () => {
  const t = coreThroughFakeApi({
    prefix: 'cairn-stalled-reply-',
    quiet: true,
    replyLimits: { firstByteMs: SILENCE_MS, silenceMs: SILENCE_MS },
  })

  it('ends when the API answers and then sends nothing', async () => {
    t.fake.script(reply.raw('', { ending: 'hang' }))
    const turn = await t.turn(null, 'hi')
    expect(errorOf(turn.events)).toEqual(
      expect.objectContaining({
        code: 'timeout',
        message:
          'The Anthropic API did not answer in time: it sent nothing for 2 seconds. Check your connection and try again.',
      }),
    )
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    expectPlain(t, turn.events)
    const stored = await t.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user'])
    await expectNextTurnWorks(t, turn.conversationId)
  })

  it('ends mid-text, keeping the words that came', async () => {
    t.fake.script(
      reply.raw(sse.messageStart() + openText(0, 'The first half of'), { ending: 'hang' }),
    )
    const turn = await t.turn(null, 'Tell me')
    expect(errorOf(turn.events)).toEqual(
      expect.objectContaining({
        code: 'timeout',
        message:
          "Claude's reply stopped coming: the Anthropic API sent nothing for 2 seconds, so Cairn ended it. What arrived so far was kept; send your message again to continue.",
      }),
    )
    expectPlain(t, turn.events)
    const stored = await t.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'The first half of' }])
    await expectNextTurnWorks(t, turn.conversationId)
  })

  it('ends mid tool input: the words are kept, the half call is neither run nor stored', async () => {
    const halfCall =
      sse.event('content_block_start', {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_stalled', name: 'memory', input: {} },
      }) +
      sse.event('content_block_delta', {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"command":"create","path":"/mem' },
      })
    t.fake.script(
      reply.raw(sse.messageStart() + sse.text(0, 'Saving that.') + halfCall, { ending: 'hang' }),
    )
    const turn = await t.turn(null, 'Remember this')
    expect(errorOf(turn.events)).toMatchObject({ code: 'timeout' })
    expect(turn.events.some((e) => e.type === 'tool-call')).toBe(false)
    const stored = await t.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'Saving that.' }])
    const claudes = await t.call('history:log', { offset: 0, limit: 10, actor: 'claude' })
    expect(claudes.total).toBe(0)
    await expectNextTurnWorks(t, turn.conversationId)
  })

  it('ends a server that never answers after the head limit, not the SDK’s ten minutes', async () => {
    t.fake.script(reply.raw('', { head: false, ending: 'hang' }))
    const turn = await t.turn(null, 'hi')
    expect(errorOf(turn.events)).toEqual(
      expect.objectContaining({
        code: 'timeout',
        message: 'The Anthropic API did not answer in time. Check your connection and try again.',
      }),
    )
    await expectNextTurnWorks(t, turn.conversationId)
  })

  it('lives on through pings, and the same reply without them is ended', async () => {
    // 25 pings 100 ms apart: the reply takes longer than the silence limit in all, never silent
    // for a twentieth of it. The SDK drops the pings: only Cairn's watch of the bytes sees them.
    const rest = sse.text(0, 'Slow, but here.') + sse.end('end_turn')
    const pings = Array.from({ length: 25 }, () => ({ afterMs: 100, body: sse.ping() }))
    t.fake.script(reply.raw(sse.messageStart(), { later: [...pings, { afterMs: 0, body: rest }] }))
    const pinged = await t.turn(null, 'Think hard')
    expect(errorOf(pinged.events)).toBeUndefined()
    const stored = await t.call('conversations:get', { id: pinged.conversationId })
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'Slow, but here.' }])

    // The same words after twice the limit with no ping: the silence ends the reply.
    t.fake.script(
      reply.raw(sse.messageStart(), { later: [{ afterMs: 2 * SILENCE_MS, body: rest }] }),
    )
    const silent = await t.turn(pinged.conversationId, 'Again')
    expect(errorOf(silent.events)).toMatchObject({ code: 'timeout' })
    await expectNextTurnWorks(t, pinged.conversationId)
  })
})

describe('a Stop during a stall', () => {
  // A silence limit no test reaches: the Stop is what ends the turn.
  const t = coreThroughFakeApi({
    prefix: 'cairn-stalled-stop-',
    quiet: true,
    replyLimits: { firstByteMs: 600_000, silenceMs: 600_000 },
  })

  it('is a Stop: no error, the words kept, and the chat goes on', async () => {
    t.fake.script(reply.raw(sse.messageStart() + openText(0, 'Thinking out'), { ending: 'hang' }))
    const { conversationId, turnId } = await t.send(null, 'hi')
    await t.until(() => t.events.some((e) => e.turnId === turnId && e.type === 'text-delta'))
    await t.call('chat:stop', { conversationId })
    const events = await t.finished(turnId)
    expect(events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    expect(errorOf(events)).toBeUndefined()
    const stored = await t.call('conversations:get', { id: conversationId })
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'Thinking out' }])
    await expectNextTurnWorks(t, conversationId)
  })
})
