/**
 * An independent acceptance check of the agent loop (issue #5), for promises the other agent
 * tests leave open: the order of what streams to the window, stop reasons that end a reply
 * holding a tool call (`max_tokens`, `refusal`), bad input in several calls of one reply, a
 * paused reply the SDK resumes, Stop as soon as the send returns, two sends racing on one
 * conversation and a send racing its delete, what a second conversation sends on the wire,
 * settings changed mid-turn, a conversation file damaged mid-turn, and the key in no file Cairn
 * wrote. Through the real core: the real SDK against the fake Messages API, the real versioned
 * memory, `git` as the second opinion.
 */
import { execFileSync } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { invalidMessages, reply } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'
import { CONTEXT_EDITS, CONTEXT_MANAGEMENT_BETA } from './run-turn'

const KEY = 'sk-ant-api03-probe31a' + 'Q'.repeat(40) + 'AA'
const cairn = coreThroughFakeApi({ prefix: 'cairn-loop-acceptance-', quiet: true, apiKey: KEY })

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

function commitCount(): number {
  try {
    return Number(git('rev-list', '--count', 'HEAD').trim())
  } catch {
    return 0
  }
}

const errorOf = (events: ReadonlyArray<AgentEvent>) => events.find((e) => e.type === 'error')

/** The next turn of the conversation goes out as a request the API takes, and is answered. */
async function expectGoesOn(conversationId: string): Promise<void> {
  cairn.fake.script(reply.text('Carrying on.'))
  const next = await cairn.turn(conversationId, 'Go on')
  expect(errorOf(next.events)).toBeUndefined()
  expect(invalidMessages(cairn.fake.messageRequests().at(-1)!.body!.messages)).toBeNull()
}

describe('what streams to the window', () => {
  it('numbers every event of a turn from 0 with no gap, and the deltas spell each stored reply', async () => {
    const first = 'Let me look at what I know about you before I answer that question.'
    const second = 'Nothing stored yet, so here is a fresh answer, streamed in many small pieces.'
    cairn.fake.script(
      reply.toolUse({ id: 'toolu_o1', text: first, input: { command: 'view', path: '/memories' } }),
      reply.text(second),
    )
    const turn = await cairn.turn(null, 'Hello')
    expect(turn.events.map((e) => e.seq)).toEqual(turn.events.map((_, i) => i))
    expect(turn.events.map((e) => e.type)).toEqual([
      'turn-started',
      ...Array(Math.ceil(first.length / 12)).fill('text-delta'),
      'message-finished',
      'tool-call',
      'tool-result',
      ...Array(Math.ceil(second.length / 12)).fill('text-delta'),
      'message-finished',
      'turn-finished',
    ])
    // The text between two message-finished events is that reply's text, in order.
    const spelled: string[] = ['']
    for (const event of turn.events) {
      if (event.type === 'text-delta') spelled[spelled.length - 1] += event.text
      if (event.type === 'message-finished') spelled.push('')
    }
    expect(spelled.slice(0, 2)).toEqual([first, second])
    const stored = await cairn.call('conversations:get', { id: turn.conversationId })
    const texts = stored.messages
      .filter((m) => m.role === 'assistant')
      .map((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''))
    expect(texts).toEqual([first, second])
  })
})

describe('a reply that ends holding a tool call', () => {
  for (const [stopReason, code] of [
    ['max_tokens', 'max-tokens'],
    ['refusal', 'refusal'],
  ] as const) {
    it(`runs no call of a reply that stopped for ${stopReason}, answers it "not run", and the chat goes on`, async () => {
      cairn.fake.script(
        reply.message(
          [
            { type: 'text', text: 'Saving that.' },
            {
              type: 'tool_use',
              id: 'toolu_cut',
              input: { command: 'create', path: '/memories/cut.md', file_text: 'x\n' },
            },
          ],
          stopReason,
        ),
      )
      const turn = await cairn.turn(null, 'Remember x')
      expect(errorOf(turn.events)).toMatchObject({ code })
      expect(turn.events.filter((e) => e.type === 'tool-call')).toEqual([])
      expect(commitCount()).toBe(0)
      const stored = await cairn.call('conversations:get', { id: turn.conversationId })
      expect(stored.messages.at(-1)).toMatchObject({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_cut',
            is_error: true,
            content: expect.stringMatching(/not run/),
          },
        ],
      })
      await expectGoesOn(turn.conversationId)
    })
  }
})

describe('calls of one reply with bad input', () => {
  it('each reach Claude as the handler’s is_error result, stored as told, committing nothing', async () => {
    const inputs: unknown[] = [
      { command: 'fly' },
      { command: 'view' },
      {},
      'a string',
      [1],
      { command: 'create', path: '/memories/x.md' },
      { command: 'view', path: 5 },
    ]
    cairn.fake.script(
      reply.toolUses(inputs.map((input, i) => ({ id: `toolu_b${i}`, input }))),
      reply.text('I will try again later.'),
    )
    const turn = await cairn.turn(null, 'Go')
    expect(errorOf(turn.events)).toBeUndefined()
    const told = cairn.fake.messageRequests()[1]!.body!.messages!.at(-1)!.content as Array<
      Record<string, unknown>
    >
    expect(told.map((b) => [b.tool_use_id, b.is_error])).toEqual(
      inputs.map((_, i) => [`toolu_b${i}`, true]),
    )
    for (const block of told) expect(block.content).toMatch(/^Error: /)
    const stored = await cairn.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages[2]!.content).toEqual(told)
    expect(commitCount()).toBe(0)
    await expectGoesOn(turn.conversationId)
  })
})

