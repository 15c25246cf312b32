import { describe, expect, it } from 'vitest'
import type { MemoryNotice } from '../../shared/types'
import { createRecordingLogger } from '../lib/logger'
import {
  createNotices,
  followMoves,
  keptAsideNotice,
  tooLargeNotice,
  unreadableNotice,
} from './notices'

/** Notices, and every one told to the windows. */
function session() {
  const notices = createNotices(createRecordingLogger())
  const told: MemoryNotice[] = []
  notices.onNotice((notice) => told.push(notice))
  return { notices, told }
}

const secret = (commit: string): Omit<MemoryNotice, 'id'> => ({
  kind: 'secret',
  path: '/memories/notes.md',
  message: `/memories/notes.md was changed outside Cairn and now holds what looks like a secret (version ${commit.slice(0, 7)}).`,
  commitOid: commit,
})

describe('a dismissed notice and the ones raised after it (redges2 R2)', () => {
  it('gives way to a new secret in its file, told and answered', () => {
    const { notices, told } = session()
    notices.raise(secret('a'.repeat(40)))
    const [first] = notices.list()
    notices.dismiss(first!)
    notices.raise(secret('a'.repeat(40)))
    expect(notices.list()).toEqual([])
    notices.raise(secret('b'.repeat(40)))
    const second = { id: first!.id, ...secret('b'.repeat(40)) }
    expect(notices.list()).toEqual([second])
    expect(told).toEqual([first, second])
    // The first's dismissal, sent again, does not hide it.
    notices.dismiss(first!)
    expect(notices.list()).toEqual([second])
  })

  it('gives way to a second keep-aside of its file', () => {
    const { notices, told } = session()
    notices.raise(keptAsideNotice('notes.md', 'notes (not in history).md'))
    notices.dismiss(notices.list()[0]!)
    notices.raise(keptAsideNotice('notes.md', 'notes (not in history 2).md'))
    expect(notices.list()).toEqual([
      expect.objectContaining({ message: expect.stringContaining('notes (not in history 2).md') }),
    ])
    expect(told).toHaveLength(2)
  })

  it('stays hidden when a scan raises its state again, in other words too', () => {
    const { notices, told } = session()
    notices.raise(tooLargeNotice('big.log'))
    notices.raise(unreadableNotice('private.md'))
    // Kept aside because Cairn may not read it: the notice follows it, in other words.
    followMoves(notices, [
      { from: '/memories/private.md', to: '/memories/private (unreadable).md', versioned: true },
    ])
    for (const notice of notices.list()) notices.dismiss(notice)
    expect(notices.list()).toEqual([])
    const heard = told.length
    // Each scan raises what it finds: the file too large, the kept-aside file unreadable.
    notices.raise(tooLargeNotice('big.log'))
    notices.raise(unreadableNotice('private (unreadable).md'))
    expect(notices.list()).toEqual([])
    expect(told).toHaveLength(heard)
  })
})
