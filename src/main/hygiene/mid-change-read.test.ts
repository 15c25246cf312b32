import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { MemoryEntry } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { gitCli, tempDataDir, userWrite } from '../history/test-helpers'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { sharedTreeReader } from '../memory-browser'

// A read of the live folder that starts while a change runs (first30 made it "in one go at
// once") met the change half-made: a restore of two files awaits each file's fsync, and a tree
// asked in that gap listed one file restored and the other not, a state the folder never had
// before or after. rfirst30: such a read waits for the running change to end.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  await mkdir(path.join(dataDir, 'memories', 'notes'), { recursive: true })
  await writeFile(path.join(dataDir, 'memories', 'notes', 'a.md'), 'a first\n')
  await writeFile(path.join(dataDir, 'memories', 'notes', 'b.md'), 'b first\n')
  memory = await openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
})
afterEach(async () => {
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

it('a tree asked in the middle of a restore of two files shows neither half of it', async () => {
  const first = memory.head()!
  const before = headFiles()
  await userWrite(memory, '/memories/notes/a.md', 'a second, longer\n')
  await userWrite(memory, '/memories/notes/b.md', 'b second, longer still\n')
  const edited = headFiles()
  expect(edited).not.toEqual(before)

  const readTree = sharedTreeReader(memory)
  const asked: Promise<ReadonlyArray<MemoryEntry>>[] = []
  // Each fsync the restore waits for is a gap in it: a tree is asked in every one.
  const restoreDisk = setDisk({
    ...nodeDisk,
    fsync: (fd: number) => {
      if (memory.changeStamp() % 2 !== 0) asked.push(readTree())
      return nodeDisk.fsync(fd)
    },
  })
  let restored: unknown
  try {
    restored = await memory.restoreAll(first)
  } finally {
    restoreDisk()
  }
  const after = headFiles()
  expect(after).toEqual(before)
  expect(restored).toMatchObject({ commit: { command: 'restore-all' } })
  // The restore waited for fsyncs between its two files, so trees were asked in its middle.
  expect(asked.length).toBeGreaterThan(1)
  // Each answer is the folder before the restore or after it: never one file of each.
  const states = [edited, after].map((files) => JSON.stringify([...files]))
  for (const tree of await Promise.all(asked)) {
    expect(states, 'a tree of half a restore').toContain(JSON.stringify([...filesOf(tree)]))
  }
})