describe('a paused reply (pause_turn)', () => {
  it('is resumed by the SDK, both parts stored, and the next turn is one the API takes', async () => {
    cairn.fake.script(
      reply.message([{ type: 'text', text: 'Thinking about it' }], 'pause_turn'),
      reply.text(' and here is the rest.'),
    )
    const turn = await cairn.turn(null, 'Long one')
    expect(errorOf(turn.events)).toBeUndefined()
    expect(cairn.fake.messageRequests()).toHaveLength(2)
    // The resumed request carries the paused reply as the last message.
    expect(cairn.fake.messageRequests()[1]!.body!.messages!.at(-1)).toMatchObject({
      role: 'assistant',
    })
    await expectGoesOn(turn.conversationId)
  })

  it('holding a memory call the SDK never runs: the turn fails, and no Stop is claimed for the call', async () => {
    cairn.fake.script(
      reply.message(
        [
          { type: 'text', text: 'Pausing' },
          {
            type: 'tool_use',
            id: 'toolu_paused',
            input: { command: 'create', path: '/memories/p.md', file_text: 'p\n' },
          },
        ],
        'pause_turn',
      ),
    )
    const turn = await cairn.turn(null, 'Long one')
    // The SDK sends the paused reply back unanswered, which the API refuses.
    expect(errorOf(turn.events)).toMatchObject({ code: 'bad-request' })
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    expect(commitCount()).toBe(0)
    const stored = await cairn.call('conversations:get', { id: turn.conversationId })
    expect(stored.messages.at(-1)!.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_paused',
        content: 'This command was not run: the reply ended before it could run.',
        is_error: true,
      },
    ])
    await expectGoesOn(turn.conversationId)
  })
})

describe('Stop pressed as soon as the send returns', () => {
  it('ends the turn stopped with the prompt alone stored, and the chat goes on', async () => {
    cairn.fake.script(reply.text('Never asked for'))
    const { conversationId, turnId } = await cairn.send(null, 'Hi')
    await cairn.call('chat:stop', { conversationId })
    const events = await cairn.finished(turnId)
    expect(events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    expect(errorOf(events)).toBeUndefined()
    const stored = await cairn.call('conversations:get', { id: conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user'])
    expect(stored).not.toHaveProperty('openTurn')
    // Whether or not the request got out before Stop, the next turn is answered.
    cairn.fake.script(reply.text('Carrying on.'))
    const next = await cairn.turn(conversationId, 'Go on')
    expect(errorOf(next.events)).toBeUndefined()
  })
})

describe('two sends racing on one conversation', () => {
  it('runs one turn and refuses the other, storing only the accepted prompt', async () => {
    cairn.fake.script(reply.text('First'))
    const first = await cairn.turn(null, 'Start')
    cairn.fake.script(reply.text('One answer'), reply.text('Another answer'))
    const results = await Promise.allSettled([
      cairn.send(first.conversationId, 'A'),
      cairn.send(first.conversationId, 'B'),
    ])
    const accepted = results.filter((r) => r.status === 'fulfilled')
    const refused = results.filter((r) => r.status === 'rejected')
    expect(accepted).toHaveLength(1)
    expect(refused).toHaveLength(1)
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/turn-running/)
    const won = (accepted[0] as PromiseFulfilledResult<{ turnId: string }>).value
    await cairn.finished(won.turnId)
    const stored = await cairn.call('conversations:get', { id: first.conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(invalidMessages(cairn.fake.messageRequests().at(-1)!.body!.messages)).toBeNull()
  })
})

describe('a send racing a delete of its conversation', () => {
  for (const first of ['delete', 'send'] as const) {
    it(`never brings the conversation back (${first} asked first)`, async () => {
      cairn.fake.script(reply.text('First'), reply.text('Second'))
      const one = await cairn.turn(null, 'Start')
      const remove = () => cairn.core.dispatch('conversations:delete', { id: one.conversationId })
      const send = () =>
        cairn.core.dispatch('chat:send', {
          conversationId: one.conversationId,
          text: 'More',
          clientId: 'racer',
        })
      const [removed, sent] =
        first === 'delete'
          ? await Promise.all([remove(), send()])
          : (await Promise.all([send(), remove()])).reverse()
      expect(removed.ok).toBe(true)
      if (sent.ok) await cairn.finished((sent.value as { turnId: string }).turnId)
      else expect(sent.error.code).toBe('conversation-not-found')
      await cairn.reopen()
      expect(await cairn.call('conversations:list', {})).toEqual([])
      expect(await readdir(path.join(cairn.dataDir, 'conversations'))).toEqual([])
    })
  }
})

describe('a second conversation on the wire', () => {
  it('sends the system prompt, the memory tool, context editing and the beta, and none of conversation 1', async () => {
    await cairn.call('settings:update', { customInstructions: 'Answer in French.' })
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_c1',
        input: { command: 'create', path: '/memories/notes.md', file_text: 'likes tea\n' },
      }),
      reply.text('Noted.'),
    )
    const one = await cairn.turn(null, 'I like tea, remember it')
    await cairn.call('settings:update', { model: 'claude-haiku-4-5', maxTokens: 1234 })
    cairn.fake.script(reply.text('Tea.'))
    const two = await cairn.turn(null, 'What do I like?')
    expect(two.conversationId).not.toBe(one.conversationId)
    const sent = cairn.fake.messageRequests().at(-1)!
    const body = sent.body!
    expect(body.model).toBe('claude-haiku-4-5')
    expect(body.max_tokens).toBe(1234)
    expect(body.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }])
    expect(body.context_management).toEqual(CONTEXT_EDITS)
    expect(sent.headers['anthropic-beta']).toContain(CONTEXT_MANAGEMENT_BETA)
    const system = JSON.stringify(body.system)
    expect(system).toContain('/memories')
    expect(system).toContain('Answer in French.')
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [{ type: 'text', text: 'What do I like?', cache_control: { type: 'ephemeral' } }],
      },
    ])
  })
})

