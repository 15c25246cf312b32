import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { LOCK_FILE } from '../lib/instance-lock'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory } from './index'
import { LOG_FILES } from './objects/object-log'
import { CLAUDE, gitCli, tempDataDir } from './test-helpers'

// The memory's close stops the background packing and the removal of replaced files, settles
// the owed folder flushes, empties the write-ahead log, saves the stat cache, closes the store
// and the index, and releases the lock, in that order. A step that threw skipped the rest: the
// lock stayed held, and the next open in this process was refused as "in use". None throws
// for a failing disk today (each catches its own; a sweep failing every call of a close in
// turn, with EIO and with a plain Error, found no close that rejected), so the steps are made
// to throw here through module mocks over the real ones.

const failing = vi.hoisted(() => ({ step: null as 'maintainer' | 'freed' | null }))

vi.mock('./maintainer', async (importOriginal) => {
  const real = await importOriginal<typeof import('./maintainer')>()
  return {
    ...real,
    createMaintainer: (...args: Parameters<typeof real.createMaintainer>) => {
      const maintainer = real.createMaintainer(...args)
      const stop = maintainer.stop.bind(maintainer)
      return Object.assign(maintainer, {
        async stop() {
          await stop()
          if (failing.step === 'maintainer') throw new Error('maintainer stuck')
        },
      })
    },
  }
})
vi.mock('./freed-files', async (importOriginal) => {
  const real = await importOriginal<typeof import('./freed-files')>()
  return {
    ...real,
    createFreedFiles: (...args: Parameters<typeof real.createFreedFiles>) => {
      const freed = real.createFreedFiles(...args)
      const stop = freed.stop.bind(freed)
      return Object.assign(freed, {
        stop() {
          stop()
          if (failing.step === 'freed') throw new Error('freed stuck')
        },
      })
    },
  }
})

let dataDir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  failing.step = null
  await cleanup()
})

describe('closing the memory', () => {
  it.each([
    ['maintainer', 'maintainer stuck'],
    ['freed', 'freed stuck'],
  ] as const)(
    'a close whose %s step throws still releases the lock, empties the log and says why',
    async (step, message) => {
      const memory = await openVersionedMemory({ dataDir, watch: false })
      await memory.execute(
        { command: 'create', path: '/memories/notes/a.md', file_text: 'alpha\n' },
        CLAUDE,
      )
      await memory.execute(
        { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'alpha', new_str: 'beta' },
        CLAUDE,
      )

      failing.step = step
      await expect(memory.close()).rejects.toThrow(message)
      failing.step = null

      // The lock is gone (nothing to take over) and the log emptied by the checkpoint after it.
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false)
      for (const name of LOG_FILES) {
        const log = path.join(dataDir, 'history.git', name)
        if (fs.existsSync(log)) expect(fs.statSync(log).size, name).toBe(0)
      }

      // The next open in this same process is not refused, has no recovery to report and has
      // every change.
      const logger = createRecordingLogger()
      const again = await openVersionedMemory({ dataDir, watch: false, logger })
      try {
        expect(again.recovery).toBeNull()
        const view = await again.execute({ command: 'view', path: '/memories/notes/a.md' }, CLAUDE)
        expect(view.content).toContain('beta')
      } finally {
        await again.close()
      }
      expect(logger.entries).toEqual([])
      expect(gitCli(dataDir, 'show', 'main:notes/a.md')).toBe('beta\n')
      expect(gitCli(dataDir, 'rev-list', '--count', 'main').trim()).toBe('2')
      gitCli(dataDir, 'fsck', '--strict')
    },
  )

  it('a second close waits for the first: the folder opens again as soon as it resolves', async () => {
    const memory = await openVersionedMemory({ dataDir, watch: false })
    await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' },
      CLAUDE,
    )

    // The app's quit and a clean-up closing the same memory at once.
    const first = memory.close()
    await memory.close()
    // Resolved at once, the second close let this open in while the first still held the lock.
    const again = await openVersionedMemory({ dataDir, watch: false }).catch((error: unknown) => {
      throw error instanceof CairnError ? new Error(`refused: ${error.code}`) : error
    })
    await first
    try {
      const view = await again.execute({ command: 'view', path: '/memories/a.md' }, CLAUDE)
      expect(view.content).toContain('alpha')
    } finally {
      await again.close()
    }
    gitCli(dataDir, 'fsck', '--strict')
  })
})

