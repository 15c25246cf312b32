import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import type { VersionedMemory } from './index'
import { intentFileOf } from './restore-intent'
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

// "Revert this change" on the change right after a damaged version (issue #15, loose ends):
// undoing it means bringing that damaged version back, which cannot be done. It is refused in
// plain words that name the file, before anything is written: never damaged or partial bytes.
describe('reverting the change after a damaged version', () => {
  it.each([
    ['truncated', 'truncate'],
    ['deleted', 'delete'],
  ] as const)(
    'refuses, naming the file, and changes nothing when the version before it is %s',
    async (_label, how) => {
      const { old, tip } = await seed()
      await damage(gitCli(repo.dataDir, 'rev-parse', `${old}:x/f2.md`).trim(), how)
      const before = await folderFiles(repo.dataDir)
      let memory: VersionedMemory | null = await repo.open()
      try {
        for (let attempt = 0; attempt < 2; attempt++) {
          const error = await memory.revert(tip).catch((e: unknown) => e)
          expect(error).toBeInstanceOf(CairnError)
          expect(error).toMatchObject({ code: 'history-damaged' })
          const message = (error as Error).message
          expect(message).toMatch(
            /^Cannot undo that change \(.+, x\/f2\.md\): the history's copy of \/memories\/x\/f2\.md from before it is damaged on disk, so that version cannot be brought back\. Nothing was changed\.$/,
          )
          expect(message).not.toContain(repo.dataDir)
          // Nothing written, nothing committed, no restore left for the next open to finish.
          expect(await folderFiles(repo.dataDir)).toEqual(before)
          expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
          expect(headFiles(repo.dataDir)).toEqual(before)
          expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
        }
        await memory.close()
        memory = await repo.open()
        expect(commitCount(repo.dataDir)).toBe(3)
        expect(await folderFiles(repo.dataDir)).toEqual(before)
        // The rest of memory still works: a later change is made and undone as git has it.
        await memory.execute(
          { command: 'str_replace', path: '/memories/x/f1.md', old_str: 'first', new_str: 'one' },
          CLAUDE,
        )
        const edit = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
        const undone = await memory.revert(edit)
        expect(undone.commit).toMatchObject({ command: 'revert', parent: edit })
        expect(gitCli(repo.dataDir, 'show', 'main:x/f1.md')).toBe(
          gitCli(repo.dataDir, 'show', `${edit}~1:x/f1.md`),
        )
        expect(await folderFiles(repo.dataDir)).toEqual(before)
      } finally {
        await memory.close()
      }
    },
  )

  it('refuses the whole undo when one of the files it brings back is damaged, writing neither', async () => {
    let memory: VersionedMemory | null = await repo.open()
    let target: string
    let all: string
    try {
      await repo.create(memory, 'a.md', 'A1\n')
      await repo.create(memory, 'b.md', 'B1\n')
      target = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      for (const [file, from, to] of [
        ['a.md', 'A1', 'A2'],
        ['b.md', 'B1', 'B2'],
      ] as const) {
        await memory.execute(
          { command: 'str_replace', path: `/memories/${file}`, old_str: from, new_str: to },
          CLAUDE,
        )
      }
      // One change of both files: back to A1 and B1.
      const restored = await memory.restoreAll(target)
      all = restored.commit!.oid
    } finally {
      await memory.close()
    }
    // b.md's copy before that change (B2) is damaged; a.md's (A2) is sound.
    await damage(gitCli(repo.dataDir, 'rev-parse', `${all}~1:b.md`).trim(), 'truncate')
    expect(gitCli(repo.dataDir, 'show', `${all}~1:a.md`)).toBe('A2\n')
    const before = await folderFiles(repo.dataDir)
    expect(before).toEqual(
      new Map([
        ['a.md', 'A1\n'],
        ['b.md', 'B1\n'],
      ]),
    )
    memory = await repo.open()
    try {
      const error = await memory.revert(all).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toContain(
        "the history's copy of /memories/b.md from before it is damaged on disk",
      )
      expect((error as Error).message).toMatch(/Nothing was changed\.$/)
      expect(await folderFiles(repo.dataDir)).toEqual(before)
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(all)
      expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
    } finally {
      await memory.close()
    }
  })
})

