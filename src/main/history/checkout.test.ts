/**
 * Moving `main` to commits made elsewhere (a sync's fast-forward or merge, a switch of
 * history): the folder follows, the side index holds every new commit parents first, and a
 * crash at any step is finished at the next open.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { moveMain, moveNoteOf } from './checkout'
import { formatCommitMessage } from './commit-message'
import { createObjectStore, serializeCommit, writeMainRef } from './object-store'
import { openRepo } from './open-repo'
import { systemIntent, type Repo } from './repo'
import { checkIndex, openIndex, rebuildIndex } from './side-index'
import { IndexFile, indexDirOf } from './index-file'
import { folderFiles, fsck, gitCli, headFiles, tempDataDir } from './test-helpers'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

async function open(): Promise<Repo> {
  return (await openRepo({ dataDir, now })).repo
}

async function put(repo: Repo, relative: string, content: string | null): Promise<string> {
  const file = path.join(dataDir, 'memories', relative)
  if (content === null) await rm(file)
  else {
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, content)
  }
  const entry = await repo.commit([relative], systemIntent('outside', `edit ${relative}`))
  return entry!.oid
}

/** A commit made "elsewhere": the tree of `files` on top of `parents`, never checked out. */
async function foreignCommit(
  repo: Repo,
  parents: ReadonlyArray<string>,
  files: Record<string, string>,
  subject: string,
): Promise<string> {
  const store = repo.store
  const { serializeTree } = await import('./object-store')
  const writeDir = async (entries: Record<string, string>): Promise<string> => {
    const dirs = new Map<string, Record<string, string>>()
    const raw = []
    for (const [name, content] of Object.entries(entries)) {
      const [head, ...rest] = name.split('/')
      if (rest.length > 0) {
        dirs.set(head!, { ...(dirs.get(head!) ?? {}), [rest.join('/')]: content })
        continue
      }
      raw.push({
        name,
        kind: 'blob' as const,
        oid: await store.write('blob', Buffer.from(content)),
        mode: '100644',
      })
    }
    for (const [name, sub] of dirs)
      raw.push({ name, kind: 'tree' as const, oid: await writeDir(sub), mode: '40000' })
    return store.write('tree', serializeTree(raw))
  }
  const [first, ...others] = parents
  return store.write(
    'commit',
    serializeCommit({
      tree: await writeDir(files),
      parent: first ?? null,
      otherParents: others,
      author: { name: 'Cairn', email: 'system@cairn.invalid' },
      timestamp: Math.floor(now() / 1000),
      message: formatCommitMessage({
        ...systemIntent('outside', subject),
        paths: [],
        machine: 'desktop',
      }),
    }),
  )
}

async function expectInSync(): Promise<void> {
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  fsck(dataDir)
}

