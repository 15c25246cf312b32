import { describe, expect, it } from 'vitest'
import { summarizeTool } from './tool-summary'

describe('tool card summaries', () => {
  it('describes a view range of whole numbers', () => {
    expect(summarizeTool('view', { path: '/memories/a.md', view_range: [3, 5] }).detail).toBe(
      'lines 3–5',
    )
    expect(summarizeTool('view', { path: '/memories/a.md', view_range: [7, -1] }).detail).toBe(
      'lines from 7 on',
    )
  })

  // The model's input is stored raw; the card is drawn again each time the conversation opens
  // (review hunt12-story D9).
  it('never throws on hostile input shapes, and describes none of them', () => {
    const hostile: unknown[] = [
      [{ toString: 1 }, 5],
      [1, { valueOf: 'x', toString: null }],
      [Object.create(null), 2],
      [1.5, 2],
      ['1', '2'],
      [null, undefined],
      [[1], [2]],
    ]
    for (const range of hostile) {
      const input = { command: 'view', path: '/memories/a.md', view_range: range }
      expect(() => summarizeTool('view', input)).not.toThrow()
      expect(summarizeTool('view', input).detail).toBeNull()
    }
    const odd: unknown[] = [
      null,
      42,
      'text',
      [],
      { path: { toString: 1 } },
      { path: ['x'], file_text: { length: 3 } },
      { old_path: { toString: 1 }, new_path: 7 },
      { insert_line: { valueOf: 1 } },
    ]
    for (const command of [
      'view',
      'create',
      'str_replace',
      'insert',
      'delete',
      'rename',
      '__proto__',
    ]) {
      for (const input of odd) {
        const summary = summarizeTool(command, input)
        expect(typeof summary.target).toBe('string')
        expect(summary.detail === null || typeof summary.detail === 'string').toBe(true)
      }
    }
  })
})
