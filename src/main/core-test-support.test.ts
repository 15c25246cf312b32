import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { killChatChild } from './core-test-support'

// Stop 32 (mendH): a wait of `killChatChild` that failed left its chat child running past the
// test, in the test's data folder: the kill now comes however the wait ends.

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-kill-child-'))
})
afterEach(async () => {
  // A child the helper left (the old code) must not outlive this test nor hold its folder.
  for (const pid of childrenIn(dataDir)) process.kill(pid, 'SIGKILL')
  await vi.waitFor(() => expect(childrenIn(dataDir)).toEqual([]), { timeout: 30_000 })
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

/** The processes whose command line names `dir`, as `/proc` lists them. */
function childrenIn(dir: string): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(dir)) {
        pids.push(Number(name))
      }
    } catch {
      // Ended meanwhile.
    }
  }
  return pids
}

it.runIf(process.platform === 'linux')(
  'kills the chat child when what it waits for fails',
  async () => {
    const gaveUp = Promise.reject(new Error('gave up'))
    await expect(killChatChild([dataDir, 'http://127.0.0.1:1', 'Hello'], gaveUp)).rejects.toThrow(
      'gave up',
    )
    await vi.waitFor(() => expect(childrenIn(dataDir)).toEqual([]), { timeout: 30_000 })
  },
  60_000,
)
