import { describe, expect, it } from 'vitest'
import { rowsToDraw } from './windowing'

describe('rowsToDraw', () => {
  it('draws the rows in view and their margin, and no others', () => {
    expect(rowsToDraw({ start: 10, end: 14 }, 3_000, [])).toEqual([10, 11, 12, 13, 14])
  })

  it('keeps a pinned row above or below the window, in order, once', () => {
    expect(rowsToDraw({ start: 10, end: 12 }, 3_000, [2_999, 3, 11, 3])).toEqual([
      3, 10, 11, 12, 2_999,
    ])
  })

  it('never names a row that does not exist', () => {
    expect(rowsToDraw({ start: 0, end: 40 }, 3, [-1, 3, 7, 1.5, NaN])).toEqual([0, 1, 2])
    expect(rowsToDraw({ start: -1, end: -1 }, 0, [0])).toEqual([])
  })

  it('draws only pinned rows when nothing is in view', () => {
    expect(rowsToDraw({ start: -1, end: -1 }, 100, [42])).toEqual([42])
  })

  it('stays small however long the list is', () => {
    const drawn = rowsToDraw({ start: 19_950, end: 19_999 }, 20_000, [0])
    expect(drawn).toHaveLength(51)
    expect(drawn[0]).toBe(0)
    expect(drawn.at(-1)).toBe(19_999)
  })
})
