import { describe, expect, it } from 'vitest'
import type { AgentEvent, RunningTurn } from '../../../../shared/types'
import { withEvent, withRunning, type TurnsByConversation } from './live-turn-state'

type Body = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, 'conversationId' | 'turnId' | 'seq'>
    : never
  : never

/** The events of one turn in conversation c1, numbered as main numbers them. */
const turnEvents = (turnId: string, bodies: ReadonlyArray<Body>): AgentEvent[] =>
  bodies.map((body, seq) => ({ ...body, conversationId: 'c1', turnId, seq }) as AgentEvent)

const events = turnEvents('t1', [
  { type: 'turn-started', userText: 'Tell me', memoryAt: null, clientId: 'x' },
  { type: 'text-delta', text: 'Once ' },
  { type: 'tool-call', toolUseId: 'tu1', command: 'view', input: { command: 'view' } },
  { type: 'tool-result', toolUseId: 'tu1', content: 'ok', isError: false, commitOid: null },
  { type: 'text-delta', text: 'upon ' },
  { type: 'text-delta', text: 'a time' },
  { type: 'turn-finished', stopped: false },
])

const applyAll = (list: ReadonlyArray<AgentEvent>, start: TurnsByConversation = {}) =>
  list.reduce(withEvent, start)

/** What main answers when the first `count` events have been told (text deltas joined). */
function runningAfter(count: number): RunningTurn {
  const told: AgentEvent[] = []
  for (const event of events.slice(0, count)) {
    const last = told.at(-1)
    if (event.type === 'text-delta' && last?.type === 'text-delta') {
      told[told.length - 1] = { ...last, text: last.text + event.text }
    } else told.push(event)
  }
  return { conversationId: 'c1', turnId: 't1', events: told, next: count }
}

describe('withEvent', () => {
  it('skips an event the turn already holds', () => {
    const once = applyAll(events.slice(0, 3))
    expect(applyAll([events[1], events[2]], once)).toBe(once)
    expect(once.c1.items.map((item) => item.kind)).toEqual(['text', 'tool'])
  })
})

describe('withRunning', () => {
  const whole = applyAll(events).c1

  it('rebuilds a turn the window opened in the middle of', () => {
    const state = withRunning({}, [runningAfter(5)], [])
    expect(state.c1).toMatchObject({ userText: 'Tell me', finished: false, next: 5 })
    const rest = applyAll(events.slice(5), state).c1
    expect(rest.items).toEqual(whole.items)
    expect(rest.finished).toBe(true)
  })

  // The events that came while the question was out: the window applied them already (from
  // the middle of the turn), and main's answer may or may not include each.
  it.each([2, 3, 4, 5, 6])(
    'neither loses nor doubles events that came while asking (answer after %i)',
    (told) => {
      const arrived = events.slice(2)
      const before = applyAll(arrived)
      const state = withRunning(before, [runningAfter(told)], arrived)
      expect(state.c1.items).toEqual(whole.items)
      expect(state.c1.finished).toBe(true)
      expect(state.c1.userText).toBe('Tell me')
    },
  )

  it('keeps a turn the window already has whole', () => {
    const state = applyAll(events.slice(0, 4))
    expect(withRunning(state, [runningAfter(3)], events.slice(0, 4))).toBe(state)
  })

  it('leaves a newer turn of the same conversation alone', () => {
    const newer = applyAll(
      turnEvents('t2', [{ type: 'turn-started', userText: 'Next', memoryAt: null, clientId: 'y' }]),
    )
    expect(withRunning(newer, [runningAfter(3)], [])).toBe(newer)
  })

  // Two quick sends, the window reloaded between: main answered while the first turn ran; by
  // the time the answer is read, the first ended and the second began (and maybe ended too).
  const second = turnEvents('t2', [
    { type: 'turn-started', userText: 'Next', memoryAt: null, clientId: 'y' },
    { type: 'text-delta', text: 'Second reply' },
    { type: 'error', code: 'overloaded', message: 'Overloaded.' },
    { type: 'turn-finished', stopped: false },
  ])
  it.each([1, 2, 4])(
    'never shows the older turn as the current one when the answer comes late (%i of the newer’s events)',
    (count) => {
      const arrived = [...events.slice(4), ...second.slice(0, count)]
      const before = applyAll(arrived)
      expect(before.c1.turnId).toBe('t2')
      const state = withRunning(before, [runningAfter(4)], arrived)
      expect(state.c1).toBe(before.c1)
      expect(state.c1).toMatchObject({ turnId: 't2', userText: 'Next' })
      // Events of the newer turn still to come apply to it.
      const after = applyAll(second.slice(count), state).c1
      expect(after).toMatchObject({ turnId: 't2', finished: true })
      expect(after.error?.code).toBe('overloaded')
    },
  )

  it('rebuilds the answered turn when an older turn’s events came first', () => {
    const older = turnEvents('t0', [
      { type: 'turn-started', userText: 'Before', memoryAt: null, clientId: 'z' },
      { type: 'turn-finished', stopped: false },
    ])
    const arrived = [...older, ...events.slice(0, 3)]
    const state = withRunning(applyAll(arrived), [runningAfter(2)], arrived)
    expect(state.c1).toMatchObject({ turnId: 't1', userText: 'Tell me', next: 3 })
  })
})
