/**
 * A conversation's file changed by another program while Cairn holds it (another editor, a
 * sync tool), through the real core on a temp folder: the valid outside version is taken up
 * before Cairn saves (never overwritten by the held copy), the list shows it, the person is
 * told, and the copy Cairn had is kept aside when it held messages that version lacks.
 */
import { readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { invalidMessages, reply, type FakeResponse } from '../../../test/fixtures/fake-anthropic'
import type { Conversation, ConversationSearchHit } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

// Reset before the harness opens the core, so that nothing it tells is missed.
let changed: string[] = []
beforeEach(() => {
  changed = []
})
const cairn = coreThroughFakeApi({
  prefix: 'cairn-outside-conv-',
  quiet: true,
  onEvent: (name, data) => {
    if (name === 'conversations:changed') changed.push((data as { id: string }).id)
  },
})
const { call, fileOf } = cairn

/** One finished turn; resolves with its conversation's id. */
const turn = async (conversationId: string | null, text: string) =>
  (await cairn.turn(conversationId, text)).conversationId

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
    cairn.fake.script(reply.text('Paris is the capital.'))
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
    cairn.fake.script(reply.text('Rome.'))
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
    expect(await readdir(path.join(cairn.dataDir, 'conversations'))).toEqual([`${id}.json`])
  })

  it('keeps the copy Cairn had aside when the outside version lacks its messages, and saves onto that version', async () => {
    cairn.fake.script(reply.text('one'))
    const id = await turn(null, 'first')
    const older = await readFile(fileOf(id), 'utf8')
    cairn.fake.script(reply.text('two'))
    await turn(id, 'second')
    const ours = await readFile(fileOf(id), 'utf8')
    // An editor saves its old buffer, with a hand-made title fix, over the file.
    await writeFile(fileOf(id), JSON.stringify({ ...JSON.parse(older), title: 'First, by hand' }))

    await call('conversations:rename', { id, title: 'Renamed in Cairn' })
    // Neither side is lost: the file is the outside version, renamed; Cairn's copy is kept.
    const saved = await onDisk(id)
    expect(saved.title).toBe('Renamed in Cairn')
    expect(texts(saved.messages)).toEqual(['first', 'one'])
    const kept = path.join(cairn.dataDir, 'conversations', 'cairn-replaced', `${id}.json`)
    expect(JSON.parse(await readFile(kept, 'utf8'))).toEqual(JSON.parse(ours))
    const shown = (await call('conversations:get', { id })) as Conversation
    expect(shown.changedOutside).toMatchObject({ keptAs: `cairn-replaced/${id}.json` })

    // A second such change keeps a second copy (Cairn's title), never over the first.
    await writeFile(fileOf(id), older)
    cairn.fake.script(reply.text('three'))
    await turn(id, 'third')
    expect(texts((await onDisk(id)).messages)).toEqual(['first', 'one', 'third', 'three'])
    expect(
      (await readdir(path.join(cairn.dataDir, 'conversations', 'cairn-replaced'))).sort(),
    ).toEqual([`${id}-2.json`, `${id}.json`])
    expect(JSON.stringify(shown)).not.toContain(cairn.dataDir)
  })

  it('says nothing when the file was only written again as it was', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    const same = await readFile(fileOf(id), 'utf8')
    await new Promise((resolve) => setTimeout(resolve, 20))
    changed = []
    await writeFile(fileOf(id), same)
    expect((await listed(id)).changedOutside).toBeUndefined()
    expect(changed).not.toContain(id)
    cairn.fake.script(reply.text('ok again'))
    await turn(id, 'again')
    expect(texts((await onDisk(id)).messages)).toEqual(['hello', 'ok', 'again', 'ok again'])
    expect(await readdir(path.join(cairn.dataDir, 'conversations'))).toEqual([`${id}.json`])
  })
})

/**
 * Starts a turn answered by `before` (tool calls), then by a last reply held until `finish`:
 * when this returns, the turn's question (and tool calls) are saved and its reply streams.
 */
