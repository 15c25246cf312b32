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

  it('lets a str_replace run, an insert only with its lines above untouched, a create never', () => {
    expect(ownEditUntouched({ command: 'str_replace' }, 'a\nb\n', 'a\nB\n')).toBe(true)
    const insert = { command: 'insert', insert_line: 1, insert_text: 'x' }
    expect(ownEditUntouched(insert, 'a\nb\n', 'a\nB\n')).toBe(true)
    expect(ownEditUntouched(insert, 'a\nb\n', 'A\nb\n')).toBe(false)
    expect(ownEditUntouched(insert, 'a\nb\n', 'new\na\nb\n')).toBe(false)
    expect(ownEditUntouched({ command: 'create', file_text: 'x' }, 'a\n', 'b\n')).toBe(false)
    expect(ownEditUntouched({ command: 'delete' }, 'a\n', 'b\n')).toBe(false)
  })
})
