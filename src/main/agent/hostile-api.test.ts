/**
 * Acceptance check of the agent loop (issue #5) against a Messages API that misbehaves and a
 * turn pushed hard: events that are not JSON, a record cut mid-way, a tool call cut mid-input,
 * with input that is not JSON, without an id or with another call's id; blocks, events and stop
 * reasons this build does not know; a 200 with no events; a reply that never comes; 429 without
 * a wait and 529 with one; an error quoting the key; the 40-step limit, 25 calls in one reply,
 * two chats writing one file at once, hostile paths, a huge result, Stop mid-call and a quit
 * mid-reply. Through the real core: the real SDK against the fake Messages API, the real
 * versioned memory, `git` as the second opinion.
 *
 * Each case holds the promises: a clear message and no stack, host path or key; nothing
 * half-run in memory; and a stored conversation that can be sent again (every tool call
 * answered) and is still readable after a restart.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { invalidMessages, reply, sse } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent, Conversation } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'
import { MAX_REQUESTS_PER_TURN } from './run-turn'

const cairn = coreThroughFakeApi({ prefix: 'cairn-hostile-api-', quiet: true })

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
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

/** What the person is told when the API sent something that could not be read. */
const DAMAGED =
  "Claude's reply arrived damaged: the API sent something Cairn could not read. What arrived so far was kept; send your message again to continue."

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
  it('keeps the text before an event that is not JSON, says the reply arrived damaged, and goes on', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.text(0, 'Hello there') +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n' +
          sse.end('end_turn'),
      ),
    )
    const turn = await cairn.turn(null, 'hi')
    // Not "the connection broke": it did not, and the person would look in the wrong place.
    expect(errorOf(turn.events)).toMatchObject({ code: 'stream-interrupted', message: DAMAGED })
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
    expect(errorOf(turn.events)).toMatchObject({ code: 'stream-interrupted', message: DAMAGED })
    expect(turn.events.some((e) => e.type === 'tool-call')).toBe(false)
    expectPlain(turn.events)
    expect(commitCount()).toBe(0)
    const stored = await expectSendable(turn.conversationId)
    expect(JSON.stringify(stored.messages)).not.toContain('toolu_bad')
    expect(cairn.fake.messageRequests()).toHaveLength(2)
  })

  it('runs no tool call that comes without an id, tells Claude so, and stores none of it', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          sse.text(0, 'Noting it.') +
          sse.toolUse(
            1,
            { name: 'memory' },
            JSON.stringify({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }),
          ) +
          sse.end('tool_use'),
      ),
      reply.text('Hm, that did not work.'),
    )
    const turn = await cairn.turn(null, 'Remember a')
    expect(errorOf(turn.events)).toBeUndefined()
    // Nor shown: on main the window drew it as a call with the id "unknown" (two such calls
    // shared one card's result), and the card went when the turn ended (it is not stored).
    expect(turn.events.filter((e) => e.type === 'tool-call' || e.type === 'tool-result')).toEqual(
      [],
    )
    // Nothing ran: no file, no commit (on main it ran and committed as "Tool-Use-Id: unknown",
    // while the stored result said it was not run).
    expect(existsSync(path.join(cairn.dataDir, 'memories', 'a.md'))).toBe(false)
    expect(commitCount()).toBe(0)
    const toldClaude = JSON.stringify(cairn.fake.messageRequests()[1]!.body!.messages!.at(-1))
    expect(toldClaude).toContain('no id')
    // The stored conversation keeps the text, not the call without an id, and reads back after a
    // restart (on main the file held a tool_use without an id and was unreadable after one).
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]!.content).toEqual([{ type: 'text', text: 'Noting it.' }])
    expect(stored.messages.flatMap((m) => m.content).map((b) => b.type)).not.toContain('tool_use')
    expect(stored.toolCommits).toEqual({})
  })

  it('runs only the first of two calls of a reply that share an id, and stores that one alone', async () => {
    cairn.fake.script(
      reply.toolUses([
        { id: 'toolu_dup', input: { command: 'create', path: '/memories/a.md', file_text: 'a\n' } },
        { id: 'toolu_dup', input: { command: 'create', path: '/memories/b.md', file_text: 'b\n' } },
      ]),
      reply.text('Saved a.'),
    )
    const turn = await cairn.turn(null, 'Save a and b')
    expect(errorOf(turn.events)).toBeUndefined()
    // The window hears of the call that ran alone: on main the second call's refusal came with
    // the same id, and the first call's card showed it ("Failed") though a.md was created.
    const shown = turn.events.filter((e) => e.type === 'tool-call' || e.type === 'tool-result')
    expect(shown).toEqual([
      expect.objectContaining({
        type: 'tool-call',
        toolUseId: 'toolu_dup',
        input: expect.objectContaining({ path: '/memories/a.md' }),
      }),
      expect.objectContaining({
        type: 'tool-result',
        toolUseId: 'toolu_dup',
        content: 'File created successfully at: /memories/a.md',
        isError: false,
      }),
    ])
    // On main both ran, and the stored conversation said b.md was created, twice.
    expect(commitTrailers()).toEqual([`toolu_dup|${turn.conversationId}`])
    expect(git('show', 'HEAD:a.md')).toBe('a\n')
    expect(existsSync(path.join(cairn.dataDir, 'memories', 'b.md'))).toBe(false)
    const toldClaude = JSON.stringify(cairn.fake.messageRequests()[1]!.body!.messages!.at(-1))
    expect(toldClaude).toContain('File created successfully at: /memories/a.md')
    expect(toldClaude).toContain('same id as an earlier one')
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]!.content).toEqual([
      expect.objectContaining({
        type: 'tool_use',
        id: 'toolu_dup',
        input: expect.objectContaining({ path: '/memories/a.md' }),
      }),
    ])
    expect(stored.messages[2]!.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_dup',
        content: 'File created successfully at: /memories/a.md',
        is_error: false,
      },
    ])
    expect(stored.toolCommits).toEqual({ toolu_dup: git('rev-parse', 'HEAD').trim() })
  })

  it('skips a block and an event it does not know, keeping the rest of the reply, and names a stop reason it does not know', async () => {
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
    // On main the turn just ended, and the person was not told why.
    expect(errorOf(turn.events)).toEqual(
      expect.objectContaining({
        code: 'unknown-stop-reason',
        message:
          'Claude\'s reply ended for a reason Cairn does not know ("galaxy_brain"). What arrived is kept; send a message to continue.',
      }),
    )
    expect(turn.events.find((e) => e.type === 'message-finished')).toMatchObject({
      stopReason: 'galaxy_brain',
    })
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]).toMatchObject({
      content: [{ type: 'text', text: 'After the hologram.' }],
      stopReason: 'galaxy_brain',
    })
  })

  it('stores a reply whose fields have the wrong types so that it reads back after a restart', async () => {
    cairn.fake.script(
      reply.raw(
        sse.messageStart('msg_odd', { input_tokens: 'ten', output_tokens: 1 }) +
          // A text block that never says its text.
          sse.event('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text' },
          }) +
          sse.event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
          sse.text(1, 'Hello.') +
          sse.event('message_delta', {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: '5' },
          }) +
          sse.event('message_stop', { type: 'message_stop' }),
      ),
    )
    const turn = await cairn.turn(null, 'hi')
    expect(errorOf(turn.events)).toBeUndefined()
    // On main the file held a text block without text and counts as text: unreadable after a
    // restart, the whole conversation shown as damaged.
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]).toMatchObject({
      content: [
        { type: 'text', text: '' },
        { type: 'text', text: 'Hello.' },
      ],
      usage: { inputTokens: 0, outputTokens: 0 },
    })
  })

  it.each([
    ['a web page', '<html><body>502 Bad Gateway</body></html>'],
    ['nothing', ''],
    ['only comments and pings', ': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n'],
  ])('says plainly when a 200 reply holds no events at all (%s)', async (_, body) => {
    cairn.fake.script(reply.raw(body))
    const turn = await cairn.turn(null, 'hi')
    // On main: "Something went wrong while talking to Claude", which says nothing of what did.
    expect(errorOf(turn.events)).toMatchObject({
      code: 'empty-reply',
      message:
        'The Anthropic API answered with an empty reply: nothing of Claude’s answer came. Send your message again to try again.',
    })
    expectPlain(turn.events)
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages.map((m) => m.role)).toEqual(['user'])
  })
})

