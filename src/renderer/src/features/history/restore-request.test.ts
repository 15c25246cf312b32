import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../../../shared/types'
import { describeRequest } from './restore-request'

// R5 (review14-story): a restore over a file Cairn may not read keeps it as
// "<name> (unreadable)", yet the confirmation promised only "(not in history)": it named a file
// that would not exist.
const commit = {
  oid: 'a'.repeat(40),
  time: Date.UTC(2026, 0, 2, 10, 0),
  subject: 'create /memories/notes.md',
  actor: 'claude',
  paths: ['/memories/notes.md'],
} as unknown as CommitSummary

describe('the restore confirmations', () => {
  it('name both names a file kept aside may get, when restoring one file', () => {
    const { body } = describeRequest({ kind: 'file', path: '/memories/notes.md', commit } as never)
    expect(body[0]).toContain('“notes (not in history).md”')
    expect(body[0]).toContain('“notes (unreadable).md” if Cairn may not read it')
  })

  it('name both names a file kept aside may get, when restoring all memory', () => {
    const { body } = describeRequest({ kind: 'all', commit } as never)
    expect(body[0]).toContain('“<name> (not in history)”')
    expect(body[0]).toContain('“<name> (unreadable)” if Cairn may not read it')
  })
})
