import { describe, expect, it } from 'vitest'
import type { MemoryNotice } from '../../shared/types'
import { createRecordingLogger } from '../lib/logger'
import {
  createNotices,
  damagedCopyNotice,
  followMoves,
  keptAsideNotice,
  restoreRefusedNotice,
  tooLargeNotice,
  unreadableNotice,
} from './notices'

/** Notices, and every one told to the windows. */
function session() {
  const notices = createNotices(createRecordingLogger())
  const told: MemoryNotice[] = []
  const cleared: string[] = []
  notices.onNotice((notice) => told.push(notice))
  notices.onCleared((id) => cleared.push(id))
  return { notices, told, cleared }
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
    notices.dismiss(first!.id)
    notices.raise(secret('a'.repeat(40)))
    expect(notices.list()).toEqual([])
    notices.raise(secret('b'.repeat(40)))
    const second = { id: 'notice-2', ...secret('b'.repeat(40)) }
    expect(notices.list()).toEqual([second])
    expect(told).toEqual([first, second])
    // The first's dismissal, sent again, does not hide it.
    notices.dismiss(first!.id)
    expect(notices.list()).toEqual([second])
  })

  it('gives way to a second keep-aside of its file', () => {
    const { notices, told } = session()
    notices.raise(keptAsideNotice('notes.md', 'notes (not in history).md'))
    notices.dismiss(notices.list()[0]!.id)
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
    for (const notice of notices.list()) notices.dismiss(notice.id)
    expect(notices.list()).toEqual([])
    const heard = told.length
    // Each scan raises what it finds: the file too large, the kept-aside file unreadable.
    notices.raise(tooLargeNotice('big.log'))
    notices.raise(unreadableNotice('private (unreadable).md'))
    expect(notices.list()).toEqual([])
    expect(told).toHaveLength(heard)
  })
})

describe('a notice is dismissed by the id it was raised with', () => {
  it('gives each raising an id of its own, one that reads the same too', () => {
    const { notices, told } = session()
    notices.raise(tooLargeNotice('big.log'))
    // Moved away, and another file too large takes its name: that one's notice reads as the
    // first did.
    followMoves(notices, [{ from: '/memories/big.log', to: '/memories/old.log' }])
    notices.raise(tooLargeNotice('big.log'))
    expect(told.map(({ id, path }) => [id, path])).toEqual([
      ['notice-1', '/memories/big.log'],
      ['notice-1', '/memories/old.log'],
      ['notice-2', '/memories/big.log'],
    ])
    expect({ ...told[2]!, id: 'notice-1' }).toEqual(told[0])
    // The first's dismissal, sent late, takes the first where it went, and leaves the other.
    notices.dismiss('notice-1')
    expect(notices.list()).toEqual([told[2]])
    notices.dismiss('notice-2')
    expect(notices.list()).toEqual([])
  })

  // A notice that follows its file to a new name is the same notice: it keeps its id. It was
  // raised anew with an id of its own, so a dismissal sent before the move and landing after it
  // named an id no longer raised, and the notice the person had dismissed showed again where its
  // file went, in every window and after every reload (rnotices26 R1).
  it('keeps its id where its file goes, so a dismissal on its way takes it there', () => {
    const { notices, told } = session()
    notices.raise(tooLargeNotice('big.log'))
    const [first] = notices.list()
    followMoves(notices, [{ from: '/memories/big.log', to: '/memories/moved.log' }])
    followMoves(notices, [{ from: '/memories/moved.log', to: '/memories/big.log' }])
    expect(told.map(({ id, path }) => [id, path])).toEqual([
      ['notice-1', '/memories/big.log'],
      ['notice-1', '/memories/moved.log'],
      ['notice-1', '/memories/big.log'],
    ])
    expect(notices.list()).toEqual([first])
    notices.dismiss(first!.id)
    expect(notices.list()).toEqual([])
    // Dismissed, it stays so where its file goes, and keeps its id there.
    followMoves(notices, [{ from: '/memories/big.log', to: '/memories/moved.log' }])
    expect(notices.list()).toEqual([])
    expect(notices.kept()).toEqual([
      { ...first!, path: '/memories/moved.log', message: expect.any(String) },
    ])
    expect(told).toHaveLength(3)
  })

  it('refuses an id it never gave, and changes nothing', () => {
    const { notices } = session()
    notices.raise(tooLargeNotice('big.log'))
    const before = notices.list()
    for (const id of ['notice-2', 'notice-0', 'too-large:/memories/big.log', '']) {
      expect(() => notices.dismiss(id)).toThrow(
        expect.objectContaining({
          code: 'not-found',
          message: `No notice ${id} was raised in this run.`,
        }),
      )
    }
    expect(notices.list()).toEqual(before)
  })
})

