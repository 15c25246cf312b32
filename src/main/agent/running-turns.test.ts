/**
 * `chat:running`: a window that opens (or reloads) while a turn runs asks which turns run and
 * gets each with its events so far; with the live events from `next` on, it has the whole turn,
 * nothing missing and nothing twice. The real core on a temp folder, the fake Messages API.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-running-' })

/** What a window draws from events: the reply's text, the calls with their results, the end. */
function drawn(events: ReadonlyArray<AgentEvent>) {
  let text = ''
  const calls: string[] = []
  let finished = false
  for (const event of events) {
    if (event.type === 'text-delta') text += event.text
    if (event.type === 'tool-call') calls.push(`${event.command} ${event.toolUseId}`)
    if (event.type === 'tool-result') calls.push(`result ${event.toolUseId} ${event.isError}`)
    if (event.type === 'turn-finished') finished = true
  }
  return { text, calls, finished }
}

describe('chat:running', () => {
  it('answers nothing when no turn runs', async () => {
    expect(await cairn.call('chat:running')).toEqual([])
    await cairn.turn(null, 'Hello')
    expect(await cairn.call('chat:running')).toEqual([])
  })

  it('refuses a payload, changing nothing', async () => {
    const result = await cairn.core.dispatch('chat:running', { conversationId: 'c_1' })
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error.code).toBe('invalid-payload')
  })

  it('gives a running turn’s text and tool calls so far; the live events go on from next', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_notes',
        input: { command: 'create', path: '/memories/notes.md', file_text: 'likes tea\n' },
      }),
      reply.text('Noted that you like tea, and here is a longer answer about it.', { hold }),
    )
    const { conversationId, turnId } = await cairn.send(null, 'I like tea')
    const mine = () => cairn.events.filter((e) => e.turnId === turnId)
    await cairn.until(() => mine().some((e) => e.type === 'text-delta'))

    const running = await cairn.call('chat:running')
    expect(running).toHaveLength(1)
    const [turn] = running
    expect(turn).toMatchObject({ conversationId, turnId })
    expect(turn.events[0]).toMatchObject({ type: 'turn-started', userText: 'I like tea', seq: 0 })
    // Every live event so far is in the answer (text deltas joined), and none after it.
    const before = mine()
    expect(turn.next).toBe(before.length)
    expect(drawn(turn.events)).toEqual(drawn(before))
    expect(drawn(turn.events).calls).toEqual(['create toolu_notes', 'result toolu_notes false'])
    expect(drawn(turn.events).text.length).toBeGreaterThan(0)

    release()
    const all = await cairn.finished(turnId)
    // Numbered 0, 1, 2, … in the order sent: the answer plus the live events from `next` on
    // draw exactly what a window that saw every event draws.
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i))
    const caughtUp = drawn([...turn.events, ...all.filter((e) => e.seq >= turn.next)])
    expect(caughtUp).toEqual(drawn(all))
    expect(caughtUp.text).toBe('Noted that you like tea, and here is a longer answer about it.')
    expect(caughtUp.finished).toBe(true)
    expect(await cairn.call('chat:running')).toEqual([])
  })

  it('names each running turn by its conversation, and forgets a stopped one', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(reply.text('First of two slow answers, still being written.', { hold }))
    const first = await cairn.send(null, 'One')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === first.turnId && e.type === 'text-delta'),
    )
    cairn.fake.script(reply.text('Second of two slow answers, still being written.', { hold }))
    const second = await cairn.send(null, 'Two')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === second.turnId && e.type === 'text-delta'),
    )
    const running = await cairn.call('chat:running')
    expect(running.map((t) => [t.conversationId, t.turnId]).sort()).toEqual(
      [
        [first.conversationId, first.turnId],
        [second.conversationId, second.turnId],
      ].sort(),
    )

    await cairn.call('chat:stop', { conversationId: first.conversationId })
    const stopped = await cairn.finished(first.turnId)
    expect(stopped.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    expect((await cairn.call('chat:running')).map((t) => t.turnId)).toEqual([second.turnId])
    release()
    await cairn.finished(second.turnId)
    expect(await cairn.call('chat:running')).toEqual([])
  })
})
