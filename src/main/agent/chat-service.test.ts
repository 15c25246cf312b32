import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent, CommitSummary } from '../../shared/types'
import { createConversationStore, type ConversationStore } from '../conversations'
import type { ExecuteOutcome, Origin } from '../history'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { createRunnableMemoryTool } from '../memory'
import { createFileSecretStore, createMemorySecretStore, createSettingsService } from '../settings'
import { createChatService, type ChatService, type ChatServiceOptions } from './chat-service'
import { NOT_RUN_STOPPED, recordedResult, RESULT_NOT_RECORDED } from './messages'
import { BASE_SYSTEM_PROMPT } from './system-prompt'

/** A stand-in for the versioned memory: a map of files, a commit per create. */
function fakeMemory() {
  const files = new Map<string, string>()
  const calls: Array<{ input: unknown; origin: Origin }> = []
  let gate: Promise<unknown> = Promise.resolve()
  let commits = 0
  let called!: () => void
  return {
    files,
    calls,
    /** Resolves when the first command reaches the memory. */
    firstCall: new Promise<void>((resolve) => (called = resolve)),
    block(until: Promise<unknown>) {
      gate = until
    },
    async execute(input: unknown, origin: Origin): Promise<ExecuteOutcome> {
      calls.push({ input, origin })
      called()
      await gate
      const { command, path: p, file_text } = input as Record<string, string>
      if (command === 'view') {
        return {
          content: `Directory ${p}: ${[...files.keys()].join(', ')}`,
          isError: false,
          mutation: null,
          errorCode: null,
          commit: null,
        }
      }
      if (command === 'create' && p) {
        files.set(p, file_text ?? '')
        commits += 1
        const commit: CommitSummary = {
          oid: String(commits).padStart(40, '0'),
          parent: null,
          time: 0,
          actor: 'claude',
          command: 'create',
          subject: `create ${p}`,
          paths: [p],
          conversationId: origin.actor === 'claude' ? origin.conversationId : null,
          toolUseId: origin.actor === 'claude' ? origin.toolUseId : null,
          overwrite: false,
          restoredFrom: null,
        }
        return {
          content: `File created successfully at: ${p}`,
          isError: false,
          mutation: { command: 'create', paths: [p], overwrite: false },
          errorCode: null,
          commit,
        }
      }
      return {
        content: `Error: The path ${p} does not exist.`,
        isError: true,
        mutation: null,
        errorCode: 'not-found',
        commit: null,
      }
    },
  }
}

let dataDir: string
let fake: FakeAnthropic
let memory: ReturnType<typeof fakeMemory>
let conversations: ConversationStore
let events: AgentEvent[]
let chat: ChatService
let env: Record<string, string | undefined>
let onEvent: (event: AgentEvent) => void
let logger: RecordingLogger

function build(extra: Partial<ChatServiceOptions> = {}): ChatService {
  const settings = createSettingsService({ dataDir, secretStore: createMemorySecretStore(), env })
  return createChatService({
    conversations,
    settings,
    memory,
    // No history behind this fake memory: every turn starts from empty memory.
    memoryHead: () => null,
    createMemoryTool: createRunnableMemoryTool,
    emit: (event) => {
      events.push(event)
      onEvent(event)
    },
    onConversationChanged: () => {},
    maxRetries: 0,
    logger,
    ...extra,
  })
}

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-agent-'))
  fake = await startFakeAnthropic()
  memory = fakeMemory()
  conversations = createConversationStore({ dataDir })
  events = []
  env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url }
  onEvent = () => {}
  logger = createRecordingLogger()
  chat = build()
})

