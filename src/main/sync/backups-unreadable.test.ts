/**
 * The list of memory kept aside (`refs/cairn/backups/`) that cannot be read: a failing disk, a
 * denied read, a file where its folder goes. isomorphic-git's listing took each for "no
 * backups", so the Sync panel showed none and nothing was logged; now the status says so (once
 * in the log), and the list comes back once the disk reads. Real repositories, the git CLI to
 * make backups, faults through the disk seam.
 */
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { createRecordingLogger } from '../lib/logger'
import { useSyncServer, withEio } from './test-support'

const sync = useSyncServer()

const listsBackups = (call: DiskCall) =>
  call.name === 'promises.readdir' && String(call.args[0]).endsWith(path.join('cairn', 'backups'))

const logged = (logger: ReturnType<typeof createRecordingLogger>) =>
  logger.entries.filter((e) => e.message.includes('memory kept aside')).length

async function withBackups() {
  const logger = createRecordingLogger()
  const laptop = await sync.machine('laptop', undefined, { logger })
  await laptop.write('a.md', 'a\n')
  // One backup loose, one packed: both listed.
  laptop.git('update-ref', 'refs/cairn/backups/laptop-1', 'HEAD')
  laptop.git('pack-refs', '--all')
  await laptop.write('a.md', 'b\n')
  laptop.git('update-ref', 'refs/cairn/backups/laptop-2', 'HEAD')
  const status = await laptop.call('sync:status')
  expect(status.backups.map((b) => b.name).sort()).toEqual(['laptop-1', 'laptop-2'])
  expect(status.backupsUnreadable).toBeUndefined()
  return { laptop, logger }
}

describe('the list of memory kept aside, unreadable', () => {
  it('EIO listing the folder: said in the status, logged once, and listed again after', async () => {
    const { laptop, logger } = await withBackups()
    const { result, failed } = await withEio(listsBackups, async () => [
      await laptop.call('sync:status'),
      await laptop.call('sync:status'),
    ])
    expect(failed).toBe(2)
    for (const status of result) {
      expect(status.backups).toEqual([])
      expect(status.backupsUnreadable).toMatch(/cannot be listed because the disk reported/)
      expect(status.backupsUnreadable).not.toContain(laptop.dir)
    }
    expect(logged(logger)).toBe(1)
    const after = await laptop.call('sync:status')
    expect(after.backups).toHaveLength(2)
    expect(after.backupsUnreadable).toBeUndefined()
  })

  it('EIO reading packed-refs: said, never "no backups"', async () => {
    const { laptop } = await withBackups()
    const { result } = await withEio(
      (call) => call.name === 'promises.open' && String(call.args[0]).endsWith('packed-refs'),
      () => laptop.call('sync:status'),
    )
    expect(result.backupsUnreadable).toMatch(/the disk reported/)
  })

  it('a denied read: said as a permission refused', async () => {
    const { laptop } = await withBackups()
    const undo = setDisk(
      hookDisk(nodeDisk, (call) => (listsBackups(call) ? errnoError(call, 'EACCES') : undefined))
        .disk,
    )
    try {
      const status = await laptop.call('sync:status')
      expect(status.backupsUnreadable).toMatch(/permission was denied/)
    } finally {
      undo()
    }
  })

  it('a file where refs/cairn goes: said, and logged once', async () => {
    const logger = createRecordingLogger()
    const laptop = await sync.machine('laptop', undefined, { logger })
    await laptop.write('a.md', 'a\n')
    const cairnRefs = path.join(laptop.dir, 'history.git', 'refs', 'cairn')
    rmSync(cairnRefs, { recursive: true, force: true, maxRetries: 10 })
    writeFileSync(cairnRefs, 'not a folder\n')
    const status = await laptop.call('sync:status')
    expect(status.backups).toEqual([])
    expect(status.backupsUnreadable).toMatch(/a file is in the way of a folder/)
    expect(logged(logger)).toBe(1)
  })

  it('no backup ever made: none, and nothing said', async () => {
    const laptop = await sync.machine('laptop')
    await laptop.write('a.md', 'a\n')
    const status = await laptop.call('sync:status')
    expect(status.backups).toEqual([])
    expect(status.backupsUnreadable).toBeUndefined()
  })
})