describe('reading the history of a closed memory', () => {
  // Found at stop 27's review: a history read after the close (the window asking for a page
  // while the app quits) met the closed side index, took that for damage, logged "a damaged
  // history index entry was read" and told the person the index was being rebuilt.
  it('is refused as closed, with nothing taken for damage', async () => {
    const logger = createRecordingLogger()
    const memory = await openVersionedMemory({ dataDir, watch: false, logger })
    const made = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' },
      CLAUDE,
    )
    const oid = made.commit!.oid
    await memory.close()

    const reads: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
      ['log', () => memory.log({ offset: 0, limit: 5 })],
      ['fileHistory', () => memory.fileHistory('/memories/a.md')],
      ['blame', () => memory.blame('/memories/a.md', oid)],
      ['compare', () => memory.compare(oid)],
      ['show', () => memory.show(oid)],
      ['searchHistory', () => memory.searchHistory({ text: 'alpha', matchCase: false })],
      // Refused with a bare "maintenance stopped" (a RepackAborted) before stop 28.
      ['maintain', () => memory.maintain()],
    ]
    for (const [name, read] of reads) {
      const error = await read().then(
        () => null,
        (caught: unknown) => caught,
      )
      expect(error, name).toBeInstanceOf(CairnError)
      expect((error as CairnError).code, name).toBe('closed')
      expect((error as CairnError).message, name).toBe('The memory folder is closed.')
    }
    expect(logger.entries).toEqual([])
  })
})

// Stop 28: a lock Cairn cannot read back at its close (EIO) is not removed: it might be another
// Cairn's by then, and deleting that would let two write. It stays, and what the next open says
// must be plain.
describe('a lock that cannot be read back at the close', () => {
  /** The disk refuses reads of cairn.lock by name (the close's check of whose it is). */
  const lockReadsFail = () =>
    setDisk(
      hookDisk(nodeDisk, (call) =>
        (call.name === 'readFileSync' || call.name === 'openSync') &&
        String(call.args[0]).endsWith(LOCK_FILE)
          ? errnoError(call, 'EIO')
          : undefined,
      ).disk,
    )

  it('stays; the next open takes it over, or says plainly why it cannot', async () => {
    const lockFile = path.join(dataDir, LOCK_FILE)
    const memory = await openVersionedMemory({ dataDir, watch: false })
    await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' },
      CLAUDE,
    )
    const left = fs.readFileSync(lockFile, 'utf8')
    let restore = lockReadsFail()
    try {
      await memory.close()
    } finally {
      restore()
    }
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(left)

    // Still unreadable at the next open: refused in plain words, the lock left as it is.
    const logger = createRecordingLogger()
    restore = lockReadsFail()
    let error: unknown
    try {
      error = await openVersionedMemory({ dataDir, watch: false, logger }).then(
        () => null,
        (caught: unknown) => caught,
      )
    } finally {
      restore()
    }
    expect(error).toBeInstanceOf(CairnError)
    expect((error as CairnError).code).toBe('io-error')
    expect((error as CairnError).message).toBe(
      'Cairn could not open your memory because the disk reported a read or write error. Nothing was changed; fix the problem and open Cairn again.',
    )
    expect(fs.readFileSync(lockFile, 'utf8')).toBe(left)

    // Readable again: the lock this process left is taken over, not said to be in use.
    const again = await openVersionedMemory({ dataDir, watch: false })
    try {
      expect(fs.readFileSync(lockFile, 'utf8')).not.toBe(left)
      const view = await again.execute({ command: 'view', path: '/memories/a.md' }, CLAUDE)
      expect(view.content).toContain('alpha')
    } finally {
      await again.close()
    }
    expect(fs.existsSync(lockFile)).toBe(false)
    gitCli(dataDir, 'fsck', '--strict')
  })
})
