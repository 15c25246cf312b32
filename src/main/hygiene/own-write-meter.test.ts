import { watch, writeFileSync, type FSWatcher } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { differsFromHead } from '../history/outside-changes'
import { CLAUDE, gitCli, tempDataDir, userWrite } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import type { Breather } from '../lib/time-slices'
import { createReviewService, type ReviewService } from '../review'
import { createHygieneService, type HygieneService } from './hygiene-service'
import { openReadLog } from './read-log'

// Stop 32 (first32): the meter the window asks for after each commit was walked two or three
// times: the watcher's sight of the commit's own write moved the change stamp, so the walk it
// ran through was made again (at 20,000 files, every time). An event whose file still has
// exactly the stat Cairn's write left no longer moves it; a person's edit of that file right
// after, of the same size, is still seen, committed as theirs, and walked again.

// The watcher's check of a reported path against HEAD, watched: a test waits for it to have run.
vi.mock('../history/outside-changes', async (importOriginal) => {
  const real = await importOriginal<typeof import('../history/outside-changes')>()
  return { ...real, differsFromHead: vi.fn(real.differsFromHead) }
})

const DEBOUNCE_MS = 50
const FILES = 60

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let review: ReviewService
let hygiene: HygieneService
let sight: FSWatcher

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  for (const folder of ['notes', 'people', 'zz']) {
    await mkdir(path.join(dataDir, 'memories', folder), { recursive: true })
    for (let i = 0; i < FILES / 3; i++) {
      await writeFile(path.join(dataDir, 'memories', folder, `f-${i}.md`), `${folder} ${i}\n`)
    }
  }
  memory = await openVersionedMemory({
    dataDir,
    watch: { debounceMs: DEBOUNCE_MS },
    logger: createRecordingLogger(),
  })
  review = createReviewService({ memory })
  const readLog = await openReadLog({ dataDir, logger: createRecordingLogger() })
  hygiene = createHygieneService({ memory, readLog, review, slices: () => gate.slices() })
})
afterEach(async () => {
  sight.close()
  await hygiene.close()
  review.close()
  await memory.close()
  await cleanup()
})

/** Stops the meter's first walk at its `at`-th step until `release()`; counts the walks. */
function gateAt(at: number) {
  let release!: () => void
  const opened = new Promise<void>((resolve) => (release = resolve))
  let reachedIt!: () => void
  const reached = new Promise<void>((resolve) => (reachedIt = resolve))
  let asked = 0
  let walks = 0
  const breathe: Breather = () => {
    if (++asked !== at) return undefined
    reachedIt()
    return opened
  }
  return {
    slices: (): Breather => (walks++ === 0 ? breathe : () => undefined),
    reached,
    release,
    walks: () => walks,
  }
}
let gate = gateAt(Number.MAX_SAFE_INTEGER)

/**
 * The events of `folder` as a second watch on it sees them: inotify tells every watch on a
 * folder in the same read, so once this one has an event for `name`, Cairn's watcher has too.
 */
function watchToo(folder: string) {
  const names: string[] = []
  sight = watch(path.join(dataDir, 'memories', folder), (_event, name) => {
    if (name) names.push(name.toString())
  })
  return {
    seen: (name: string) =>
      vi.waitFor(() => expect(names).toContain(name), { timeout: 20_000, interval: 10 }),
  }
}

/** HEAD's files with their sizes, as the git CLI lists them (the second opinion). */
function headFiles(): Map<string, number> {
  const files = new Map<string, number>()
  for (const line of gitCli(dataDir, 'ls-tree', '-r', '-l', 'HEAD').trim().split('\n')) {
    const [meta, name] = line.split('\t') as [string, string]
    files.set(`/memories/${name}`, Number(meta.trim().split(/\s+/)[3]))
  }
  return files
}
const metered = (stats: Awaited<ReturnType<HygieneService['stats']>>) =>
  new Map(stats.files.map((f) => [f.path, f.size]))

/**
 * After one of Cairn's own changes: the meter, asked as the window does on `history:commit` and
 * held in 'people' (past all of 'notes'), is walked once. Once `seen` has the change's `event`,
 * and past the debounce, the check of the `reported` path ran (a call after the `asked`-th), in
 * a read, found it equal to HEAD, and the change stamp did not move.
 */
async function expectWalkedOnce(
  seen: ReturnType<typeof watchToo>,
  event: string,
  reported: string,
  asked?: number,
): Promise<void> {
  gate = gateAt(FILES / 3 + 5)
  const meter = hygiene.stats()
  await gate.reached
  const stamp = memory.changeStamp()
  const checks = vi.mocked(differsFromHead)
  const from = asked ?? checks.mock.calls.length
  await seen.seen(event)
  const check = await vi.waitFor(
    () => {
      const index = checks.mock.calls.findIndex(
        ([, paths], i) => i >= from && paths.includes(reported),
      )
      expect(index).toBeGreaterThanOrEqual(0)
      return index
    },
    { timeout: 30_000, interval: 10 },
  )
  expect(await (checks.mock.results[check]!.value as Promise<boolean>)).toBe(false)
  await new Promise((resolve) => setImmediate(resolve))
  expect(memory.changeStamp()).toBe(stamp)
  gate.release()
  expect(metered(await meter)).toEqual(headFiles())
  expect(gate.walks()).toBe(1)
  expect(gitCli(dataDir, 'log', '--format=%s', '-1')).not.toMatch(/outside Cairn/)
}