describe('moving main to commits made elsewhere', () => {
  it('fast-forwards with the folder and indexes the new commits, parents first', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    const remote1 = await foreignCommit(repo, [base], { 'a.md': 'a\n', 'b.md': 'b\n' }, 'add b')
    const remote2 = await foreignCommit(repo, [remote1], { 'b.md': 'b2\n' }, 'edit b, drop a')
    const added = await moveMain(repo, remote2, 'forward')
    expect(added.map((e) => e.oid)).toEqual([remote1, remote2])
    expect(added[1]).toMatchObject({
      machine: 'desktop',
      files: ['/memories/a.md', '/memories/b.md'],
    })
    expect(repo.head()).toBe(remote2)
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'b.md': 'b2\n' })
    await expectInSync()
    // What is on disk, read by a second reader.
    const index = IndexFile.open(indexDirOf(repo.gitdir))
    expect(index.all().map((e) => e.oid)).toEqual([base, remote1, remote2])
    index.close()
  })

  it('indexes a merge commit after the commits it joins, and reopens with the same index', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    const local = await put(repo, 'local.md', 'local\n')
    const theirs = await foreignCommit(
      repo,
      [base],
      { 'a.md': 'a\n', 'remote.md': 'r\n' },
      'remote',
    )
    const merge = await foreignCommit(
      repo,
      [local, theirs],
      { 'a.md': 'a\n', 'local.md': 'local\n', 'remote.md': 'r\n' },
      'merge',
    )
    await moveMain(repo, merge, 'forward')
    const entries = repo.index.all()
    expect(entries.map((e) => e.oid)).toEqual([base, local, theirs, merge])
    expect(entries.at(-1)).toMatchObject({
      parent: local,
      otherParents: [theirs],
      files: ['/memories/remote.md'],
    })
    await expectInSync()
    const reopened = await open()
    expect(reopened.index.all().map((e) => e.oid)).toEqual([base, local, theirs, merge])
    expect(gitCli(dataDir, 'rev-list', '--count', 'main').trim()).toBe('4')
  })

  it('refuses to move forward to a history that does not contain main, changing nothing', async () => {
    const repo = await open()
    await put(repo, 'a.md', 'a\n')
    const head = repo.head()
    const other = await foreignCommit(repo, [], { 'x.md': 'x\n' }, 'unrelated')
    await expect(moveMain(repo, other, 'forward')).rejects.toMatchObject({ code: 'conflict' })
    expect(repo.head()).toBe(head)
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'a.md': 'a\n' })
    // (fsck would rightly flag the hostile tree this test stored; main never reaches it.)
    expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  })

  it('switches to another history when asked, replacing the index', async () => {
    const repo = await open()
    await put(repo, 'a.md', 'a\n')
    const other = await foreignCommit(repo, [], { 'x.md': 'x\n' }, 'unrelated')
    await moveMain(repo, other, 'switch')
    expect(repo.index.all().map((e) => e.oid)).toEqual([other])
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'x.md': 'x\n' })
    await expectInSync()
    expect((await open()).index.all().map((e) => e.oid)).toEqual([other])
  })

  it('refuses a commit whose files would leave the memory folder', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    const { serializeTree } = await import('./object-store')
    const blob = await repo.store.write('blob', Buffer.from('escape\n'))
    const evil = await repo.store.write(
      'tree',
      serializeTree([{ name: '..', kind: 'blob', oid: blob, mode: '100644' }]),
    )
    const commit = await repo.store.write(
      'commit',
      serializeCommit({
        tree: evil,
        parent: base,
        author: { name: 'x', email: 'x@x' },
        timestamp: 1,
        message: 'evil\n',
      }),
    )
    await expect(moveMain(repo, commit, 'forward')).rejects.toThrow()
    expect(repo.head()).toBe(base)
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'a.md': 'a\n' })
    // (fsck would rightly flag the hostile tree this test stored; main never reaches it.)
    expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  })
})

describe('a move interrupted by a crash', () => {
  it('is finished at the next open, wherever it stopped', async () => {
    for (const stop of ['after-note', 'half-folder', 'after-ref'] as const) {
      await cleanup()
      ;({ dir: dataDir, cleanup } = await tempDataDir())
      const repo = await open()
      const base = await put(repo, 'a.md', 'a\n')
      await put(repo, 'b.md', 'b\n')
      const from = repo.head()!
      const target = await foreignCommit(
        repo,
        [from],
        { 'a.md': 'a from the remote\n', 'c.md': 'c\n' },
        'remote change',
      )
      writeFileSync(moveNoteOf(repo.gitdir), JSON.stringify({ from, to: target }))
      if (stop !== 'after-note') {
        await writeFile(path.join(dataDir, 'memories', 'a.md'), 'a from the remote\n')
      }
      if (stop === 'after-ref') {
        await rm(path.join(dataDir, 'memories', 'b.md'))
        await writeFile(path.join(dataDir, 'memories', 'c.md'), 'c\n')
        await writeMainRef(repo.gitdir, target)
      }
      const opened = await openRepo({ dataDir, now })
      expect(opened.recovery).toBeNull()
      expect(opened.repo.head()).toBe(target)
      expect(opened.repo.index.all().map((e) => e.oid)).toEqual([base, from, target])
      expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({
        'a.md': 'a from the remote\n',
        'c.md': 'c\n',
      })
      await expectInSync()
    }
  })

  it('keeps a file edited by hand meanwhile, as its own commit made outside Cairn', async () => {
    const repo = await open()
    await put(repo, 'a.md', 'a\n')
    const from = repo.head()!
    const target = await foreignCommit(repo, [from], { 'a.md': 'a from the remote\n' }, 'remote')
    writeFileSync(moveNoteOf(repo.gitdir), JSON.stringify({ from, to: target }))
    await writeFile(path.join(dataDir, 'memories', 'a.md'), 'typed by hand\n')
    const opened = await openRepo({ dataDir, now })
    expect(opened.repo.index.all().at(-2)?.oid).toBe(target)
    expect(opened.recovery?.kind).toBe('outside-changes')
    expect(opened.repo.index.all().at(-1)?.command).toBe('outside')
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'a.md': 'typed by hand\n' })
    await expectInSync()
  })
})

