/**
 * "What Claude saw": every stored reply records the memory commit its results read at (the
 * turn's start until a view or an edit's snippet read later) as `memoryAt`, and the paths
 * Claude viewed during the turn (`viewed`), and memory can be read
 * back as it was at that commit. End to end through the real core: the real SDK against the
 * fake Messages API, the real versioned memory and the real conversation store.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import type { StoredMessage } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-saw-' })
const { call } = cairn

/** One finished turn, with its conversation as stored after it. */
async function turn(conversationId: string | null, text: string) {
  const finished = await cairn.turn(conversationId, text)
  const conversation = await call('conversations:get', { id: finished.conversationId })
  return { ...finished, conversation }
}

const replies = (messages: ReadonlyArray<StoredMessage>) =>
  messages.filter((message) => message.role === 'assistant')
const head = async () => (await call('history:log', { offset: 0, limit: 1 })).entries[0]?.oid

describe('what Claude saw', () => {
  it('records the memory each reply read at and every path viewed, on every reply', async () => {
    await call('memory:write', { path: '/memories/a.md', content: 'The user likes tea.\n' })
    const before = await head()
    cairn.fake.script(
      reply.toolUse({ input: { command: 'view', path: '/memories/a.md' } }),
      reply.toolUse({
        input: { command: 'create', path: '/memories/b.md', file_text: 'Coffee now.\n' },
      }),
      reply.toolUses([
        { input: { command: 'view', path: '/memories/' } },
        { input: { command: 'view', path: '/memories/missing.md' } },
        { input: { command: 'view', path: '/memories/a.md' } },
      ]),
      reply.text('Noted.'),
    )
    const first = await turn(null, 'What do I drink?')
    const after = await head()
    expect(after).not.toBe(before)
    const stored = replies(first.conversation.messages)
    expect(stored).toHaveLength(4)
    // Each reply has the commit its results read at: the first view read the memory the turn
    // began with (the create after it shows Claude nothing it did not write), the later views
    // the memory holding b.md, as does the reply after them.
    expect(stored.map((message) => message.memoryAt)).toEqual([before, before, after, after])
    for (const message of stored) {
      // A view that failed saw nothing; a path viewed twice is listed once; `/memories/` is
      // the folder itself.
      expect(message.viewed).toEqual(['/memories/a.md', '/memories'])
    }
    const started = cairn.events.find((e) => e.turnId === first.turnId && e.type === 'turn-started')
    expect(started).toMatchObject({ memoryAt: before })

    // The next turn starts from the memory the first one left.
    cairn.fake.script(reply.text('Still coffee.'))
    const second = await turn(first.conversationId, 'And now?')
    const latest = replies(second.conversation.messages).at(-1)
    expect(latest).toMatchObject({ memoryAt: after, viewed: [] })
    // Stored conversations keep the fields (the file is read back from disk).
    expect(replies(second.conversation.messages)[0]?.memoryAt).toBe(before)
  })

  it('reads memory back as it was at the reply, while memory has moved on', async () => {
    await call('memory:write', { path: '/memories/a.md', content: 'old\n' })
    await call('memory:write', { path: '/memories/img/x.bin', content: 'bin\n' })
    cairn.fake.script(
      reply.toolUse({ input: { command: 'view', path: '/memories/a.md' } }),
      reply.toolUse({
        input: { command: 'str_replace', path: '/memories/a.md', old_str: 'old', new_str: 'new' },
      }),
      reply.toolUse({ input: { command: 'create', path: '/memories/c.md', file_text: 'c\n' } }),
      reply.text('Updated.'),
    )
    const { conversation } = await turn(null, 'Update it.')
    const at = replies(conversation.messages)[0]?.memoryAt as string

    const then = await call('memory:tree', { at })
    expect(then.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ['/memories/a.md', 'file', 4],
      ['/memories/img', 'dir', 4],
      ['/memories/img/x.bin', 'file', 4],
    ])
    expect(then.every((entry) => entry.modifiedAt > 0)).toBe(true)
    expect((await call('memory:read', { path: '/memories/a.md', at })).text).toBe('old\n')
    expect((await call('memory:read', { path: '/memories/a.md' })).text).toBe('new\n')
    const missing = await cairn.core.dispatch('memory:read', { path: '/memories/c.md', at })
    expect(missing).toMatchObject({ ok: false, error: { code: 'not-found' } })

    const compared = await call('history:compare', { from: at })
    expect(compared.changes.map((change) => [change.path, change.status])).toEqual([
      ['/memories/a.md', 'modified'],
      ['/memories/c.md', 'added'],
    ])
    expect(compared.changes[0]).toMatchObject({ before: 'old\n', after: 'new\n' })
  })

  it('records an empty memory as null', async () => {
    cairn.fake.script(reply.text('Hello.'))
    const { conversation } = await turn(null, 'Hi')
    expect(replies(conversation.messages)[0]).toMatchObject({ memoryAt: null, viewed: [] })
  })
})
