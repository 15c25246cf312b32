import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { gateAt, tempDataDir, userDelete, userWrite } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { searchMemories, type BrowserLimits } from './browser'
import { browserLimits, memoryBrowserHandlers } from './handlers'
import { searchLive } from './tree-reader'

// `memory:search` reads the folder in slices, the event loop given back between them, as the
// tree and the size meter do. Here the slices are gated: the search stops at a chosen step
// until the test lets it go, so what runs meanwhile, and what the search then answers, is
// seen in a fixed order. The answer is always compared with a plain search made in one go.

const FILES = 120
// Past the listing (one step an entry: the files and their two folders), among the files read.
const AMONG_THE_READS = FILES + 2 + 30

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let limits: BrowserLimits

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  for (const folder of ['notes', 'people']) {
    await mkdir(path.join(dataDir, 'memories', folder), { recursive: true })
    for (let i = 0; i < FILES / 2; i++) {
      const text = `${folder} ${i}\nthe needle of ${folder} ${i}\n`
      await writeFile(path.join(dataDir, 'memories', folder, `f-${i}.md`), text)
    }
  }
  memory = await openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
  limits = browserLimits(memory)
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

/** The plain search: the whole folder in one go, nothing given back meanwhile. */
const plainSearch = (query: string) => searchMemories(memory.folder, query, limits)

describe('a search in slices', () => {
  it('lets other reads answer while it runs, and answers what a plain search does', async () => {
    const gate = gateAt(AMONG_THE_READS)
    let done = false
    const searching = searchLive(memory, 'NEEDLE', limits, gate.slices).then((hits) => {
      done = true
      return hits
    })
    await gate.reached
    const handlers = memoryBrowserHandlers(memory)
    const file = await handlers['memory:read']({ path: '/memories/people/f-7.md' })
    expect(file).toMatchObject({ kind: 'text', text: 'people 7\nthe needle of people 7\n' })
    expect(filesIn(await handlers['memory:tree'](undefined))).toBe(FILES)
    expect(done).toBe(false)

    gate.release()
    const hits = await searching
    expect(hits).toHaveLength(FILES)
    expect(hits).toEqual(await plainSearch('NEEDLE'))
    expect(hits[0]).toEqual({
      path: '/memories/notes/f-0.md',
      line: 2,
      text: 'the needle of notes 0',
    })
    // Nothing changed meanwhile: searched once.
    expect(gate.reads()).toBe(1)
  })

  it('answers the folder as it is after a change made while it ran, never a half of each', async () => {
    const gate = gateAt(AMONG_THE_READS)
    const searching = searchLive(memory, 'needle', limits, gate.slices)
    await gate.reached
    // A file written behind the search, one gone ahead of it, and one moved from ahead of it
    // to behind it: a search that went on would miss all three changes, or list a file gone.
    await userWrite(memory, '/memories/aa-new.md', 'a needle written while it searched\n')
    await userDelete(memory, '/memories/people/f-0.md')
    const moved = await memory.execute(
      { command: 'rename', old_path: '/memories/people/f-1.md', new_path: '/memories/ab.md' },
      { actor: 'user' },
    )
    expect(moved.isError).toBe(false)
    gate.release()
    const hits = await searching
    const paths = new Set(hits.map((hit) => hit.path))
    expect(paths.has('/memories/aa-new.md')).toBe(true)
    expect(paths.has('/memories/ab.md')).toBe(true)
    expect(paths.has('/memories/people/f-0.md')).toBe(false)
    expect(paths.has('/memories/people/f-1.md')).toBe(false)
    expect(hits).toEqual(await plainSearch('needle'))
    // The torn search was made again.
    expect(gate.reads()).toBe(2)
  })

  it('gives the same answer through the memory:search channel', async () => {
    const handlers = memoryBrowserHandlers(memory)
    const hits = await handlers['memory:search']({ query: 'needle of people 1' })
    expect(hits).toEqual(await plainSearch('needle of people 1'))
    // people 1 and people 10 to 19.
    expect(hits.map((hit) => hit.path)).toHaveLength(11)
  })
})

function filesIn(entries: ReadonlyArray<{ kind: string }>): number {
  return entries.filter((entry) => entry.kind === 'file').length
}