describe('a move the folder cannot take', () => {
  // 100 Japanese characters: 303 bytes of UTF-8, over the 255 bytes a Linux file name takes.
  const longName = '会議メモ'.repeat(25) + '.md'

  it('refuses, writing nothing, when a folder of files history never holds is in the way', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    await mkdir(path.join(dataDir, 'memories', 'projects', '.git'), { recursive: true })
    await writeFile(path.join(dataDir, 'memories', 'projects', '.git', 'config'), '[core]\n')
    const target = await foreignCommit(repo, [base], { 'a.md': 'a2\n', projects: 'p\n' }, 'x')
    await expect(moveMain(repo, target, 'forward')).rejects.toThrow(
      /\/memories\/projects is a folder holding files the history does not keep \(such as \/memories\/projects\/\.git\/config\).*Nothing was changed/,
    )
    expect(repo.head()).toBe(base)
    expect(existsSync(moveNoteOf(repo.gitdir))).toBe(false)
    expect(await readFile(path.join(dataDir, 'memories', 'a.md'), 'utf8')).toBe('a\n')
    expect(
      await readFile(path.join(dataDir, 'memories', 'projects', '.git', 'config'), 'utf8'),
    ).toBe('[core]\n')
  })

  it('puts the folder back and drops its note when a write fails for good', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    const target = await foreignCommit(repo, [base], { 'a.md': 'a2\n', [longName]: 'm\n' }, 'x')
    await expect(moveMain(repo, target, 'forward')).rejects.toThrow()
    expect(repo.head()).toBe(base)
    // Left behind, the note would fail every start with the same write.
    expect(existsSync(moveNoteOf(repo.gitdir))).toBe(false)
    expect(Object.fromEntries(await folderFiles(dataDir))).toEqual({ 'a.md': 'a\n' })
  })

  it('when interrupted, is dropped at the next open, keeping the folder, with a notice', async () => {
    for (const blocker of ['long-name', 'folder'] as const) {
      await cleanup()
      ;({ dir: dataDir, cleanup } = await tempDataDir())
      const repo = await open()
      const base = await put(repo, 'a.md', 'a\n')
      const files: Record<string, string> = { 'a.md': 'a from the remote\n' }
      if (blocker === 'long-name') files[longName] = 'm\n'
      else {
        files['projects'] = 'p\n'
        await mkdir(path.join(dataDir, 'memories', 'projects', '.git'), { recursive: true })
        await writeFile(path.join(dataDir, 'memories', 'projects', '.git', 'config'), '[core]\n')
      }
      const target = await foreignCommit(repo, [base], files, 'remote change')
      // What a move that stopped after its note leaves (as before this fix, for good).
      writeFileSync(moveNoteOf(repo.gitdir), JSON.stringify({ from: base, to: target }))
      const opened = await openRepo({ dataDir, now })
      expect(opened.repo.head()).toBe(base)
      expect(existsSync(moveNoteOf(opened.repo.gitdir))).toBe(false)
      expect(opened.recovery).toMatchObject({
        kind: 'history-repaired',
        message: expect.stringContaining('could not be finished here'),
      })
      expect(Object.fromEntries(await folderFiles(dataDir))).toEqual(
        blocker === 'folder'
          ? { 'a.md': 'a\n', 'projects/.git/config': '[core]\n' }
          : { 'a.md': 'a\n' },
      )
      await rm(path.join(dataDir, 'memories', 'projects'), {
        recursive: true,
        force: true,
        maxRetries: 10,
      })
      await expectInSync()
      // And it opens again, with nothing more to say.
      expect((await openRepo({ dataDir, now })).recovery).toBeNull()
    }
  })
})

