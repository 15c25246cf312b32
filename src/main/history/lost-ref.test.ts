import { existsSync } from 'node:fs'
import { readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  tempDataDir,
  CLAUDE,
  dropNewestIndexEntry,
  indexDirIn,
} from './test-helpers'

// Defect 1 of issue #9: deleting refs/heads/main made open start a new, parentless history
// (the side index rewritten empty, the old commits left dangling).

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)
const open = () =>
  openVersionedMemory({ dataDir, now, watch: false, logger: createRecordingLogger() })
const ref = () => path.join(dataDir, 'history.git', 'refs', 'heads', 'main')

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

async function fiveFiles(): Promise<string> {
  const memory = await open()
  for (let i = 1; i <= 5; i++) {
    await memory.execute(
      { command: 'create', path: `/memories/x/f${i}.md`, file_text: `f${i}\n` },
      CLAUDE,
    )
  }
  const tip = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.close()
  return tip
}

async function expectContinuesFrom(memory: VersionedMemory, tip: string, count: number) {
  expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(tip)
  expect(commitCount(dataDir)).toBe(count)
  expect((await memory.log({ offset: 0, limit: 50 })).total).toBe(count)
  const next = await memory.execute(
    { command: 'create', path: '/memories/y.md', file_text: 'y' },
    CLAUDE,
  )
  expect(next.commit?.parent).toBe(tip)
  expect(commitCount(dataDir)).toBe(count + 1)
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  fsck(dataDir)
}

describe('a lost refs/heads/main (defect 1)', () => {
  it('finds the lost tip again from the side index and continues the history from it', async () => {
    const tip = await fiveFiles()
    await rm(ref())
    const memory = await open()
    try {
      expect(memory.recovery).toMatchObject({ kind: 'history-repaired', commitOid: tip })
      expect(memory.recovery?.message).toMatch(/found again/)
      expect(memory.recovery?.message).not.toContain(dataDir)
      await expectContinuesFrom(memory, tip, 5)
    } finally {
      await memory.close()
    }
  })

  it('finds a tip the side index had not recorded yet (killed between ref and index)', async () => {
    const tip = await fiveFiles()
    await dropNewestIndexEntry(dataDir)
    await rm(ref())
    const memory = await open()
    try {
      expect(memory.recovery?.kind).toBe('history-repaired')
      await expectContinuesFrom(memory, tip, 5)
    } finally {
      await memory.close()
    }
  })

  it('finds the tip by scanning the commit objects when the side index is gone too', async () => {
    const tip = await fiveFiles()
    await rm(ref())
    await rm(indexDirIn(dataDir), { recursive: true })
    const memory = await open()
    try {
      expect(memory.recovery?.kind).toBe('history-repaired')
      await expectContinuesFrom(memory, tip, 5)
    } finally {
      await memory.close()
    }
  })

  it('treats a garbage or empty ref like a missing one', async () => {
    const tip = await fiveFiles()
    await writeFile(ref(), '')
    let memory = await open()
    expect(memory.recovery?.kind).toBe('history-repaired')
    await memory.close()
    await writeFile(ref(), 'not a commit id\n')
    memory = await open()
    try {
      expect(memory.recovery?.kind).toBe('history-repaired')
      await expectContinuesFrom(memory, tip, 5)
    } finally {
      await memory.close()
    }
  })

  it('sets the old repository aside, never overwriting it, when no tip can be found', async () => {
    await fiveFiles()
    const gitdir = path.join(dataDir, 'history.git')
    const commits = gitCli(dataDir, 'rev-list', 'main').split('\n').filter(Boolean)
    expect(commits).toHaveLength(5)
    await rm(ref())
    await rm(indexDirIn(dataDir), { recursive: true })
    // Every commit object gone: nothing left to find a tip from.
    for (const oid of commits) await rm(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)))
    const memory = await open()
    try {
      expect(memory.recovery?.kind).toBe('history-rebuilt')
      expect(memory.recovery?.message).toMatch(/set aside/)
      const aside = (await readdir(dataDir)).filter((name) => name.startsWith('history.git.'))
      expect(aside).toHaveLength(1)
      expect(existsSync(path.join(dataDir, aside[0]!, 'objects'))).toBe(true)
      expect([...(await folderFiles(dataDir)).keys()]).toEqual([
        'x/f1.md',
        'x/f2.md',
        'x/f3.md',
        'x/f4.md',
        'x/f5.md',
      ])
      expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })
})
