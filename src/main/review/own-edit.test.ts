import { describe, expect, it } from 'vitest'
import { approvalsBetween, ownEditUntouched, reachedByApprovals } from './own-edit'

describe('a held change after other approvals of its file', () => {
  const landed = [
    { path: '/memories/a.md', before: 'a\nb\n', after: 'a\nB\n' },
    { path: '/memories/other.md', before: 'a\nB\n', after: 'zzz' },
    { path: '/memories/a.md', before: 'a\nB\n', after: 'a\nB\nc\n' },
  ]

  it('follows the approvals of its own path, in order, from the text the person saw', () => {
    expect(reachedByApprovals(landed, '/memories/a.md', 'a\nb\n', 'a\nB\nc\n')).toBe(true)
    expect(reachedByApprovals(landed, '/memories/a.md', 'a\nb\n', 'a\nB\n')).toBe(false)
    // An outside edit on top of the approvals is not explained by them.
    expect(reachedByApprovals(landed, '/memories/a.md', 'a\nb\n', 'a\nB\nc\nd\n')).toBe(false)
    expect(reachedByApprovals(landed, '/memories/a.md', 'x\n', 'a\nB\nc\n')).toBe(false)
    expect(reachedByApprovals([], '/memories/a.md', 'x\n', 'x\n')).toBe(true)
  })

  it('lets an edit run only when it lands as both previews showed it, a create never', () => {
    const replace = { command: 'str_replace' }
    // Another line changed since: the edit lands beside it.
    expect(ownEditUntouched(replace, 'a\nb\nc\n', 'A\nb\nc\n', 'a\nb\nC\n', 'A\nb\nC\n')).toBe(true)
    expect(ownEditUntouched(replace, 'a\nb\n', 'a\nB\n', 'A\nb\n', 'A\nB\n')).toBe(true)
    // The same line changed since (review hunt11 D8): neither preview showed the result.
    expect(
      ownEditUntouched(
        replace,
        'I like tea.\n',
        'I like green tea.\n',
        'I like coffee.\n',
        'I like green coffee.\n',
      ),
    ).toBe(false)
    // A dry run that would make anything else than both changes.
    expect(ownEditUntouched(replace, 'a\nb\n', 'a\nB\n', 'A\nb\n', 'A\nB\nx\n')).toBe(false)
    const insert = { command: 'insert', insert_line: 1, insert_text: 'x' }
    expect(ownEditUntouched(insert, 'a\nb\n', 'a\nB\n', 'a\nx\nb\n', 'a\nx\nB\n')).toBe(true)
    expect(ownEditUntouched(insert, 'a\nb\n', 'A\nb\n', 'a\nx\nb\n', 'A\nx\nb\n')).toBe(true)
    expect(ownEditUntouched(insert, 'a\nb\n', 'new\na\nb\n', 'a\nx\nb\n', 'new\nx\na\nb\n')).toBe(
      false,
    )
    expect(ownEditUntouched({ command: 'create', file_text: 'x' }, 'a\n', 'b\n', 'x', 'x')).toBe(
      false,
    )
    expect(ownEditUntouched({ command: 'delete' }, 'a\n', 'b\n', '', '')).toBe(false)
  })

  it('compares the edit with each approval on its own lines (review hunt13 D2)', () => {
    const lines = (edits: Record<number, string>) =>
      Array.from({ length: 50 }, (_, i) => edits[i + 1] ?? `line ${i + 1}`).join('\n') + '\n'
    const seen = lines({})
    // Approved: line 40, then line 1. The held edit of line 20 lies between them.
    const landed = [
      { path: '/memories/f.md', before: seen, after: lines({ 40: 'EDITED' }) },
      {
        path: '/memories/f.md',
        before: lines({ 40: 'EDITED' }),
        after: lines({ 1: 'EDITED', 40: 'EDITED' }),
      },
    ]
    const now = lines({ 1: 'EDITED', 40: 'EDITED' })
    const steps = approvalsBetween(landed, '/memories/f.md', seen, now)
    expect(steps).toHaveLength(2)
    const replace = { command: 'str_replace' }
    const shown = lines({ 20: 'EDITED' })
    const planned = lines({ 1: 'EDITED', 20: 'EDITED', 40: 'EDITED' })
    expect(ownEditUntouched(replace, seen, now, shown, planned, steps!)).toBe(true)
    // One step from the first approval's line to the last's would cover line 20.
    expect(ownEditUntouched(replace, seen, now, shown, planned)).toBe(false)
    // An approval that touched line 20 itself still sends the person back.
    const touching = [{ before: seen, after: lines({ 20: 'OTHER', 40: 'EDITED' }) }]
    expect(ownEditUntouched(replace, seen, touching[0]!.after, shown, planned, touching)).toBe(
      false,
    )
    // Steps that do not lead from what the person saw to the file now: never.
    expect(ownEditUntouched(replace, seen, now, shown, planned, steps!.slice(1))).toBe(false)
    expect(approvalsBetween(landed, '/memories/f.md', seen, lines({ 2: 'x' }))).toBeNull()
  })
})
