import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Conversation, StoredMessage } from '../../shared/types'
import { deriveTitle } from './conversation-file'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { createConversationStore, type ConversationStore } from './conversation-store'

let dataDir: string
let clock: number
let store: ConversationStore
let logger: RecordingLogger

const open = (): ConversationStore =>
  createConversationStore({ dataDir, now: () => ++clock, logger })

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-conversations-'))
  clock = 1_000
  logger = createRecordingLogger()
  store = open()
})

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

const user = (text: string): StoredMessage => ({
  role: 'user',
  content: [{ type: 'text', text }],
  createdAt: 1,
})

const withMessages =
  (...messages: StoredMessage[]) =>
  (c: Conversation): Conversation => ({
    ...c,
    messages: [...c.messages, ...messages],
  })

describe('conversation store', () => {
  it('creates a conversation titled after its first message and stores it as one file', async () => {
    const created = await store.create('My favourite language is Python — remember it')
    expect(created.title).toBe('My favourite language is Python — remember it')
    expect(await readdir(path.join(dataDir, 'conversations'))).toEqual([`${created.id}.json`])
    const reopened = await open().get(created.id)
    expect(reopened).toEqual(created)
  })

  it('keeps the full history, tool blocks and tool commits across a reopen', async () => {
    const { id } = await store.create('hi')
    const assistant: StoredMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'memory',
          input: { command: 'view', path: '/memories' },
        },
      ],
      stopReason: 'tool_use',
      usage: {
        inputTokens: 5,
        outputTokens: 6,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
      createdAt: 2,
    }
    const result: StoredMessage = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok', is_error: false }],
      createdAt: 3,
    }
    await store.update(id, (c) => ({
      ...withMessages(user('hi'), assistant, result)(c),
      toolCommits: { toolu_1: 'a'.repeat(40) },
    }))
    const reopened = await open().get(id)
    expect(reopened.messages).toEqual([user('hi'), assistant, result])
    expect(reopened.messageCount).toBe(3)
    expect(reopened.toolCommits).toEqual({ toolu_1: 'a'.repeat(40) })
  })

  it('lists newest first by last update', async () => {
    const a = await store.create('first')
    const b = await store.create('second')
    await store.update(a.id, withMessages(user('more')))
    const list = await store.list()
    expect(list.map((hit) => hit.conversation.id)).toEqual([a.id, b.id])
    expect(list.every((hit) => hit.excerpt === null)).toBe(true)
  })

  it('renames without losing a concurrent update', async () => {
    const { id } = await store.create('hello')
    const [, renamed] = await Promise.all([
      store.update(id, withMessages(user('hello'))),
      store.rename(id, '  Greetings  '),
    ])
    expect(renamed.title).toBe('Greetings')
    const reopened = await open().get(id)
    expect(reopened.title).toBe('Greetings')
    expect(reopened.messages).toHaveLength(1)
  })

  it('deletes a conversation and then reports it as not found', async () => {
    const { id } = await store.create('bye')
    await store.delete(id)
    await expect(store.get(id)).rejects.toMatchObject({ code: 'conversation-not-found' })
    expect(await store.list()).toEqual([])
  })

  it('searches titles and message text, with an excerpt around the match', async () => {
    const a = await store.create('Trip planning')
    await store.update(a.id, withMessages(user('Trip planning')))
    const b = await store.create('Languages')
    const long = `${'x'.repeat(80)} My favourite language is Python and I like it ${'y'.repeat(80)}`
    await store.update(b.id, withMessages(user(long)))

    const byText = await store.list('PYTHON')
    expect(byText).toHaveLength(1)
    expect(byText[0]?.conversation.id).toBe(b.id)
    expect(byText[0]?.excerpt).toMatch(/^…x+ My favourite language is Python and I like it y+…$/)

    const byTitle = await store.list('languages')
    expect(byTitle.map((hit) => [hit.conversation.id, hit.excerpt])).toEqual([[b.id, null]])
    expect(await store.list('nothing like this')).toEqual([])
  })

  it('rejects ids that are not file-name safe', async () => {
    await expect(store.get('../settings')).rejects.toMatchObject({ code: 'conversation-not-found' })
    await expect(store.delete('a/b')).rejects.toMatchObject({ code: 'conversation-not-found' })
  })

  it('lists a corrupt file as unreadable, beside the others, and reports it once', async () => {
    const good = await store.create('good')
    await writeFile(path.join(dataDir, 'conversations', 'c_broken.json'), '{"version": 1')
    expect(
      (await store.list()).map((hit) => [hit.conversation.id, hit.conversation.unreadable]),
    ).toEqual([
      ['c_broken', true],
      [good.id, undefined],
    ])
    await expect(store.get('c_broken')).rejects.toMatchObject({ code: 'conversation-corrupt' })
    // Logged once, with its cause, however often the list is read.
    await store.list()
    expect(logger.entries).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'Conversation c_broken is not a valid conversation file',
      }),
    ])
  })

  it('leaves no temp files behind', async () => {
    const { id } = await store.create('x')
    for (let i = 0; i < 5; i++) await store.update(id, withMessages(user(`m${i}`)))
    expect(await readdir(path.join(dataDir, 'conversations'))).toEqual([`${id}.json`])
    expect(
      JSON.parse(await readFile(path.join(dataDir, 'conversations', `${id}.json`), 'utf8')),
    ).toMatchObject({ version: 1, id })
  })
})