it(
  "the meter asked after a commit is walked once: the watcher's sight of the commit's own write moves nothing",
  { timeout: 60_000 },
  async () => {
    const notes = watchToo('notes')
    await userWrite(memory, '/memories/notes/f-3.md', 'rewritten by the person in Cairn\n')
    await expectWalkedOnce(notes, 'f-3.md', 'notes/f-3.md')
  },
)

it(
  "a person's edit of the same file right after Cairn's write, same size, is committed as theirs and walked again",
  { timeout: 60_000 },
  async () => {
    const notes = watchToo('notes')
    const file = path.join(dataDir, 'memories', 'notes', 'f-3.md')
    const commits = Number(gitCli(dataDir, 'rev-list', '--count', 'main'))
    await userWrite(memory, '/memories/notes/f-3.md', 'Cairn wrote this line\n')
    // At once, in place (the inode Cairn's rename left), with the same size.
    writeFileSync(file, 'Ann wrote this line!!\n')
    gate = gateAt(FILES / 3 + 5)
    const meter = hygiene.stats()
    await gate.reached
    await notes.seen('f-3.md')
    await vi.waitFor(
      () => expect(gitCli(dataDir, 'show', 'main:notes/f-3.md')).toBe('Ann wrote this line!!\n'),
      { timeout: 20_000, interval: 20 },
    )
    expect(Number(gitCli(dataDir, 'rev-list', '--count', 'main'))).toBe(commits + 2)
    expect(gitCli(dataDir, 'log', '--format=%s', '-1')).toMatch(/outside Cairn/)
    gate.release()
    expect(metered(await meter)).toEqual(headFiles())
    // The walk the edit ran through was made again.
    expect(gate.walks()).toBeGreaterThan(1)
  },
)

// hist34: only the files a command writes were noted; its delete, its rename and the folders a
// create makes still moved the stamp, and the meter after such a commit walked again.
const MOVES: ReadonlyArray<{
  readonly name: string
  readonly input: Record<string, unknown>
  /** The folder watched, the name its event carries, and the path the check is asked about. */
  readonly folder: string
  readonly event: string
  readonly reported: string
}> = [
  {
    name: 'a delete',
    input: { command: 'delete', path: '/memories/notes/f-3.md' },
    folder: 'notes',
    event: 'f-3.md',
    reported: 'notes/f-3.md',
  },
  {
    name: 'a rename',
    input: {
      command: 'rename',
      old_path: '/memories/notes/f-4.md',
      new_path: '/memories/notes/g.md',
    },
    folder: 'notes',
    event: 'g.md',
    reported: 'notes/g.md',
  },
  {
    name: 'a rename of a folder',
    input: { command: 'rename', old_path: '/memories/zz', new_path: '/memories/zy' },
    folder: '',
    event: 'zy',
    reported: 'zy',
  },
  {
    name: 'a delete of a folder',
    input: { command: 'delete', path: '/memories/zz' },
    folder: '',
    event: 'zz',
    reported: 'zz',
  },
  {
    name: 'a create into new folders',
    input: { command: 'create', path: '/memories/notes/new/deep/n.md', file_text: 'n\n' },
    folder: 'notes',
    event: 'new',
    reported: 'notes/new',
  },
]

for (const move of MOVES) {
  it(
    `the meter asked after ${move.name} is walked once: the watcher's sight of the command's own move moves nothing`,
    { timeout: 60_000 },
    async () => {
      const seen = watchToo(move.folder)
      const checks = vi.mocked(differsFromHead)
      const asked = checks.mock.calls.length
      const result = await memory.execute(move.input, CLAUDE)
      expect(result.isError, String(result.content)).toBe(false)
      await expectWalkedOnce(seen, move.event, move.reported, asked)
    },
  )
}

it(
  "a person's file put back where a command deleted one, at once, is committed as theirs and walked again",
  { timeout: 60_000 },
  async () => {
    const notes = watchToo('notes')
    const file = path.join(dataDir, 'memories', 'notes', 'f-3.md')
    const result = await memory.execute(
      { command: 'delete', path: '/memories/notes/f-3.md' },
      CLAUDE,
    )
    expect(result.isError, String(result.content)).toBe(false)
    writeFileSync(file, 'Ann put it back\n')
    gate = gateAt(FILES / 3 + 5)
    const meter = hygiene.stats()
    await gate.reached
    await notes.seen('f-3.md')
    await vi.waitFor(
      () => expect(gitCli(dataDir, 'show', 'main:notes/f-3.md')).toBe('Ann put it back\n'),
      { timeout: 20_000, interval: 20 },
    )
    expect(gitCli(dataDir, 'log', '--format=%s', '-1')).toMatch(/outside Cairn/)
    gate.release()
    expect(metered(await meter)).toEqual(headFiles())
    expect(gate.walks()).toBeGreaterThan(1)
  },
)
