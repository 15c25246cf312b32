import { describe, expect, it } from 'vitest'
import type { AgentEvent, StoredMessage } from '../../../../shared/types'
import {
  addUsage,
  applyAgentEvent,
  isSettingsProblem,
  startLiveTurn,
  storedBeforeTurn,
  turnFromLive,
  turnsFromStored,
} from './transcript-model'
import { previewResult, summarizeTool } from './tool-summary'

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
})

const stored: StoredMessage[] = [
  {
    role: 'user',
    content: [{ type: 'text', text: 'Remember Python' }],
    createdAt: 1,
    turnId: 't0',
  },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Saving.' },
      {
        type: 'tool_use',
        id: 'tu_1',
        name: 'memory',
        input: { command: 'create', path: '/memories/notes.md', file_text: 'a\nb' },
      },
    ],
    usage: usage(10, 5),
    stopReason: 'tool_use',
    createdAt: 2,
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'tu_1', content: 'File created', is_error: false },
    ],
    createdAt: 3,
  },
  {
    role: 'assistant',
    content: [{ type: 'text', text: 'Done.' }],
    usage: usage(20, 3),
    stopReason: 'end_turn',
    createdAt: 4,
  },
  { role: 'user', content: [{ type: 'text', text: 'Thanks' }], createdAt: 5, turnId: 't1' },
]

const event = (e: Record<string, unknown>): AgentEvent =>
  ({ conversationId: 'c1', turnId: 't1', ...e }) as AgentEvent

describe('turnsFromStored', () => {
  it('groups messages into turns that start at each typed prompt', () => {
    const turns = turnsFromStored(stored, { tu_1: 'a'.repeat(40) })
    expect(turns.map((t) => t.userText)).toEqual(['Remember Python', 'Thanks'])
    expect(turns[1]!.items).toEqual([])
  })

  it('pairs each memory command with its result and commit', () => {
    const [first] = turnsFromStored(stored, { tu_1: 'a'.repeat(40) })
    const tool = first!.items.find((i) => i.kind === 'tool')
    expect(tool).toMatchObject({
      command: 'create',
      result: { content: 'File created', isError: false },
      commitOid: 'a'.repeat(40),
    })
    expect(first!.items.map((i) => i.kind)).toEqual(['text', 'tool', 'text'])
  })

  it('sums token usage over every response of a turn', () => {
    const [first] = turnsFromStored(stored, {})
    expect(first!.usage).toEqual(usage(30, 8))
    expect(first!.stopReason).toBe('end_turn')
  })

  it('leaves a command without a stored result unanswered', () => {
    const [first] = turnsFromStored(stored.slice(0, 2), {})
    expect(first!.items.find((i) => i.kind === 'tool')).toMatchObject({ result: null })
  })
})

describe('applyAgentEvent', () => {
  it('streams text deltas into one growing text item', () => {
    let turn = startLiveTurn(event({ type: 'turn-started', userText: 'Hi' }))
    turn = applyAgentEvent(turn, event({ type: 'text-delta', text: 'Hel' }))
    turn = applyAgentEvent(turn, event({ type: 'text-delta', text: 'lo' }))
    expect(turnFromLive(turn).items).toEqual([
      expect.objectContaining({ kind: 'text', text: 'Hello' }),
    ])
    expect(turnFromLive(turn).userText).toBe('Hi')
  })

  it('starts a new text item after a tool call and fills in the tool result', () => {
    let turn = startLiveTurn(event({ type: 'turn-started', userText: 'Hi' }))
    turn = applyAgentEvent(turn, event({ type: 'text-delta', text: 'A' }))
    turn = applyAgentEvent(
      turn,
      event({ type: 'tool-call', toolUseId: 'tu', command: 'str_replace', input: {} }),
    )
    turn = applyAgentEvent(
      turn,
      event({
        type: 'tool-result',
        toolUseId: 'tu',
        content: 'No replacement was performed',
        isError: true,
        commitOid: null,
      }),
    )
    turn = applyAgentEvent(turn, event({ type: 'text-delta', text: 'B' }))
    expect(turn.items.map((i) => i.kind)).toEqual(['text', 'tool', 'text'])
    expect(turn.items[1]).toMatchObject({ result: { isError: true } })
    expect(new Set(turn.items.map((i) => i.key)).size).toBe(3)
  })

  it('records usage, errors and the end of the turn', () => {
    let turn = startLiveTurn(event({ type: 'turn-started', userText: 'Hi' }))
    turn = applyAgentEvent(
      turn,
      event({ type: 'message-finished', stopReason: 'end_turn', usage: usage(3, 4) }),
    )
    turn = applyAgentEvent(turn, event({ type: 'error', code: 'invalid-api-key', message: 'x' }))
    turn = applyAgentEvent(turn, event({ type: 'turn-finished', stopped: true }))
    expect(turn).toMatchObject({
      usage: usage(3, 4),
      error: { code: 'invalid-api-key' },
      finished: true,
      stopped: true,
    })
  })
})

