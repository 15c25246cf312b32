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
    const { conversationId, turnId } = await cairn.turn(null, 'hello')
    const file = cairn.fileOf(conversationId)
    const before = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    expect(before).not.toHaveProperty('lastError')

    await cairn.reopen(async () => {
      const long = 'x'.repeat(5000)
      const lastError = { turnId, code: 'quantum-flux', message: long }
      await writeFile(file, JSON.stringify({ ...before, lastError }))
    })
    const stored = await cairn.call('conversations:get', { id: conversationId })
    expect(stored.lastError?.code).toBe('api-error')
    expect(stored.lastError?.message.length).toBe(2000)
    expect(stored.messages).toHaveLength(2)
  })

  it('is read by strict rules from a hostile file: its own turn only, nothing invisible', async () => {
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const failed = await cairn.turn(null, 'hi')
    cairn.fake.script(reply.text('Here now.'))
    const good = await cairn.turn(failed.conversationId, 'hi again')
    const file = cairn.fileOf(failed.conversationId)
    const before = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    const write = (lastError: unknown) =>
      cairn.reopen(async () => {
        await writeFile(file, JSON.stringify({ ...before, lastError }))
      })
    const read = async () =>
      (await cairn.call('conversations:get', { id: failed.conversationId })).lastError

    // A turn no message names, and an earlier turn whose reply has since come whole: neither
    // may say the conversation's last turn failed.
    await write({ turnId: 't_nowhere', code: 'overloaded', message: 'Overloaded.' })
    expect(await read()).toBeUndefined()
    await write({ turnId: failed.turnId, code: 'empty-reply', message: 'Empty.' })
    expect(await read()).toBeUndefined()

    // The last turn's own: a bidi override and a line break are shown as escapes, never raw.
    const message = `Refused: \u202Etxt.exe\nsecond line ${'y'.repeat(3000)}`
    await write({ turnId: good.turnId, code: 'bad-request', message })
    const stored = await read()
    expect(stored?.code).toBe('bad-request')
    expect(stored?.message).toMatch(/^Refused: \\u202Etxt\.exe\\nsecond line y/)
    expect(stored?.message).not.toMatch(/[\u202E\n]/)
    expect(stored?.message.length).toBe(2000)
    expect(
      (await cairn.call('conversations:get', { id: failed.conversationId })).messages,
    ).toHaveLength(3)
  })

  it('is ignored when malformed: the conversation still reads (bad-marks.test.ts)', async () => {
    cairn.fake.script(reply.text('Fine.'))
    const { conversationId } = await cairn.turn(null, 'hello')
    const file = cairn.fileOf(conversationId)
    const before = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    await cairn.reopen(async () => {
      await writeFile(file, JSON.stringify({ ...before, lastError: { code: 7 } }))
    })
    const stored = await cairn.call('conversations:get', { id: conversationId })
    expect(stored.lastError).toBeUndefined()
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })
})

describe('dismissing the last turn’s error (chat:dismiss)', () => {
  it('forgets it in the stored conversation, through a restart, keeping its place in the list', async () => {
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const failed = await cairn.turn(null, 'hi')
    const id = failed.conversationId
    const before = await cairn.call('conversations:get', { id })
    expect(before.lastError?.turnId).toBe(failed.turnId)

    await cairn.call('chat:dismiss', { conversationId: id, turnId: failed.turnId })
    await cairn.reopen()
    const after = await cairn.call('conversations:get', { id })
    expect(after.lastError).toBeUndefined()
    expect(after.updatedAt).toBe(before.updatedAt)
    expect(after.messages).toEqual(before.messages)
    expect(JSON.parse(await readFile(cairn.fileOf(id), 'utf8'))).not.toHaveProperty('lastError')
  })

  it('changes nothing for another turn, and refuses a conversation that does not exist', async () => {
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const failed = await cairn.turn(null, 'hi')
    const file = cairn.fileOf(failed.conversationId)
    const text = await readFile(file, 'utf8')

    await cairn.call('chat:dismiss', { conversationId: failed.conversationId, turnId: 't_other' })
    expect(await readFile(file, 'utf8')).toBe(text)

    const missing = await cairn.core.dispatch('chat:dismiss', {
      conversationId: 'c_missing',
      turnId: failed.turnId,
    })
    expect(missing.ok ? null : missing.error).toEqual({
      code: 'conversation-not-found',
      message: 'This conversation does not exist any more.',
    })
    expect(await readFile(file, 'utf8')).toBe(text)
  })
})

