import { describe, expect, it } from 'vitest'
import {
  clockTime,
  dateTimeAttr,
  dayHeading,
  displayPath,
  exactTime,
  relativeTime,
  shortDateTime,
  visibleLines,
  visibleName,
} from './format'

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

  it('draws characters that show as nothing as their escapes, as Claude is told them', () => {
    expect(displayPath('/memories/notes\u200B.md')).toBe('notes\\u200B.md')
    expect(displayPath('/memories/\uFEFFplan.md')).toBe('\\uFEFFplan.md')
    expect(displayPath('/memories/notes\u200B.md')).not.toBe(displayPath('/memories/notes.md'))
    expect(visibleName('a\u2066b\u{E0041}.md')).toBe('a\\u2066b\\u{E0041}.md')
    expect(visibleName('n\u00e4me \u{1F600}.md')).toBe('n\u00e4me \u{1F600}.md')
  })

  it('names a time no date can hold as unknown, and never throws on it', () => {
    const now = Date.UTC(2026, 5, 15, 12)
    // A commit dated 99999999999999 s (a crafted history): past JavaScript's date range.
    for (const time of [99_999_999_999_999_000, -99_999_999_999_999_000, Number.NaN]) {
      expect(dateTimeAttr(time)).toBeUndefined()
      expect(relativeTime(time, now)).toBe('an unknown time')
      expect(shortDateTime(time, now)).toBe('an unknown time')
      expect(clockTime(time)).toBe('an unknown time')
      expect(exactTime(time)).toBe('an unknown time')
      expect(dayHeading(time, now)).toBe('Unknown date')
    }
    // The edge of the range is still a date.
    expect(dateTimeAttr(8.64e15)).toBe('+275760-09-13T00:00:00.000Z')
    expect(dateTimeAttr(now)).toBe('2026-06-15T12:00:00.000Z')
  })

  // R5 (review14-story): History → Details drew the commit message raw (its subject names the
  // memory path), so a bidi override in a name reordered it.
  it('draws a commit message with invisible characters escaped and its lines kept', () => {
    expect(visibleLines('str_replace /memories/a\u202E.md\n\nCairn-Actor: claude')).toBe(
      'str_replace /memories/a\\u202E.md\n\nCairn-Actor: claude',
    )
  })
})
