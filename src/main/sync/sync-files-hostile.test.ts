/**
 * Sync's own files (config.json, state.json, machine.json) when something else stands in their
 * place: a fifo, a link. Read by name, a fifo with no writer held the read for ever (the status,
 * Sync now and every later call waited, and a worker of the file system's pool with them), and
 * a link was followed out of the data folder. Found here and by disk29 at once; disk29's mend
 * (merged first) takes either as a hand edit gone wrong: defaults, never waited on, never read
 * through, and a save replaces the name rather than writing through it. A real data folder
 * (rsync29).
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
  await Promise.all(
    dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10 })),
  )
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
    it(`answers at once with a fifo in place of ${name}, as a file gone wrong`, async () => {
      const { dir, sync } = await syncFolder()
      const file = path.join(sync, name)
      execFileSync('mkfifo', [file])
      fifos.push(file)
      const store = createSyncStore(dir, createRecordingLogger())
      // Answered (a hang here fails by the test's time-out): the defaults, or a fresh id.
      expect(await read(store)).toBeTruthy()
      if (name === 'state.json') expect(await store.state()).toMatchObject({ remoteUrl: null })
      if (name === 'config.json') expect(await store.config()).toMatchObject({ url: '' })
    })
  }

  it('follows no link in place of state.json, and a save replaces the link, not its target', async () => {
    const { dir, sync } = await syncFolder()
    const outside = path.join(dir, 'elsewhere.json')
    const text = JSON.stringify({ remoteUrl: 'https://example.com/x.git', lastRemote: null })
    await writeFile(outside, text)
    await symlink(outside, path.join(sync, 'state.json'))
    const store = createSyncStore(dir, createRecordingLogger())
    const state = await store.state()
    expect(state.remoteUrl).toBeNull()
    await store.saveState({ ...state, lastSyncedAt: 1 })
    expect(await readFile(outside, 'utf8')).toBe(text)
    expect((await lstat(path.join(sync, 'state.json'))).isFile()).toBe(true)
  })
})
