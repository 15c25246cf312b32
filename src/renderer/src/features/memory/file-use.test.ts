import { describe, expect, it } from 'vitest'
import { filesByUse, tokensLabel } from './file-use'

describe('files by use', () => {
  const DAY = 24 * 60 * 60 * 1000
  const now = 100 * DAY
  const file = (path: string, lastReadAt: number | null, size = 10, overViewLimit = false) => ({
    path,
    size,
    modifiedAt: 0,
    lastReadAt,
    lastChangedAt: null,
    tokens: 1,
    overViewLimit,
  })
  const files = [
    file('/memories/b.md', now - 2 * DAY),
    file('/memories/a.md', now - 40 * DAY, 30, true),
    file('/memories/c.md', null, 20),
  ]
  const options = { order: 'name', notReadInDays: null, oversizedOnly: false, now } as const

  it('sorts by last read, never read first, oldest next', () => {
    expect(filesByUse(files, { ...options, order: 'last-read' }).map((f) => f.path)).toEqual([
      '/memories/c.md',
      '/memories/a.md',
      '/memories/b.md',
    ])
    expect(filesByUse(files, { ...options, order: 'size' }).map((f) => f.path)).toEqual([
      '/memories/a.md',
      '/memories/c.md',
      '/memories/b.md',
    ])
  })

  it('filters to files not read in N days, or too long for one view', () => {
    expect(filesByUse(files, { ...options, notReadInDays: 30 }).map((f) => f.path)).toEqual([
      '/memories/a.md',
      '/memories/c.md',
    ])
    expect(filesByUse(files, { ...options, oversizedOnly: true }).map((f) => f.path)).toEqual([
      '/memories/a.md',
    ])
  })

  it('rounds token counts for the meter', () => {
    expect(tokensLabel(1)).toBe('about 1 token')
    expect(tokensLabel(840)).toBe('about 840 tokens')
    expect(tokensLabel(12_345)).toBe('about 12,300 tokens')
  })
})