describe('the side index across merge commits', () => {
  /** Commits made here and elsewhere, joined by two merges made here (local parent first). */
  async function mergedHistory(repo: Repo): Promise<void> {
    const base = await put(repo, 'a.md', 'a\n')
    await put(repo, 'local.md', 'local 1\n')
    const theirs1 = await foreignCommit(repo, [base], { 'a.md': 'a\n', 'r.md': 'r1\n' }, 'r1')
    const theirs2 = await foreignCommit(repo, [theirs1], { 'a.md': 'a2\n', 'r.md': 'r1\n' }, 'r2')
    const files1 = { 'a.md': 'a2\n', 'local.md': 'local 1\n', 'r.md': 'r1\n' }
    await moveMain(
      repo,
      await foreignCommit(repo, [repo.head()!, theirs2], files1, 'merge 1'),
      'forward',
    )
    await put(repo, 'local.md', 'local 2\n')
    const theirs3 = await foreignCommit(repo, [theirs2], { 'a.md': 'a2\n', 'r.md': 'r3\n' }, 'r3')
    const files2 = { 'a.md': 'a2\n', 'local.md': 'local 2\n', 'r.md': 'r3\n' }
    await moveMain(
      repo,
      await foreignCommit(repo, [repo.head()!, theirs3], files2, 'merge 2'),
      'forward',
    )
    await put(repo, 'after.md', 'after\n')
  }

  it('rebuilt from the commits equals the one kept commit by commit, byte for byte', async () => {
    const repo = await open()
    await mergedHistory(repo)
    const incremental = repo.index.all()
    expect(incremental).toHaveLength(9)
    expect(incremental.filter((entry) => entry.otherParents)).toHaveLength(2)
    const rebuilt = await rebuildIndex(repo.store, path.join(dataDir, 'rebuilt'), repo.head())
    expect(rebuilt.all()).toEqual(incremental)
    rebuilt.close()
    for (const name of ['commits', 'files', 'names', 'details']) {
      expect(await readFile(path.join(dataDir, 'rebuilt', name))).toEqual(
        await readFile(path.join(indexDirOf(repo.gitdir), name)),
      )
    }
    expect(await checkIndex(repo.store, repo.index)).toBe(true)
    fsck(dataDir)
  })

  it('on a machine that fast-forwards to another machine’s merges, holds the same entries', async () => {
    const repo = await open()
    const base = await put(repo, 'a.md', 'a\n')
    const mine = await put(repo, 'mine.md', 'mine\n')
    // Another machine joined this one's commits to its own, its own history first.
    const theirs = await foreignCommit(repo, [base], { 'a.md': 'a\n', 'r.md': 'r\n' }, 'theirs')
    const files = { 'a.md': 'a\n', 'mine.md': 'mine\n', 'r.md': 'r\n' }
    const merge = await foreignCommit(repo, [theirs, mine], files, 'merge there')
    await moveMain(repo, merge, 'forward')
    // Arrival order here; a rebuild orders by first parents. Both put parents first.
    expect(repo.index.all().map((e) => e.oid)).toEqual([base, mine, theirs, merge])
    const rebuilt = await rebuildIndex(repo.store, path.join(dataDir, 'rebuilt'), repo.head())
    expect(rebuilt.all().map((e) => e.oid)).toEqual([base, theirs, mine, merge])
    const byOid = (entries: ReadonlyArray<{ oid: string }>) =>
      new Map(entries.map((entry) => [entry.oid, entry]))
    expect(byOid(rebuilt.all())).toEqual(byOid(repo.index.all()))
    rebuilt.close()
    expect(await checkIndex(repo.store, repo.index)).toBe(true)
  })

  it('reopens as trusted (no catch-up, no rebuild) and reads every file without hashing one', async () => {
    const repo = await open()
    await mergedHistory(repo)
    const head = repo.head()
    repo.stats.save()
    const before = repo.index.all()
    repo.index.close()
    repo.store.close()
    // Times in the past: the stat cache trusts each file by its stat alone.
    const past = new Date(Date.now() - 60_000)
    for (const name of ['a.md', 'local.md', 'r.md', 'after.md']) {
      await utimes(path.join(dataDir, 'memories', name), past, past)
    }
    const store = createObjectStore(repo.gitdir)
    const { index, state } = await openIndex(store, repo.gitdir, head)
    expect(state).toBe('trusted')
    expect(index.all()).toEqual(before)
    index.close()
    store.close()
    // The first open hashes the files whose times changed; the next one none.
    const first = await openRepo({ dataDir, now })
    expect(first.recovery).toBeNull()
    first.repo.stats.save()
    first.repo.index.close()
    first.repo.store.close()
    const again = await openRepo({ dataDir, now })
    expect(again.recovery).toBeNull()
    expect(again.repo.stats.hashed).toBe(0)
    expect(again.repo.index.all()).toEqual(before)
  })
})
