import { describe, expect, it } from 'vitest'
import { buildDiff, type DiffLine, type UnifiedRow } from './diff-model'

const text = (row: UnifiedRow): string =>
  row.kind === 'gap' ? `…${row.count}` : row.segments.map((s) => s.text).join('')
const changedWords = (row: UnifiedRow | null | undefined): string[] =>
  row && row.kind !== 'gap' ? row.segments.filter((s) => s.changed).map((s) => s.text) : []

describe('buildDiff', () => {
  it('shows a new file as added lines numbered from 1', () => {
    const model = buildDiff(null, 'a\nb\n')
    expect(model.unified.map((row) => row.kind)).toEqual(['add', 'add'])
    expect(model.unified.map((row) => (row as DiffLine).newNo)).toEqual([1, 2])
    expect(model.added).toBe(2)
    expect(model.removed).toBe(0)
  })

  it('shows a deleted file as removed lines', () => {
    const model = buildDiff('x\ny', null)
    expect(model.unified.map(text)).toEqual(['x', 'y'])
    expect(model.removed).toBe(2)
    expect(model.split).toEqual([
      { kind: 'pair', left: model.unified[0], right: null },
      { kind: 'pair', left: model.unified[1], right: null },
    ])
  })

  it('highlights only the words that changed inside a changed line', () => {
    const model = buildDiff('I like tea\n', 'I like green tea\n')
    const [del, add] = model.unified
    expect(del?.kind).toBe('del')
    expect(add?.kind).toBe('add')
    expect(changedWords(del)).toEqual([])
    expect(changedWords(add).join('')).toBe('green ')
    expect(text(add!)).toBe('I like green tea')
  })

  it('pairs removed and added lines side by side', () => {
    const model = buildDiff('a\nold\nz\n', 'a\nnew\nz\n')
    const pairs = model.split.filter((row) => row.kind === 'pair')
    expect(pairs.map((p) => [p.left && text(p.left), p.right && text(p.right)])).toEqual([
      ['a', 'a'],
      ['old', 'new'],
      ['z', 'z'],
    ])
    expect(changedWords(pairs[1]?.left)).toEqual(['old'])
  })

  it('folds long unchanged runs into a gap, keeping context around the change', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')
    const after = before.replace('line 10', 'line ten')
    const model = buildDiff(before, after, 2)
    expect(model.unified.map(text)).toEqual([
      '…7',
      'line 8',
      'line 9',
      'line 10',
      'line ten',
      'line 11',
      'line 12',
      '…8',
    ])
    const numbered = model.unified.find((row) => row.kind === 'context') as DiffLine
    expect([numbered.oldNo, numbered.newNo]).toEqual([8, 8])
  })

  it('reports no rows for identical content', () => {
    expect(buildDiff('same\n', 'same\n').added).toBe(0)
    expect(buildDiff('same\n', 'same\n').unified.map(text)).toEqual(['same'])
  })
})