// The same refusal where the change deleted the file: undoing it brings the deleted version
// back, and that version's copy is the damaged one (redges, a hostile review of the above).
describe('reverting a delete whose deleted version is damaged', () => {
  it('refuses, naming the file, and writes nothing', async () => {
    const { tip: edited } = await seed()
    let memory: VersionedMemory = await repo.open()
    let deleted: string
    try {
      await memory.execute({ command: 'delete', path: '/memories/x/f2.md' }, CLAUDE)
      deleted = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
    } finally {
      await memory.close()
    }
    // The version the delete removed ("changed") is held by no file any more: nothing mends it.
    await damage(gitCli(repo.dataDir, 'rev-parse', `${edited}:x/f2.md`).trim(), 'truncate')
    const before = await folderFiles(repo.dataDir)
    expect([...before.keys()]).toEqual(['x/f1.md'])
    memory = await repo.open()
    try {
      const error = await memory.revert(deleted).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toMatch(
        /^Cannot undo that change \(.+, x\/f2\.md\): the history's copy of \/memories\/x\/f2\.md from before it is damaged on disk, so that version cannot be brought back\. Nothing was changed\.$/,
      )
      expect((error as Error).message).not.toContain(repo.dataDir)
      expect(await folderFiles(repo.dataDir)).toEqual(before)
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(deleted)
      expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
    } finally {
      await memory.close()
    }
  })
})

// A rename keeps the content: the damaged copy from before it is the one the renamed file
// holds, mended from that file before the undo reads it, which then goes through as git has it.
describe('reverting a rename whose earlier copy is damaged', () => {
  it('mends the copy from the renamed file and undoes the rename', async () => {
    await seed()
    let memory: VersionedMemory = await repo.open()
    let renamed: string
    try {
      await memory.execute(
        { command: 'rename', old_path: '/memories/x/f2.md', new_path: '/memories/y.md' },
        CLAUDE,
      )
      renamed = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
    } finally {
      await memory.close()
    }
    await damage(gitCli(repo.dataDir, 'rev-parse', `${renamed}~1:x/f2.md`).trim(), 'truncate')
    memory = await repo.open()
    try {
      const undone = await memory.revert(renamed)
      expect(undone.commit).toMatchObject({ command: 'revert', parent: renamed })
      expect(await folderFiles(repo.dataDir)).toEqual(
        new Map([
          ['x/f1.md', 'first\n'],
          ['x/f2.md', 'changed\n'],
        ]),
      )
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
    } finally {
      await memory.close()
    }
    fsck(repo.dataDir)
  })
})

