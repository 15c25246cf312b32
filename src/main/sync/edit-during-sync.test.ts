/**
 * An editor's save that lands while a sync moves `main` (after the scan that saved outside
 * edits, before the folder is written) is never written over: the move finds the file no
 * longer holds what history held, keeps it aside with a notice, and the edit reaches history.
 * Real data folders, a real git server on loopback, the timing forced through the disk seam.
 */
import { writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hookDisk } from '../lib/disk-hooks'
import { nodeDisk, setDisk } from '../lib/disk'
import { expectSound, linesOfHistory, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

const EDIT = 'line1 typed in the editor during the sync\nline2\nline3\n'

describe('an edit saved while a sync writes the folder', () => {
  for (const change of ['edited', 'deleted'] as const) {
    it(`is kept, not written over, when the other machine ${change} the file`, async () => {
      const repo = sync.newRepo('race')
      const laptop = await machine('laptop')
      const desktop = await machine('desktop')
      await laptop.write('notes.md', 'line1\nline2\nline3\n')
      await laptop.connect(sync.server, repo)
      await laptop.sync()
      await desktop.connect(sync.server, repo)
      await desktop.sync()
      if (change === 'edited') await desktop.write('notes.md', 'line1\nline2\nline3 desktop\n')
      else await desktop.remove('notes.md')
      await desktop.sync()

      // The editor saves the moment the laptop's sync has written its move note.
      const notes = path.join(laptop.dir, 'memories', 'notes.md')
      let saved = false
      const hooked = hookDisk(nodeDisk, (call) => {
        if (saved || call.name !== 'renameSync') return
        const to = call.args[1]
        if (typeof to === 'string' && to.endsWith('cairn-move.json')) {
          // After the scan and the merge, as the note lands: the folder is not written yet.
          saved = true
          writeFileSync(notes, EDIT)
        }
      })
      const restore = setDisk(hooked.disk)
      let status
      try {
        status = await laptop.sync()
      } finally {
        restore()
      }
      expect(saved).toBe(true)
      expect(status.state).toBe('idle')

      const memories = path.join(laptop.dir, 'memories')
      expect(await readFile(path.join(memories, 'notes (not in history).md'), 'utf8')).toBe(EDIT)
      if (change === 'edited') {
        expect(await readFile(notes, 'utf8')).toBe('line1\nline2\nline3 desktop\n')
      } else {
        await expect(readFile(notes, 'utf8')).rejects.toThrow()
      }
      const notices = await laptop.call('memory:notices')
      expect(notices).toContainEqual(
        expect.objectContaining({
          kind: 'kept-aside',
          path: '/memories/notes.md',
          message: expect.stringContaining('changed outside Cairn'),
        }),
      )
      // The next sync saves the kept version first: the edit is in history and on the remote.
      expect((await laptop.sync()).state).toBe('idle')
      expect(linesOfHistory(path.join(laptop.dir, 'history.git'))).toContain(
        'line1 typed in the editor during the sync',
      )
      expect(sync.server.git(repo, 'show', 'main:notes (not in history).md')).toContain(
        'typed in the editor',
      )
      expect((await desktop.sync()).state).toBe('idle')
      await expectSound(sync.server, repo, [laptop, desktop])
    })
  }
})
