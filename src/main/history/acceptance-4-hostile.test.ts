import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ChangeResult } from '../../shared/types'
import type { Origin } from './index'
import { CLAUDE, commitCount, folderFiles, fsck, gitCli, memoryTestBed } from './test-helpers'

// Issue #4's promises tried the unkind way (probe33a): restores across a file that became a
// folder, reverts of every kind of commit, file histories across A→B→A, log pages cut at
// filter boundaries, `show` of odd commits, hostile paths in reads, and start-up recovery with
// several faults at once. After every step: `git fsck --strict` and HEAD's tree equal to the
// folder byte for byte.

const bed = memoryTestBed()

/** Every regular file in the memory folder, as relative path -> blob id of its exact bytes. */
async function folderBlobs(root: string, prefix = ''): Promise<Map<string, string>> {
  const blobs = new Map<string, string>()
  for (const dirent of await readdir(path.join(root, prefix), { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${dirent.name}` : dirent.name
    if (dirent.isDirectory()) for (const e of await folderBlobs(root, relative)) blobs.set(...e)
    else if (dirent.isFile()) {
      const bytes = await readFile(path.join(root, relative))
      const oid = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
      blobs.set(relative, oid)
    }
  }
  return blobs
}

/** `git fsck --strict` clean, and HEAD's tree the folder exactly (paths and bytes). */
async function sound(): Promise<void> {
  expect(fsck(bed.dataDir)).toBe('')
  const head = new Map<string, string>()
  const listing = commitCount(bed.dataDir) ? gitCli(bed.dataDir, 'ls-tree', '-r', '-z', 'main') : ''
  for (const line of listing.split('\0').filter(Boolean)) {
    const [meta, name] = line.split('\t') as [string, string]
    head.set(name, meta.split(' ')[2]!)
  }
  const sortedMap = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1))
  expect(sortedMap(await folderBlobs(path.join(bed.dataDir, 'memories')))).toEqual(sortedMap(head))
}

async function run(input: Record<string, unknown>, origin: Origin = CLAUDE): Promise<string> {
  const outcome = await bed.memory.execute(input, origin)
  if (outcome.isError) throw new Error(String(outcome.content))
  await sound()
  return outcome.commit!.oid
}

const create = (p: string, text: string, origin?: Origin) =>
  run({ command: 'create', path: `/memories/${p}`, file_text: text }, origin)

/**
 * Runs a change that must be refused: a plain error (no stack, no host path unless the caller
 * sent one, which it then only echoes), nothing committed, the folder untouched.
 */
async function refused(
  change: () => Promise<unknown>,
  sent = '',
  check = true,
): Promise<{ code: string; message: string }> {
  const before = { head: bed.memory.head(), files: await folderFiles(bed.dataDir) }
  const count = commitCount(bed.dataDir)
  let error: { code?: string; message: string } | null = null
  try {
    await change()
  } catch (caught) {
    error = caught as { code?: string; message: string }
  }
  expect(error, 'refused').not.toBeNull()
  if (!sent.includes(bed.dataDir)) expect(error!.message).not.toContain(bed.dataDir)
  expect(error!.message).not.toMatch(/\n\s+at /)
  expect(bed.memory.head()).toBe(before.head)
  expect(commitCount(bed.dataDir)).toBe(count)
  expect(await folderFiles(bed.dataDir)).toEqual(before.files)
  if (check) await sound()
  return { code: String(error!.code), message: error!.message }
}

async function restored(change: () => Promise<ChangeResult>): Promise<string> {
  const result = await change()
  expect(result.commit).not.toBeNull()
  await sound()
  return result.commit!.oid
}

/** The folder's files at `oid` per the git CLI. */
function filesAt(oid: string): Map<string, string> {
  const files = new Map<string, string>()
  const names = gitCli(bed.dataDir, 'ls-tree', '-r', '-z', '--name-only', oid)
  for (const name of names.split('\0').filter(Boolean)) {
    files.set(name, gitCli(bed.dataDir, 'show', `${oid}:${name}`))
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)))
}

describe('restores where a file became a folder, and the reverse', () => {
  it('refuses to put a file back where a folder now stands, then restores all memory over it', async () => {
    const first = await create('a.md', 'file\n')
    await run({ command: 'delete', path: '/memories/a.md' })
    await create('a.md/x.md', 'inside\n')
    expect((await refused(() => bed.memory.restoreFile('/memories/a.md', first))).code).toBe(
      'conflict',
    )
    await refused(() => bed.memory.restoreDeleted('/memories/a.md'))
    expect((await refused(() => bed.memory.revert(first))).code).toBe('conflict')
    await restored(() => bed.memory.restoreAll(first))
    expect(await folderFiles(bed.dataDir)).toEqual(new Map([['a.md', 'file\n']]))
    expect(filesAt('main')).toEqual(filesAt(first))
  })

  it('refuses to put a file back under a name that is now a file, then restores all memory over it', async () => {
    const first = await create('d/x.md', 'x\n')
    await run({ command: 'delete', path: '/memories/d' })
    await create('d', 'now a file\n')
    await refused(() => bed.memory.restoreFile('/memories/d/x.md', first))
    await refused(() => bed.memory.restoreDeleted('/memories/d/x.md'))
    await refused(() => bed.memory.restoreDeleted('/memories/d'))
    await restored(() => bed.memory.restoreAll(first))
    expect(await folderFiles(bed.dataDir)).toEqual(new Map([['d/x.md', 'x\n']]))
  })
})

describe('reverting every kind of commit', () => {
  it('undoes a rename, a delete, a restore, a revert and a recovery commit, each one new commit', async () => {
    const made = await create('a.md', 'one\n')
    const kept = await create('keep.md', 'keep\n')
    const renamed = await run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/sub/b.md',
    })
    const undoRename = await restored(() => bed.memory.revert(renamed))
    expect(await folderFiles(bed.dataDir)).toEqual(
      new Map([
        ['a.md', 'one\n'],
        ['keep.md', 'keep\n'],
      ]),
    )
    // Reverting the revert redoes the rename.
    await restored(() => bed.memory.revert(undoRename))
    expect([...(await folderFiles(bed.dataDir)).keys()]).toEqual(['keep.md', 'sub/b.md'])

    const deleted = await run({ command: 'delete', path: '/memories/keep.md' })
    await restored(() => bed.memory.revert(deleted))
    expect((await folderFiles(bed.dataDir)).get('keep.md')).toBe('keep\n')

    await run({ command: 'str_replace', path: '/memories/keep.md', old_str: 'keep', new_str: 'k2' })
    const back = await restored(() => bed.memory.restoreFile('/memories/keep.md', kept))
    expect((await folderFiles(bed.dataDir)).get('keep.md')).toBe('keep\n')
    await restored(() => bed.memory.revert(back))
    expect((await folderFiles(bed.dataDir)).get('keep.md')).toBe('k2\n')

    // A recovery commit: a file written while Cairn was closed.
    await bed.close()
    await writeFile(path.join(bed.dataDir, 'memories', 'keep.md'), 'edited outside\n')
    await writeFile(path.join(bed.dataDir, 'memories', 'new.md'), 'new outside\n')
    const memory = await bed.reopen()
    const recovery = memory.recovery
    expect(recovery?.commitOid).toBe(memory.head())
    await sound()
    await restored(() => memory.revert(recovery!.commitOid!))
    expect(await folderFiles(bed.dataDir)).toEqual(
      new Map([
        ['keep.md', 'k2\n'],
        ['sub/b.md', 'one\n'],
      ]),
    )
    // The root commit's revert deletes the file it made, now at another name: a conflict.
    await refused(() => memory.revert(made))
    const log = gitCli(
      bed.dataDir,
      'log',
      '--format=%an|%(trailers:key=Command,valueonly,separator=)|%(trailers:key=Restored-From,valueonly,separator=)',
    )
    const lines = log.trim().split('\n')
    expect(lines[0]).toBe(`You|revert|${recovery!.commitOid}`)
    expect(lines[1]).toMatch(/^Cairn\|(recovery|outside)\|$/)
  })
})

describe('restoring all memory to the very first commit and to before a rename chain', () => {
  it('reproduces each snapshot exactly, in one commit each', async () => {
    const first = await create('a.md', 'A\n')
    await create('dir/n.md', 'N\n')
    const beforeChain = bed.memory.head()!
    await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })
    await run({ command: 'rename', old_path: '/memories/dir', new_path: '/memories/d2' })
    await run({ command: 'rename', old_path: '/memories/b.md', new_path: '/memories/d2/a.md' })
    await create('a.md', 'new A\n')
    for (const target of [first, beforeChain, first]) {
      const count = commitCount(bed.dataDir)
      const oid = await restored(() => bed.memory.restoreAll(target))
      expect(commitCount(bed.dataDir)).toBe(count + 1)
      expect(filesAt(oid)).toEqual(filesAt(target))
      expect(gitCli(bed.dataDir, 'rev-parse', `${oid}^`).trim()).not.toBe(oid)
    }
    // The snapshot it already matches commits nothing.
    const again = await bed.memory.restoreAll(first)
    expect(again.commit).toBeNull()
    await sound()
  })
})

describe('a file history across A→B→A and delete-then-recreate', () => {
  it('follows the renames back to the first version, with the deletion, as git log --follow does', async () => {
    const c1 = await create('a.md', 'one\n')
    const c2 = await run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/b.md',
    })
    const c3 = await run({
      command: 'str_replace',
      path: '/memories/b.md',
      old_str: 'one',
      new_str: 'two',
    })
    const c4 = await run({
      command: 'rename',
      old_path: '/memories/b.md',
      new_path: '/memories/a.md',
    })
    const c5 = await run({ command: 'delete', path: '/memories/a.md' })
    const c6 = await create('a.md', 'reborn\n')
    const ours = (await bed.memory.fileHistory('/memories/a.md')).map((c) => c.oid)
    expect(ours.slice(0, 2)).toEqual([c6, c5])
    expect(ours).toEqual(expect.arrayContaining([c4, c3, c2, c1]))
    expect(ours).toEqual([c6, c5, c4, c3, c2, c1])
    const ofB = (await bed.memory.fileHistory('/memories/b.md')).map((c) => c.oid)
    expect(ofB[0]).toBe(c4)
    expect(await bed.memory.readAt('/memories/a.md', c1)).toBe('one\n')
    expect(await bed.memory.readAt('/memories/a.md', c5)).toBeNull()
  })
})

describe('log pages cut at filter boundaries', () => {
  it('gives every matching commit once, newest first, whatever the page size', async () => {
    const user: Origin = { actor: 'user' }
    const other: Origin = { actor: 'claude', conversationId: 'other', toolUseId: 'toolu_o' }
    for (let i = 0; i < 23; i++) {
      const origin = i % 3 === 0 ? user : i % 3 === 1 ? CLAUDE : other
      await create(`f${i % 4}.md`, `v${i}\n`, origin)
    }
    const all = gitCli(bed.dataDir, 'rev-list', 'main').trim().split('\n')
    const byGit = (format: string, match: (line: string) => boolean) =>
      gitCli(bed.dataDir, 'log', `--format=%H ${format}`, 'main')
        .trim()
        .split('\n')
        .filter((l) => match(l.slice(41)))
        .map((l) => l.slice(0, 40))
    const filters = [
      { query: {}, expected: all },
      { query: { actor: 'user' as const }, expected: byGit('%an', (l) => l === 'You') },
      {
        query: { conversationId: 'other' },
        expected: byGit(
          '%(trailers:key=Conversation-Id,valueonly,separator=)',
          (l) => l === 'other',
        ),
      },
      {
        query: { path: '/memories/f1.md' },
        expected: gitCli(bed.dataDir, 'log', '--format=%H', 'main', '--', 'f1.md')
          .trim()
          .split('\n'),
      },
      {
        query: { path: '/memories/f1.md', actor: 'claude' as const, conversationId: 'test' },
        expected: gitCli(
          bed.dataDir,
          'log',
          '--format=%H %an %(trailers:key=Conversation-Id,valueonly,separator=)',
          'main',
          '--',
          'f1.md',
        )
          .trim()
          .split('\n')
          .filter((l) => l.endsWith(' Claude test'))
          .map((l) => l.slice(0, 40)),
      },
      { query: { conversationId: 'nobody' }, expected: [] },
    ]
    for (const { query, expected } of filters) {
      for (const limit of [1, 2, 3, 7, expected.length || 1, expected.length + 1]) {
        const seen: string[] = []
        for (let offset = 0; offset <= expected.length + limit; offset += limit) {
          const page = await bed.memory.log({ offset, limit, ...query })
          expect(page.total).toBe(expected.length)
          expect(page.entries.length).toBe(Math.max(0, Math.min(limit, expected.length - offset)))
          seen.push(...page.entries.map((e) => e.oid))
        }
        expect({ query, limit, seen }).toEqual({ query, limit, seen: expected })
      }
    }
  })
})

describe('show of odd commits', () => {
  it('shows the root commit, a 5 MB file, a binary file and a merge made by git', async () => {
    const root = await create('a.md', 'root\n')
    const shown = await bed.memory.show(root)
    expect(shown.commit.parent).toBeNull()
    expect(shown.changes).toEqual([
      expect.objectContaining({
        path: '/memories/a.md',
        status: 'added',
        before: null,
        after: 'root\n',
      }),
    ])
    const big = `${'x'.repeat(99)}\n`.repeat(50 * 1024)
    await writeFile(path.join(bed.dataDir, 'memories', 'big.md'), big)
    const bin = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 0xff, 0xfe, 0])
    await writeFile(path.join(bed.dataDir, 'memories', 'pic.png'), bin)
    await bed.reopen()
    await sound()
    const recovery = bed.memory.recovery!.commitOid!
    const detail = await bed.memory.show(recovery)
    const byPath = new Map(detail.changes.map((c) => [c.path, c]))
    expect(byPath.get('/memories/pic.png')).toMatchObject({
      binary: true,
      after: null,
      status: 'added',
    })
    const large = byPath.get('/memories/big.md')!
    expect(large.omitted || large.after === big).toBe(true)
    const readBack = await bed.memory.readBytesAt('/memories/pic.png', recovery)
    expect(Buffer.from(readBack!)).toEqual(bin)
    expect(
      execFileSync('git', [
        '--git-dir',
        path.join(bed.dataDir, 'history.git'),
        'cat-file',
        'blob',
        `${recovery}:pic.png`,
      ]),
    ).toEqual(bin)

    // A merge made by the git CLI: a side branch off the root, merged into main.
    await bed.close()
    const gitdir = path.join(bed.dataDir, 'history.git')
    const work = path.join(bed.dataDir, 'side-work')
    await mkdir(work)
    const env = {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: bed.dataDir,
      GIT_AUTHOR_NAME: 'Ann Smith',
      GIT_AUTHOR_EMAIL: 'ann@example.com',
      GIT_COMMITTER_NAME: 'Ann Smith',
      GIT_COMMITTER_EMAIL: 'ann@example.com',
    }
    const git = (...args: string[]) =>
      execFileSync('git', ['--git-dir', gitdir, '--work-tree', work, ...args], {
        env,
        encoding: 'utf8',
      })
    git('branch', 'side', root)
    git('read-tree', 'side')
    git('checkout-index', '-a', '-f')
    await writeFile(path.join(work, 'side.md'), 'from the side\n')
    git('add', 'side.md')
    const sideCommit = git('commit-tree', git('write-tree').trim(), '-p', root, '-m', 'side').trim()
    const mainTip = git('rev-parse', 'main').trim()
    // The merged tree: main's plus side.md.
    git('read-tree', mainTip)
    git(
      'update-index',
      '--add',
      '--cacheinfo',
      `100644,${git('rev-parse', `${sideCommit}:side.md`).trim()},side.md`,
    )
    const merge = git(
      'commit-tree',
      git('write-tree').trim(),
      '-p',
      mainTip,
      '-p',
      sideCommit,
      '-m',
      'merge side',
    ).trim()
    git('update-ref', 'refs/heads/main', merge, mainTip)
    await rm(work, { recursive: true })
    await rm(path.join(gitdir, 'index'), { force: true })
    const memory = await bed.reopen()
    // The folder never held side.md: opening saves that as a change of its own, on the merge.
    await sound()
    expect(memory.recovery).toMatchObject({ kind: 'outside-changes', commitOid: memory.head() })
    expect(gitCli(bed.dataDir, 'rev-parse', 'main^').trim()).toBe(merge)
    expect((await memory.show(memory.head()!)).changes.map((c) => [c.path, c.status])).toEqual([
      ['/memories/side.md', 'deleted'],
    ])
    const merged = await memory.show(merge)
    expect(merged.commit).toMatchObject({
      actor: 'outside',
      author: 'Ann Smith',
      parent: mainTip,
      otherParents: [sideCommit],
    })
    expect(merged.changes.map((c) => [c.path, c.status, c.after])).toEqual([
      ['/memories/side.md', 'added', 'from the side\n'],
    ])
    expect(await memory.readAt('/memories/side.md', merge)).toBe(git('show', `${merge}:side.md`))
  })
})

describe('reads of hostile paths', () => {
  it('reads names with spaces and in either Unicode spelling, and refuses .., absolute and outside paths plainly', async () => {
    const c1 = await create('my notes/a b.md', 'spaced\n')
    const c2 = await create('café.md', 'composed\n')
    await run({
      command: 'str_replace',
      path: '/memories/café.md',
      old_str: 'composed',
      new_str: 'changed',
    })
    const c3 = bed.memory.head()!
    expect(await bed.memory.readAt('/memories/my notes/a b.md', c1)).toBe('spaced\n')
    // History names files byte for byte, as git does: the decomposed spelling is another name,
    // absent until a file of that spelling arrives from outside Cairn.
    const decomposed = '/memories/cafe\u0301.md'
    expect(await bed.memory.readAt(decomposed, c2)).toBeNull()
    expect(await bed.memory.readAt('/memories/café.md', c2)).toBe(
      gitCli(bed.dataDir, 'show', `${c2}:café.md`),
    )
    expect((await bed.memory.diff('/memories/café.md', c2, c3)).after).toBe('changed\n')
    expect((await bed.memory.fileHistory('/memories/café.md')).map((c) => c.oid)).toEqual([c3, c2])
    expect(await bed.memory.fileHistory(decomposed)).toEqual([])
    await bed.close()
    await writeFile(path.join(bed.dataDir, 'memories', 'cafe\u0301.md'), 'decomposed\n')
    const memory = await bed.reopen()
    await sound()
    const c4 = memory.head()!
    expect(await memory.readAt(decomposed, c4)).toBe('decomposed\n')
    expect(await memory.readAt('/memories/café.md', c4)).toBe('changed\n')
    expect(gitCli(bed.dataDir, 'show', `${c4}:cafe\u0301.md`)).toBe('decomposed\n')
    expect((await memory.fileHistory(decomposed)).map((c) => c.oid)).toEqual([c4])
    const hostile = [
      '/memories/../history.git/HEAD',
      '/memories/my notes/../café.md',
      '/memories/./café.md',
      '../memories/café.md',
      'memories/café.md',
      path.join(bed.dataDir, 'memories', 'café.md'),
      '/etc/passwd',
      '/memoriesX/café.md',
      '/memories/.git/config',
      '/memories/café.md\0x',
      '',
    ]
    for (const p of hostile) {
      for (const read of [
        () => bed.memory.readAt(p, c3),
        () => bed.memory.diff(p, c2, c3),
        () => bed.memory.fileHistory(p),
        () => bed.memory.restoreFile(p, c2),
        () => bed.memory.restoreDeleted(p),
      ]) {
        const { message } = await refused(read, p, false)
        if (!p.includes(bed.dataDir)) expect(message).not.toContain(path.dirname(bed.dataDir))
      }
    }
    await sound()
  })
})

describe('a hundred concurrent calls of every kind', () => {
  it('gives a linear history, one commit per change, nothing lost, the folder and HEAD equal', async () => {
    const base = await create('log.md', 'start\n')
    await create('r.md', 'r0\n')
    const user: Origin = { actor: 'user' }
    const calls: Array<() => Promise<{ commit: string | null; ok: boolean }>> = []
    const asExecute = (input: Record<string, unknown>, origin: Origin) => async () => {
      const out = await bed.memory.execute(input, origin)
      return { ok: !out.isError, commit: out.commit?.oid ?? null }
    }
    const asRestore = (change: () => Promise<ChangeResult>) => async () => {
      try {
        const out = await change()
        return { ok: true, commit: out.commit?.oid ?? null }
      } catch {
        return { ok: false, commit: null }
      }
    }
    for (let i = 0; i < 100; i++) {
      switch (i % 10) {
        case 0:
        case 1:
        case 2:
          calls.push(
            asExecute(
              {
                command: 'insert',
                path: '/memories/log.md',
                insert_line: 0,
                insert_text: `line ${i}\n`,
              },
              CLAUDE,
            ),
          )
          break
        case 3:
          calls.push(
            asExecute(
              { command: 'create', path: `/memories/u${i}.md`, file_text: `u${i}\n` },
              user,
            ),
          )
          break
        case 4:
          calls.push(
            asExecute(
              { command: 'rename', old_path: '/memories/r.md', new_path: `/memories/r${i}.md` },
              CLAUDE,
            ),
          )
          break
        case 5:
          calls.push(asRestore(() => bed.memory.restoreFile('/memories/r.md', base)))
          break
        case 6:
          calls.push(asExecute({ command: 'delete', path: `/memories/u${i - 3}.md` }, user))
          break
        case 7:
          calls.push(asRestore(() => bed.memory.restoreDeleted(`/memories/u${i - 4}.md`)))
          break
        case 8:
          calls.push(asRestore(() => bed.memory.revert(bed.memory.head()!)))
          break
        case 9:
          calls.push(
            asExecute(
              { command: 'str_replace', path: '/memories/missing.md', old_str: 'a', new_str: 'b' },
              CLAUDE,
            ),
          )
          break
      }
    }
    const before = commitCount(bed.dataDir)
    const commits: string[] = []
    bed.memory.onCommit((c) => commits.push(c.oid))
    const results = await Promise.all(calls.map((call) => call()))
    const made = results.map((r) => r.commit).filter((c): c is string => c !== null)
    expect(new Set(made).size).toBe(made.length)
    expect(commitCount(bed.dataDir)).toBe(before + made.length)
    const history = gitCli(bed.dataDir, 'rev-list', '--parents', 'main').trim().split('\n')
    for (const line of history) expect(line.split(' ').length).toBeLessThanOrEqual(2)
    expect(new Set(commits)).toEqual(new Set(made))
    // Every insert that succeeded is in log.md once (reverts may have taken some back).
    const inserted = results.filter((r, i) => i % 10 < 3 && r.ok).length
    expect(inserted).toBe(30)
    expect(results.filter((_, i) => i % 10 === 9).every((r) => !r.ok)).toBe(true)
    await sound()
  }, 120_000)
})

describe('start-up recovery with several faults at once', () => {
  const breakings: Array<[string, (gitdir: string) => Promise<void>]> = [
    ['is missing', (g) => rm(g, { recursive: true })],
    [
      'is a file',
      async (g) => {
        await rm(g, { recursive: true })
        await writeFile(g, 'not a repository\n')
      },
    ],
    [
      'has truncated objects',
      async (g) => {
        const objects = path.join(g, 'objects')
        for (const dir of await readdir(objects)) {
          if (!/^[0-9a-f]{2}$/.test(dir)) continue
          for (const name of await readdir(path.join(objects, dir))) {
            const file = path.join(objects, dir, name)
            const bytes = await readFile(file)
            await rm(file, { force: true })
            await writeFile(file, bytes.subarray(0, Math.floor(bytes.length / 2)))
          }
        }
      },
    ],
    ['has a broken HEAD', (g) => writeFile(path.join(g, 'HEAD'), 'ref: refs/heads/\0garbage\n')],
    [
      'has main naming no object',
      (g) => writeFile(path.join(g, 'refs', 'heads', 'main'), `${'1'.repeat(40)}\n`),
    ],
  ]
  for (const [name, breakIt] of breakings) {
    it(`keeps every file when the git directory ${name}, an outside edit and a stray temp file are there`, async () => {
      await create('a.md', 'a\n')
      await create('deep/b.md', 'b\n')
      await bed.close()
      const memories = path.join(bed.dataDir, 'memories')
      await writeFile(path.join(memories, 'a.md'), 'edited outside\n')
      await writeFile(path.join(memories, 'deep', '.cairn-tmp-0123456789ab'), 'half a write')
      await writeFile(path.join(memories, 'new.md'), 'new\n')
      await breakIt(path.join(bed.dataDir, 'history.git'))
      const memory = await bed.reopen()
      const reports = memory.recoveries()
      const aside = (await readdir(bed.dataDir)).filter((n) => n.startsWith('history.git.'))
      expect(await readFile(path.join(bed.dataDir, 'history.git', 'HEAD'), 'utf8')).toBe(
        'ref: refs/heads/main\n',
      )
      if (reports.some((r) => r.kind === 'history-rebuilt') && name !== 'is missing') {
        // Set aside untouched, named in the report by its name only.
        expect(aside).toHaveLength(1)
        expect(reports.map((r) => r.message).join(' ')).toContain(aside[0])
      } else expect(aside).toEqual([])
      expect(reports.map((r) => r.commitOid)).toContain(memory.head())
      expect(await folderFiles(bed.dataDir)).toEqual(
        new Map([
          ['a.md', 'edited outside\n'],
          ['deep/b.md', 'b\n'],
          ['new.md', 'new\n'],
        ]),
      )
      await sound()
      for (const report of reports) {
        expect(report.message).not.toContain(bed.dataDir)
        expect(report.message).not.toContain('/tmp')
      }
      expect(reports.length).toBeGreaterThan(0)
      // And the history goes on.
      await create('after.md', 'after\n')
    })
  }
})

describe('odd ids and folder moves', () => {
  it('refuses ids that name no commit, or a tree or a blob, with a plain error', async () => {
    const c1 = await create('a.md', 'a\n')
    const tree = gitCli(bed.dataDir, 'rev-parse', `${c1}^{tree}`).trim()
    const blob = gitCli(bed.dataDir, 'rev-parse', `${c1}:a.md`).trim()
    for (const oid of [
      '0'.repeat(40),
      'f'.repeat(40),
      tree,
      blob,
      c1.slice(0, 7),
      'HEAD',
      'main',
      `${c1}^`,
    ]) {
      for (const call of [
        () => bed.memory.show(oid),
        () => bed.memory.readAt('/memories/a.md', oid),
        () => bed.memory.diff('/memories/a.md', oid, c1),
        () => bed.memory.diff('/memories/a.md', c1, oid),
        () => bed.memory.restoreFile('/memories/a.md', oid),
        () => bed.memory.revert(oid),
        () => bed.memory.restoreAll(oid),
      ]) {
        await refused(call, '', false)
      }
    }
    await sound()
  })

  it('follows a file through its folder renamed away and back, and reverts a restore of all memory', async () => {
    const c1 = await create('f/x.md', 'x1\n')
    await create('f/y.md', 'y1\n')
    const c3 = await run({ command: 'rename', old_path: '/memories/f', new_path: '/memories/g' })
    const c4 = await run({
      command: 'str_replace',
      path: '/memories/g/x.md',
      old_str: 'x1',
      new_str: 'x2',
    })
    const c5 = await run({ command: 'rename', old_path: '/memories/g', new_path: '/memories/f' })
    const history = (await bed.memory.fileHistory('/memories/f/x.md')).map((c) => c.oid)
    expect(history).toEqual([c5, c4, c3, c1])
    const snapshot = await folderFiles(bed.dataDir)
    const all = await restored(() => bed.memory.restoreAll(c1))
    expect(await folderFiles(bed.dataDir)).toEqual(new Map([['f/x.md', 'x1\n']]))
    await restored(() => bed.memory.revert(all))
    expect(await folderFiles(bed.dataDir)).toEqual(snapshot)
    // Bring back the folder as it was before its first rename, under its old name.
    await run({ command: 'delete', path: '/memories/f' })
    await restored(() => bed.memory.restoreDeleted('/memories/f'))
    expect(await folderFiles(bed.dataDir)).toEqual(snapshot)
  })
})