// "Revert this change" where the version before it has a folder's tree damaged (issue #15,
// stop 26): the change itself is intact, so "the history is damaged at <this change>" named
// the wrong version. The refusal names the folder whose earlier state cannot be read, and the
// files the change touched there, before anything is written.
describe('reverting a change whose earlier folder state is damaged', () => {
  interface Story {
    /** The change to undo. */
    readonly change: string
    /** The files the refusal names, by which folder of the version before is damaged. */
    readonly named: { readonly root: string; readonly sub: string }
  }

  const STORIES: ReadonlyArray<[string, () => Promise<Story>]> = [
    [
      'an edit of one file',
      async () => {
        const { tip } = await seed()
        return { change: tip, named: { root: '/memories/x/f2.md', sub: '/memories/x/f2.md' } }
      },
    ],
    [
      'a change of many files',
      async () => {
        const memory = await repo.open()
        try {
          await repo.create(memory, 'a.md', 'A1\n')
          await repo.create(memory, 'x/b.md', 'B1\n')
          await repo.create(memory, 'x/c.md', 'C1\n')
          const target = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
          for (const [file, from, to] of [
            ['a.md', 'A1', 'A2'],
            ['x/b.md', 'B1', 'B2'],
            ['x/c.md', 'C1', 'C2'],
          ] as const) {
            await memory.execute(
              { command: 'str_replace', path: `/memories/${file}`, old_str: from, new_str: to },
              CLAUDE,
            )
          }
          const restored = await memory.restoreAll(target)
          return {
            change: restored.commit!.oid,
            named: {
              root: '/memories/a.md, /memories/x/b.md, /memories/x/c.md',
              sub: '/memories/x/b.md, /memories/x/c.md',
            },
          }
        } finally {
          await memory.close()
        }
      },
    ],
    [
      'a delete',
      async () => {
        await seed()
        const memory = await repo.open()
        try {
          await memory.execute({ command: 'delete', path: '/memories/x/f2.md' }, CLAUDE)
          const change = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
          return { change, named: { root: '/memories/x/f2.md', sub: '/memories/x/f2.md' } }
        } finally {
          await memory.close()
        }
      },
    ],
    [
      'a rename',
      async () => {
        await seed()
        const memory = await repo.open()
        try {
          await memory.execute(
            { command: 'rename', old_path: '/memories/x/f2.md', new_path: '/memories/y.md' },
            CLAUDE,
          )
          const change = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
          return {
            change,
            named: { root: '/memories/x/f2.md, /memories/y.md', sub: '/memories/x/f2.md' },
          }
        } finally {
          await memory.close()
        }
      },
    ],
  ]

  const DAMAGE: ReadonlyArray<
    [label: string, folder: 'root' | 'sub', how: 'truncate' | 'delete' | 'garble']
  > = [
    ['the memory folder truncated', 'root', 'truncate'],
    ['the folder x garbled', 'sub', 'garble'],
    ['the folder x deleted', 'sub', 'delete'],
  ]

  /** Damages the loose tree `oid`: cut short, gone, or its bytes garbled past its header. */
  async function damageTree(oid: string, how: 'truncate' | 'delete' | 'garble'): Promise<void> {
    if (how !== 'garble') return damage(oid, how)
    const file = repo.objectFile(oid)
    await chmod(file, 0o644)
    const bytes = await readFile(file)
    // Past zlib's 2-byte header: the deflated data no longer inflates to what hashes to `oid`.
    for (let i = 2; i < bytes.length; i++) bytes[i] = bytes[i]! ^ 0x5a
    await writeFile(file, bytes)
  }

  for (const [story, build] of STORIES) {
    it.each(DAMAGE)(
      `refuses to undo ${story} with %s, naming it, and changes nothing`,
      async (_label, folder, how) => {
        const { change, named } = await build()
        const tree = gitCli(
          repo.dataDir,
          'rev-parse',
          `${change}~1${folder === 'root' ? '^{tree}' : ':x'}`,
        ).trim()
        // Not the version now: open would write HEAD's trees again from the folder.
        expect(gitCli(repo.dataDir, 'ls-tree', '-r', '-t', 'main')).not.toContain(tree)
        expect(gitCli(repo.dataDir, 'rev-parse', 'main^{tree}').trim()).not.toBe(tree)
        await damageTree(tree, how)
        const before = await folderFiles(repo.dataDir)
        let memory: VersionedMemory = await repo.open()
        try {
          for (let attempt = 0; attempt < 2; attempt++) {
            const error = await memory.revert(change).catch((e: unknown) => e)
            expect(error).toBeInstanceOf(CairnError)
            expect(error).toMatchObject({ code: 'history-damaged' })
            const where = folder === 'root' ? 'the memory folder' : 'the folder /memories/x'
            const message = (error as Error).message
            expect(message).toMatch(/^Cannot undo that change \([^)]+\): /)
            expect(message.replace(/^Cannot undo that change \([^)]+\): /, '')).toBe(
              `the history's record of ${where} from before it is damaged on disk, so what ${named[folder]} held then cannot be read. Nothing was changed.`,
            )
            expect(message).not.toContain(repo.dataDir)
            // No object id: not the damaged tree's, not the change's.
            expect(message).not.toMatch(/[0-9a-f]{7}/)
            expect(await folderFiles(repo.dataDir)).toEqual(before)
            expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(change)
            expect(headFiles(repo.dataDir)).toEqual(before)
            expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
          }
          await memory.close()
          memory = await repo.open()
          expect(await folderFiles(repo.dataDir)).toEqual(before)
          expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(change)
        } finally {
          await memory.close()
        }
      },
    )
  }

  it('names the memory folder when the commit of the version before is damaged', async () => {
    const { old, tip } = await seed()
    await damage(old, 'truncate')
    const before = await folderFiles(repo.dataDir)
    const memory = await repo.open()
    try {
      const error = await memory.revert(tip).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toMatch(
        /^Cannot undo that change \([^)]+\): the history's record of the memory folder from before it is damaged on disk, so what \/memories\/x\/f2\.md held then cannot be read\. Nothing was changed\.$/,
      )
      expect(await folderFiles(repo.dataDir)).toEqual(before)
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
      expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
    } finally {
      await memory.close()
    }
  })

  it("still says the change itself is damaged when its own folder's tree is", async () => {
    const { tip } = await seed()
    let memory: VersionedMemory = await repo.open()
    try {
      // A later change of x: the change's own tree of x is no longer HEAD's.
      await repo.create(memory, 'x/f3.md', 'third\n')
    } finally {
      await memory.close()
    }
    await damage(gitCli(repo.dataDir, 'rev-parse', `${tip}:x`).trim(), 'truncate')
    memory = await repo.open()
    try {
      const error = await memory.revert(tip).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toBe(
        `The history is damaged at ${tip.slice(0, 7)}: part of that version is corrupt. Nothing was changed.`,
      )
    } finally {
      await memory.close()
    }
  })
})

