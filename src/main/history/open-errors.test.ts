import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, openedOn, type DiskCall } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { LOCK_FILE } from '../lib/instance-lock'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory } from './index'
import { CLAUDE, gitCli, tempDataDir } from './test-helpers'

// Every error out of open reaches the person as a CairnError in plain words: no host path, no
// stack, the details in the log. Errors Cairn has no words of its own for (an EEXIST, an
// EINVAL, a library's plain Error naming a path) came out raw before.

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  const memory = await openVersionedMemory({ dataDir, watch: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'alpha\n' }, CLAUDE)
  await memory.close()
  // Changed while Cairn was closed: the open has a recovery commit to make.
  fs.writeFileSync(path.join(dataDir, 'memories', 'b.md'), 'beta\n')
})
afterEach(() => cleanup())

/** Opens with the `n`th disk call failed by `fault`: the error out of open (or null), what was logged. */
async function openFailingAt(
  n: number,
  fault: (call: DiskCall) => Error,
): Promise<{ error: unknown; injected: Error | null; logged: ReadonlyArray<unknown> }> {
  const logger = createRecordingLogger()
  let injected: Error | null = null
  const restore = setDisk(
    hookDisk(nodeDisk, (call) => {
      if (call.n !== n) return undefined
      injected = fault(call)
      return injected
    }).disk,
  )
  let error: unknown = null
  try {
    const memory = await openVersionedMemory({ dataDir, watch: false, logger })
    await memory.close()
  } catch (caught) {
    error = caught
  } finally {
    restore()
  }
  return { error, injected, logged: logger.entries.map((entry) => entry.error) }
}

/** How many disk calls an open of this folder makes (counted on a copy, left as it was). */
async function callsOfAnOpen(): Promise<number> {
  const copy = `${dataDir}-copy`
  fs.cpSync(dataDir, copy, { recursive: true })
  const probe = hookDisk(nodeDisk, () => undefined)
  const restore = setDisk(probe.disk)
  try {
    const memory = await openVersionedMemory({ dataDir: copy, watch: false })
    await memory.close()
  } finally {
    restore()
    fs.rmSync(copy, { recursive: true, force: true, maxRetries: 10 })
  }
  return probe.calls()
}

const faults: ReadonlyArray<readonly [string, (call: DiskCall) => Error]> = [
  ['EEXIST', (call) => errnoError(call, 'EEXIST')],
  ['EINVAL', (call) => errnoError(call, 'EINVAL')],
  // What a library throws: a plain Error whose message names the host path, with no code.
  [
    'a plain Error',
    () => new Error(`unexpected state at ${path.join(dataDir, 'history.git', 'HEAD')}`),
  ],
]

