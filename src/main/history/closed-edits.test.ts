import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { isPersonEdit } from '../review/flags/person-edited'
import { openVersionedMemory, type VersionedMemory } from './index'
import { owedMarkerOf } from './open-repo'
import {
  simulatedSmallDisk,
  gitCli,
  leaveStaleLock,
  tempDataDir,
  CLAUDE,
  type SmallDisk,
} from './test-helpers'

// Issue #12 review: a file edited in another program while Cairn was closed was saved at the
// next start as "Cairn saved notes.md after an interrupted change", blamed on Cairn. Such an
// edit is now an `outside` commit; a start after a crash, or after a close that owed commits,
// still makes a `recovery` one (a write of Cairn's may be among the changes).

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const open = () =>
  openVersionedMemory({
    dataDir,
    now: () => (clock += 1000),
    watch: false,
    logger: createRecordingLogger(),
  })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

async function seed(): Promise<void> {
  const memory = await open()
  const made = await memory.execute(
    { command: 'create', path: '/memories/notes.md', file_text: 'one\n' },
    CLAUDE,
  )
  expect(made.isError).toBe(false)
  await memory.close()
}

async function newest(memory: VersionedMemory) {
  return (await memory.log({ offset: 0, limit: 1 })).entries[0]!
}

/** The subject and the Cairn trailers of the newest commit, as git prints them. */
const gitNewest = () => gitCli(dataDir, 'log', '-1', '--format=%an%n%B', 'main')

describe('changes found at start-up', () => {
  it('saves an edit made while Cairn was closed as made outside Cairn', async () => {
    await seed()
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'one\ntwo\n')
    const memory = await open()
    try {
      const commit = await newest(memory)
      expect(commit).toMatchObject({
        actor: 'system',
        command: 'outside',
        paths: ['/memories/notes.md'],
      })
      expect(gitNewest()).toMatch(/^Cairn\nChanges made outside Cairn while it was closed\n/)
      expect(memory.recovery).toMatchObject({ kind: 'outside-changes', commitOid: commit.oid })
      expect(memory.recovery?.message).toBe(
        '1 file was edited outside Cairn while it was closed; it was saved to the history as its own change.',
      )
      // Blame names the outside edit for the line it added.
      const lines = await memory.blame('/memories/notes.md')
      expect(lines.map((line) => line.commit.command)).toEqual(['create', 'outside'])
      // Issue #13: an edit of the person's own, so Claude's next write to it is flagged.
      expect(isPersonEdit(commit)).toBe(true)
    } finally {
      await memory.close()
    }
  })

  it('keeps a recovery commit when the Cairn before did not close', async () => {
    await seed()
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'one\ntwo\n')
    leaveStaleLock(dataDir)
    const memory = await open()
    try {
      const commit = await newest(memory)
      expect(commit).toMatchObject({ actor: 'system', command: 'recovery' })
      expect(gitNewest()).toMatch(/^Cairn\nSave changes found at start-up\n/)
      expect(memory.recovery?.kind).toBe('uncommitted-changes')
      expect(isPersonEdit(commit)).toBe(true)
    } finally {
      await memory.close()
    }
  })

  describe('after a close that owed a commit', () => {
    let disk: SmallDisk
    beforeEach(async () => {
      disk = await simulatedSmallDisk()
    })
    afterEach(async () => {
      await disk.unmount()
    })

    it('saves the write whose commit failed as a recovery, not as an outside edit', async () => {
      await seed()
      let memory = await open()
      await disk.fill(1)
      const written = await memory.execute(
        { command: 'create', path: '/memories/b.md', file_text: 'b\n' },
        CLAUDE,
      )
      expect(written).toMatchObject({ isError: false, commitPending: true })
      await memory.close()
      await disk.free()
      const marker = owedMarkerOf(path.join(dataDir, 'history.git'))
      expect(existsSync(marker)).toBe(true)
      memory = await open()
      try {
        expect(await newest(memory)).toMatchObject({
          command: 'recovery',
          paths: ['/memories/b.md'],
        })
        // Said once: the start after that one words its own findings afresh.
        expect(existsSync(marker)).toBe(false)
      } finally {
        await memory.close()
      }
    })
  })
})
