/**
 * Acceptance check of the agent loop (issue #5) against a Messages API that misbehaves: events
 * that are not JSON, a record cut mid-way, a tool call cut mid-input or with input that is not
 * JSON, blocks, events and stop reasons this build does not know, a reply that never comes,
 * 429 without a wait and 529 with one. Through the real core: the real SDK against the fake
 * Messages API, the real versioned memory, `git` as the second opinion.
 *
 * Each case holds the promises: a clear message and no stack, nothing half-run in
 * memory, and a stored conversation that can be sent again (every tool call answered) and is
 * still readable after a restart.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { invalidMessages, reply, sse } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent, Conversation } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-hostile-api-', quiet: true })

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
  })
}

/** Commits in history, as `git rev-list` counts them (0 before the first). */
function commitCount(): number {
  try {
    return Number(git('rev-list', '--count', 'HEAD').trim())
  } catch {
    return 0
  }
}

const errorOf = (events: ReadonlyArray<AgentEvent>) => events.find((e) => e.type === 'error')

/** No stack, no host path, no key in what the window is told. */
function expectPlain(events: ReadonlyArray<AgentEvent>): void {
  const shown = JSON.stringify(events)
  expect(shown).not.toMatch(/\bat \S+ \(|node_modules|\.mjs|\.ts:\d/)
  expect(shown).not.toContain(cairn.dataDir)
  expect(shown).not.toContain('sk-test')
}

/**
 * Every tool call of the stored conversation is answered first thing in the next message, the
 * next turn's request is one the API takes, and the file reads back after a restart.
 */
async function expectSendable(conversationId: string): Promise<Conversation> {
  const stored = await cairn.call('conversations:get', { id: conversationId })
  stored.messages.forEach((message, i) => {
    const calls = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
    if (calls.length === 0) return
    const next = stored.messages[i + 1]
    expect(next?.role).toBe('user')
    const answered = next!.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []))
    expect(answered).toEqual(calls)
  })
  await cairn.reopen()
  const reread = await cairn.call('conversations:get', { id: conversationId })
  expect(reread.messages).toEqual(stored.messages)
  cairn.fake.script(reply.text('Carrying on.'))
  const next = await cairn.turn(conversationId, 'Go on')
  expect(errorOf(next.events)).toBeUndefined()
  const sent = cairn.fake.messageRequests().at(-1)!.body!.messages
  expect(invalidMessages(sent)).toBeNull()
  return reread
}

describe('a stream the API breaks', () => {
  it('keeps the text before an event that is not JSON, says the reply broke, and goes on', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.text(0, 'Hello there') +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n' +
          sse.end('end_turn'),
      ),
    )
    const turn = await cairn.turn(null, 'hi')
    expect(errorOf(turn.events)).toMatchObject({ code: 'stream-interrupted' })
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    expectPlain(turn.events)
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello there' }],
    })
  })

  it('runs and stores no tool call whose input was cut off mid-way, keeping the text before it', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.text(0, 'Saving it.') +
          sse.event('content_block_start', {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'tool_use', id: 'toolu_half', name: 'memory', input: {} },
          }) +
          sse.event('content_block_delta', {
            type: 'content_block_delta',
            index: 1,
            delta: {
              type: 'input_json_delta',
              partial_json: '{"command":"create","path":"/memories/half.md","file_te',
            },
          }) +
          // The connection breaks in the middle of the next record.
          'event: content_block_delta\ndata: {"type":"content_bl',
        { ending: 'cut' },
      ),
    )
    const turn = await cairn.turn(null, 'Remember this')
    expect(errorOf(turn.events)).toMatchObject({ code: 'stream-interrupted' })
    expect(turn.events.some((e) => e.type === 'tool-call')).toBe(false)
    expectPlain(turn.events)
    expect(existsSync(path.join(cairn.dataDir, 'memories', 'half.md'))).toBe(false)
    expect(commitCount()).toBe(0)
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'Saving it.' }])
    expect(stored.toolCommits).toEqual({})
  })

  it('runs no tool call whose input is not JSON, and stores none of it', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.toolUse(
            0,
            { id: 'toolu_bad', name: 'memory' },
            '{"command": "create", "path": /memories/x.md, "file_text": "x"}',
          ) +
          sse.end('tool_use'),
      ),
    )
    const turn = await cairn.turn(null, 'Remember x')
    expect(errorOf(turn.events)).toBeDefined()
    expect(turn.events.some((e) => e.type === 'tool-call')).toBe(false)
    expectPlain(turn.events)
    expect(commitCount()).toBe(0)
    const stored = await expectSendable(turn.conversationId)
    expect(JSON.stringify(stored.messages)).not.toContain('toolu_bad')
    expect(cairn.fake.messageRequests()).toHaveLength(2)
  })

  it('skips a block, an event and a stop reason it does not know, keeping the rest of the reply', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.event('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'hologram', data: 'x' },
          }) +
          sse.event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
          sse.event('telepathy', { type: 'telepathy', mood: 'calm' }) +
          sse.text(1, 'After the hologram.') +
          sse.end('galaxy_brain'),
      ),
    )
    const turn = await cairn.turn(null, 'hi')
    expect(errorOf(turn.events)).toBeUndefined()
    expect(turn.events.find((e) => e.type === 'message-finished')).toMatchObject({
      stopReason: 'galaxy_brain',
    })
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]).toMatchObject({
      content: [{ type: 'text', text: 'After the hologram.' }],
      stopReason: 'galaxy_brain',
    })
  })

  it('says plainly when a 200 reply holds no events at all', async () => {
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const turn = await cairn.turn(null, 'hi')
    expect(errorOf(turn.events)).toMatchObject({
      message: expect.stringMatching(/^[A-Z].*\.$/),
    })
    expectPlain(turn.events)
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages.map((m) => m.role)).toEqual(['user'])
  })
})

describe('rate limits and overload', () => {
  it('asks to wait a moment on a 429 without retry-after, and does not name a wait for a 529', async () => {
    cairn.fake.script(reply.error(429))
    const limited = await cairn.turn(null, 'hi')
    expect(errorOf(limited.events)).toMatchObject({
      code: 'rate-limited',
      message: 'Rate limit reached for your API key. Wait a moment.',
    })
    cairn.fake.script(reply.error(529, { retryAfter: 20 }))
    const overloaded = await cairn.turn(limited.conversationId, 'again')
    expect(errorOf(overloaded.events)).toMatchObject({ code: 'overloaded' })
    expectPlain([...limited.events, ...overloaded.events])
    await expectSendable(limited.conversationId)
  })
})

describe('a reply that never comes', () => {
  for (const [when, body, head] of [
    ['before the first byte', '', false],
    ['after message_start', sse.messageStart(), true],
  ] as const) {
    it(`stops ${when}, and the conversation goes on`, async () => {
      cairn.fake.script(reply.raw(body, { head, ending: 'hang' }))
      const { conversationId, turnId } = await cairn.send(null, 'hi')
      await cairn.fake.waitForMessageRequests(1)
      await cairn.call('chat:stop', { conversationId })
      const events = await cairn.finished(turnId)
      expect(events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
      expect(errorOf(events)).toBeUndefined()
      const stored = await expectSendable(conversationId)
      expect(stored.messages.map((m) => m.role)).toEqual(['user'])
    })
  }
})
