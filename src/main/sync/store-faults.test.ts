/**
 * Sync's own files when the disk fails their read, and when one is larger than it can ever be.
 * `readPlainFileAsync` went straight to node's file system, past the disk seam, so a fault
 * could not be put in front of it and the store's path for a disk that fails was never run;
 * and a sparse file of gigabytes at state.json was read whole (node refused it past 2 GiB, an
 * error taken for a failing disk, for the whole session). A real data folder (disk30).
 */
import { truncateSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { createSyncStore } from './store'

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-sync-store-'))
  await mkdir(path.join(dataDir, 'sync'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const STATE = {
  remoteUrl: 'https://example.com/memory.git',
  lastRemote: null,
}

// Every read through the seam of a file named `name` fails with EIO until `restore()`.
function failingReadsOf(name: string): () => void {
  const opened = new Set<number>()
  return setDisk({
    ...nodeDisk,
    promises: {
      ...nodeDisk.promises,
      async open(file, flags, mode) {
        const fd = await nodeDisk.promises.open(file, flags, mode)
        if (path.basename(file) === name) opened.add(fd)
        return fd
      },
      async read(fd, buffer, offset, length, position) {
        if (opened.has(fd)) {
          throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })
        }
        return nodeDisk.promises.read(fd, buffer, offset, length, position)
      },
      async close(fd) {
        opened.delete(fd)
        return nodeDisk.promises.close(fd)
      },
    },
  })
}

describe('sync’s own files on a disk that fails', () => {
  for (const [name, read] of [
    ['state.json', (store: ReturnType<typeof createSyncStore>) => store.state()],
    ['config.json', (store: ReturnType<typeof createSyncStore>) => store.config()],
  ] as const) {
    it(`an EIO reading ${name}: a plain error, the file untouched, the next read works`, async () => {
      const file = path.join(dataDir, 'sync', name)
      const text =
        name === 'state.json'
          ? JSON.stringify(STATE)
          : JSON.stringify({ url: 'https://example.com/memory.git', machineName: 'desk' })
      await writeFile(file, text)
      const store = createSyncStore(dataDir, createRecordingLogger())
      const restore = failingReadsOf(name)
      let error: unknown
      try {
        error = await read(store).catch((e: unknown) => e)
      } finally {
        restore()
      }
      expect(error).toBeInstanceOf(CairnError)
      expect(error).toMatchObject({
        code: 'io-error',
        message:
          'Cairn could not read its sync settings because the disk reported a read or write error. Nothing was changed.',
      })
      expect(String((error as Error).message)).not.toContain(dataDir)
      expect(await readFile(file, 'utf8')).toBe(text)
      // Nothing was cached from the failed read: the same store reads the file now.
      const again = await read(store)
      if (name === 'state.json') expect(again).toMatchObject(STATE)
      else expect(again).toMatchObject({ url: 'https://example.com/memory.git' })
    })
  }
})

describe('sync’s own files larger than they can be', () => {
  it('a sparse 3 GB state.json reads as a hand edit gone wrong: defaults, said in the log', async () => {
    const file = path.join(dataDir, 'sync', 'state.json')
    await writeFile(file, '')
    truncateSync(file, 3 * 1024 * 1024 * 1024)
    const logger = createRecordingLogger()
    const store = createSyncStore(dataDir, logger)
    expect(await store.state()).toMatchObject({ remoteUrl: null })
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'Could not read state.json of sync; starting from defaults',
    )
  })
})
