import { describe, expect, it } from 'vitest'
import type { FileChange } from '../../../shared/types'
import {
  buildDiff,
  diffModelOf,
  LINE_EDIT_LIMIT,
  WORD_DIFF_MAX_LINE,
  type DiffLine,
  type UnifiedRow,
} from './diff-model'

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

  // The reviewer's cases: each froze the window for 9-21 s when the model was unbounded.
  it('shows a rewrite of 8,000 lines unpaired instead of searching for the best pairing', () => {
    const lines = (tag: string) =>
      Array.from({ length: 8_000 }, (_, i) => `- ${tag} note ${i}: something worth keeping\n`)
    const model = buildDiff(lines('old').join(''), lines('new').join(''))
    expect(model.unpaired).toBe(true)
    expect([model.removed, model.added]).toEqual([8_000, 8_000])
    const kinds = model.unified.map((row) => row.kind)
    expect(kinds.indexOf('add')).toBe(8_000)
    expect(kinds.lastIndexOf('del')).toBe(7_999)
    // Side by side, old line k faces new line k; nothing is compared word by word.
    expect(model.split).toHaveLength(8_000)
    expect(model.unified.every((row) => row.kind !== 'gap' && row.segments.length === 1)).toBe(true)
  })

  it('still pairs lines when the changes stay within the limit', () => {
    const before = Array.from({ length: 3_000 }, (_, i) => `line ${i}\n`)
    const after = before.map((line, i) => (i % 10 === 0 ? `changed ${line}` : line))
    const model = buildDiff(before.join(''), after.join(''))
    expect(2 * 300).toBeLessThanOrEqual(LINE_EDIT_LIMIT)
    expect(model.unpaired).toBe(false)
    expect([model.removed, model.added]).toEqual([300, 300])
    expect(changedWords(model.unified.find((row) => row.kind === 'add'))).toEqual(['changed '])
  })

  it('shows a 78 KB one-line JSON rewrite whole, without a word diff', () => {
    const json = (v: string) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`k${i}`, v + i])))
    const model = buildDiff(json('old'), json('new'))
    expect(json('old').length).toBeGreaterThan(WORD_DIFF_MAX_LINE)
    expect(model.unpaired).toBe(false)
    expect(model.coarse).toBe(true)
    expect(model.unified.map((row) => row.kind)).toEqual(['del', 'add'])
    expect(model.unified.map((row) => (row.kind === 'gap' ? 0 : row.segments.length))).toEqual([
      1, 1,
    ])
  })

  it('shows a short line whose words all changed whole rather than as a confetti of marks', () => {
    const words = (tag: string) => Array.from({ length: 300 }, (_, i) => `${tag}${i}`).join(' ')
    const model = buildDiff(`${words('a')}\n`, `${words('b')}\n`)
    expect(words('a').length).toBeLessThan(WORD_DIFF_MAX_LINE)
    expect(model.coarse).toBe(true)
    expect(changedWords(model.unified[0])).toEqual([])
  })

  it("computes one change's model once, for its header and its diff alike", () => {
    const change: FileChange = {
      path: '/memories/a.md',
      oldPath: null,
      status: 'modified',
      before: 'a\n',
      after: 'b\n',
      binary: false,
    }
    expect(diffModelOf(change)).toBe(diffModelOf(change))
    expect(diffModelOf({ ...change })).not.toBe(diffModelOf(change))
  })
})

describe('a very long hunk', () => {
  it('builds the diff of a 200,000-line file deleted whole', () => {
    const text = Array.from({ length: 200_000 }, (_, i) => `entry ${i}\n`).join('')
    const model = buildDiff(text, null)
    expect(model.removed).toBe(200_000)
    expect(model.added).toBe(0)
  })
})
