import { describe, expect, it } from 'vitest'
import { displayPath, relativeTime } from './format'

describe('format', () => {
  it('words elapsed time the way people say it', () => {
    const now = Date.UTC(2026, 5, 15, 12)
    expect(relativeTime(now - 5_000, now)).toBe('just now')
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago')
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago')
    expect(relativeTime(now - 30 * 3_600_000, now)).toBe('yesterday')
    expect(relativeTime(now - 4 * 86_400_000, now)).toBe('4 days ago')
  })

  it('shows memory paths relative to the memory root, the root itself whole', () => {
    expect(displayPath('/memories/notes/a.md')).toBe('notes/a.md')
    expect(displayPath('/memories')).toBe('/memories')
  })
})
