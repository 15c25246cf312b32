import { describe, expect, it } from 'vitest'
import { findInLines, linesOf, MAX_FIND_HITS, widestLine } from './file-lines'

describe('linesOf', () => {
  it('opens no line after the last line end, and keeps blank lines before it', () => {
    expect(linesOf('a\nb\n')).toEqual(['a', 'b'])
    expect(linesOf('a\n\n')).toEqual(['a', ''])
    expect(linesOf('')).toEqual([''])
    expect(linesOf('\n')).toEqual([''])
  })
})

describe('widestLine', () => {
  it('counts a tab to the next multiple of eight columns', () => {
    expect(widestLine(['abc', 'abcdef'])).toBe(6)
    expect(widestLine(['ab\tc'])).toBe(9)
    expect(widestLine(['\t\t'])).toBe(16)
    expect(widestLine([])).toBe(0)
  })
})

describe('findInLines', () => {
  it('finds every place in reading order, ignoring case', () => {
    expect(
      findInLines(['Kingfisher and kingfisher', 'none', 'a KINGFISHER'], 'kingFISHER'),
    ).toEqual({
      hits: [
        { line: 0, column: 0, length: 10 },
        { line: 0, column: 15, length: 10 },
        { line: 2, column: 2, length: 10 },
      ],
      more: false,
    })
  })

  it('finds nothing for no words, and places do not overlap', () => {
    expect(findInLines(['abc'], '').hits).toEqual([])
    expect(findInLines(['aaaa'], 'aa').hits.map((hit) => hit.column)).toEqual([0, 2])
  })

  it('marks a line whole when a lower-cased letter grows longer than it was', () => {
    expect(findInLines(['İstanbul is here'], 'here').hits).toEqual([
      { line: 0, column: 0, length: 16 },
    ])
  })

  it(`stops at ${MAX_FIND_HITS} places and says there are more`, () => {
    const found = findInLines(
      Array.from({ length: MAX_FIND_HITS + 5 }, () => 'x'),
      'x',
    )
    expect(found.hits).toHaveLength(MAX_FIND_HITS)
    expect(found.more).toBe(true)
  })
})
