import { describe, expect, it } from 'vitest'
import { runIdPattern, runIds } from './run-ids'

describe('ids given in a run', () => {
  it('counts from 1 and knows only those it gave, of its own prefix', () => {
    const ids = runIds('notice')
    expect(ids.wasGiven('notice-1')).toBe(false)
    expect([ids.next(), ids.next()]).toEqual(['notice-1', 'notice-2'])
    expect(ids.wasGiven('notice-1')).toBe(true)
    expect(ids.wasGiven('notice-2')).toBe(true)
    for (const id of ['notice-3', 'notice-0', 'notice-01', 'recovery-1', 'notice-1 ', '']) {
      expect(ids.wasGiven(id)).toBe(false)
    }
  })

  it('keeps each prefix to its own count', () => {
    const notices = runIds('notice')
    const reports = runIds('recovery')
    notices.next()
    notices.next()
    expect(reports.next()).toBe('recovery-1')
    expect(reports.wasGiven('recovery-2')).toBe(false)
  })

  it('takes numbers up to 15 digits, the ones a window may send', () => {
    const pattern = runIdPattern('recovery')
    expect(pattern.test(`recovery-${'9'.repeat(15)}`)).toBe(true)
    for (const id of [`recovery-${'9'.repeat(16)}`, 'recovery--1', 'recovery-1\n', 'notice-1']) {
      expect(pattern.test(id)).toBe(false)
    }
  })
})