afterEach(async () => {
  await chat.close()
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

async function turn(conversationId: string | null, text: string) {
  const started = await chat.send(conversationId, text, nextClientId())
  await chat.settled(started.conversationId)
  const turnEvents = events.filter((e) => e.turnId === started.turnId)
  return { ...started, events: turnEvents, types: turnEvents.map((e) => e.type) }
}

let clientIds = 0
const nextClientId = () => `client-${++clientIds}`

const lastError = (list: ReadonlyArray<AgentEvent>) => list.find((e) => e.type === 'error')

describe('chat turns', () => {
  it('streams a text reply and stores both messages', async () => {
    fake.script(reply.text('Hello! Nice to meet you, how can I help today?'))
    const result = await turn(null, 'Hi there')
    expect(result.types[0]).toBe('turn-started')
    expect(result.types.filter((t) => t === 'text-delta').length).toBeGreaterThan(1)
    expect(result.types.slice(-2)).toEqual(['message-finished', 'turn-finished'])
    const text = result.events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('')
    expect(text).toBe('Hello! Nice to meet you, how can I help today?')

    const stored = await conversations.get(result.conversationId)
    expect(stored.title).toBe('Hi there')
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(stored.messages[1]).toMatchObject({ stopReason: 'end_turn', usage: { inputTokens: 10 } })
  })

  it('names each turn by the sender’s client id, and stores the prompt with its turn', async () => {
    fake.script(reply.text('Once.'), reply.text('Twice.'))
    const first = await chat.send(null, 'Same words', 'client-a')
    await chat.settled(first.conversationId)
    const second = await chat.send(first.conversationId, 'Same words', 'client-b')
    await chat.settled(second.conversationId)
    const starts = events.filter((e) => e.type === 'turn-started')
    expect(starts).toEqual([
      expect.objectContaining({ turnId: first.turnId, clientId: 'client-a' }),
      expect.objectContaining({ turnId: second.turnId, clientId: 'client-b' }),
    ])
    const stored = await conversations.get(first.conversationId)
    const prompts = stored.messages.filter((m) => m.role === 'user')
    expect(prompts.map((m) => m.turnId)).toEqual([first.turnId, second.turnId])
  })

  it('sends the memory tool, the system prompt with caching, context editing and the whole history', async () => {
    fake.script(reply.text('One'), reply.text('Two'))
    const first = await turn(null, 'first')
    await turn(first.conversationId, 'second')
    const [, request] = fake.messageRequests()
    const body = request!.body!
    expect(body.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }])
    expect(body.system).toEqual([
      { type: 'text', text: BASE_SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } },
    ])
    expect(body.context_management).toMatchObject({
      edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens' } }],
    })
    expect(request!.headers['anthropic-beta']).toContain('context-management-2025-06-27')
    expect(body).not.toHaveProperty('thread')
    expect(body).not.toHaveProperty('betas')
    expect(body).not.toHaveProperty('max_iterations')
    expect(body.stream).toBe(true)
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'One' }] },
      {
        role: 'user',
        content: [{ type: 'text', text: 'second', cache_control: { type: 'ephemeral' } }],
      },
    ])
  })

  it('adds the custom instructions from settings to the system prompt', async () => {
    const settings = createSettingsService({ dataDir, secretStore: createMemorySecretStore(), env })
    await settings.update({
      customInstructions: 'Always answer in haiku.',
      model: 'claude-opus-4-6',
    })
    fake.script(reply.text('ok'))
    await turn(null, 'hi')
    const body = fake.messageRequests()[0]!.body!
    expect(JSON.stringify(body.system)).toContain('Always answer in haiku.')
    expect(body.model).toBe('claude-opus-4-6')
  })

  it('runs memory commands through the injected memory and records their commits', async () => {
    fake.script(
      reply.toolUse({ id: 'toolu_view', input: { command: 'view', path: '/memories' } }),
      reply.toolUse({
        id: 'toolu_create',
        input: { command: 'create', path: '/memories/notes.md', file_text: 'Python' },
      }),
      reply.toolUse({ id: 'toolu_bad', input: { command: 'delete', path: '/memories/none.md' } }),
      reply.text('Saved.'),
    )
    const result = await turn(null, 'Remember Python')
    expect(memory.calls.map((c) => c.origin)).toEqual([
      { actor: 'claude', conversationId: result.conversationId, toolUseId: 'toolu_view' },
      { actor: 'claude', conversationId: result.conversationId, toolUseId: 'toolu_create' },
      { actor: 'claude', conversationId: result.conversationId, toolUseId: 'toolu_bad' },
    ])
    const toolEvents = result.events.filter(
      (e) => e.type === 'tool-call' || e.type === 'tool-result',
    )
    expect(toolEvents[0]).toMatchObject({
      type: 'tool-call',
      toolUseId: 'toolu_view',
      command: 'view',
    })
    expect(toolEvents[3]).toMatchObject({
      type: 'tool-result',
      toolUseId: 'toolu_create',
      content: 'File created successfully at: /memories/notes.md',
      isError: false,
      commitOid: '1'.padStart(40, '0'),
    })
    expect(toolEvents[5]).toMatchObject({ type: 'tool-result', isError: true, commitOid: null })

    // What Claude received for the failing command: the handler's text, verbatim, is_error.
    const last = fake.messageRequests()[3]!.body!.messages!.at(-1)
    expect(last).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_bad',
          content: 'Error: The path /memories/none.md does not exist.',
          is_error: true,
        },
      ],
    })
    const stored = await conversations.get(result.conversationId)
    expect(stored.toolCommits).toEqual({ toolu_create: '1'.padStart(40, '0') })
    expect(stored.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ])
    // The stored history is exactly what the API saw, so a later turn resends it unchanged.
    fake.script(reply.text('Next'))
    await turn(result.conversationId, 'again')
    const resent = fake.messageRequests()[4]!.body!.messages!
    expect(resent.slice(0, 7)).toEqual(
      fake.messageRequests()[3]!.body!.messages!.slice(0, 7).map(stripCache),
    )
  })

  it('refuses a second send while a turn runs in the same conversation', async () => {
    let release!: () => void
    fake.script(reply.text('slow reply here', { hold: new Promise<void>((r) => (release = r)) }))
    const { conversationId } = await chat.send(null, 'one', nextClientId())
    await expect(chat.send(conversationId, 'two', nextClientId())).rejects.toMatchObject({
      code: 'turn-running',
    })
    release()
    await chat.settled(conversationId)
  })
})

