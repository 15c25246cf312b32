import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../../shared/types'
import { madeElsewhere, namesOf, sentence, whoLabel, whoOf } from './commit-words'
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

  it('words a recovery commit by when it was made, never as an interrupted change it may not be', () => {
    const recovery = (subject: string) =>
      sentence(commit({ actor: 'system', command: 'recovery', subject }), null, now)
    expect(recovery('Save changes whose commit was interrupted')).toBe(
      'Cairn saved trailhead.md after an interrupted change',
    )
    expect(recovery('Save changes found at start-up')).toBe(
      'Cairn saved trailhead.md, found changed when it started',
    )
    // Earlier versions made this one at every start, for outside edits and crashes alike.
    expect(recovery('Save changes made outside Cairn')).toBe(
      'Cairn saved trailhead.md, found changed when it started',
    )
  })

  it("words what Cairn kept after main was moved back with git as Cairn's, not as an outside edit", () => {
    const kept = (subject: string) =>
      sentence(commit({ actor: 'system', command: 'recovery', subject }), null, now)
    expect(kept('Kept after main was moved back outside Cairn')).toBe(
      'Cairn kept trailhead.md, left out when main was moved outside Cairn',
    )
    expect(kept('Kept after main was replaced outside Cairn')).toBe(
      'Cairn kept trailhead.md, left out when main was moved outside Cairn',
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
    expect(whoLabel(commit({}))).toBe('Claude')
    expect(whoLabel(commit({ actor: 'user' }))).toBe('You')
    expect(whoLabel(commit({ actor: 'system', command: 'outside' }))).toBe('Outside Cairn')
    expect(whoLabel(commit({ actor: 'system', command: 'recovery' }))).toBe('Cairn')
    expect(whoOf(commit({ actor: 'system', command: 'recovery' }))).toBe('system')
  })

  it('names the author of a commit made with git, outside Cairn', () => {
    const byAnn = commit({
      actor: 'outside',
      author: 'Ann Smith',
      command: 'outside',
      subject: 'Fix the second line',
      conversationId: null,
      toolUseId: null,
    })
    expect(whoOf(byAnn)).toBe('outside')
    expect(whoLabel(byAnn)).toBe('Ann Smith (outside Cairn)')
    expect(sentence(byAnn, null, now)).toBe('Ann Smith edited trailhead.md outside Cairn')
    expect(sentence({ ...byAnn, paths: ['/memories/a.md', '/memories/b.md'] }, null, now)).toBe(
      'Ann Smith edited a.md and b.md outside Cairn',
    )
    // A name alone is nobody's: "Claude" made with git is not Claude.
    expect(sentence({ ...byAnn, author: 'Claude' }, null, now)).toBe(
      'Claude edited trailhead.md outside Cairn',
    )
    expect(whoLabel({ ...byAnn, author: 'Claude' })).toBe('Claude (outside Cairn)')
    // A bidi override in a name (git keeps any) must not reorder the words around it: a
    // name shown as "Claude" but written `\u202EedualC`, or one with a zero-width space,
    // is drawn with its escapes, as paths are.
    const turned = { ...byAnn, author: '\u202EedualC' }
    expect(whoLabel(turned)).toBe('\\u202EedualC (outside Cairn)')
    expect(sentence(turned, null, now)).toBe('\\u202EedualC edited trailhead.md outside Cairn')
    expect(sentence({ ...turned, otherParents: ['c'.repeat(40)] }, null, now)).toBe(
      '\\u202EedualC merged changes outside Cairn',
    )
    expect(whoLabel({ ...byAnn, author: 'Ann\u200BSmith' })).toBe('Ann\\u200BSmith (outside Cairn)')
    const merge = { ...byAnn, otherParents: ['c'.repeat(40)] }
    expect(sentence(merge, null, now, { thisMachine: 'desktop' })).toBe(
      'Ann Smith merged changes outside Cairn',
    )
    // Nameless (git refuses that; other tools may not): as Cairn words its own outside commits.
    const { author: _author, ...nameless } = byAnn
    expect(whoLabel(nameless)).toBe('Outside Cairn')
    expect(sentence(nameless, null, now)).toBe('trailhead.md was edited outside Cairn')
    expect(sentence({ ...nameless, otherParents: ['c'.repeat(40)] }, null, now)).toBe(
      'Changes were merged outside Cairn',
    )
    // Undoing it says whose change went.
    const undo = commit({ actor: 'user', command: 'revert', restoredFrom: byAnn.oid })
    expect(sentence(undo, byAnn, now)).toBe(
      `You undid “Ann Smith edited trailhead.md outside Cairn” of ${shortDateTime(byAnn.time, now)}`,
    )
  })

  it('says on which machine a change was made when it was not this one', () => {
    const remote = commit({ machine: 'laptop', paths: ['/memories/notes.md'] })
    const here = { thisMachine: 'desktop' }
    expect(sentence(remote, null, now, here)).toBe('Claude on laptop edited notes.md')
    expect(sentence(remote, null, now, { thisMachine: 'laptop' })).toBe('Claude edited notes.md')
    // Not known yet which machine this is: nothing is said rather than something wrong.
    expect(sentence(remote, null, now)).toBe('Claude edited notes.md')
    expect(sentence(commit({ machine: null }), null, now, here)).toBe('Claude edited trailhead.md')
    expect(sentence({ ...remote, actor: 'system', command: 'outside' }, null, now, here)).toBe(
      'notes.md was edited outside Cairn on laptop',
    )
    expect(
      sentence({ ...remote, actor: 'system', command: 'init', paths: [] }, null, now, here),
    ).toBe('Cairn on laptop started the history')
    expect(madeElsewhere(remote, 'desktop')).toBe('laptop')
    expect(madeElsewhere(remote, null)).toBeNull()
  })

  it('says whose memory a merge joined, from where it is read', () => {
    const joined = commit({ oid: 'c'.repeat(40), machine: 'laptop' })
    const merge = commit({
      actor: 'system',
      command: 'merge',
      subject: 'Merge memory from laptop',
      machine: 'desktop',
      otherParents: [joined.oid],
      conversationId: null,
      toolUseId: null,
    })
    expect(sentence(merge, null, now, { thisMachine: 'desktop', joined })).toBe(
      'Cairn merged the memory of laptop',
    )
    // The same merge read on the laptop, after it synced.
    expect(sentence(merge, null, now, { thisMachine: 'laptop', joined })).toBe(
      'Cairn on desktop merged this machine’s memory',
    )
    expect(sentence(merge, null, now, { thisMachine: 'desktop' })).toBe(
      'Cairn merged the memory of another machine',
    )
    const join = {
      ...merge,
      actor: 'user' as const,
      subject: 'Join this machine’s memory with laptop’s',
    }
    expect(sentence(join, null, now, { thisMachine: 'desktop', joined })).toBe(
      'You joined this machine’s memory with the memory of laptop',
    )
    expect(sentence(join, null, now, { thisMachine: 'laptop', joined })).toBe(
      'You on desktop joined its memory with this machine’s memory',
    )
    const backup = { ...join, subject: 'Bring back the memory kept in a backup' }
    expect(sentence(backup, null, now, { thisMachine: 'desktop', joined })).toBe(
      'You brought back memory from a backup',
    )
  })

  it('says a conflict was resolved, and what was imported', () => {
    const resolve = commit({
      actor: 'user',
      command: 'resolve',
      paths: ['/memories/photo.png', '/memories/photo (desktop).png'],
      machine: 'laptop',
    })
    expect(sentence(resolve, null, now, { thisMachine: 'laptop' })).toBe(
      'You resolved the conflict in photo.png',
    )
    expect(sentence(resolve, null, now, { thisMachine: 'desktop' })).toBe(
      'You on laptop resolved the conflict in photo.png',
    )
    expect(
      sentence(
        commit({ actor: 'user', command: 'import', paths: ['/memories/a.md', '/memories/b.md'] }),
        null,
        now,
      ),
    ).toBe('You imported a.md and b.md')
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
