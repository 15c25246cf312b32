import { readFileSync, writeFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { moveNoteOf } from './checkout'
import { newerDescendant } from './find-tip'
import { commitCount, folderFiles, fsck, gitCli, headFiles, recoveryRepo } from './test-helpers'

// A `main` that can be read but is behind its own newer commits (review hunt10 D2): the loose
// ref lost after a `git gc` (packed-refs' stale line read in its place), or the ref put back
// to an ancestor. Open took it as it was: the newer commits left the history and their
// changes were committed as "edited outside Cairn".

const repo = recoveryRepo()

async function commits(count: number, from = 0): Promise<string> {
  const memory = await repo.open()
  for (let i = from; i < from + count; i++) await repo.create(memory, `n${i}.md`, `note ${i}\n`)
  const tip = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.close()
  return tip
}

async function expectForwardTo(tip: string, count: number): Promise<void> {
  const memory = await repo.open()
  try {
    expect(memory.recovery).toMatchObject({ kind: 'history-repaired', commitOid: tip })
    expect(memory.recovery?.message).not.toMatch(/outside Cairn/)
    expect(memory.recovery?.message).not.toContain(repo.dataDir)
    expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
    expect((await memory.log({ offset: 0, limit: 50 })).total).toBe(count)
    expect(commitCount(repo.dataDir)).toBe(count)
    const next = await repo.create(memory, 'after.md', 'after\n')
    expect(next.commit?.parent).toBe(tip)
    expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  } finally {
    await memory.close()
  }
  fsck(repo.dataDir)
}

describe('a main behind its own newer commits (D2)', () => {
  it('goes forward past a stale packed-refs line when the loose ref is lost', async () => {
    await commits(2)
    gitCli(repo.dataDir, 'gc', '--quiet', '--prune=now')
    const packed = readFileSync(path.join(repo.gitdir, 'packed-refs'), 'utf8')
    expect(packed).toContain('refs/heads/main')
    const tip = await commits(4, 2)
    await rm(repo.mainRef())
    // git itself now reads the stale value.
    expect(gitCli(repo.dataDir, 'rev-list', '--count', 'main').trim()).toBe('2')
    await expectForwardTo(tip, 6)
  })

  it('goes forward when the ref was put back to an ancestor', async () => {
    const tip = await commits(5)
    const older = gitCli(repo.dataDir, 'rev-parse', 'main~3').trim()
    await writeFile(repo.mainRef(), `${older}\n`)
    await expectForwardTo(tip, 5)
  })

  it('keeps nothing out after a deliberate reset of main and the folder: the folder is committed on top', async () => {
    const tip = await commits(3)
    const older = gitCli(repo.dataDir, 'rev-parse', 'main~2').trim()
    gitCli(repo.dataDir, 'update-ref', 'refs/heads/main', older)
    // The person also put the folder back as it was then.
    await rm(path.join(repo.dataDir, 'memories', 'n1.md'))
    await rm(path.join(repo.dataDir, 'memories', 'n2.md'))
    const memory = await repo.open()
    try {
      const log = await memory.log({ offset: 0, limit: 50 })
      expect(log.total).toBe(4)
      expect(log.entries[1]!.oid).toBe(tip)
      expect(log.entries[0]!.actor).toBe('system')
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
      expect([...headFiles(repo.dataDir).keys()]).toEqual(['n0.md'])
    } finally {
      await memory.close()
    }
    fsck(repo.dataDir)
  })

  it('leaves main where a sync switch a kill interrupted took it back', async () => {
    const tip = await commits(3)
    const older = gitCli(repo.dataDir, 'rev-parse', 'main~2').trim()
    writeFileSync(moveNoteOf(repo.gitdir), JSON.stringify({ from: tip, to: older }))
    const memory = await repo.open()
    try {
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(older)
      expect((await memory.log({ offset: 0, limit: 50 })).total).toBe(1)
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
    } finally {
      await memory.close()
    }
  })
})

describe('a side index whose record names itself as its parent', () => {
  // The walk from the newest record back to `main` followed parents without end (review10
  // F3): open hung, the process with it. A parent not older than its record is damage.
  it('does not move main and does not hang', async () => {
    const oids = Array.from({ length: 7 }, (_, i) => `${i}`.repeat(40))
    const index = {
      size: oids.length,
      oidAt: (i: number) => oids[i]!,
      positionOf: (oid: string) => oids.indexOf(oid),
      parentAt: (i: number) => (i === 4 ? 4 : i - 1),
    }
    const store = {} as Parameters<typeof newerDescendant>[0]
    expect(await newerDescendant(store, '/nowhere', index, oids[1]!)).toBeNull()
  })
})
