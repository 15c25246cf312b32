import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { MemoryEntry } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { gateAt, tempDataDir } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { listTree, sharedTreeReader } from '../memory-browser'

// The person's editor changes the folder directly; the watcher saves it only after its
// debounce, so the change stamp (moved by the queue's changes) did not see it: a sliced walk of
// the tree that such an edit ran through was trusted, and listed a folder removed meanwhile
// beside one gone from the list, a folder that never was. rfirst30: the watcher's first sight
// of an edit moves the stamp, so the walk is made again.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  for (const folder of ['notes', 'people', 'zz']) {
    await mkdir(path.join(dataDir, 'memories', folder), { recursive: true })
    for (let i = 0; i < 20; i++) {
      await writeFile(path.join(dataDir, 'memories', folder, `f-${i}.md`), `${folder} ${i}\n`)
    }
  }
  // A debounce no test waits out: the edit below is seen, never saved, while the walk runs.
  memory = await openVersionedMemory({
    dataDir,
    watch: { debounceMs: 600_000 },
    logger: createRecordingLogger(),
  })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const paths = (entries: ReadonlyArray<MemoryEntry>) => entries.map((e) => e.path)

it(
  'a walk an outside edit ran through is walked again, and a question after it is not given the old walk',
  { timeout: 60_000 },
  async () => {
    // In 'people', past all of 'notes' (one step an entry).
    const gate = gateAt(25)
    const readTree = sharedTreeReader(memory, gate.slices)
    const walking = readTree()
    await gate.reached
    const stamp = memory.changeStamp()
    // The editor removes two folders: one the walk has passed, one it has not reached.
    await rm(path.join(dataDir, 'memories', 'notes'), { recursive: true })
    await rm(path.join(dataDir, 'memories', 'zz'), { recursive: true })
    // Until the watcher has had the events (bounded, 20 s: on main the stamp never moves).
    for (let turn = 0; turn < 2000 && memory.changeStamp() === stamp; turn++) await sleep(10)
    const askedAfter = readTree()
    gate.release()
    const now = paths(await listTree(memory.folder))
    expect(now.some((p) => p.startsWith('/memories/notes'))).toBe(false)
    expect(paths(await walking)).toEqual(now)
    expect(paths(await askedAfter)).toEqual(now)
    expect(gate.reads()).toBeGreaterThan(1)
  },
)