describe('stop', () => {
  it('stops mid-stream, keeps the partial text, and the conversation continues', async () => {
    let release!: () => void
    const hold = new Promise<void>((r) => (release = r))
    fake.script(reply.text('The first words and then a lot more text that never arrives', { hold }))
    const streaming = new Promise<void>((resolve) => {
      onEvent = (event) => {
        if (event.type === 'text-delta') resolve()
      }
    })
    const { conversationId, turnId } = await chat.send(null, 'Tell me a story', nextClientId())
    await streaming
    chat.stop(conversationId)
    await chat.settled(conversationId)
    release()
    const mine = events.filter((e) => e.turnId === turnId)
    expect(mine.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    expect(lastError(mine)).toBeUndefined()
    const stored = await conversations.get(conversationId)
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(stored.messages[1]?.content[0]).toMatchObject({ type: 'text' })

    fake.script(reply.text('Continuing.'))
    const next = await turn(conversationId, 'go on')
    expect(next.types.at(-1)).toBe('turn-finished')
    expect(fake.messageRequests()[1]!.body!.messages!.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
    ])
  })

  it('lets a running memory command finish and commit, then runs nothing more', async () => {
    let release!: () => void
    memory.block(new Promise<void>((r) => (release = r)))
    fake.script(
      reply.toolUse({
        id: 'toolu_slow',
        input: { command: 'create', path: '/memories/a.md', file_text: 'A' },
      }),
    )
    const { conversationId, turnId } = await chat.send(null, 'save A', nextClientId())
    await memory.firstCall
    expect(memory.calls).toHaveLength(1)
    chat.stop(conversationId)
    release()
    await chat.settled(conversationId)

    expect(memory.files.get('/memories/a.md')).toBe('A')
    expect(fake.messageRequests()).toHaveLength(1)
    const mine = events.filter((e) => e.turnId === turnId)
    expect(mine.find((e) => e.type === 'tool-result')).toMatchObject({ isError: false })
    expect(mine.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    const stored = await conversations.get(conversationId)
    expect(stored.toolCommits).toEqual({ toolu_slow: '1'.padStart(40, '0') })
    expect(stored.messages.at(-1)?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_slow',
        content: 'File created successfully at: /memories/a.md',
        is_error: false,
      },
    ])

    fake.script(reply.text('Done.'))
    await turn(conversationId, 'thanks')
    const sent = fake.messageRequests()[1]!.body!.messages!
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(JSON.stringify(sent[2])).toContain('toolu_slow')
    expect(JSON.stringify(sent[2])).toContain('thanks')
  })

  it('stores the not-found error Claude got for a call to a tool that does not exist', async () => {
    fake.script(
      reply.toolUses([
        { id: 'toolu_x', name: 'memory_v2', input: { command: 'view', path: '/memories' } },
      ]),
      reply.text('Sorry, wrong tool.'),
      reply.text('Later.'),
    )
    const first = await turn(null, 'look')
    expect(lastError(first.events)).toBeUndefined()
    expect(memory.calls).toHaveLength(0)
    const answer = {
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      content: "Error: Tool 'memory_v2' not found",
      is_error: true,
    }
    // What the SDK answered in the turn is what is stored, and what later turns send again.
    expect(fake.messageRequests()[1]!.body!.messages!.at(-1)!.content).toEqual([answer])
    const stored = await conversations.get(first.conversationId)
    expect(stored.messages[2]?.content).toEqual([answer])
    await turn(first.conversationId, 'again')
    expect(fake.messageRequests()[2]!.body!.messages![2]!.content).toEqual([answer])
  })

  it('answers calls that never ran with a "stopped" result', async () => {
    fake.script(
      reply.toolUses([
        { id: 'toolu_1', input: { command: 'create', path: '/memories/x.md', file_text: 'x' } },
        { id: 'toolu_2', input: { command: 'view', path: '/memories' } },
      ]),
    )
    // Stop lands after the reply with the calls arrived, before the runner starts them.
    onEvent = (event) => {
      if (event.type === 'message-finished') chat.stop(event.conversationId)
    }
    const { conversationId } = await chat.send(null, 'look', nextClientId())
    await chat.settled(conversationId)
    expect(memory.calls).toHaveLength(0)
    expect(memory.files.size).toBe(0)
    expect(fake.messageRequests()).toHaveLength(1)
    const stored = await conversations.get(conversationId)
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(stored.messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: NOT_RUN_STOPPED, is_error: true },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: NOT_RUN_STOPPED, is_error: true },
    ])
  })
})

