/**
 * A file the history never held (too large to version, so in no commit) sits where a sync or
 * a restore writes: it is kept aside under a side name, never written over. Real data folders
 * syncing through a real git server on loopback; the git CLI checks the histories.
 */
import { createHash } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_VERSIONED_BYTES } from '../history/work-tree'
import { expectSound, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

const big = Buffer.alloc(MAX_VERSIONED_BYTES + 1024 * 1024, 'L')

describe('a file the history never held', () => {
  it('is kept aside, not written over, when a sync brings a file of its name', async () => {
    const repo = sync.newRepo('aside')
    const laptop = await machine('laptop')
    const desktop = await machine('desktop')
    await laptop.write('notes.md', 'hello\n')
    await laptop.connect(sync.server, repo)
    await laptop.sync()
    await desktop.connect(sync.server, repo)
    await desktop.sync()
    await writeFile(path.join(laptop.dir, 'memories', 'big.md'), big)
    await laptop.write('notes.md', 'hello again\n')
    expect(laptop.git('ls-tree', '-r', '--name-only', 'main')).not.toContain('big.md')

    await desktop.write('big.md', 'small note from the desktop\n')
    await desktop.sync()
    const status = await laptop.sync()

    expect(status.state).toBe('idle')
    const memories = path.join(laptop.dir, 'memories')
    expect(await readFile(path.join(memories, 'big.md'), 'utf8')).toBe(
      'small note from the desktop\n',
    )
    const kept = await readFile(path.join(memories, 'big (not in history).md'))
    expect(kept.equals(big)).toBe(true)
    const notices = await laptop.call('memory:notices')
    expect(notices).toContainEqual(
      expect.objectContaining({
        kind: 'kept-aside',
        path: '/memories/big.md',
        message: expect.stringContaining('/memories/big (not in history).md'),
      }),
    )
    expect(JSON.stringify(notices)).not.toContain(laptop.dir)
    // Still too large to version: never in any commit, and the sync pushed nothing of it.
    expect(() => laptop.git('cat-file', '-e', blobId(big))).toThrow()
    // The folder equals HEAD's tree but for that unversioned file, which the person moves out.
    await rm(path.join(memories, 'big (not in history).md'))
    await expectSound(sync.server, repo, [laptop, desktop])
  })

  it('is kept aside when a restore brings back a file of its name', async () => {
    const laptop = await machine('laptop')
    await laptop.write('big.md', 'an early small note\n')
    const created = laptop.git('rev-parse', 'main').trim()
    await laptop.remove('big.md')
    await writeFile(path.join(laptop.dir, 'memories', 'big.md'), big)
    await laptop.write('other.md', 'a command that scans the folder\n')

    const result = await laptop.call('history:restoreDeleted', { path: '/memories/big.md' })
    expect(result.message).toContain('kept as /memories/big (not in history).md')
    const memories = path.join(laptop.dir, 'memories')
    expect(await readFile(path.join(memories, 'big.md'), 'utf8')).toBe('an early small note\n')
    expect((await readFile(path.join(memories, 'big (not in history).md'))).equals(big)).toBe(true)

    // Restoring one file over it again keeps that copy too, under the next free name.
    await writeFile(path.join(memories, 'big.md'), big)
    await laptop.write('other.md', 'scan again\n')
    const again = await laptop.call('history:restoreFile', {
      path: '/memories/big.md',
      oid: created,
    })
    expect(again.message).toContain('kept as /memories/big (not in history 2).md')
    expect((await readFile(path.join(memories, 'big (not in history 2).md'))).equals(big)).toBe(
      true,
    )
    expect(await readFile(path.join(memories, 'big.md'), 'utf8')).toBe('an early small note\n')
    expect(laptop.git('fsck', '--strict')).toBe('')
  })
})
