import { describe, expect, it } from 'vitest'
import { momentOf } from './read'

describe('momentOf', () => {
  it('names a time no date can hold as unknown, never "Invalid Date"', () => {
    // 99999999999999 s, as a crafted commit's author line may say, in ms.
    for (const time of [99_999_999_999_999_000, Number.NaN, Infinity]) {
      expect(momentOf(time), String(time)).toBe('an unknown time')
    }
    expect(momentOf(Date.UTC(2026, 10, 3, 14, 2))).toMatch(/3/)
    expect(momentOf(0)).not.toBe('an unknown time')
  })
})
