/**
 * The error a turn ended with is kept with its conversation (`lastError`), so after a restart
 * the chat can still say why the conversation ends with the person's message; the next message
 * sent clears it. The real core on a temp folder, restarted on it; the fake Messages API.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-turn-error-', quiet: true })

const EMPTY =
  'The Anthropic API answered with an empty reply: nothing of Claude’s answer came. Send your message again to try again.'

describe('the last turn’s error', () => {
  it('is kept through a restart, and cleared by the next message', async () => {
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const failed = await cairn.turn(null, 'hi')
    const id = failed.conversationId

    await cairn.reopen()
    const stored = await cairn.call('conversations:get', { id })
    expect(stored.messages.map((m) => m.role)).toEqual(['user'])
    expect(stored.lastError).toEqual({ turnId: failed.turnId, code: 'empty-reply', message: EMPTY })

    cairn.fake.script(reply.text('Here now.'))
    await cairn.turn(id, 'hi again')
    const after = await cairn.call('conversations:get', { id })
    expect(after.lastError).toBeUndefined()
    expect(JSON.parse(await readFile(cairn.fileOf(id), 'utf8'))).not.toHaveProperty('lastError')
  })

  it('keeps a refusal, and an API error in the words the window was told', async () => {
    cairn.fake.script(reply.message([{ type: 'text', text: 'I will not.' }], 'refusal'))
    const declined = await cairn.turn(null, 'please')
    expect(
      (await cairn.call('conversations:get', { id: declined.conversationId })).lastError,
    ).toMatchObject({ turnId: declined.turnId, code: 'refusal' })

    cairn.fake.script(reply.error(429))
    const limited = await cairn.turn(declined.conversationId, 'again')
    const told = limited.events.find((e) => e.type === 'error')
    if (told?.type !== 'error') throw new Error('the turn told no error')
    expect(told.code).toBe('rate-limited')
    const stored = await cairn.call('conversations:get', { id: declined.conversationId })
    expect(stored.lastError).toEqual({
      turnId: limited.turnId,
      code: told.code,
      message: told.message,
    })
  })

  it('is not set by a turn that ends well, nor by one the person stops', async () => {
    cairn.fake.script(reply.text('Fine.'))
    const good = await cairn.turn(null, 'hello')
    expect(
      (await cairn.call('conversations:get', { id: good.conversationId })).lastError,
    ).toBeUndefined()

    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(reply.text('A reply the person will stop half-way.', { hold }))
    const { conversationId, turnId } = await cairn.send(good.conversationId, 'more')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    await cairn.call('chat:stop', { conversationId })
    release()
    await cairn.finished(turnId)
    expect(
      (await cairn.call('conversations:get', { id: conversationId })).lastError,
    ).toBeUndefined()
  })

  it('reads from files without it, and from a newer build’s code it does not know', async () => {
    cairn.fake.script(reply.text('Fine.'))
    const { conversationId } = await cairn.turn(null, 'hello')
    const file = cairn.fileOf(conversationId)
    const before = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    expect(before).not.toHaveProperty('lastError')

    await cairn.reopen(async () => {
      const long = 'x'.repeat(5000)
      const lastError = { turnId: 't_new', code: 'quantum-flux', message: long }
      await writeFile(file, JSON.stringify({ ...before, lastError }))
    })
    const stored = await cairn.call('conversations:get', { id: conversationId })
    expect(stored.lastError?.code).toBe('api-error')
    expect(stored.lastError?.message.length).toBe(2000)
    expect(stored.messages).toHaveLength(2)
  })

  it('makes a file that holds a malformed one unreadable, as any malformed field does', async () => {
    cairn.fake.script(reply.text('Fine.'))
    const { conversationId } = await cairn.turn(null, 'hello')
    const file = cairn.fileOf(conversationId)
    const before = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    await cairn.reopen(async () => {
      await writeFile(file, JSON.stringify({ ...before, lastError: { code: 7 } }))
    })
    const result = await cairn.core.dispatch('conversations:get', { id: conversationId })
    expect(result.ok ? null : result.error.code).toBe('conversation-corrupt')
  })
})
