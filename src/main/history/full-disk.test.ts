import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  headFiles,
  leftoverTempFiles,
  mountSmallDisk,
  simulatedSmallDisk,
  type SmallDisk,
  CLAUDE,
  dropNewestIndexEntry,
  indexDirIn,
} from './test-helpers'
import { STRESS } from '../../../test/stress/stress'

// Defects 3 and 10 of issue #9, on a real full disk (a 2 MB tmpfs) and on a full disk
// emulated through the disk seam. Where no tmpfs can be mounted, `npm test` says so and runs
// the real-disk cases on the seam too; the stress run fails instead.

let disk: SmallDisk
let dataDir: string
const open = () => openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })

async function realDisk(): Promise<SmallDisk> {
  try {
    return await mountSmallDisk('2m')
  } catch (error) {
    if (STRESS) throw error
    console.warn(`${(error as Error).message} Using the fault-injection seam instead.`)
    return simulatedSmallDisk()
  }
}

describe.each([
  ['a 2 MB tmpfs', realDisk],
  ['the disk seam', simulatedSmallDisk],
] as const)('on %s', (_name, makeDisk) => {
  beforeEach(async () => {
    disk = await makeDisk()
    dataDir = path.join(disk.dir, 'data')
    await mkdir(dataDir)
  })
  afterEach(() => disk.unmount())

  describe('a full disk at start-up (defect 3)', () => {
    it('fails with a clear "disk full" error, changes nothing, and opens once space is back', async () => {
      let memory = await open()
      for (let i = 1; i <= 7; i++) {
        await memory.execute(
          { command: 'create', path: `/memories/n${i}.md`, file_text: `${i}\n` },
          CLAUDE,
        )
      }
      await memory.close()
      // What a kill between the ref update and the index append leaves: the index one behind.
      await dropNewestIndexEntry(dataDir)
      const index = path.join(indexDirIn(dataDir), 'commits')
      const indexBefore = await readFile(index)
      await disk.fill()

      const error = await open().then(
        (opened) => opened.close().then(() => null),
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(CairnError)
      expect(error).toMatchObject({ code: 'disk-full' })
      expect((error as Error).message).toMatch(/disk is full/)
      expect((error as Error).message).not.toContain(dataDir)
      expect((await readdir(dataDir)).filter((name) => name.startsWith('history.git.'))).toEqual([])
      expect(commitCount(dataDir)).toBe(7)
      expect((await readFile(index)).equals(indexBefore)).toBe(true)

      await disk.free()
      memory = await open()
      try {
        expect((await memory.log({ offset: 0, limit: 50 })).total).toBe(7)
        expect(commitCount(dataDir)).toBe(7)
        fsck(dataDir)
      } finally {
        await memory.close()
      }
    })
  })

  describe('a commit pending on a full disk (defect 10)', () => {
    it('keeps reads working, says "the disk is full" in plain words, and cleans up at open', async () => {
      let memory = await open()
      await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
      // One block left: the memory file fits, its history objects do not.
      await disk.fill(1)
      const written = await memory.execute(
        {
          command: 'create',
          path: '/memories/b.md',
          file_text: 'b\n',
        },
        CLAUDE,
      )
      expect(written).toMatchObject({ isError: false, commitPending: true })

      const viewed = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
      expect(viewed.isError).toBe(false)
      expect(String(viewed.content)).toContain('/memories/b.md')
      const file = await memory.execute({ command: 'view', path: '/memories/a.md' }, CLAUDE)
      expect(file.isError).toBe(false)

      const refused = await memory.execute(
        {
          command: 'create',
          path: '/memories/c.md',
          file_text: 'c\n',
        },
        CLAUDE,
      )
      expect(refused.isError).toBe(true)
      expect(String(refused.content)).toMatch(/the disk is full/)
      expect(String(refused.content)).not.toMatch(/ENOSPC|tmp_obj|\/history\.git/)
      expect(existsSync(path.join(dataDir, 'memories', 'c.md'))).toBe(false)
      await memory.close()

      await disk.free()
      memory = await open()
      try {
        expect(leftoverTempFiles(dataDir)).toEqual([])
        expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
        fsck(dataDir)
      } finally {
        await memory.close()
      }
    })
  })
})
