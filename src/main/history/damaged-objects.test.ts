import { chmod, rm, truncate, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import type { VersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  recoveryRepo,
  CLAUDE,
} from './test-helpers'

// Defect 2 of issue #9: a truncated, empty or missing blob was never detected or repaired;
// `readAt` threw "SHA check failed" and writing the same content again did not repair it.

const repo = recoveryRepo()

async function seed(): Promise<{ old: string; tip: string }> {
  const memory = await repo.open()
  await repo.create(memory, 'x/f1.md', 'first\n')
  await repo.create(memory, 'x/f2.md', 'second\n')
  const old = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.execute(
    {
      command: 'str_replace',
      path: '/memories/x/f2.md',
      old_str: 'second',
      new_str: 'changed',
    },
    CLAUDE,
  )
  const tip = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.close()
  return { old, tip }
}

async function damage(oid: string, how: 'truncate' | 'empty' | 'delete'): Promise<void> {
  const file = repo.objectFile(oid)
  await chmod(file, 0o644)
  if (how === 'delete') await rm(file)
  else if (how === 'empty') await writeFile(file, '')
  else await truncate(file, 6)
}

describe('damaged blobs (defect 2)', () => {
  it.each([
    ['truncated', 'truncate'],
    ['emptied', 'empty'],
    ['deleted', 'delete'],
  ] as const)(
    'verifies the blobs HEAD shares with the folder at open and rewrites a %s one',
    async (_label, how) => {
      const { tip } = await seed()
      // Opened and closed once more: the open checks each stored copy whole once and then
      // only by its size; damage after that must be found all the same.
      await (await repo.open()).close()
      await damage(gitCli(repo.dataDir, 'rev-parse', 'HEAD:x/f1.md').trim(), how)
      const memory = await repo.open()
      try {
        expect(memory.recovery).toMatchObject({ kind: 'history-repaired' })
        expect(memory.recovery?.message).toMatch(/repaired/)
        expect(await memory.readAt('/memories/x/f1.md', tip)).toBe('first\n')
        expect(commitCount(repo.dataDir)).toBe(3)
        fsck(repo.dataDir)
        const next = await repo.create(memory, 'x/f3.md', 'third\n')
        expect(next.commit?.parent).toBe(tip)
        expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
      } finally {
        await memory.close()
      }
    },
  )

  it('replaces a damaged object file when the same content is written again', async () => {
    const { old } = await seed()
    // `second\n` is only in the older commit now: open does not check it.
    const blob = gitCli(repo.dataDir, 'rev-parse', `${old}:x/f2.md`).trim()
    await damage(blob, 'truncate')
    const memory = await repo.open()
    try {
      expect(memory.recovery).toBeNull()
      await repo.create(memory, 'again.md', 'second\n')
      expect(await memory.readAt('/memories/x/f2.md', old)).toBe('second\n')
      fsck(repo.dataDir)
    } finally {
      await memory.close()
    }
  })

  it('shows a version whose blob is gone as damaged, not as an internal error', async () => {
    const { old } = await seed()
    await damage(gitCli(repo.dataDir, 'rev-parse', `${old}:x/f2.md`).trim(), 'delete')
    let memory: VersionedMemory | null = null
    try {
      memory = await repo.open()
      const error = await memory.readAt('/memories/x/f2.md', old).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(CairnError)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toMatch(/damaged/)
      expect((error as Error).message).not.toContain(repo.dataDir)

      const shown = await memory.show(old)
      expect(shown.changes).toEqual([
        expect.objectContaining({ path: '/memories/x/f2.md', damaged: true, after: null }),
      ])
      expect(shown.changes[0]).not.toHaveProperty('beforeDamaged')
    } finally {
      await memory?.close()
    }
  })

  it('shows the intact version after a damaged one whole, not as damaged', async () => {
    const { old, tip } = await seed()
    await damage(gitCli(repo.dataDir, 'rev-parse', `${old}:x/f2.md`).trim(), 'truncate')
    let memory: VersionedMemory | null = null
    try {
      memory = await repo.open()
      // The commit whose parent's copy is damaged: its own side, as git has it.
      const after = gitCli(repo.dataDir, 'show', `${tip}:x/f2.md`)
      expect(after).toBe('changed\n')
      const shown = await memory.show(tip)
      expect(shown.changes).toEqual([
        {
          path: '/memories/x/f2.md',
          oldPath: null,
          status: 'modified',
          before: null,
          after,
          binary: false,
          beforeDamaged: true,
        },
      ])
      const diff = await memory.diff('/memories/x/f2.md', old, tip)
      expect(diff).toEqual(shown.changes[0])
      expect(await memory.compare(old, tip)).toMatchObject({
        changes: [{ path: '/memories/x/f2.md', before: null, after, beforeDamaged: true }],
      })
      // The other way round, the damaged version is the one to show: damaged.
      const back = await memory.diff('/memories/x/f2.md', tip, old)
      expect(back).toMatchObject({ damaged: true, after: null, before: after })
      expect(back).not.toHaveProperty('beforeDamaged')
    } finally {
      await memory?.close()
    }
  })
})