// The version before lists the folder x as a folder whose id is a file's: read, it is "not a
// tree", and the refusal said the folder's record "holds not a tree" (review of stop 26).
describe('reverting a change whose earlier folder is listed with a file in its place', () => {
  it('says that record is damaged, in plain words, and changes nothing', async () => {
    const { tip } = await seed()
    const blob = gitCli(repo.dataDir, 'rev-parse', `${tip}:x/f2.md`).trim()
    const odd = execFileSync(
      'git',
      ['--git-dir', repo.gitdir, 'hash-object', '-t', 'tree', '-w', '--literally', '--stdin'],
      { input: Buffer.concat([Buffer.from('40000 x\0'), Buffer.from(blob, 'hex')]) },
    )
      .toString()
      .trim()
    const field = (format: string) => gitCli(repo.dataDir, 'log', '-1', `--format=${format}`, tip)
    const env = {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: repo.dataDir,
      GIT_AUTHOR_NAME: field('%an').trim(),
      GIT_AUTHOR_EMAIL: field('%ae').trim(),
      GIT_AUTHOR_DATE: field('%ad').trim(),
      GIT_COMMITTER_NAME: field('%cn').trim(),
      GIT_COMMITTER_EMAIL: field('%ce').trim(),
      GIT_COMMITTER_DATE: field('%cd').trim(),
    }
    const git = (...args: string[]) =>
      execFileSync('git', ['--git-dir', repo.gitdir, ...args], { encoding: 'utf8', env }).trim()
    const parent = git('commit-tree', odd, '-m', 'odd')
    const change = execFileSync(
      'git',
      ['--git-dir', repo.gitdir, 'commit-tree', `${tip}^{tree}`, '-p', parent, '-F', '-'],
      { encoding: 'utf8', env, input: field('%B') },
    ).trim()
    gitCli(repo.dataDir, 'update-ref', 'refs/heads/main', change)
    const before = await folderFiles(repo.dataDir)
    const memory = await repo.open()
    try {
      const error = await memory.revert(change).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      expect((error as Error).message).toMatch(
        /^Cannot undo that change \([^)]+\): the history's record of the folder \/memories\/x from before it is damaged, so what \/memories\/x\/f2\.md held then cannot be read\. Nothing was changed\.$/,
      )
      expect(await folderFiles(repo.dataDir)).toEqual(before)
      expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(change)
      expect(existsSync(intentFileOf(repo.gitdir))).toBe(false)
    } finally {
      await memory.close()
    }
  })
})

// A folder of the version before that the change left alone is never read by its revert:
// damage there refuses nothing (review of stop 26: only the folders a change touched count).
describe('reverting a change beside a damaged folder of the version before', () => {
  it('undoes a change of a top-folder file while the folder x of before is damaged', async () => {
    const memory = await repo.open()
    let change: string
    try {
      await repo.create(memory, 'x/f1.md', 'first\n')
      change = (await repo.create(memory, 'a.md', 'top\n')).commit!.oid
      await memory.execute(
        { command: 'str_replace', path: '/memories/x/f1.md', old_str: 'first', new_str: 'then' },
        CLAUDE,
      )
    } finally {
      await memory.close()
    }
    const tree = gitCli(repo.dataDir, 'rev-parse', `${change}~1:x`).trim()
    expect(gitCli(repo.dataDir, 'rev-parse', `${change}:x`).trim()).toBe(tree)
    expect(gitCli(repo.dataDir, 'rev-parse', 'main:x').trim()).not.toBe(tree)
    await damage(tree, 'truncate')
    const reopened = await repo.open()
    try {
      const result = await reopened.revert(change)
      expect(result.commit).not.toBeNull()
      expect(await folderFiles(repo.dataDir)).toEqual(new Map([['x/f1.md', 'then\n']]))
      expect(headFiles(repo.dataDir)).toEqual(new Map([['x/f1.md', 'then\n']]))
    } finally {
      await reopened.close()
    }
  })
})

// History's view of a change whose version before has a folder damaged said "The history is
// damaged at <this change>", as its revert did before stop 26: the change is intact, the
// version before it is not (review of stop 26).
describe('showing a change whose earlier folder state is damaged', () => {
  it.each([
    ['the memory folder', 'root'],
    ['the folder /memories/x', 'sub'],
  ] as const)('names %s, not the change', async (where, folder) => {
    const { tip } = await seed()
    const tree = gitCli(
      repo.dataDir,
      'rev-parse',
      `${tip}~1${folder === 'root' ? '^{tree}' : ':x'}`,
    ).trim()
    await damage(tree, 'truncate')
    const memory = await repo.open()
    try {
      const error = await memory.show(tip).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'history-damaged' })
      const message = (error as Error).message
      expect(message).toMatch(/^Cannot show that change \([^)]+\): /)
      expect(message.replace(/^Cannot show that change \([^)]+\): /, '')).toBe(
        `the history's record of ${where} from before it is damaged on disk, so what /memories/x/f2.md held then cannot be read.`,
      )
      expect(message).not.toMatch(/[0-9a-f]{7}/)
      expect(message).not.toContain(repo.dataDir)
    } finally {
      await memory.close()
    }
  })
})
