import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../../shared/types'
import { namesOf, sentence, whoLabel, whoOf } from './commit-words'
import { clockTime, dayHeading, shortDateTime } from './format'

const now = new Date(2026, 10, 30, 18, 0).getTime()
const at = (day: number, hour: number, minute: number) =>
  new Date(2026, 10, day, hour, minute).getTime()

function commit(fields: Partial<CommitSummary>): CommitSummary {
  return {
    oid: 'a'.repeat(40),
    parent: 'b'.repeat(40),
    time: at(30, 14, 2),
    actor: 'claude',
    command: 'str_replace',
    subject: 'str_replace /memories/trailhead.md',
    paths: ['/memories/trailhead.md'],
    conversationId: 'c1',
    toolUseId: 'toolu_1',
    overwrite: false,
    restoredFrom: null,
    ...fields,
  }
}

describe('commits in plain language', () => {
  it('says what Claude, you and Cairn did, in one sentence', () => {
    expect(sentence(commit({}), null, now)).toBe('Claude edited trailhead.md')
    expect(sentence(commit({ command: 'create', overwrite: true }), null, now)).toBe(
      'Claude replaced trailhead.md',
    )
    expect(sentence(commit({ command: 'create' }), null, now)).toBe('Claude created trailhead.md')
    expect(sentence(commit({ command: 'insert' }), null, now)).toBe('Claude added to trailhead.md')
    expect(
      sentence(
        commit({ command: 'rename', paths: ['/memories/a.md', '/memories/notes/a.md'] }),
        null,
        now,
      ),
    ).toBe('Claude moved a.md to notes/a.md')
    expect(
      sentence(
        commit({ command: 'rename', paths: ['/memories/a.md', '/memories/b.md'] }),
        null,
        now,
      ),
    ).toBe('Claude renamed a.md to b.md')
    expect(sentence(commit({ actor: 'user', command: 'write' }), null, now)).toBe(
      'You edited trailhead.md',
    )
    expect(
      sentence(
        commit({
          actor: 'system',
          command: 'outside',
          paths: ['/memories/a.md', '/memories/b.md'],
        }),
        null,
        now,
      ),
    ).toBe('a.md and b.md were edited outside Cairn')
    expect(sentence(commit({ actor: 'system', command: 'init', paths: [] }), null, now)).toBe(
      'Cairn started the history',
    )
  })

  it('names what a restore went back to by its time, never by a commit id', () => {
    const target = commit({ oid: 'f'.repeat(40), time: at(3, 14, 2) })
    const restore = commit({
      actor: 'user',
      command: 'restore-file',
      paths: ['/memories/preferences.md'],
      restoredFrom: target.oid,
    })
    const said = sentence(restore, target, now)
    expect(said).toBe(
      `You restored preferences.md to its version of ${shortDateTime(target.time, now)}`,
    )
    expect(said).toContain(clockTime(target.time))
    expect(said).not.toContain('fffffff')
    expect(sentence(restore, null, now)).toBe('You restored preferences.md to an earlier version')
    expect(sentence({ ...restore, command: 'restore-all' }, target, now)).toMatch(
      /^You restored all memory to how it was on /,
    )
    expect(sentence({ ...restore, command: 'revert' }, target, now)).toBe(
      `You undid “Claude edited trailhead.md” of ${shortDateTime(target.time, now)}`,
    )
  })

  it('tells who made a change, an edit outside Cairn apart from Cairn itself', () => {
    expect(whoLabel(whoOf(commit({})))).toBe('Claude')
    expect(whoLabel(whoOf(commit({ actor: 'user' })))).toBe('You')
    expect(whoLabel(whoOf(commit({ actor: 'system', command: 'outside' })))).toBe('Outside Cairn')
    expect(whoLabel(whoOf(commit({ actor: 'system', command: 'recovery' })))).toBe('Cairn')
  })

  it('lists a few names, and counts many', () => {
    expect(namesOf(['/memories/a.md', '/memories/b.md', '/memories/c.md'])).toBe(
      'a.md and 2 other files',
    )
  })

  it('heads days as Today, Yesterday, then the date', () => {
    expect(dayHeading(at(30, 9, 0), now)).toBe('Today')
    expect(dayHeading(at(29, 23, 59), now)).toBe('Yesterday')
    const older = dayHeading(at(3, 14, 2), now)
    expect(older).toMatch(/3/)
    expect(older).toMatch(/Nov/)
    expect(dayHeading(new Date(2025, 0, 5).getTime(), now)).toMatch(/2025/)
  })
})
