import { describe, expect, it } from 'vitest'
import { ownEditUntouched, reachedByApprovals } from './own-edit'

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
})
