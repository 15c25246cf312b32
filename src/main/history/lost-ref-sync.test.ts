/**
 * Recovery (defects 1 and 2 of issue #9) in a history that syncs (issue #14): merge commits
 * with two parents, a remote-tracking ref ahead of `main`, and backups under
 * `refs/cairn/backups/`. A lost `main` is found again at this machine's own tip, never at the
 * remote's or a backup's; nothing those refs reach is set aside or dropped.
 */
import { readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import type { VersionedMemory } from './index'
import {
  commitCount,
  commitElsewhere,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  recoveryRepo,
} from './test-helpers'

const repo = recoveryRepo()
const create = repo.create
const TRACKING = 'refs/remotes/origin/main'
const BACKUP = 'refs/cairn/backups/desktop-20250101T000000Z'

/** A chain of `count` commits made on another machine on top of `parent`; returns its tip. */
async function chainElsewhere(
  memory: VersionedMemory,
  parent: string,
  count: number,
  machine: string,
): Promise<string> {
  let tip = parent
  for (let i = 1; i <= count; i++) {
    tip = await commitElsewhere(
      memory.git,
      { [`${machine}/n${i}.md`]: `${machine} ${i}\n` },
      { parents: [tip], machine, time: 1_900_000_000 + i },
    )
  }
  return tip
}

/**
 * A synced history: local commits, a merge of another machine's commits (two parents), then
 * one more local commit; the remote-tracking ref 6 commits ahead (fetched, not merged yet),
 * and a backup of an older history 8 commits long. The foreign chains are longer and newer
 * than this machine's, so only knowing the refs tells the right tip.
 */
async function syncedHistory(): Promise<{
  tip: string
  merge: string
  tracking: string
  backup: string
  count: number
}> {
  const memory = await repo.open()
  try {
    await create(memory, 'a.md', 'a\n')
    const base = memory.git.head()!
    await create(memory, 'b.md', 'b\n')
    const remote = await chainElsewhere(memory, base, 1, 'laptop')
    const merge = await memory.git.exclusive(async (session) => {
      const oid = await commitElsewhere(
        memory.git,
        { 'laptop/n1.md': 'laptop 1\n' },
        { parents: [session.head()!, remote], subject: 'merge laptop' },
      )
      await session.moveMain(oid, 'forward')
      return oid
    })
    await create(memory, 'c.md', 'c\n')
    const tip = memory.git.head()!
    const tracking = await chainElsewhere(memory, remote, 6, 'laptop')
    const backup = await chainElsewhere(memory, base, 8, 'old')
    gitCli(repo.dataDir, 'update-ref', TRACKING, tracking)
    gitCli(repo.dataDir, 'update-ref', BACKUP, backup)
    return { tip, merge, tracking, backup, count: commitCount(repo.dataDir) }
  } finally {
    await memory.close()
  }
}

async function expectKeptEverything(
  memory: VersionedMemory,
  expected: { tip: string; tracking: string; backup: string; count: number },
): Promise<void> {
  expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(expected.tip)
  expect(commitCount(repo.dataDir)).toBe(expected.count)
  // The other refs and every commit they reach are where they were.
  expect(gitCli(repo.dataDir, 'rev-parse', TRACKING).trim()).toBe(expected.tracking)
  expect(gitCli(repo.dataDir, 'rev-parse', BACKUP).trim()).toBe(expected.backup)
  expect(Number(gitCli(repo.dataDir, 'rev-list', '--count', TRACKING).trim())).toBe(8)
  expect(Number(gitCli(repo.dataDir, 'rev-list', '--count', BACKUP).trim())).toBe(9)
  fsck(repo.dataDir)
  expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  await create(memory, 'd.md', 'd\n')
  expect(gitCli(repo.dataDir, 'rev-parse', 'main~1').trim()).toBe(expected.tip)
}

describe('a lost main in a history that syncs', () => {
  it('is found again at this machine’s tip, past a merge, with the side index', async () => {
    const synced = await syncedHistory()
    await rm(repo.mainRef())
    const memory = await repo.open()
    try {
      expect(memory.recovery?.kind).toBe('history-repaired')
      await expectKeptEverything(memory, synced)
      // The merge's second parent is still its parent.
      expect(
        gitCli(repo.dataDir, 'rev-list', '--parents', '-1', synced.merge).trim().split(' '),
      ).toHaveLength(3)
    } finally {
      await memory.close()
    }
  })

  it('is found again by scanning commits, never at the remote’s or a backup’s longer, newer tip', async () => {
    const synced = await syncedHistory()
    await rm(repo.mainRef())
    await repo.removeSideIndex()
    const memory = await repo.open()
    try {
      expect(memory.recovery?.kind).toBe('history-repaired')
      await expectKeptEverything(memory, synced)
      // The timeline holds the local commits and the merged ones, not the unmerged remote's.
      const log = await memory.log({ offset: 0, limit: 100 })
      expect(log.entries.map((entry) => entry.oid)).not.toContain(synced.tracking)
      expect(log.entries.map((entry) => entry.oid)).not.toContain(synced.backup)
    } finally {
      await memory.close()
    }
  })

  it('follows a main the other refs also name (after a fast-forward) when nothing newer is its own', async () => {
    const synced = await syncedHistory()
    // main fast-forwarded to the remote's tip after merging this machine's commits into it.
    const memory = await repo.open()
    let tip: string
    try {
      tip = await memory.git.exclusive(async (session) => {
        const merged = await commitElsewhere(
          memory.git,
          { 'laptop/n7.md': 'laptop 7\n' },
          { parents: [synced.tracking, session.head()!], base: session.head(), machine: 'laptop' },
        )
        await session.moveMain(merged, 'forward')
        return merged
      })
    } finally {
      await memory.close()
    }
    gitCli(repo.dataDir, 'update-ref', TRACKING, tip)
    await rm(repo.mainRef())
    await repo.removeSideIndex()
    const reopened = await repo.open()
    try {
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
      expect(gitCli(repo.dataDir, 'rev-parse', BACKUP).trim()).toBe(synced.backup)
      fsck(repo.dataDir)
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
    } finally {
      await reopened.close()
    }
  })

  it('rebuilds a damaged merge commit at the tip with both its parents', async () => {
    const memory = await repo.open()
    let merge: string
    try {
      await create(memory, 'a.md', 'a\n')
      const base = memory.git.head()!
      await create(memory, 'b.md', 'b\n')
      const remote = await chainElsewhere(memory, base, 2, 'laptop')
      merge = await memory.git.exclusive(async (session) => {
        const oid = await commitElsewhere(
          memory.git,
          { 'laptop/n1.md': 'laptop 1\n', 'laptop/n2.md': 'laptop 2\n' },
          { parents: [session.head()!, remote], subject: 'merge laptop' },
        )
        await session.moveMain(oid, 'forward')
        return oid
      })
      gitCli(repo.dataDir, 'update-ref', TRACKING, remote)
    } finally {
      await memory.close()
    }
    const file = repo.objectFile(merge)
    const before = await readFile(file)
    await truncate(file, 10)
    const reopened = await repo.open()
    try {
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(merge)
      expect(
        gitCli(repo.dataDir, 'rev-list', '--parents', '-1', merge).trim().split(' '),
      ).toHaveLength(3)
      fsck(repo.dataDir)
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
      // Written again exactly (or repaired to the same id).
      expect((await readFile(file)).length).toBeGreaterThan(10)
      expect(before.length).toBeGreaterThan(10)
    } finally {
      await reopened.close()
    }
  })

  it('a backup alone naming a commit keeps it through an open that repairs the tip', async () => {
    const synced = await syncedHistory()
    await writeFile(repo.mainRef(), 'garbage\n')
    const memory = await repo.open()
    try {
      await expectKeptEverything(memory, synced)
    } finally {
      await memory.close()
    }
  })
})
