import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, gitCli, tempDataDir } from './test-helpers'

// "Memory at this reply" took `head()` when the turn started, while an outside save was still
// in the watcher's debounce: Claude's `view` then read newer text than the commit the reply
// links to (review hunt10 D8). `settledHead()` saves such edits first.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  await memory?.close()
  memory = null
  await cleanup()
})

async function openWith(watch: false | { debounceMs: number }): Promise<VersionedMemory> {
  memory = await openVersionedMemory({
    dataDir,
    watch,
    maintenance: false,
    logger: createRecordingLogger(),
  })
  await memory.execute(
    { command: 'create', path: '/memories/prefs.md', file_text: 'likes tea\n' },
    CLAUDE,
  )
  return memory
}

const personSaves = () =>
  fs.writeFileSync(path.join(dataDir, 'memories', 'prefs.md'), 'likes coffee\n')

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
  })
})