describe('notices whose file went (polish26)', () => {
  it('a file moved onto a name with a notice of its kind: the moved one is kept, the other cleared', () => {
    const { notices, told, cleared } = session()
    notices.raise(tooLargeNotice('big.log'))
    notices.raise(tooLargeNotice('moved.log'))
    const [big, there] = notices.list()
    followMoves(notices, [{ from: '/memories/big.log', to: '/memories/moved.log' }])
    // The file at moved.log is big.log's: its notice, with its id, at its new name.
    const moved = { ...tooLargeNotice('moved.log'), id: big!.id }
    expect(notices.list()).toEqual([moved])
    expect(notices.kept()).toEqual([moved])
    expect(cleared).toEqual([there!.id])
    expect(told).toEqual([big, there, moved])
  })

  it('a dismissed one moved onto such a name stays dismissed, and the one there goes', () => {
    const { notices, told, cleared } = session()
    notices.raise(tooLargeNotice('big.log'))
    notices.raise(tooLargeNotice('moved.log'))
    const [big, there] = notices.list()
    notices.dismiss(big!.id)
    followMoves(notices, [{ from: '/memories/big.log', to: '/memories/moved.log' }])
    expect(notices.list()).toEqual([])
    expect(notices.kept()).toEqual([{ ...tooLargeNotice('moved.log'), id: big!.id }])
    expect(cleared).toEqual([there!.id])
    expect(told).toHaveLength(2)
  })

  it('clears the notices of a gone file that tell of its state or ask of it, and tells their ids', () => {
    const { notices, cleared } = session()
    notices.raise(tooLargeNotice('gone.log'))
    notices.raise(unreadableNotice('gone.log'))
    notices.raise({ ...secret('a'.repeat(40)), path: '/memories/gone.log' })
    notices.raise(damagedCopyNotice('gone.log'))
    notices.raise(keptAsideNotice('gone.log', 'gone (not in history).log'))
    notices.raise(tooLargeNotice('here.log'))
    const ids = notices.list().map((n) => n.id)
    notices.dismiss(ids[1]!)
    notices.clearGone((path) => path === '/memories/gone.log')
    // History's lost copy and what a sync did are not states of the file: they stay.
    expect(notices.kept().map((n) => `${n.kind}:${n.path}`)).toEqual([
      'damaged:/memories/gone.log',
      'kept-aside:/memories/gone.log',
      'too-large:/memories/here.log',
    ])
    // The dismissed one too: a window that still shows it drops it.
    expect(cleared).toEqual(ids.slice(0, 3))
    // Its file back, a notice raised for it is new.
    notices.raise(tooLargeNotice('gone.log'))
    expect(notices.list().at(-1)).toMatchObject({ kind: 'too-large', path: '/memories/gone.log' })
  })
})

// restore27: a restore given up because the system refused a write is told as `unreadable`, and
// went when a scan read its file again, which says nothing of whether Cairn may change it.
describe("a refused restore's notice", () => {
  it('stays when its file is read again, follows a move, and goes when Cairn writes it', () => {
    const { notices, cleared } = session()
    notices.raise(restoreRefusedNotice('d/a.md'), { readClears: false })
    notices.raise(unreadableNotice('private.md'))
    notices.clearReadAgain(['/memories/d/a.md', '/memories/private.md'])
    expect(notices.kept().map((n) => n.path)).toEqual(['/memories/d/a.md'])
    const [refused] = notices.kept()
    expect(cleared).toHaveLength(1)
    // Moved with its folder, it is still one a read does not clear.
    followMoves(notices, [{ from: '/memories/d', to: '/memories/e' }])
    notices.clearReadAgain(['/memories/e/a.md'])
    expect(notices.kept()).toEqual([
      {
        ...refused,
        path: '/memories/e/a.md',
        message: expect.stringContaining('/memories/e/a.md'),
      },
    ])
    // A write elsewhere, or of a name it only begins with, leaves it.
    notices.clearWritten(['/memories/e/a.md.bak', '/memories/a.md'])
    expect(notices.kept()).toHaveLength(1)
    notices.clearWritten(['/memories/e/a.md'])
    expect(notices.kept()).toEqual([])
    expect(cleared.at(-1)).toBe(refused!.id)
    // Raised again without the option (a scan's own notice), a read clears it as any other.
    notices.raise(unreadableNotice('e/a.md'))
    notices.clearReadAgain(['/memories/e/a.md'])
    expect(notices.kept()).toEqual([])
  })

  it('is cleared by a read once its file is kept aside as unreadable', () => {
    const { notices } = session()
    notices.raise(restoreRefusedNotice('d/a.md'), { readClears: false })
    followMoves(notices, [
      { from: '/memories/d/a.md', to: '/memories/d/a (unreadable).md', versioned: true },
    ])
    expect(notices.kept()[0]!.message).toContain('Cairn cannot read it')
    notices.clearReadAgain(['/memories/d/a (unreadable).md'])
    expect(notices.kept()).toEqual([])
  })

  it('goes when a change of Cairn writes inside the folder it names', () => {
    const { notices } = session()
    notices.raise(restoreRefusedNotice('d'), { readClears: false })
    notices.clearWritten(['/memories/dd/a.md'])
    expect(notices.kept()).toHaveLength(1)
    notices.clearWritten(['/memories/d/a.md'])
    expect(notices.kept()).toEqual([])
  })

  it('of the whole memory folder goes when a change of Cairn writes anything in it', () => {
    const { notices } = session()
    notices.raise(restoreRefusedNotice(''), { readClears: false })
    expect(notices.kept()[0]!.path).toBe('/memories')
    notices.clearWritten(['/memories/a/b.md'])
    expect(notices.kept()).toEqual([])
  })

  it('goes when a restore finds its path as asked, and only that one', () => {
    const { notices, cleared } = session()
    notices.raise(restoreRefusedNotice('d/a.md'), { readClears: false })
    notices.raise(restoreRefusedNotice('d/b.md'), { readClears: false })
    // A scan's own unreadable notice is not the restore's: it goes when its file is read.
    notices.raise(unreadableNotice('d/c.md'))
    const [first] = notices.kept()
    notices.clearSettled((path) => path === '/memories/d/a.md' || path === '/memories/d/c.md')
    expect(notices.kept().map((n) => n.path)).toEqual(['/memories/d/b.md', '/memories/d/c.md'])
    expect(cleared).toEqual([first!.id])
  })
})
