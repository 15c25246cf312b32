import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MemoryEntry } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { gateAt, gitCli, tempDataDir, userDelete, userWrite } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { consistentRead, type Breather } from '../lib/time-slices'
import { listTree, memoryBrowserHandlers, sharedTreeReader } from '../memory-browser'
import { createReviewService, type ReviewService } from '../review'
import { createHygieneService, type HygieneService } from './hygiene-service'
import { openReadLog } from './read-log'

// The memory tree and the size meter walk the whole folder in slices, giving the event loop
// back between them (a synchronous walk of 20,000 files held every other answer for seconds).
// Here the slices are gated: the walk stops at a chosen step until the test lets it go, so
// what runs meanwhile, and what the walk then answers, is seen in a fixed order.

const FILES = 120

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let review: ReviewService

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  // Files made before the memory opens: the open commits them, as edits made outside Cairn.
  for (const folder of ['notes', 'people']) {
    await mkdir(path.join(dataDir, 'memories', folder), { recursive: true })
    for (let i = 0; i < FILES / 2; i++) {
      const text = `${folder} ${i}\n`.repeat(i + 1)
      await writeFile(path.join(dataDir, 'memories', folder, `f-${i}.md`), text)
    }
  }
  memory = await openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
  review = createReviewService({ memory })
})
afterEach(async () => {
  review.close()
  await memory.close()
  await cleanup()
})

/** HEAD's files with their sizes, as the git CLI lists them (the second opinion). */
function headFiles(): Map<string, number> {
  const files = new Map<string, number>()
  for (const line of gitCli(dataDir, 'ls-tree', '-r', '-l', 'HEAD').trim().split('\n')) {
    const [meta, name] = line.split('\t') as [string, string]
    files.set(`/memories/${name}`, Number(meta.trim().split(/\s+/)[3]))
  }
  return files
}

function filesOf(entries: ReadonlyArray<MemoryEntry>): Map<string, number> {
  return new Map(entries.filter((e) => e.kind === 'file').map((e) => [e.path, e.size]))
}

async function hygieneWith(slices: () => Breather): Promise<HygieneService> {
  const readLog = await openReadLog({ dataDir, logger: createRecordingLogger() })
  return createHygieneService({ memory, readLog, review, slices })
}

describe('the size meter, counted in slices', () => {
  it('lets other reads answer while it counts, and its figures are the folder’s', async () => {
    const gate = gateAt(FILES + 40)
    const hygiene = await hygieneWith(gate.slices)
    try {
      let counted = false
      const counting = hygiene.stats().then((stats) => {
        counted = true
        return stats
      })
      await gate.reached
      // The window's other first questions are answered while the meter is still counting.
      const handlers = memoryBrowserHandlers(memory)
      const tree = await handlers['memory:tree'](undefined)
      const file = await handlers['memory:read']({ path: '/memories/notes/f-3.md' })
      expect(filesOf(tree)).toEqual(headFiles())
      expect(file).toMatchObject({ kind: 'text', text: 'notes 3\n'.repeat(4) })
      expect(counted).toBe(false)

      gate.release()
      const stats = await counting
      const expected = headFiles()
      expect(new Map(stats.files.map((f) => [f.path, f.size]))).toEqual(expected)
      expect(stats.totalBytes).toBe([...expected.values()].reduce((a, b) => a + b, 0))
      // Nothing changed meanwhile: counted once.
      expect(gate.reads()).toBe(1)
    } finally {
      await hygiene.close()
    }
  })

  it('counts a change made while it counted', async () => {
    // Past the listing (one step an entry), in the middle of reading the files.
    const gate = gateAt(FILES + 2 + 30)
    const hygiene = await hygieneWith(gate.slices)
    try {
      const counting = hygiene.stats()
      await gate.reached
      await userWrite(memory, '/memories/notes/new.md', 'written while the meter counted\n')
      await userDelete(memory, '/memories/people/f-0.md')
      const moved = await memory.execute(
        { command: 'rename', old_path: '/memories/people/f-1.md', new_path: '/memories/moved.md' },
        { actor: 'user' },
      )
      expect(moved.isError).toBe(false)
      gate.release()
      const stats = await counting
      const counted = new Map(stats.files.map((f) => [f.path, f.size]))
      expect(counted.get('/memories/notes/new.md')).toBe(32)
      expect(counted.has('/memories/people/f-0.md')).toBe(false)
      expect(counted.has('/memories/people/f-1.md')).toBe(false)
      expect(counted.has('/memories/moved.md')).toBe(true)
      expect(counted).toEqual(headFiles())
      // The torn count was made again.
      expect(gate.reads()).toBe(2)
    } finally {
      await hygiene.close()
    }
  })
})