describe('deriveTitle', () => {
  it('uses the first non-empty line, collapsed and cut at a word', () => {
    expect(deriveTitle('\n\n  Hello   world \nsecond line')).toBe('Hello world')
    expect(deriveTitle('   ')).toBe('New conversation')
    const title = deriveTitle('word '.repeat(30))
    expect(title.length).toBeLessThanOrEqual(61)
    expect(title.endsWith('word…')).toBe(true)
  })

  it('never cuts an emoji in half (a title with half a surrogate pair breaks its JSON file)', () => {
    const title = deriveTitle('x'.repeat(59) + '😀'.repeat(5))
    expect(title).toBe(`${'x'.repeat(59)}…`)
    expect(title).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
  })
})

describe('what the store writes', () => {
  it('refuses to write a version its reader would refuse, and keeps the last good one', async () => {
    const { id } = await store.create('hi')
    await store.update(id, withMessages(user('hi')))
    const before = await readFile(path.join(dataDir, 'conversations', `${id}.json`), 'utf8')
    // Each would be written fine and refused on reading (the conversation "damaged" after a
    // restart): a call without an id, a count that is not a number, a time JSON cannot hold.
    const bad: ReadonlyArray<(c: Conversation) => Conversation> = [
      withMessages({
        role: 'assistant',
        content: [{ type: 'tool_use', name: 'memory', input: {} } as never],
        createdAt: 2,
      }),
      withMessages({
        role: 'assistant',
        content: [{ type: 'text', text: 'x' }],
        usage: { inputTokens: '5', outputTokens: 1 } as never,
        createdAt: 2,
      }),
      withMessages({ role: 'user', content: [{ type: 'text', text: 'x' }], createdAt: NaN }),
    ]
    for (const change of bad) {
      await expect(store.update(id, change)).rejects.toMatchObject({
        code: 'internal',
        message: expect.stringMatching(/^This conversation could not be saved: .*\.$/),
      })
    }
    expect(await readFile(path.join(dataDir, 'conversations', `${id}.json`), 'utf8')).toBe(before)
    expect(logger.entries.map((e) => e.level)).toEqual(['error', 'error', 'error'])
    expect(logger.entries[0]!.message).toMatch(
      /^Conversation c_\w+ was not saved: Cairn could not read it back \(id: .+\)$/,
    )
    // The store goes on: the held copy is the last good one, and a good change is saved.
    expect((await store.get(id)).messages).toHaveLength(1)
    await store.update(id, withMessages(user('again')))
    expect((await open().get(id)).messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'hi' }],
      [{ type: 'text', text: 'again' }],
    ])
  })
})