describe('a connection that breaks before any event', () => {
  it.each([
    ['nothing', ''],
    ['only pings', ': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n'],
  ])(
    'says the connection broke, not that the reply was empty (%s before the cut)',
    async (_, body) => {
      cairn.fake.script(reply.raw(body, { ending: 'cut' }))
      const turn = await cairn.turn(null, 'hi')
      // On main a cut after pings was "an empty reply", as if the API had chosen to send nothing.
      expect(errorOf(turn.events)).toMatchObject({
        code: 'network',
        message: 'Could not reach the Anthropic API. Check your internet connection and try again.',
      })
      expectPlain(turn.events)
      const stored = await expectSendable(turn.conversationId)
      expect(stored.messages.map((m) => m.role)).toEqual(['user'])
    },
  )
})

describe('a reply that ends as a refusal', () => {
  it('tells the person Claude declined, keeps what it said, and the chat goes on', async () => {
    cairn.fake.script(
      reply.message([{ type: 'text', text: 'I will not help with that.' }], 'refusal'),
    )
    const turn = await cairn.turn(null, 'hi')
    // On main the turn ended with no notice at all.
    expect(errorOf(turn.events)).toMatchObject({
      code: 'refusal',
      message:
        'The reply ended as a refusal. What Claude said is kept; you can rephrase your message and send it again.',
    })
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[1]).toMatchObject({
      content: [{ type: 'text', text: 'I will not help with that.' }],
      stopReason: 'refusal',
    })
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

/** Every commit as `Tool-Use-Id|Conversation-Id|paths`, oldest first, read by `git`. */
function commitTrailers(): string[] {
  return git(
    'log',
    '--reverse',
    '--format=%(trailers:key=Tool-Use-Id,valueonly,separator=)|%(trailers:key=Conversation-Id,valueonly,separator=)',
  )
    .split('\n')
    .filter(Boolean)
}

describe('many tool calls', () => {
  it('ends a turn at its step limit with every call answered, and the chat goes on', async () => {
    const view = { command: 'view', path: '/memories' }
    cairn.fake.script(
      ...Array.from({ length: MAX_REQUESTS_PER_TURN }, (_, i) =>
        reply.toolUse({ id: `toolu_loop_${i}`, input: view }),
      ),
    )
    const turn = await cairn.turn(null, 'Look around')
    expect(errorOf(turn.events)).toMatchObject({ code: 'too-many-steps' })
    expect(cairn.fake.messageRequests()).toHaveLength(MAX_REQUESTS_PER_TURN)
    const stored = await expectSendable(turn.conversationId)
    // 1 prompt, then a reply and its results for each request.
    expect(stored.messages).toHaveLength(1 + 2 * MAX_REQUESTS_PER_TURN)
    // The last reply's call ran (the SDK runs it before seeing the limit): its true result is
    // stored and goes with the next message, not a "not run".
    expect(turn.events.filter((e) => e.type === 'tool-result')).toHaveLength(MAX_REQUESTS_PER_TURN)
    expect(stored.messages.at(-1)!.content).toEqual([
      expect.objectContaining({
        tool_use_id: `toolu_loop_${MAX_REQUESTS_PER_TURN - 1}`,
        content: expect.stringContaining('/memories'),
        is_error: false,
      }),
    ])
  })

  it('runs 25 creates of one reply as 25 commits, each linked to its call, answered in order', async () => {
    const ids = Array.from({ length: 25 }, (_, i) => `toolu_many_${String(i).padStart(2, '0')}`)
    cairn.fake.script(
      reply.toolUses(
        ids.map((id, i) => ({
          id,
          input: { command: 'create', path: `/memories/n${i}.md`, file_text: `note ${i}\n` },
        })),
      ),
      reply.text('Saved them all.'),
    )
    const turn = await cairn.turn(null, 'Save 25 notes')
    expect(errorOf(turn.events)).toBeUndefined()
    const stored = await cairn.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages[2]!.content).toEqual(
      ids.map((id, i) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: `File created successfully at: /memories/n${i}.md`,
        is_error: false,
      })),
    )
    expect(Object.keys(stored.toolCommits).sort()).toEqual(ids)
    const trailers = commitTrailers()
    expect(trailers.map((t) => t.split('|')[0]).sort()).toEqual(ids)
    expect(new Set(trailers.map((t) => t.split('|')[1]))).toEqual(new Set([turn.conversationId]))
    ids.forEach((id, i) => {
      const oid = stored.toolCommits[id]!
      expect(git('log', '-1', '--format=%B', oid)).toContain(`Tool-Use-Id: ${id}`)
      expect(git('show', `${oid}:n${i}.md`)).toBe(`note ${i}\n`)
    })
    // History is one line of commits, and git finds nothing wrong with it.
    expect(git('rev-list', '--merges', 'HEAD')).toBe('')
    git('fsck', '--strict')
    await expectSendable(turn.conversationId)
  })

  it('keeps two chats writing one memory file at once apart in history, each commit its own', async () => {
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_seed',
        input: { command: 'create', path: '/memories/shared.md', file_text: 'start\n' },
      }),
      reply.text('Started.'),
    )
    await cairn.turn(null, 'Start a shared file')
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    const insert = (id: string, line: string) =>
      reply.toolUse(
        {
          id,
          input: {
            command: 'insert',
            path: '/memories/shared.md',
            insert_line: 1,
            insert_text: line,
          },
        },
        { hold },
      )
    cairn.fake.script(insert('toolu_a', 'from A\n'), insert('toolu_b', 'from B\n'))
    cairn.fake.script(reply.text('A done.'), reply.text('B done.'))
    const a = await cairn.send(null, 'Chat A')
    const b = await cairn.send(null, 'Chat B')
    // Both replies are under way before either command runs.
    await cairn.fake.waitForMessageRequests(4)
    release()
    const [eventsA, eventsB] = await Promise.all([
      cairn.finished(a.turnId),
      cairn.finished(b.turnId),
    ])
    expect(errorOf(eventsA)).toBeUndefined()
    expect(errorOf(eventsB)).toBeUndefined()

    const text = git('show', 'HEAD:shared.md')
    expect(text.split('\n').sort()).toEqual(['', 'from A', 'from B', 'start'])
    expect(text).toBe(await readFile(path.join(cairn.dataDir, 'memories', 'shared.md'), 'utf8'))
    const trailers = commitTrailers()
    expect(trailers).toHaveLength(3)
    expect(trailers.slice(1).sort()).toEqual(
      [`toolu_a|${a.conversationId}`, `toolu_b|${b.conversationId}`].sort(),
    )
    for (const [turn, id] of [
      [a, 'toolu_a'],
      [b, 'toolu_b'],
    ] as const) {
      const stored = await cairn.call('conversations:get', { id: turn.conversationId })
      const oid = stored.toolCommits[id]!
      expect(
        git('log', '-1', '--format=%(trailers:key=Conversation-Id,valueonly)', oid).trim(),
      ).toBe(turn.conversationId)
    }
    git('fsck', '--strict')
  })
})