describe('a turn that has not ended (openTurn)', () => {
  it('is never told for a turn this Cairn runs or ran: running, finished, stopped, or failed', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(reply.text('A reply that takes its time.', { hold }))
    const { conversationId, turnId } = await cairn.send(null, 'hello')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    // Stored with the prompt (a kill now would leave it), yet not told: this Cairn runs it.
    expect(JSON.parse(await readFile(cairn.fileOf(conversationId), 'utf8'))).toMatchObject({
      openTurn: turnId,
    })
    expect((await cairn.call('conversations:get', { id: conversationId })).openTurn).toBeUndefined()
    release()
    await cairn.finished(turnId)
    expect(JSON.parse(await readFile(cairn.fileOf(conversationId), 'utf8'))).not.toHaveProperty(
      'openTurn',
    )

    // Stopped before any word of the reply came: it ended, it was not cut off.
    cairn.fake.script(reply.raw('', { head: false, ending: 'hang' }))
    const stopped = await cairn.send(conversationId, 'more')
    await cairn.fake.waitForMessageRequests(2)
    await cairn.call('chat:stop', { conversationId })
    await cairn.finished(stopped.turnId)
    cairn.fake.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
    const failed = await cairn.turn(conversationId, 'again')
    await cairn.reopen()
    const stored = await cairn.call('conversations:get', { id: conversationId })
    expect(stored.openTurn).toBeUndefined()
    expect(stored.lastError?.turnId).toBe(failed.turnId)
    expect(JSON.parse(await readFile(cairn.fileOf(conversationId), 'utf8'))).not.toHaveProperty(
      'openTurn',
    )
  })
})

describe('an open-turn mark left beside a reply that came whole', () => {
  // The reply's last message and the end mark are two writes: Cairn killed between them (or
  // the mark's write failing) leaves the mark beside a whole reply. Saying "cut off" there
  // is false, and its Retry would have Claude do the whole turn (memory changes too) again.
  it('is not told as cut off when the turn’s last reply ended the turn', async () => {
    cairn.fake.script(reply.text('Fine, saved.'))
    const whole = await cairn.turn(null, 'hello')
    const file = cairn.fileOf(whole.conversationId)
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    expect(stored).not.toHaveProperty('openTurn')
    await cairn.reopen(async () => {
      await writeFile(file, JSON.stringify({ ...stored, openTurn: whole.turnId }))
    })
    const read = await cairn.call('conversations:get', { id: whole.conversationId })
    expect(read.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(read.openTurn).toBeUndefined()
  })

  it('is still told when the last reply asked for memory commands no result answers', async () => {
    cairn.fake.script(
      reply.message(
        [
          {
            type: 'tool_use',
            id: 'toolu_open',
            name: 'memory',
            input: { command: 'view', path: '/memories' },
          },
        ],
        'tool_use',
      ),
      reply.text('Done.'),
    )
    const turn = await cairn.turn(null, 'look')
    const file = cairn.fileOf(turn.conversationId)
    const stored = JSON.parse(await readFile(file, 'utf8')) as {
      messages: Array<{ role: string }>
    }
    // As a kill leaves it just after the reply that asked for the command was saved.
    const cut = { ...stored, messages: stored.messages.slice(0, 2), openTurn: turn.turnId }
    await cairn.reopen(async () => {
      await writeFile(file, JSON.stringify(cut))
    })
    const read = await cairn.call('conversations:get', { id: turn.conversationId })
    expect(read.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(read.openTurn).toBe(turn.turnId)
  })
})

describe('a Retry of a failed turn', () => {
  const retry = async (conversationId: string, text: string, retryOf: string) => {
    const sent = await cairn.call('chat:send', { conversationId, text, clientId: 'c-r', retryOf })
    await cairn.finished(sent.turnId)
    return sent
  }
  const userTexts = (body: unknown) =>
    (body as { messages: Array<{ role: string; content: Array<{ text?: string }> }> }).messages
      .filter((m) => m.role === 'user')
      .flatMap((m) => m.content.map((b) => b.text))

  it('stores and sends the person’s message once, in place of the one that got no reply', async () => {
    cairn.fake.script(reply.text('First.'), reply.error(529))
    const first = await cairn.turn(null, 'hello')
    const id = first.conversationId
    const failed = await cairn.turn(id, 'Are you there?')
    expect(failed.events.some((e) => e.type === 'error')).toBe(true)

    cairn.fake.script(reply.text('Yes, here now.'))
    const again = await retry(id, 'Are you there?', failed.turnId)
    const stored = await cairn.call('conversations:get', { id })
    expect(stored.messages.map((m) => [m.role, m.turnId ?? null])).toEqual([
      ['user', first.turnId],
      ['assistant', null],
      ['user', again.turnId],
      ['assistant', null],
    ])
    expect(stored.lastError).toBeUndefined()
    // What Claude was sent for the Retry: the message once, after the first exchange.
    const sent = cairn.fake.messageRequests().at(-1)!.body
    expect(userTexts(sent)).toEqual(['hello', 'Are you there?'])
    // The file on disk says the same, after a restart too.
    await cairn.reopen()
    const reread = await cairn.call('conversations:get', { id })
    expect(reread.messages.filter((m) => m.role === 'user')).toHaveLength(2)
  })

  it('keeps a prompt that part of a reply answered, and one that reads otherwise', async () => {
    cairn.fake.script(reply.error(529))
    const failed = await cairn.turn(null, 'one')
    const id = failed.conversationId
    cairn.fake.script(reply.text('Two.'))
    // Not the failed prompt's text: a new message, sent beside it as before.
    await retry(id, 'two', failed.turnId)
    const stored = await cairn.call('conversations:get', { id })
    expect(stored.messages.filter((m) => m.role === 'user')).toHaveLength(2)

    // The failed turn is no longer the last: a Retry naming it replaces nothing.
    cairn.fake.script(reply.text('Again.'))
    await retry(id, 'one', failed.turnId)
    const after = await cairn.call('conversations:get', { id })
    expect(after.messages.filter((m) => m.role === 'user')).toHaveLength(3)
  })
})
