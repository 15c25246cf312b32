import { describe, expect, it } from 'vitest'
import type { StoredMessage } from '../../shared/types'
import type { BetaContentBlock } from '@anthropic-ai/sdk/resources/beta'
import {
  fromApiContent,
  recordedResult,
  RESULT_NOT_RECORDED,
  resultText,
  toApiMessages,
  toolResultsFor,
  unansweredCalls,
  withAnswers,
} from './messages'

const text = (role: 'user' | 'assistant', value: string): StoredMessage => ({
  role,
  content: [{ type: 'text', text: value }],
  createdAt: 0,
})

const call = (id: string): StoredMessage => ({
  role: 'assistant',
  content: [
    { type: 'tool_use', id, name: 'memory', input: { command: 'view', path: '/memories' } },
  ],
  createdAt: 0,
})

describe('toApiMessages', () => {
  it('merges consecutive messages of one role (a stopped turn leaves two user messages)', () => {
    expect(toApiMessages([text('user', 'a'), text('user', 'b'), text('assistant', 'c')])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
    ])
  })

  it('answers a dangling tool_use (crash mid-turn) so the next request is valid', () => {
    const sent = toApiMessages([text('user', 'hi'), call('toolu_1'), text('user', 'hello?')])
    expect(sent).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_1',
            name: 'memory',
            input: { command: 'view', path: '/memories' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: RESULT_NOT_RECORDED,
            is_error: true,
          },
          { type: 'text', text: 'hello?' },
        ],
      },
    ])
  })

  it('drops tool results whose call is not right before them, and empty messages', () => {
    const orphan: StoredMessage = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'ok', is_error: false }],
      createdAt: 0,
    }
    const empty: StoredMessage = { role: 'assistant', content: [], createdAt: 0 }
    expect(toApiMessages([text('user', 'a'), empty, orphan])).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
    ])
  })

  it('sends is_error only when true, like the SDK runner does', () => {
    const results: StoredMessage = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'fine', is_error: false }],
      createdAt: 0,
    }
    const [, , answer] = toApiMessages([text('user', 'q'), call('toolu_1'), results])
    expect(answer?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'fine' },
    ])
  })
})

describe('toolResultsFor', () => {
  it('uses recorded results and marks the calls that never ran', () => {
    const reply: StoredMessage = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'a', name: 'memory', input: {} },
        { type: 'tool_use', id: 'b', name: 'memory', input: {} },
      ],
      createdAt: 0,
    }
    const message = toolResultsFor(
      reply,
      new Map([['a', { content: 'done', isError: false }]]),
      'not run',
      5,
    )
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'done', is_error: false },
        { type: 'tool_result', tool_use_id: 'b', content: 'not run', is_error: true },
      ],
      createdAt: 5,
    })
    expect(toolResultsFor(text('assistant', 'x'), new Map(), 'n', 0)).toBeNull()
  })
})

describe('resultText', () => {
  it('keeps text and stands in for images', () => {
    expect(resultText('plain')).toBe('plain')
    expect(
      resultText([
        { type: 'text', text: 'Image:' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } },
      ]),
    ).toBe('Image:\n[image]')
  })
})

describe('toApiMessages and lone surrogates', () => {
  it('resends a stored conversation holding half a surrogate pair well-formed (D1)', () => {
    // Saved before the tool cut text safely: without this the API refuses every later turn.
    const stored: StoredMessage[] = [
      text('user', 'hi \uD83D'),
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 't1',
            name: 'memory',
            input: { command: 'x\uD83D', nested: ['\uDE00'] },
          },
        ],
        createdAt: 0,
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'Unknown `x\uD83D`', is_error: true },
        ],
        createdAt: 0,
      },
    ]
    const api = toApiMessages(stored)
    const json = JSON.stringify(api)
    expect(json).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i)
    expect(json).not.toMatch(/[\uD800-\uDFFF]/)
    expect(api[0]!.content).toEqual([{ type: 'text', text: 'hi \uFFFD' }])
    expect(api[1]!.content[0]).toMatchObject({ input: { command: 'x\uFFFD', nested: ['\uFFFD'] } })
    expect(api[2]!.content[0]).toMatchObject({ content: 'Unknown `x\uFFFD`' })
  })
})

describe('fromApiContent', () => {
  it('keeps only what the conversation file can be read back with', () => {
    const odd = [
      { type: 'text' },
      { type: 'text', text: 'ok' },
      { type: 'tool_use', id: 'toolu_noname', input: {} },
      { type: 'tool_use', id: 'toolu_1', name: 'memory', input: { command: 'view' } },
    ] as unknown as BetaContentBlock[]
    expect(fromApiContent(odd)).toEqual([
      { type: 'text', text: '' },
      { type: 'text', text: 'ok' },
      { type: 'tool_use', id: 'toolu_1', name: 'memory', input: { command: 'view' } },
    ])
  })
})

describe('calls whose results were not saved', () => {
  const two: StoredMessage = {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'toolu_a', name: 'memory', input: {} },
      { type: 'tool_use', id: 'toolu_x', name: 'web_search', input: {} },
      { type: 'tool_use', id: 'toolu_b', name: 'memory', input: {} },
    ],
    createdAt: 5,
  }

  it('lists the memory calls no result answers', () => {
    expect(unansweredCalls([text('user', 'hi'), two, text('user', 'next')])).toEqual([
      'toolu_a',
      'toolu_b',
    ])
    expect(unansweredCalls([text('user', 'hi'), call('toolu_1'), results('toolu_1')])).toEqual([])
  })

  it('answers them right after the reply that made them, leaving other calls as they were', () => {
    const stored = [text('user', 'hi'), two, text('user', 'next')]
    const answered = withAnswers(
      stored,
      new Map([
        ['toolu_b', { content: 'B', isError: false }],
        ['toolu_a', { content: 'A', isError: true }],
      ]),
    )
    expect(answered).toEqual([
      stored[0],
      two,
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A', is_error: true },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B', is_error: false },
        ],
        createdAt: 5,
      },
      stored[2],
    ])
    expect(
      withAnswers(answered, new Map([['toolu_a', { content: 'again', isError: false }]])),
    ).toEqual(answered)
  })

  it("says what a commit did in the Memory tool's words only where they are known exactly", () => {
    const commit = (command: string, paths: string[], overwrite = false) =>
      recordedResult({ command: command as never, paths, overwrite })
    expect(commit('create', ['/memories/a.md'])).toBe(
      'File created successfully at: /memories/a.md',
    )
    expect(commit('insert', ['/memories/a.md'])).toBe('The file /memories/a.md has been edited.')
    expect(commit('delete', ['/memories/d'])).toBe('Successfully deleted /memories/d')
    expect(commit('rename', ['/memories/a.md', '/memories/b.md'])).toBe(
      'Successfully renamed /memories/a.md to /memories/b.md',
    )
    expect(commit('create', ['/memories/a.md'], true)).toBe(
      'This command ran: it changed /memories/a.md (saved in history).',
    )
    expect(commit('str_replace', ['/memories/a.md'])).toBe(
      'This command ran: it changed /memories/a.md (saved in history).',
    )
  })
})

function results(...ids: string[]): StoredMessage {
  return {
    role: 'user',
    content: ids.map((id) => ({
      type: 'tool_result',
      tool_use_id: id,
      content: 'ok',
      is_error: false,
    })),
    createdAt: 0,
  }
}