describe('storedBeforeTurn', () => {
  it('cuts the stored copy of the running turn at its prompt', () => {
    expect(storedBeforeTurn(stored, 't1')).toHaveLength(4)
    expect(storedBeforeTurn(stored, 't0')).toHaveLength(0)
  })

  it('keeps everything when the running prompt is not stored yet', () => {
    expect(storedBeforeTurn(stored, 't2')).toHaveLength(5)
  })

  it('tells two turns with the same words apart', () => {
    const again: StoredMessage[] = [
      ...stored,
      { role: 'assistant', content: [{ type: 'text', text: 'Welcome.' }], createdAt: 6 },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }], createdAt: 7, turnId: 't2' },
    ]
    expect(storedBeforeTurn(again, 't1')).toHaveLength(4)
    expect(storedBeforeTurn(again, 't2')).toHaveLength(6)
  })
})

describe('summaries', () => {
  it('names both paths of a rename and the size of a create', () => {
    expect(
      summarizeTool('rename', { old_path: '/memories/a', new_path: '/memories/b' }).target,
    ).toBe('/memories/a → /memories/b')
    expect(summarizeTool('create', { path: '/memories/x', file_text: 'a\nb' })).toEqual({
      target: '/memories/x',
      detail: '2 lines',
      mutating: true,
    })
    expect(summarizeTool('view', {}).mutating).toBe(false)
    expect(summarizeTool('create', { path: '/memories/x', file_text: 'one\n' }).detail).toBe(
      '1 line',
    )
  })

  it('words a view_range as lines of a file or entries of a listing, "from N on" to the end', () => {
    const fileView = "Here's the content of /memories/a.md with line numbers:\n   577\tx"
    const listing =
      "Here're the files and directories up to 2 levels deep in /memories/notes, excluding hidden items and node_modules:\n4.0K\t/memories/notes"
    const detail = (path: string, view_range: unknown, result: string | null = null) =>
      summarizeTool('view', { path, view_range }, result).detail
    expect(detail('/memories/a.md', [577, -1])).toBe('lines from 577 on')
    expect(detail('/memories/a.md', [577, -1], fileView)).toBe('lines from 577 on')
    expect(detail('/memories/a.md', [2, 4], fileView)).toBe('lines 2–4')
    expect(detail('/memories/a.md', [7, 7])).toBe('line 7')
    // A folder named without a slash is known for one only once its listing is back.
    expect(detail('/memories/notes', [519, -1], listing)).toBe('entries from 519 on')
    expect(detail('/memories/notes', [519, 650], listing)).toBe('entries 519–650')
    expect(detail('/memories', [519, -1])).toBe('entries from 519 on')
    expect(detail('/memories/notes/', [1, 1])).toBe('entry 1')
    expect(detail('/memories/notes', [1, 2])).toBe('lines 1–2')
    expect(detail('/memories/a.md', [1])).toBeNull()
    expect(detail('/memories/a.md', undefined)).toBeNull()
  })

  it('previews the first lines of a result', () => {
    expect(previewResult('1\n2\n3\n4', 2)).toEqual({ text: '1\n2', more: true })
    expect(previewResult('1', 2)).toEqual({ text: '1', more: false })
  })

  it('sends key and model problems to settings, others not', () => {
    expect(isSettingsProblem('invalid-api-key')).toBe(true)
    expect(isSettingsProblem('no-api-key')).toBe(true)
    expect(isSettingsProblem('rate-limited')).toBe(false)
  })

  it('adds usages, treating null as nothing', () => {
    expect(addUsage(null, null)).toBeNull()
    expect(addUsage(usage(1, 1), usage(2, 2))).toEqual(usage(3, 3))
  })
})
