import { statSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { disk } from '../lib/disk'
import { CairnError } from '../lib/errors'
import { createRecordingLogger, type Logger } from '../lib/logger'
import { gitCli, indexDirIn, tempDataDir } from './test-helpers'
import type { VersionedMemory } from './types'
import type { MaintenanceSettings } from './maintainer'
import { openVersionedMemory } from './versioned-memory'

// hunt13-followups D3: a rebuild of the side index that failed once (a full disk) left every
// read past the index saying index-rebuilding for the rest of the session.
let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())
const claude = (id: string) =>
  ({ actor: 'claude', conversationId: 'conv-1', toolUseId: id }) as const
const open = (
  maintenance: false | MaintenanceSettings = false,
  logger?: Logger,
): Promise<VersionedMemory> =>
  openVersionedMemory({ dataDir, now, watch: false, maintenance, ...(logger && { logger }) })
const long = (k: number) => `/memories/${'d'.repeat(60)}/file-${String(k).padStart(4, '0')}.md`

async function damagedOldName(): Promise<void> {
  const m = await open()
  for (let k = 0; k < 260; k++) {
    await m.execute({ command: 'create', path: long(k), file_text: `v${k}\n` }, claude(`t${k}`))
  }
  await m.close()
  // A byte of the oldest name's text, far before the tail the open checks.
  const names = path.join(indexDirIn(dataDir), 'names')
  const bytes = await readFile(names)
  expect(bytes.length).toBeGreaterThan(16_384)
  bytes[8 + 12]! ^= 0x20
  await writeFile(names, bytes)
}
const gitLog = () => gitCli(dataDir, 'log', '--format=%H', 'main').trim().split('\n')
const logOids = async (m: VersionedMemory) =>
  (await m.log({ offset: 0, limit: 1000 })).entries.map((c) => c.oid)

/** Fails the first `times` folders a rebuild makes beside the index, as a full disk would. */
function failRebuilds(times: number): { failed: () => number; restore: () => void } {
  const mkdir = disk.mkdirSync
  let failed = 0
  disk.mkdirSync = (target, mode) => {
    if (String(target).includes('.tmp-') && failed < times) {
      failed++
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    }
    return mkdir(target, mode)
  }
  return { failed: () => failed, restore: () => (disk.mkdirSync = mkdir) }
}

describe('a side-index rebuild that failed is tried again', () => {
  it('by maintain(): the timeline equals git log again', { timeout: 120_000 }, async () => {
    await damagedOldName()
    const m = await open()
    const faults = failRebuilds(1)
    try {
      // This commit meets the damaged name and starts the rebuild, which fails.
      await m.execute(
        { command: 'create', path: '/memories/new.md', file_text: 'n\n' },
        claude('n'),
      )
      for (let tries = 0; faults.failed() === 0 && tries < 600; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(faults.failed()).toBe(1)
      await expect(logOids(m)).rejects.toMatchObject({ code: 'index-rebuilding' })
      for (let k = 0; k < 3; k++) {
        await m.execute(
          { command: 'create', path: `/memories/l${k}.md`, file_text: 'l\n' },
          claude(`l${k}`),
        )
      }
      await m.maintain()
      expect(await logOids(m)).toEqual(gitLog())
      expect((await m.fileHistory(long(0))).length).toBe(1)
    } finally {
      faults.restore()
      await m.close()
    }
  })

  it(
    'on its own after a wait, with no maintain() (background maintenance on)',
    { timeout: 120_000 },
    async () => {
      await damagedOldName()
      const m = await open({ idleMs: 2 ** 30, verifyRetryMs: 20 })
      const faults = failRebuilds(2)
      try {
        await m.execute(
          { command: 'create', path: '/memories/new.md', file_text: 'n\n' },
          claude('n'),
        )
        await m.execute(
          { command: 'create', path: '/memories/n2.md', file_text: 'n\n' },
          claude('n2'),
        )
        // Two failures, then the retry after the wait succeeds: waited for, never timed.
        let oids: string[] | null = null
        for (let tries = 0; oids === null && tries < 600; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          oids = await logOids(m).catch(() => null)
        }
        expect(faults.failed()).toBe(2)
        expect(oids).toEqual(gitLog())
      } finally {
        faults.restore()
        await m.close()
      }
    },
  )
})

// readIndexed through the public read: the timeline asked for at every turn of the event loop
// while a real rebuild (a damaged entry found by a read, the index built again from the
// commits beside the old one, caught up and swapped in) runs. Each answer is the right one or
// "being rebuilt"; never another page, never an error with a stack or a path. (The timeline's
// read is synchronous from taking the index to its answer, so a swap can only fall between two
// reads, never inside one: the replaced-index path itself is tested in index-replaced.test.ts.)
// The damaged entry is read and said once: the index is then marked damaged, and each later
// read answers "being rebuilt" without reading it again (it was read, logged and a check asked
// for at every turn: 24 to 39 times a run).
describe('the timeline while the side index is rebuilt', () => {
  it(
    'answers each time with the right page or "being rebuilt", and the right page once it is in',
    {
      timeout: 120_000,
    },
    async () => {
      await damagedOldName()
      const logger = createRecordingLogger()
      const m = await open(false, logger)
      const logged = (start: string) =>
        logger.entries.filter(({ message }) => message.startsWith(start)).length
      const expected = gitLog()
      const commits = path.join(indexDirIn(dataDir), 'commits')
      const before = statSync(commits).ino
      const said = { right: 0, rebuilding: 0 }
      const ask = async (offset: number, limit: number) => {
        try {
          const page = await m.log({ offset, limit })
          expect(page.entries.map((c) => c.oid)).toEqual(expected.slice(offset, offset + limit))
          expect(page.total).toBe(expected.length)
          said.right++
        } catch (error) {
          expect(error).toBeInstanceOf(CairnError)
          expect((error as CairnError).code).toBe('index-rebuilding')
          expect((error as CairnError).message).not.toContain(dataDir)
          expect((error as CairnError).message).not.toMatch(/\n\s+at /)
          said.rebuilding++
        }
      }
      try {
        // The whole timeline reads the damaged entry: the read says so, and the rebuild starts.
        await ask(0, 1000)
        expect(said.rebuilding).toBe(1)
        let done = false
        const rebuilt = m.maintain().finally(() => {
          done = true
        })
        for (let turn = 0; !done; turn++) {
          await ask(turn % 2 === 0 ? 0 : 100, turn % 2 === 0 ? 1000 : 50)
          await new Promise((resolve) => setImmediate(resolve))
        }
        await rebuilt
        expect(said.rebuilding).toBeGreaterThan(1)
        // One read found the damage and said so; one rebuild, with no check of the index first.
        expect(logged('A damaged history index entry was read')).toBe(1)
        expect(logged('The history index does not match the commits')).toBe(1)
        // Swapped in: another file in the index's place, and every page right from it.
        expect(statSync(commits).ino).not.toBe(before)
        const rightBefore = said.right
        await ask(0, 1000)
        await ask(100, 50)
        expect(said.right).toBe(rightBefore + 2)
      } finally {
        await m.close()
      }
    },
  )
})