describe('settings changed while a turn runs', () => {
  it('apply from the next turn: the turn under way keeps the model and limits it began with', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(
      reply.toolUse({ text: 'Looking.', input: { command: 'view', path: '/memories' } }, { hold }),
      reply.text('Nothing there.'),
    )
    const { conversationId, turnId } = await cairn.send(null, 'What do you know?')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    await cairn.call('settings:update', {
      model: 'claude-haiku-4-5',
      maxTokens: 999,
      customInstructions: 'Be brief.',
    })
    release()
    await cairn.finished(turnId)
    cairn.fake.script(reply.text('Still nothing.'))
    await cairn.turn(conversationId, 'And now?')
    expect(cairn.fake.messageRequests().map((r) => [r.body!.model, r.body!.max_tokens])).toEqual([
      ['claude-sonnet-4-6', 8192],
      ['claude-sonnet-4-6', 8192],
      ['claude-haiku-4-5', 999],
    ])
    const told = cairn.fake.messageRequests().map((r) => JSON.stringify(r.body!.system))
    expect(told.map((system) => system.includes('Be brief.'))).toEqual([false, false, true])
  })
})

describe('a conversation file damaged by another program mid-turn', () => {
  it('keeps the damaged file aside, saves the whole conversation with the reply, and says so', async () => {
    cairn.fake.script(reply.text('First answer'))
    const one = await cairn.turn(null, 'First')
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(reply.text('The second answer, streamed.', { hold }))
    const { turnId } = await cairn.send(one.conversationId, 'Second')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    await writeFile(cairn.fileOf(one.conversationId), '{"version":1,"id":')
    release()
    const events = await cairn.finished(turnId)
    expect(errorOf(events)).toBeUndefined()
    // Told for the session (docs/durability.md), with the kept copy's name.
    const [listed] = await cairn.call('conversations:list', {})
    expect(listed!.conversation.changedOutside).toMatchObject({ how: 'damaged' })
    const keptAs = listed!.conversation.changedOutside!.keptAs!
    expect(await readFile(path.join(cairn.dataDir, 'conversations', keptAs), 'utf8')).toBe(
      '{"version":1,"id":',
    )
    await cairn.reopen()
    const stored = await cairn.call('conversations:get', { id: one.conversationId })
    expect(
      stored.messages.map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')),
    ).toEqual(['First', 'First answer', 'Second', 'The second answer, streamed.'])
    await expectGoesOn(one.conversationId)
  })
})

describe('the API key on disk', () => {
  it('is in no file Cairn wrote after a turn that used memory and ended in an error quoting it', async () => {
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_k1',
        input: { command: 'create', path: '/memories/a.md', file_text: 'hello\n' },
      }),
      reply.error(400, { message: `Bad header x-api-key: ${KEY}` }),
    )
    const turn = await cairn.turn(null, 'Go')
    expect(errorOf(turn.events)).toMatchObject({ code: expect.any(String) })
    expect(JSON.stringify(turn.events)).not.toContain(KEY.slice(0, 24))
    await cairn.reopen()
    const files = await allFiles(cairn.dataDir)
    expect(files.length).toBeGreaterThan(5)
    const forms = [KEY, KEY.slice(10, 40), Buffer.from(KEY).toString('base64').slice(0, 40)]
    for (const file of files) {
      const text = (await readFile(file)).toString('latin1')
      for (const form of forms) expect(text.includes(form), `${file} holds the key`).toBe(false)
    }
    // History's objects are compressed: `git` reads every version of every file.
    const history = git('log', '--all', '-p', '--format=%B')
    expect(history).toContain('hello')
    for (const form of forms) expect(history).not.toContain(form)
  })
})

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await allFiles(full)))
    else if (entry.isFile()) out.push(full)
  }
  return out
}