describe('stop in the middle of a tool call', () => {
  it('runs and stores no call whose input was still streaming, and the chat goes on', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(
      reply.toolUse(
        {
          id: 'toolu_streaming',
          text: 'Saving.',
          input: {
            command: 'create',
            path: '/memories/s.md',
            file_text: 'a long text '.repeat(20),
          },
        },
        { hold },
      ),
    )
    const { conversationId, turnId } = await cairn.send(null, 'Save it')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    await cairn.call('chat:stop', { conversationId })
    const events = await cairn.finished(turnId)
    release()
    expect(events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    expect(events.some((e) => e.type === 'tool-call')).toBe(false)
    expect(commitCount()).toBe(0)
    expect(existsSync(path.join(cairn.dataDir, 'memories', 's.md'))).toBe(false)
    const stored = await expectSendable(conversationId)
    expect(stored.messages.flatMap((m) => m.content).map((b) => b.type)).toEqual(['text', 'text'])
  })
})

describe('Cairn closed mid-turn', () => {
  it('keeps what streamed in before the quit, and the conversation goes on after a restart', async () => {
    const hold = new Promise<void>(() => {})
    cairn.fake.script(reply.text('A thought that the quit cuts short', { hold }))
    const { conversationId, turnId } = await cairn.send(null, 'Think')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    // Quitting the app closes the core: the turn stops and is stored before anything closes.
    await cairn.core.close()
    expect(cairn.events.filter((e) => e.turnId === turnId).at(-1)).toMatchObject({
      type: 'turn-finished',
      stopped: true,
    })
    const streamed = cairn.events
      .flatMap((e) => (e.turnId === turnId && e.type === 'text-delta' ? [e.text] : []))
      .join('')
    expect(streamed).not.toBe('')
    const stored = await expectSendable(conversationId)
    expect(stored.messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'Think' }],
      [{ type: 'text', text: streamed }],
    ])
  })
})

