import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LOCK_FILE } from '../lib/instance-lock'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, gitCli, tempDataDir } from './test-helpers'

// "Memory at this reply" took `head()` when the turn started, while an outside save was still
// in the watcher's debounce: Claude's `view` then read newer text than the commit the reply
// links to (review hunt10 D8). `settledHead()` saves such edits first.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null = null
let logger: RecordingLogger
// The Cairn that took the data folder over, when a test has one.
let other: VersionedMemory | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  await memory?.close()
  memory = null
  await other?.close()
  other = null
  await cleanup()
})

async function openWith(watch: false | { debounceMs: number }): Promise<VersionedMemory> {
  logger = createRecordingLogger()
  memory = await openVersionedMemory({ dataDir, watch, maintenance: false, logger })
  await memory.execute(
    { command: 'create', path: '/memories/prefs.md', file_text: 'likes tea\n' },
    CLAUDE,
  )
  return memory
}

const personSaves = (text = 'likes coffee\n') =>
  fs.writeFileSync(path.join(dataDir, 'memories', 'prefs.md'), text)

/** Someone removed the lock file by hand, and a second Cairn opened the same data folder. */
async function anotherCairnTakesOver(): Promise<void> {
  fs.rmSync(path.join(dataDir, LOCK_FILE))
  other = await openVersionedMemory({
    dataDir,
    watch: false,
    maintenance: false,
    logger: createRecordingLogger(),
  })
}

const TAKEN_OVER = /^Another Cairn took over this data folder: this one saves nothing more/

describe('the memory a turn starts with (D8)', () => {
  it('saves an outside edit still in the watcher debounce before naming the commit', async () => {
    // A debounce far longer than the test: only settledHead can save the edit in time.
    const m = await openWith({ debounceMs: 600_000 })
    const before = m.head()
    personSaves()
    await vi.waitFor(
      async () => {
        const at = await m.settledHead()
        expect(at).not.toBe(before)
        expect(await m.readAt('/memories/prefs.md', at!)).toBe('likes coffee\n')
      },
      { timeout: 10_000, interval: 50 },
    )
    const seen = await m.execute({ command: 'view', path: '/memories/prefs.md' }, CLAUDE)
    expect(String(seen.content)).toContain('likes coffee')
    expect(gitCli(dataDir, 'log', '-1', '--format=%s', 'main').trim()).toBe(
      'Changes made outside Cairn',
    )
  })

  it('reads the whole folder when nothing watches it', async () => {
    const m = await openWith(false)
    const before = m.head()
    personSaves()
    const at = await m.settledHead()
    expect(at).not.toBe(before)
    expect(await m.readAt('/memories/prefs.md', at!)).toBe('likes coffee\n')
    // Nothing new: the same commit, no empty one.
    expect(await m.settledHead()).toBe(at)
  })

  it('still names a commit when nothing can be saved (closed)', async () => {
    const m = await openWith(false)
    const before = m.head()
    await m.close()
    memory = null
    expect(await m.settledHead()).toBe(before)
    expect(logger.entries.map((entry) => entry.message)).toEqual([
      'Outside edits could not be saved before a turn; its memory is as saved',
    ])
  })
})

describe('after another Cairn took the data folder over', () => {
  it('says so once, not at every turn', async () => {
    const m = await openWith(false)
    const before = m.head()
    await anotherCairnTakesOver()
    for (const text of ['one\n', 'two\n', 'three\n']) {
      personSaves(text)
      // The turn still starts, on memory as this Cairn last saved it.
      expect(await m.settledHead()).toBe(before)
    }
    expect(logger.entries).toHaveLength(1)
    expect(logger.entries[0]).toMatchObject({ level: 'warn', message: TAKEN_OVER })
    expect(logger.entries[0]!.error).toBeUndefined()
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(before)
  })

  it('says so once across outside edits the watcher saw and later turns', async () => {
    const m = await openWith({ debounceMs: 20 })
    const before = m.head()
    await anotherCairnTakesOver()
    personSaves('seen by the watcher\n')
    // No turn has started: only the watcher's attempt can have said it.
    await vi.waitFor(() => expect(logger.entries).toHaveLength(1), {
      timeout: 10_000,
      interval: 20,
    })
    for (const text of ['one\n', 'two\n']) {
      personSaves(text)
      expect(await m.settledHead()).toBe(before)
    }
    expect(logger.entries).toHaveLength(1)
    expect(logger.entries[0]).toMatchObject({ level: 'warn', message: TAKEN_OVER })
  })
})