describe('calls whose results a kill kept from being saved', () => {
  it('saves "may or may not have run" when history cannot answer, as Claude heard it', async () => {
    fake.script(
      reply.toolUse({
        id: 'toolu_k',
        input: { command: 'create', path: '/memories/k.md', file_text: 'k' },
      }),
      reply.text('Saved.'),
    )
    const first = await turn(null, 'keep k')
    expect(memory.files.has('/memories/k.md')).toBe(true)
    // What a kill between running the call and saving its result leaves.
    await conversations.update(first.conversationId, (c) => ({
      ...c,
      messages: c.messages.slice(0, 2),
      toolCommits: {},
    }))
    // History's side index is being rebuilt at the next message, answers at the one after.
    let asked = 0
    const commit: CommitSummary = {
      oid: '1'.padStart(40, '0'),
      parent: null,
      time: 0,
      actor: 'claude',
      command: 'create',
      subject: 'create /memories/k.md',
      paths: ['/memories/k.md'],
      conversationId: first.conversationId,
      toolUseId: 'toolu_k',
      overwrite: false,
      restoredFrom: null,
    }
    await chat.close()
    chat = build({
      toolUseCommits: () => {
        if (++asked === 1) {
          return Promise.reject(
            new CairnError('index-rebuilding', 'The history index is being rebuilt.'),
          )
        }
        return Promise.resolve(new Map([['toolu_k', commit]]))
      },
    })
    fake.script(reply.text('Carrying on.'), reply.text('Still here.'))
    await turn(first.conversationId, 'go on')
    await turn(first.conversationId, 'and on')
    const heard = fake
      .messageRequests()
      .slice(-2)
      .map((r) => (r.body!.messages as unknown as Array<{ content: unknown[] }>)[2]!)
    const notRecorded = {
      type: 'tool_result',
      tool_use_id: 'toolu_k',
      content: RESULT_NOT_RECORDED,
      is_error: true,
    }
    // Claude heard "may or may not" in both turns, and that is what the file keeps.
    expect(heard[0]!.content[0]).toEqual(notRecorded)
    expect(heard[1]!.content[0]).toEqual(notRecorded)
    const stored = await conversations.get(first.conversationId)
    expect(stored.messages[2]!.content).toEqual([notRecorded])
    expect(stored.toolCommits).toEqual({})
    expect(asked).toBe(1)
  })

  // The other order: history answers at the next message and could not at the one after.
  it('saves what the call did when history answers, and asks no more after', async () => {
    fake.script(
      reply.toolUse({
        id: 'toolu_k',
        input: { command: 'create', path: '/memories/k.md', file_text: 'k' },
      }),
      reply.text('Saved.'),
    )
    const first = await turn(null, 'keep k')
    expect(memory.files.has('/memories/k.md')).toBe(true)
    // What a kill between running the call and saving its result leaves.
    await conversations.update(first.conversationId, (c) => ({
      ...c,
      messages: c.messages.slice(0, 2),
      toolCommits: {},
    }))
    // History answers at the next message; asked again, it would fail.
    let asked = 0
    const commit: CommitSummary = {
      oid: '1'.padStart(40, '0'),
      parent: null,
      time: 0,
      actor: 'claude',
      command: 'create',
      subject: 'create /memories/k.md',
      paths: ['/memories/k.md'],
      conversationId: first.conversationId,
      toolUseId: 'toolu_k',
      overwrite: false,
      restoredFrom: null,
    }
    await chat.close()
    chat = build({
      toolUseCommits: () => {
        if (++asked === 1) return Promise.resolve(new Map([['toolu_k', commit]]))
        return Promise.reject(
          new CairnError('index-rebuilding', 'The history index is being rebuilt.'),
        )
      },
    })
    fake.script(reply.text('Carrying on.'), reply.text('Still here.'))
    await turn(first.conversationId, 'go on')
    await turn(first.conversationId, 'and on')
    const heard = fake
      .messageRequests()
      .slice(-2)
      .map((r) => (r.body!.messages as unknown as Array<{ content: unknown[] }>)[2]!)
    const ran = {
      type: 'tool_result',
      tool_use_id: 'toolu_k',
      content: recordedResult(commit),
    }
    // Claude heard what the call did in both turns, and that is what the file keeps.
    expect(heard[0]!.content[0]).toMatchObject(ran)
    expect(heard[1]!.content[0]).toMatchObject(ran)
    expect(heard[1]!.content[0]).not.toHaveProperty('is_error', true)
    const stored = await conversations.get(first.conversationId)
    expect(stored.messages[2]!.content).toMatchObject([{ ...ran, type: 'tool_result' }])
    expect(stored.toolCommits).toEqual({ toolu_k: commit.oid })
    expect(asked).toBe(1)
  })
})