describe('a huge tool result', () => {
  it('reaches Claude and the stored conversation capped, the same text in both', async () => {
    const memories = path.join(cairn.dataDir, 'memories')
    await mkdir(memories, { recursive: true })
    const line = 'x'.repeat(99) + '\n'
    await writeFile(path.join(memories, 'big.md'), line.repeat(9_000))
    cairn.fake.script(
      reply.toolUse({ id: 'toolu_big', input: { command: 'view', path: '/memories/big.md' } }),
      reply.text('That is long.'),
    )
    const turn = await cairn.turn(null, 'Read it')
    expect(errorOf(turn.events)).toBeUndefined()
    const result = turn.events.find((e) => e.type === 'tool-result')
    const shown = result?.type === 'tool-result' ? result.content : ''
    expect(shown.length).toBeGreaterThan(10_000)
    expect(shown.length).toBeLessThan(17_000)
    expect(shown).toMatch(/view_range/)
    const toldClaude = cairn.fake.messageRequests()[1]!.body!.messages!.at(-1)!.content
    expect(toldClaude).toEqual([
      expect.objectContaining({ tool_use_id: 'toolu_big', content: shown }),
    ])
    const stored = await expectSendable(turn.conversationId)
    expect(stored.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_big', content: shown, is_error: false },
    ])
  })
})

