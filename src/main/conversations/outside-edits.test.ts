/**
 * A conversation's file changed by another program while Cairn holds it (another editor, a
 * sync tool), through the real core on a temp folder: the valid outside version is taken up
 * before Cairn saves (never overwritten by the held copy), the list shows it, the person is
 * told, and the copy Cairn had is kept aside when it held messages that version lacks.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import type { RequestChannel } from '../../shared/contract'
import type { AgentEvent, Conversation, ConversationSearchHit } from '../../shared/types'
import { createCore, type Core } from '../core'
import { callCore } from '../core-test-support'
import { createRecordingLogger } from '../lib/logger'

let dataDir: string
let fake: FakeAnthropic
let core: Core
let events: AgentEvent[]
let changed: string[]

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-conv-'))
  fake = await startFakeAnthropic()
  events = []
  changed = []
  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })
  core.events.on((name, data) => {
    if (name === 'agent:event') events.push(data as AgentEvent)
    if (name === 'conversations:changed') changed.push((data as { id: string }).id)
  })
})

afterEach(async () => {
  await core.close()
  await fake.close()
  await rm(dataDir, { recursive: true, force: true })
})

const call = <C extends RequestChannel>(channel: C, payload?: unknown) =>
  callCore(core, channel, payload)

let clientIds = 0
async function turn(conversationId: string | null, text: string): Promise<string> {
  const started = await call('chat:send', { conversationId, text, clientId: `c-${++clientIds}` })
  await new Promise<void>((resolve) => {
    const check = () =>
      events.some((e) => e.turnId === started.turnId && e.type === 'turn-finished')
        ? resolve()
        : setTimeout(check, 5)
    check()
  })
  return started.conversationId
}

const fileOf = (id: string) => path.join(dataDir, 'conversations', `${id}.json`)
const onDisk = async (id: string) => JSON.parse(await readFile(fileOf(id), 'utf8'))
const texts = (
  messages: ReadonlyArray<{ content: ReadonlyArray<{ type: string; text?: string }> }>,
) => messages.flatMap((m) => m.content.filter((b) => b.type === 'text').map((b) => b.text))
const listed = async (id: string) =>
  ((await call('conversations:list', {})) as ReadonlyArray<ConversationSearchHit>).find(
    (hit) => hit.conversation.id === id,
  )!.conversation

describe('a conversation changed by another program while Cairn holds it', () => {
  it('takes up a newer version (more messages) before saving, lists it, and says so', async () => {
    fake.script(reply.text('Paris is the capital.'))
    const id = await turn(null, 'capital of France?')
    await call('conversations:get', { id })
    // A sync tool brings the same conversation carried on elsewhere: one more exchange.
    // (Another machine wrote it: Cairn never saw this text.)
    const file = await onDisk(id)
    changed = []
    const theirs = {
      ...file,
      messages: [
        ...file.messages,
        { role: 'user', content: [{ type: 'text', text: 'and of Spain?' }], createdAt: 5 },
        { role: 'assistant', content: [{ type: 'text', text: 'Madrid.' }], createdAt: 6 },
      ],
    }
    await writeFile(fileOf(id), JSON.stringify(theirs))

    // The list shows the file's version, not the held copy, and the change is announced.
    const summary = await listed(id)
    expect(summary).toMatchObject({
      messageCount: 4,
      changedOutside: { keptAs: null },
    })
    expect(changed).toContain(id)
    const shown = (await call('conversations:get', { id })) as Conversation
    expect(texts(shown.messages)).toEqual([
      'capital of France?',
      'Paris is the capital.',
      'and of Spain?',
      'Madrid.',
    ])

    // The next turn adds to that version: nothing of it is written over.
    fake.script(reply.text('Rome.'))
    await turn(id, 'and of Italy?')
    const saved = await onDisk(id)
    expect(texts(saved.messages)).toEqual([
      'capital of France?',
      'Paris is the capital.',
      'and of Spain?',
      'Madrid.',
      'and of Italy?',
      'Rome.',
    ])
    // Nothing Cairn had was missing from it: no copy kept.
    expect(await readdir(path.join(dataDir, 'conversations'))).toEqual([`${id}.json`])
  })

  it('keeps the copy Cairn had aside when the outside version lacks its messages, and saves onto that version', async () => {
    fake.script(reply.text('one'))
    const id = await turn(null, 'first')
    const older = await readFile(fileOf(id), 'utf8')
    fake.script(reply.text('two'))
    await turn(id, 'second')
    const ours = await readFile(fileOf(id), 'utf8')
    // An editor saves its old buffer, with a hand-made title fix, over the file.
    await writeFile(fileOf(id), JSON.stringify({ ...JSON.parse(older), title: 'First, by hand' }))

    await call('conversations:rename', { id, title: 'Renamed in Cairn' })
    // Neither side is lost: the file is the outside version, renamed; Cairn's copy is kept.
    const saved = await onDisk(id)
    expect(saved.title).toBe('Renamed in Cairn')
    expect(texts(saved.messages)).toEqual(['first', 'one'])
    const kept = path.join(dataDir, 'conversations', 'cairn-replaced', `${id}.json`)
    expect(JSON.parse(await readFile(kept, 'utf8'))).toEqual(JSON.parse(ours))
    const shown = (await call('conversations:get', { id })) as Conversation
    expect(shown.changedOutside).toMatchObject({ keptAs: `cairn-replaced/${id}.json` })

    // A second such change keeps a second copy (Cairn's title), never over the first.
    await writeFile(fileOf(id), older)
    fake.script(reply.text('three'))
    await turn(id, 'third')
    expect(texts((await onDisk(id)).messages)).toEqual(['first', 'one', 'third', 'three'])
    expect((await readdir(path.join(dataDir, 'conversations', 'cairn-replaced'))).sort()).toEqual([
      `${id}-2.json`,
      `${id}.json`,
    ])
    expect(JSON.stringify(shown)).not.toContain(dataDir)
  })

  it('says nothing when the file was only written again as it was', async () => {
    fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    const same = await readFile(fileOf(id), 'utf8')
    await new Promise((resolve) => setTimeout(resolve, 20))
    changed = []
    await writeFile(fileOf(id), same)
    expect((await listed(id)).changedOutside).toBeUndefined()
    expect(changed).not.toContain(id)
    fake.script(reply.text('ok again'))
    await turn(id, 'again')
    expect(texts((await onDisk(id)).messages)).toEqual(['hello', 'ok', 'again', 'ok again'])
    expect(await readdir(path.join(dataDir, 'conversations'))).toEqual([`${id}.json`])
  })
})