async function heldTurn(
  conversationId: string,
  text: string,
  before: ReadonlyArray<FakeResponse> = [],
) {
  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  const requests = cairn.fake.messageRequests().length
  cairn.fake.script(...before, reply.text('THE REPLY OF THE TURN', { hold }))
  const started = await cairn.send(conversationId, text)
  await cairn.fake.waitForMessageRequests(requests + before.length + 1)
  const finished = cairn.finished(started.turnId)
  return {
    finish: async () => {
      release()
      return await finished
    },
  }
}

describe('a conversation changed by another program while a turn runs (review14-review)', () => {
  for (const how of ['deleted', 'moved away'] as const) {
    it(`writes the file back with the reply when it is ${how} while the reply streams, and says so`, async () => {
      cairn.fake.script(reply.text('hello'))
      const id = await turn(null, 'first')
      const held = await heldTurn(id, 'second')
      if (how === 'deleted') await unlink(fileOf(id))
      else await rename(fileOf(id), path.join(cairn.dataDir, 'conversations', 'backup.json'))
      const turnEvents = await held.finish()
      expect(turnEvents.filter((e) => e.type === 'error')).toEqual([])
      expect(texts((await onDisk(id)).messages)).toEqual([
        'first',
        'hello',
        'second',
        'THE REPLY OF THE TURN',
      ])
      const summary = await listed(id)
      expect(summary.changedOutside).toMatchObject({ how: 'written-back', keptAs: null })
    })
  }

  it('still lets an outside delete of an idle conversation remove it from the list', async () => {
    cairn.fake.script(reply.text('hello'))
    const id = await turn(null, 'first')
    await unlink(fileOf(id))
    const hits = (await call('conversations:list', {})) as ReadonlyArray<ConversationSearchHit>
    expect(hits.map((hit) => hit.conversation.id)).not.toContain(id)
    await expect(call('conversations:get', { id })).rejects.toThrow(/conversation-not-found/)
  })

  it('never joins the rest of a turn onto an older version put back mid-turn: Cairn goes on with its own copy and keeps the other aside', async () => {
    cairn.fake.script(reply.text('one'))
    const id = await turn(null, 'first')
    const older = await readFile(fileOf(id), 'utf8')
    const held = await heldTurn(id, 'second', [
      reply.toolUse({
        id: 'toolu_mid',
        input: { command: 'create', path: '/memories/b.md', file_text: 'x\n' },
      }),
    ])
    // The tool results are saved while the next request goes out: that save is let finish.
    while (!(await readFile(fileOf(id), 'utf8')).includes('tool_result')) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await writeFile(fileOf(id), older)
    await held.finish()

    const saved = await onDisk(id)
    // The turn is whole, in order: its question, the tool call and result, the answer.
    expect(
      saved.messages.map((m: { role: string; content: Array<{ type: string }> }) => [
        m.role,
        m.content.map((b) => b.type).join(','),
      ]),
    ).toEqual([
      ['user', 'text'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
      ['assistant', 'text'],
    ])
    expect(texts(saved.messages)).toEqual(['first', 'one', 'second', 'THE REPLY OF THE TURN'])
    expect(Object.keys(saved.toolCommits)).toEqual(['toolu_mid'])
    // The version put back is kept aside as it was written, and the person is told.
    const kept = path.join(cairn.dataDir, 'conversations', 'cairn-replaced', `${id}.json`)
    expect(await readFile(kept, 'utf8')).toBe(older)
    const shown = (await call('conversations:get', { id })) as Conversation
    expect(shown.changedOutside).toMatchObject({
      how: 'kept-own',
      keptAs: `cairn-replaced/${id}.json`,
    })
    cairn.fake.script(reply.text('ok'))
    await turn(id, 'third')
    expect(invalidMessages(cairn.fake.messageRequests().at(-1)!.body?.messages)).toBeNull()
  })
})