describe('what the window and Claude are told', () => {
  it('never shows the API key when an error from the API quotes it', async () => {
    cairn.fake.script(
      reply.error(400, { message: 'Header x-api-key: sk-test is not valid for this proxy' }),
    )
    const turn = await cairn.turn(null, 'hi')
    expect(errorOf(turn.events)).toMatchObject({
      code: 'bad-request',
      message:
        'The Anthropic API refused the request: Header x-api-key: your API key is not valid for this proxy',
    })
    expectPlain(turn.events)
  })

  it('shows the API’s words with nothing invisible, live and after a restart alike', async () => {
    cairn.fake.script(reply.error(400, { message: 'File \u202Egnp.exe is not allowed\u200B here' }))
    const turn = await cairn.turn(null, 'hi')
    const message =
      'The Anthropic API refused the request: File \\u202Egnp.exe is not allowed\\u200B here'
    expect(errorOf(turn.events)).toMatchObject({ code: 'bad-request', message })
    await cairn.reopen()
    const stored = await cairn.call('conversations:get', { id: turn.conversationId })
    expect(stored.lastError).toEqual({ turnId: turn.turnId, code: 'bad-request', message })
  })

  it('never shows the key encoded, nor any Anthropic key, when an error quotes them', async () => {
    const other = 'sk-ant-api03-' + 'k'.repeat(20)
    cairn.fake.script(
      reply.error(400, {
        message: `Bad header x-api-key: ${Buffer.from('sk-test').toString('base64')} (expected a key like ${other})`,
      }),
    )
    const turn = await cairn.turn(null, 'hi')
    // On main both went to the window as they were.
    expect(errorOf(turn.events)).toMatchObject({
      code: 'bad-request',
      message:
        'The Anthropic API refused the request: Bad header x-api-key: your API key (expected a key like an API key)',
    })
    expectPlain(turn.events)
  })

  it('never carries the API key or a host path, whatever the tool calls try', async () => {
    const memories = path.join(cairn.dataDir, 'memories')
    await mkdir(memories, { recursive: true })
    // A link planted inside memory, pointing at Cairn's own data folder.
    await symlink(cairn.dataDir, path.join(memories, 'planted'))
    const calls: Array<Record<string, unknown>> = [
      { command: 'view', path: '/memories/../../etc/passwd' },
      { command: 'view', path: '/etc/passwd' },
      { command: 'view', path: '/memories/planted' },
      { command: 'view', path: '/memories/planted/settings.json' },
      { command: 'create', path: '/memories/planted/x.md', file_text: 'x' },
      { command: 'create', path: '/memories/../x.md', file_text: 'x' },
      { command: 'rename', old_path: '/memories/planted', new_path: '/memories/p2' },
      { command: 'delete', path: '/memories/planted' },
      { command: 'str_replace', path: '/memories/missing.md', old_str: 'a', new_str: 'b' },
      { command: 'view', path: '/memories\u0000/x' },
      {
        command: 'create',
        path: '/memories/key.md',
        file_text: 'my key is sk-ant-api03-' + 'a'.repeat(93) + 'AA',
      },
    ]
    cairn.fake.script(
      reply.toolUses(calls.map((input, i) => ({ id: `toolu_h${i}`, input }))),
      reply.text('Done.'),
    )
    const turn = await cairn.turn(null, 'Try everything')
    expect(turn.events.filter((e) => e.type === 'tool-result')).toHaveLength(calls.length)
    const toldClaude = JSON.stringify(cairn.fake.messageRequests()[1]!.body!.messages!.at(-1))
    for (const shown of [JSON.stringify(turn.events), toldClaude]) {
      expect(shown).not.toContain(cairn.dataDir)
      expect(shown).not.toContain(os.tmpdir() + '/')
      expect(shown).not.toContain('sk-test')
      expect(shown).not.toMatch(/\bat \S+ \(|node_modules/)
    }
    expect(commitCount()).toBe(0)
    await expectSendable(turn.conversationId)
  })
})