describe('an open that fails with an error Cairn has no words for', () => {
  it.each(faults)(
    '%s: a CairnError in plain words, the details logged, the lock released',
    async (_, fault) => {
      const calls = await callsOfAnOpen()
      expect(calls).toBeGreaterThan(20)

      // Spread over the open: its folders and lock, the repository, the recovery commit.
      let refused = 0
      for (const n of [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144].filter((k) => k <= calls)) {
        const { error, injected, logged } = await openFailingAt(n, fault)
        if (error === null) continue
        refused++
        expect(error, `call ${n}`).toBeInstanceOf(CairnError)
        const message = (error as Error).message
        expect(message, `call ${n}`).toMatch(/^Cairn could not open your memory/)
        expect(message, `call ${n}`).not.toContain(dataDir)
        expect(message, `call ${n}`).not.toMatch(/\n\s+at /)
        // The original, with its path, is in the log.
        if ((error as CairnError).code === 'internal')
          expect(logged, `call ${n}`).toContain(injected)
        // The lock is released: nothing is left to take over.
        expect(fs.existsSync(path.join(dataDir, LOCK_FILE)), `call ${n}`).toBe(false)
      }
      expect(refused).toBeGreaterThan(0)

      // Nothing lost: the next open has every change, and git finds the history sound.
      const memory = await openVersionedMemory({ dataDir, watch: false })
      try {
        const view = await memory.execute({ command: 'view', path: '/memories/b.md' }, CLAUDE)
        expect(view.content).toContain('beta')
      } finally {
        await memory.close()
      }
      gitCli(dataDir, 'fsck', '--strict')
      expect(gitCli(dataDir, 'show', 'main:a.md')).toBe('alpha\n')
    },
  )

  it('an EEXIST on a first open keeps the words the start-up dialog had for it', async () => {
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 })
    fs.mkdirSync(dataDir)
    const said = new Set<string>()
    for (let n = 1; n <= 20; n++) {
      const { error } = await openFailingAt(n, (call) => errnoError(call, 'EEXIST'))
      if (error === null) continue
      expect(error, `call ${n}`).toBeInstanceOf(CairnError)
      expect((error as Error).message, `call ${n}`).not.toContain(dataDir)
      said.add((error as Error).message)
    }
    expect([...said]).toContain(
      "Cairn could not open your memory because something stands where Cairn makes a file or folder of its own in its data folder. The details are in Cairn's log.",
    )
  })

  it.each(['ENOSPC', 'EIO', 'EACCES'])(
    'a disk problem (%s) keeps its own words and has its details logged once',
    async (code) => {
      const calls = await callsOfAnOpen()
      let refused = 0
      for (const n of [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144].filter((k) => k <= calls)) {
        const { error, injected, logged } = await openFailingAt(n, (call) => errnoError(call, code))
        if (error === null) continue
        expect(error, `call ${n}`).toBeInstanceOf(CairnError)
        const message = (error as Error).message
        refused++
        expect(message, `call ${n}`).toMatch(/^Cairn could not open your memory/)
        expect(message, `call ${n}`).not.toContain(dataDir)
        // The original, with its path and call, is in the log, once (as the cause of the
        // error that names the side index's part it refused).
        const original = (entry: unknown) =>
          entry === injected || (entry instanceof Error && entry.cause === injected)
        expect(logged.filter(original), `call ${n}`).toHaveLength(1)
      }
      expect(refused).toBeGreaterThan(0)
    },
  )

  // Found at stop 27: an open that failed while it caught the side index up or checked its
  // newest entry left the index's four descriptors open, four more at every failed open.
  it('a failed open leaves none of the side index’s files open, wherever it failed', async () => {
    const calls = await callsOfAnOpen()
    let refused = 0
    for (let n = 1; n <= calls; n++) {
      const { disk: recording, opened } = openedOn((file) =>
        file.startsWith(path.join(dataDir, 'history.git', 'cairn-index')),
      )
      const restore = setDisk(
        hookDisk(recording, (call) => {
          // A close is not failed here: the seam's would keep the descriptor, as Linux never does.
          if (call.n === n && call.name !== 'closeSync') return errnoError(call, 'EIO')
          if (call.name === 'closeSync') opened.delete(call.args[0] as number)
          return undefined
        }).disk,
      )
      let memory: Awaited<ReturnType<typeof openVersionedMemory>> | null = null
      try {
        memory = await openVersionedMemory({
          dataDir,
          watch: false,
          logger: createRecordingLogger(),
        })
      } catch {
        refused++
        expect([...opened], `call ${n}`).toEqual([])
      } finally {
        restore()
      }
      await memory?.close()
    }
    expect(refused).toBeGreaterThan(0)
  })

  it('keeps the recognised cases’ own words (a full disk)', async () => {
    const { error } = await openFailingAt(1, (call) => errnoError(call, 'ENOSPC'))
    expect(error).toBeInstanceOf(CairnError)
    expect(error).toMatchObject({ code: 'disk-full' })
    expect((error as Error).message).toMatch(/because the disk is full/)
  })
})
