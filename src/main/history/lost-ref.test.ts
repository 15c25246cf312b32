import { existsSync } from 'node:fs'
import { readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { VersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  dropNewestIndexEntry,
  recoveryRepo,
} from './test-helpers'

// Defect 1 of issue #9: deleting refs/heads/main made open start a new, parentless history
// (the side index rewritten empty, the old commits left dangling).

const repo = recoveryRepo()

async function fiveFiles(): Promise<string> {
  const memory = await repo.open()
  for (let i = 1; i <= 5; i++) await repo.create(memory, `x/f${i}.md`, `f${i}\n`)
  const tip = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.close()
  return tip
}

async function expectContinuesFrom(memory: VersionedMemory, tip: string, count: number) {
  expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
  expect(commitCount(repo.dataDir)).toBe(count)
  expect((await memory.log({ offset: 0, limit: 50 })).total).toBe(count)
  const next = await repo.create(memory, 'y.md', 'y')
  expect(next.commit?.parent).toBe(tip)
  expect(commitCount(repo.dataDir)).toBe(count + 1)
  expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  fsck(repo.dataDir)
}

/** Opens the history, which must report a repair, and checks it continues from `tip`. */
async function expectRepairedFrom(tip: string, count: number) {
  const memory = await repo.open()
  try {
    expect(memory.recovery?.kind).toBe('history-repaired')
    await expectContinuesFrom(memory, tip, count)
  } finally {
    await memory.close()
  }
}

describe('a lost refs/heads/main (defect 1)', () => {
  it('finds the lost tip again from the side index and continues the history from it', async () => {
    const tip = await fiveFiles()
    await rm(repo.mainRef())
    const memory = await repo.open()
    try {
      expect(memory.recovery).toMatchObject({ kind: 'history-repaired', commitOid: tip })
      expect(memory.recovery?.message).toMatch(/found again/)
      expect(memory.recovery?.message).not.toContain(repo.dataDir)
      await expectContinuesFrom(memory, tip, 5)
    } finally {
      await memory.close()
    }
  })

  it('finds a tip the side index had not recorded yet (killed between ref and index)', async () => {
    const tip = await fiveFiles()
    await dropNewestIndexEntry(repo.dataDir)
    await rm(repo.mainRef())
    await expectRepairedFrom(tip, 5)
  })

  it('finds the tip by scanning the commit objects when the side index is gone too', async () => {
    const tip = await fiveFiles()
    await rm(repo.mainRef())
    await repo.removeSideIndex()
    await expectRepairedFrom(tip, 5)
  })

  it('treats a garbage or empty ref like a missing one', async () => {
    const tip = await fiveFiles()
    await writeFile(repo.mainRef(), '')
    const memory = await repo.open()
    expect(memory.recovery?.kind).toBe('history-repaired')
    await memory.close()
    await writeFile(repo.mainRef(), 'not a commit id\n')
    await expectRepairedFrom(tip, 5)
  })

  it('sets the old repository aside, never overwriting it, when no tip can be found', async () => {
    await fiveFiles()
    const commits = gitCli(repo.dataDir, 'rev-list', 'main').split('\n').filter(Boolean)
    expect(commits).toHaveLength(5)
    await rm(repo.mainRef())
    await repo.removeSideIndex()
    // Every commit object gone: nothing left to find a tip from.
    for (const oid of commits) await rm(repo.objectFile(oid))
    const memory = await repo.open()
    try {
      expect(memory.recovery?.kind).toBe('history-rebuilt')
      expect(memory.recovery?.message).toMatch(/set aside/)
      const aside = (await readdir(repo.dataDir)).filter((name) => name.startsWith('history.git.'))
      expect(aside).toHaveLength(1)
      expect(existsSync(path.join(repo.dataDir, aside[0]!, 'objects'))).toBe(true)
      expect([...(await folderFiles(repo.dataDir)).keys()]).toEqual([
        'x/f1.md',
        'x/f2.md',
        'x/f3.md',
        'x/f4.md',
        'x/f5.md',
      ])
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
      fsck(repo.dataDir)
    } finally {
      await memory.close()
    }
  })
})
