import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openRepo } from './open-repo'
import type { CommitIntent, Repo } from './repo'
import { IndexFile } from './index-file'
import { commitCount, folderFiles, fsck, gitCli, headFiles, memoryTestBed } from './test-helpers'

const claude: CommitIntent = {
  actor: 'claude',
  command: 'create',
  subject: 'create',
  conversationId: 'c1',
  toolUseId: 't1',
  overwrite: false,
  restoredFrom: null,
}

const bed = memoryTestBed({ memory: false })
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

async function put(relative: string, content: string): Promise<void> {
  const file = path.join(bed.dataDir, 'memories', relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, content)
}

async function expectInSync(): Promise<void> {
  expect(headFiles(bed.dataDir)).toEqual(await folderFiles(bed.dataDir))
  fsck(bed.dataDir)
}

async function open(): Promise<Repo> {
  return (await openRepo({ dataDir: bed.dataDir, now })).repo
}

describe('committing changes read from the folder', () => {
  it('starts an empty history with no commit and a valid repository', async () => {
    const repo = await open()
    expect(repo.head()).toBeNull()
    expect(commitCount(bed.dataDir)).toBe(0)
    expect(gitCli(bed.dataDir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main')
    fsck(bed.dataDir)
  })

  it('commits only the given paths, writing nested trees the git CLI reads', async () => {
    const repo = await open()
    await put('a/b/c.md', 'deep')
    await put('top.md', 'top')
    const first = await repo.commit(['a/b/c.md', 'top.md'], claude)
    expect(first?.files).toEqual(['/memories/a/b/c.md', '/memories/top.md'])
    await put('a/b/c.md', 'deeper')
    const second = await repo.commit(['a/b/c.md'], { ...claude, command: 'str_replace' })
    expect(second?.parent).toBe(first?.oid)
    expect(commitCount(bed.dataDir)).toBe(2)
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%an|%s').trim()).toBe('Claude|create')
    await expectInSync()
  })

  it('makes no commit when the content did not change', async () => {
    const repo = await open()
    await put('a.md', 'same')
    await repo.commit(['a.md'], claude)
    await put('a.md', 'same')
    expect(await repo.commit(['a.md'], claude)).toBeNull()
    expect(commitCount(bed.dataDir)).toBe(1)
  })

  it('drops folders that become empty and handles a file replaced by a folder', async () => {
    const repo = await open()
    await put('x', 'file')
    await put('d/e/f.md', 'f')
    await repo.commit(['x', 'd'], claude)
    await rm(path.join(bed.dataDir, 'memories', 'd'), { recursive: true })
    await rm(path.join(bed.dataDir, 'memories', 'x'))
    await put('x/y.md', 'now a folder')
    const entry = await repo.commit(['d', 'x/y.md'], { ...claude, command: 'delete' })
    expect(entry?.files).toEqual(['/memories/d/e/f.md', '/memories/x', '/memories/x/y.md'])
    await expectInSync()
  })

  it('sorts tree entries the way git does (folders as name/)', async () => {
    const repo = await open()
    await put('a.b', '1')
    await put('a/c', '2')
    await put('a-b', '3')
    await put('ä.md', '4')
    await repo.commit('all', claude)
    await expectInSync()
  })

  it('appends each commit to the side index, in order', async () => {
    const repo = await open()
    for (let i = 0; i < 3; i++) {
      await put('n.md', String(i))
      await repo.commit(['n.md'], claude)
    }
    const read = IndexFile.open(repo.index.dir)
    expect(read.all()).toEqual(repo.index.all())
    expect(read.head()).toBe(gitCli(bed.dataDir, 'rev-parse', 'main').trim())
    read.close()
  })
})

describe('when the side index cannot be written', () => {
  it('keeps the commit, and catches the index up from the commits at the next one', async () => {
    const repo = await open()
    await put('a.md', '1')
    await repo.commit(['a.md'], claude)
    // One failing append (as on a full disk), injected at the index's own boundary.
    const append = repo.index.append.bind(repo.index)
    repo.index.append = () => {
      repo.index.append = append
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
    }
    await put('a.md', '2')
    const missed = await repo.commit(['a.md'], claude)
    expect(missed).not.toBeNull()
    expect(repo.index.head()).not.toBe(missed?.oid)
    await put('b.md', '3')
    const next = await repo.commit(['b.md'], claude)
    expect(
      repo.index
        .all()
        .map((entry) => entry.oid)
        .slice(-2),
    ).toEqual([missed?.oid, next?.oid])
    expect(repo.index.find(missed!.oid)).toEqual(missed)
    await expectInSync()
  })
})