describe('the memory tree, walked in slices', () => {
  it('is walked again when a change ran between its slices', async () => {
    const gate = gateAt(1)
    const listing = consistentRead(
      memory.changeStamp,
      (breathe) => listTree(memory.folder, breathe),
      { slices: gate.slices },
    )
    await gate.reached
    // The root was listed before the first step: a sliced walk alone would miss these.
    await userWrite(memory, '/memories/top.md', 'new at the top\n')
    await userDelete(memory, '/memories/notes/f-5.md')
    gate.release()
    const entries = await listing
    expect(filesOf(entries)).toEqual(headFiles())
    expect(filesOf(entries).has('/memories/top.md')).toBe(true)
    expect(gate.reads()).toBe(2)
  })

  it('is read in one go when every sliced walk was torn', async () => {
    let reads = 0
    let written = 0
    // Each sliced walk meets a change at its first step.
    const tearing = (): Breather => {
      reads++
      let first = true
      return () => {
        if (!first) return undefined
        first = false
        written++
        return userWrite(memory, `/memories/torn-${written}.md`, 'x\n').then(() => undefined)
      }
    }
    const entries = await consistentRead(
      memory.changeStamp,
      (breathe) => listTree(memory.folder, breathe),
      { slices: tearing },
    )
    expect(reads).toBe(2)
    expect(filesOf(entries)).toEqual(headFiles())
    expect(filesOf(entries).has('/memories/torn-2.md')).toBe(true)
  })

  it('gives the same tree as a walk in one go', async () => {
    const sliced = await consistentRead(memory.changeStamp, (breathe) =>
      listTree(memory.folder, breathe),
    )
    expect(sliced).toEqual(await listTree(memory.folder))
    expect(sliced.filter((e) => e.kind === 'dir').map((e) => [e.path, e.size])).toEqual([
      [
        '/memories/notes',
        [...filesOf(sliced)]
          .filter(([p]) => p.startsWith('/memories/notes/'))
          .reduce((a, [, s]) => a + s, 0),
      ],
      [
        '/memories/people',
        [...filesOf(sliced)]
          .filter(([p]) => p.startsWith('/memories/people/'))
          .reduce((a, [, s]) => a + s, 0),
      ],
    ])
  })

  it('is walked once for callers that ask together, again for one that asks after a change', async () => {
    const gate = gateAt(3)
    const readTree = sharedTreeReader(memory, gate.slices)
    const first = readTree()
    await gate.reached
    const together = readTree()
    // The meter asked with the tree waits for the same walk.
    const readLog = await openReadLog({ dataDir, logger: createRecordingLogger() })
    const hygiene = createHygieneService({ memory, readLog, review, readTree })
    try {
      const meter = hygiene.stats()
      expect(gate.reads()).toBe(1)
      gate.release()
      expect(await together).toBe(await first)
      expect(new Map((await meter).files.map((f) => [f.path, f.size]))).toEqual(headFiles())
      expect(gate.reads()).toBe(1)

      // A question asked after a change gets a walk of its own, which holds the change.
      const again = readTree()
      await userWrite(memory, '/memories/after.md', 'after\n')
      const after = readTree()
      expect(after).not.toBe(again)
      expect(filesOf(await after).has('/memories/after.md')).toBe(true)
      expect(filesOf(await after)).toEqual(headFiles())
    } finally {
      await hygiene.close()
    }
  })
})
