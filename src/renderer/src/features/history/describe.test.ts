import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../../../shared/types'
import { actorLabel, pathsLabel, restoreNote } from './describe'

const base: CommitSummary = {
  oid: 'a'.repeat(40),
  parent: null,
  time: 0,
  actor: 'user',
  command: 'restore-file',
  subject: 'restore',
  paths: ['/memories/a.md'],
  conversationId: null,
  toolUseId: null,
  overwrite: false,
  restoredFrom: '0123456789abcdef0123456789abcdef01234567',
}

describe('describe', () => {
  it('names the three authors as the timeline shows them', () => {
    expect([actorLabel('claude'), actorLabel('user'), actorLabel('system')]).toEqual([
      'Claude',
      'You',
      'Cairn',
    ])
  })

  it('says what a restore restored from and what a revert undid', () => {
    expect(restoreNote(base)).toBe('Restored from 0123456')
    expect(restoreNote({ ...base, command: 'revert' })).toBe('Reverted 0123456')
    expect(restoreNote({ ...base, restoredFrom: null })).toBeNull()
  })

  it('shows renames as an arrow and many paths as a count', () => {
    expect(pathsLabel(['/memories/a.md', '/memories/b.md'], 'rename')).toBe('a.md → b.md')
    expect(pathsLabel(['/memories/a.md', '/memories/b.md', '/memories/c'], 'restore-all')).toBe(
      'a.md +2 more',
    )
  })
})
