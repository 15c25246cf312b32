/**
 * Sync's own files (config.json, state.json, machine.json) when something else stands in their
 * place: a fifo, a link. Read by name, a fifo with no writer held the read for ever (the status,
 * Sync now and every later call waited, and a worker of the file system's pool with them), and
 * a link was followed out of the data folder. Each is refused with plain words, nothing is
 * written over it, and the file put right is read again. A real data folder (rsync29).
 */
import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { createSyncStore, type SyncStore } from './store'

const dirs: string[] = []
const fifos: string[] = []
afterEach(async () => {
  // A read the old code left waiting at a fifo's open is let go (a writer comes and goes).
  for (const fifo of fifos.splice(0)) {
    try {
      closeSync(openSync(fifo, constants.O_RDWR))
    } catch {
      // Gone already.
    }
  }
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

async function syncFolder(): Promise<{ dir: string; sync: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-sync-files-'))
  dirs.push(dir)
  const sync = path.join(dir, 'sync')
  await mkdir(sync)
  return { dir, sync }
}

const READERS: ReadonlyArray<[string, (store: SyncStore) => Promise<unknown>]> = [
  ['state.json', (store) => store.state()],
  ['config.json', (store) => store.config()],
  ['machine.json', (store) => store.machineId()],
]

describe('sync’s own files replaced by something else', () => {
  for (const [name, read] of READERS) {
    it(`refuses a fifo in place of ${name} at once, writes nothing over it, reads it once put right`, async () => {
      const { dir, sync } = await syncFolder()
      const file = path.join(sync, name)
      execFileSync('mkfifo', [file])
      fifos.push(file)
      const store = createSyncStore(dir, createRecordingLogger())
      const refused = await read(store).then(
        () => null,
        (error: unknown) => error as { code?: string; message?: string },
      )
      expect(refused?.code).toBe('io-error')
      expect(refused?.message).toBe(
        `Cairn could not read its sync settings because sync/${name} is not a plain file. Nothing was changed.`,
      )
      expect(refused?.message).not.toContain(dir)
      expect((await lstat(file)).isFIFO()).toBe(true)

      // Put right: the next call reads the file (nothing was cached from the refusal).
      await rm(file)
      const again = await read(store)
      expect(again).toBeTruthy()
    })
  }

  it('follows no link in place of state.json, and writes nothing through it', async () => {
    const { dir, sync } = await syncFolder()
    const outside = path.join(dir, 'elsewhere.json')
    const text = JSON.stringify({ remoteUrl: 'https://example.com/x.git', lastRemote: null })
    await writeFile(outside, text)
    await symlink(outside, path.join(sync, 'state.json'))
    const store = createSyncStore(dir, createRecordingLogger())
    await expect(store.state()).rejects.toMatchObject({
      code: 'io-error',
      message:
        'Cairn could not read its sync settings because sync/state.json is not a plain file. Nothing was changed.',
    })
    expect(await readFile(outside, 'utf8')).toBe(text)
    expect((await lstat(path.join(sync, 'state.json'))).isSymbolicLink()).toBe(true)
  })
})