describe('errors', () => {
  it('leaves no open-turn mark when the send fails after its prompt was stored', async () => {
    // History cannot say where memory stands (its HEAD unreadable): the send fails with the
    // prompt already stored. Left marked open, the next start would say the reply was cut
    // off when Cairn closed, which never happened: the person was told the send failed.
    await chat.close()
    chat = build({ memoryHead: () => Promise.reject(new Error('EIO: i/o error, read')) })
    await expect(chat.send(null, 'hello', nextClientId())).rejects.toThrow()
    const [hit] = await conversations.list()
    const file = path.join(dataDir, 'conversations', `${hit!.conversation.id}.json`)
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    expect(stored['messages']).toHaveLength(1)
    expect(stored).not.toHaveProperty('openTurn')
  })

  const cases: Array<[string, () => void, string, RegExp]> = [
    ['401', () => fake.script(reply.error(401)), 'invalid-api-key', /API key/],
    ['429', () => fake.script(reply.error(429, { retryAfter: 30 })), 'rate-limited', /30 seconds/],
    ['529', () => fake.script(reply.error(529)), 'overloaded', /overloaded/],
    ['413', () => fake.script(reply.error(413)), 'request-too-large', /too large/],
    ['max_tokens', () => fake.script(reply.maxTokens('Cut off here')), 'max-tokens', /8192/],
    [
      'a dropped stream',
      () => fake.script(reply.drop('Half')),
      'stream-interrupted',
      /connection broke/,
    ],
    [
      'an overload inside the stream',
      () => fake.script(reply.streamError('overloaded_error')),
      'overloaded',
      /overloaded/,
    ],
  ]
  for (const [name, script, code, message] of cases) {
    it(`reports ${name} as ${code} and keeps the conversation usable`, async () => {
      script()
      const result = await turn(null, 'hello')
      const error = lastError(result.events)
      expect(error).toMatchObject({ type: 'error', code })
      expect(error && 'message' in error ? error.message : '').toMatch(message)
      expect(JSON.stringify(error)).not.toMatch(/node_modules|\/tmp\/|\bat \w+ \(/)
      expect(result.types.at(-1)).toBe('turn-finished')

      fake.script(reply.text('Recovered'))
      const next = await turn(result.conversationId, 'again')
      expect(lastError(next.events)).toBeUndefined()
      const sent = fake.messageRequests().at(-1)!.body!.messages!
      expect(sent[0]?.role).toBe('user')
      expect(sent.at(-1)?.role).toBe('user')
      for (let i = 1; i < sent.length; i++) expect(sent[i]?.role).not.toBe(sent[i - 1]?.role)
    })
  }

  it('keeps the conversation usable after a stream that broke having sent only whitespace', async () => {
    fake.script(reply.drop('\n\n'))
    const broken = await turn(null, 'hello')
    expect(lastError(broken.events)).toMatchObject({ code: 'stream-interrupted' })
    fake.script(reply.text('Recovered'))
    const next = await turn(broken.conversationId, 'again')
    expect(lastError(next.events)).toBeUndefined()
  })

  it('reports a conversation that can no longer be saved mid-turn, leaving no promise unhandled', async () => {
    const unhandled: unknown[] = []
    let undoDisk: (() => void) | undefined
    const record = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', record)
    try {
      fake.script(
        reply.toolUse({ id: 'toolu_v', input: { command: 'view', path: '/memories' } }),
        reply.text('Done', { delayMs: 300 }),
      )
      // When the command runs, the disk starts refusing every rename onto the conversation's
      // file (EIO): saving fails from here. (A folder put at the conversation's own file, as
      // this test did before, no longer fails a save: it is damage, kept aside, the reply saved.)
      onEvent = (event) => {
        if (event.type !== 'tool-call') return
        const file = `${event.conversationId}.json`
        undoDisk = setDisk(
          hookDisk(nodeDisk, (call) =>
            call.name === 'renameSync' && path.basename(String(call.args[1])) === file
              ? errnoError(call, 'EIO')
              : undefined,
          ).disk,
        )
      }
      const result = await turn(null, 'look')
      expect(lastError(result.events)).toMatchObject({
        code: 'io-error',
        message: expect.stringContaining("Claude's reply could not be saved"),
      })
      expect(result.types.at(-1)).toBe('turn-finished')
      // People are told the reply was not saved; the cause goes to the log.
      expect(logger.entries).toEqual([
        expect.objectContaining({ level: 'error', message: "Claude's reply could not be saved" }),
      ])
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      undoDisk?.()
      process.off('unhandledRejection', record)
    }
  })

  it("relies on the SDK's own retries for an overloaded API", async () => {
    await chat.close()
    const settings = createSettingsService({ dataDir, secretStore: createMemorySecretStore(), env })
    chat = createChatService({
      conversations,
      settings,
      memory,
      memoryHead: () => null,
      createMemoryTool: createRunnableMemoryTool,
      emit: (event) => events.push(event),
      onConversationChanged: () => {},
      maxRetries: 1,
    })
    fake.script(reply.error(529, { retryAfterMs: 1 }), reply.text('Back again'))
    const result = await turn(null, 'hello')
    expect(lastError(result.events)).toBeUndefined()
    expect(fake.messageRequests()).toHaveLength(2)
    expect(fake.messageRequests()[1]!.headers['x-stainless-retry-count']).toBe('1')
  })

  it('reports a missing API key without calling the API', async () => {
    env = { ANTHROPIC_BASE_URL: fake.url }
    await chat.close()
    chat = build()
    const result = await turn(null, 'hello')
    expect(lastError(result.events)).toMatchObject({ code: 'no-api-key' })
    expect(fake.messageRequests()).toHaveLength(0)
    expect((await conversations.get(result.conversationId)).messages).toHaveLength(1)
  })

  it('reports a saved key the disk failed to read as a disk problem, not as no key, and keeps it', async () => {
    // rdisk30: the read's EIO read as "no key stored", so the person was asked for a key they have.
    env = { ANTHROPIC_BASE_URL: fake.url }
    const keyFile = path.join(dataDir, 'secrets.json')
    await createFileSecretStore({ file: keyFile }).set('sk-ant-api03-saved')
    const saved = await readFile(keyFile, 'utf8')
    await chat.close()
    chat = build({
      settings: createSettingsService({
        dataDir,
        secretStore: createFileSecretStore({ file: keyFile }),
        env,
      }),
    })
    const restore = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        async open(at, flags, mode) {
          if (at === keyFile)
            throw Object.assign(new Error('EIO: i/o error, open'), { code: 'EIO' })
          return nodeDisk.promises.open(at, flags, mode)
        },
      },
    })
    let result: Awaited<ReturnType<typeof turn>>
    try {
      result = await turn(null, 'hello')
    } finally {
      restore()
    }
    expect(lastError(result.events)).toMatchObject({
      code: 'io-error',
      message:
        'Your saved API key could not be read because the disk reported a read or write error. It was left as it is, and Cairn reads it again at the next try.',
    })
    expect(fake.messageRequests()).toHaveLength(0)
    expect(await readFile(keyFile, 'utf8')).toBe(saved)
    // Kept with the turn like any other error (the prompt is stored).
    expect((await conversations.get(result.conversationId)).messages).toHaveLength(1)
  })

  it('reports a key that cannot be sent (an invisible character in ANTHROPIC_API_KEY) as a key problem', async () => {
    for (const key of ['sk-ant-api03-abc\u200bdef', 'sk-ant-api03-abc\ndef']) {
      env = { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: fake.url }
      await chat.close()
      chat = build()
      const result = await turn(null, 'hello')
      expect(lastError(result.events), JSON.stringify(key)).toMatchObject({
        code: 'invalid-api-key',
        message: expect.stringMatching(/character that cannot be sent/),
      })
    }
    expect(fake.messageRequests()).toHaveLength(0)
  })

  it('reports an ANTHROPIC_BASE_URL that is not an http(s) address as that, not as a network failure', async () => {
    for (const baseURL of [
      'not a url',
      'localhost:8080',
      'ftp://127.0.0.1:9',
      '/home/someone/api',
      // The SDK adds `/v1/messages` after these as text: into the query or the fragment.
      'http://127.0.0.1:9/?key=1',
      'https://proxy.example/api#v',
      'http://127.0.0.1:9/?',
    ]) {
      env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: baseURL }
      await chat.close()
      chat = build()
      const result = await turn(null, 'hello')
      const error = lastError(result.events)
      expect(error, baseURL).toMatchObject({
        code: 'invalid-base-url',
        message: expect.stringMatching(
          /^The ANTHROPIC_BASE_URL environment variable .*It must be an http:\/\/ or https:\/\/ address/,
        ),
      })
      // The value is not quoted back: it may be a host path or hold a password.
      expect(JSON.stringify(error)).not.toContain(baseURL)
      expect((await conversations.get(result.conversationId)).messages).toHaveLength(1)
    }
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([])
  })

  it('reports an ANTHROPIC_BASE_URL holding a user name or password as that, not as a network failure', async () => {
    // Node's fetch refuses such an address before sending anything; the SDK called that a
    // connection failure ("check your internet connection").
    const { host } = new URL(fake.url)
    for (const baseURL of [
      `http://u:p%40ss@${host}`,
      `http://someone@${host}/`,
      `https://:secret@${host}/proxy`,
    ]) {
      env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: baseURL }
      await chat.close()
      chat = build()
      const result = await turn(null, 'hello')
      const error = lastError(result.events)
      expect(error, baseURL).toMatchObject({
        code: 'invalid-base-url',
        message: expect.stringMatching(
          /^The ANTHROPIC_BASE_URL environment variable holds a user name or password .* Remove them from the address/,
        ),
      })
      const shown = JSON.stringify(error)
      for (const part of [baseURL, host, 'p%40ss', 'someone', 'secret']) {
        expect(shown, part).not.toContain(part)
      }
      expect((await conversations.get(result.conversationId)).messages).toHaveLength(1)
    }
    expect(fake.messageRequests()).toHaveLength(0)
    // The same address without them still works.
    fake.script(reply.text('ok'))
    env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: `http://${host}/` }
    await chat.close()
    chat = build()
    const result = await turn(null, 'hello')
    expect(lastError(result.events)).toBeUndefined()
    expect(fake.messageRequests()).toHaveLength(1)
  })

  it('reports a network failure when the API cannot be reached', async () => {
    const closed = await startFakeAnthropic()
    const url = closed.url
    await closed.close()
    env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: url }
    await chat.close()
    chat = build()
    const result = await turn(null, 'hello')
    expect(lastError(result.events)).toMatchObject({ code: 'network' })
  })
})

function stripCache(message: { role: string; content: unknown }) {
  return JSON.parse(JSON.stringify(message).replaceAll(',"cache_control":{"type":"ephemeral"}', ''))
}
