/** How paths and times read for people, wherever the app shows them. */
import { escapeInvisible } from '../../../shared/invisible'

/**
 * `/memories/notes/a.md` -> `notes/a.md` (the root itself stays `/memories`), with any
 * character that draws as nothing written as its escape (see `visibleName`).
 */
export function displayPath(path: string): string {
  if (path === '/memories') return path
  return visibleName(path.startsWith('/memories/') ? path.slice('/memories/'.length) : path)
}

/**
 * A name or path as drawn: a zero-width space, a byte-order mark, a bidi mark or any other
 * control or format character written as its escape (`a\u200B.md`), as Claude's messages
 * write it. Sync carries such names (refusing them refused every sync of another machine), and
 * drawn raw, `a.md` and `a\u200B.md` looked the same.
 */
export function visibleName(name: string): string {
  return escapeInvisible(name)
}

/**
 * A text of several lines (a commit message with its trailers) as drawn: each line as
 * `visibleName` writes it, the line breaks kept.
 */
export function visibleLines(text: string): string {
  return text.split('\n').map(visibleName).join('\n')
}

/**
 * True when `time` is a date JavaScript can hold (±8.64e15 ms). A commit can claim any time (a
 * crafted history, or another machine's commit brought by sync): such a time is shown as
 * unknown, and never passed to a call that throws on it, which would blank the window
 * (review hunt12-story D6).
 */
export function knownTime(time: number): boolean {
  return Number.isFinite(new Date(time).getTime())
}

/** A `<time dateTime>` value, or none for a time no date can hold. */
export function dateTimeAttr(time: number): string | undefined {
  return knownTime(time) ? new Date(time).toISOString() : undefined
}

const UNKNOWN = 'an unknown time'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then a date. */
export function relativeTime(time: number, now: number): string {
  if (!knownTime(time)) return UNKNOWN
  const elapsed = Math.max(0, now - time)
  if (elapsed < MINUTE) return 'just now'
  if (elapsed < HOUR) return `${Math.floor(elapsed / MINUTE)} min ago`
  if (elapsed < DAY) return `${Math.floor(elapsed / HOUR)} h ago`
  if (elapsed < 2 * DAY) return 'yesterday'
  if (elapsed < 7 * DAY) return `${Math.floor(elapsed / DAY)} days ago`
  const date = new Date(time)
  const sameYear = date.getFullYear() === new Date(now).getFullYear()
  return date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  })
}

/** The local calendar day of a time, as `2026-11-03` (for grouping by day). */
export function dayKey(time: number): string {
  const date = new Date(time)
  return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`
}

/** A day heading: "Today", "Yesterday", "3 November" (with the year when not this year). */
export function dayHeading(time: number, now: number): string {
  if (!knownTime(time)) return 'Unknown date'
  const today = new Date(now)
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1)
  if (dayKey(time) === dayKey(now)) return 'Today'
  if (dayKey(time) === dayKey(yesterday.getTime())) return 'Yesterday'
  const sameYear = new Date(time).getFullYear() === today.getFullYear()
  return new Date(time).toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'long',
    ...(sameYear ? {} : { year: 'numeric' }),
  })
}

/** The time of day: "14:02" (or "2:02 PM", as the system says it). */
export function clockTime(time: number): string {
  if (!knownTime(time)) return UNKNOWN
  return new Date(time).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
}

/** A moment named briefly: "3 Nov, 14:02" (the year added when not this year). */
export function shortDateTime(time: number, now: number): string {
  if (!knownTime(time)) return UNKNOWN
  const sameYear = new Date(time).getFullYear() === new Date(now).getFullYear()
  const day = new Date(time).toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  })
  return `${day}, ${clockTime(time)}`
}

/** The exact moment, to the second, for tooltips: "Tuesday 3 November 2026 at 14:02:09". */
export function exactTime(time: number): string {
  if (!knownTime(time)) return UNKNOWN
  return new Date(time).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'medium' })
}
