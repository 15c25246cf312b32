/**
 * What a remote may hold that a memory folder may not: a file too large to version, a name
 * Cairn keeps for itself. The sync refuses it (`sync-unsafe-content`), changing nothing; and a
 * file that grew too large here is never recorded as deleted (which a sync would spread).
 * Real data folders, a real git server on loopback, the git CLI writing the hostile commits.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_VERSIONED_BYTES } from '../history/work-tree'
import { expectSound, type Machine, useSyncServer } from './test-support'

const run = promisify(execFile)

const sync = useSyncServer()
const { machine } = sync

let work: string

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'cairn-unsafe-remote-'))
})
afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 10 })
})

/** Commits `files` (name -> content) on top of the remote's `main` with the git CLI, pushed. */
async function pushWithGit(repo: string, files: Record<string, string | Buffer>): Promise<void> {
  const clone = path.join(work, `${repo}-${Date.now()}`)
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: work, GIT_TERMINAL_PROMPT: '0' }
  const url = sync.server
    .url(repo)
    .replace('http://', `http://${sync.server.user}:${sync.server.token}@`)
  await run('git', ['clone', '--quiet', url, clone], { env })
  const git = (...args: string[]) => run('git', ['-C', clone, ...args], { env })
  for (const [name, content] of Object.entries(files)) {
    await writeFile(path.join(clone, name), content)
    await git('add', '--', name)
  }
  await git('-c', 'user.name=Other', '-c', 'user.email=o@x', 'commit', '--quiet', '-m', 'other')
  await git('push', '--quiet', 'origin', 'main')
}

/**
 * Commits a file named `name` on top of the remote's `main` with git's plumbing (no work
 * tree: the name may be one this file system cannot hold), pushed.
 */
async function pushNameWithGit(repo: string, name: string, content: string): Promise<void> {
  const bare = path.join(work, `${repo}-${Date.now()}.git`)
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: work, GIT_TERMINAL_PROMPT: '0' }
  const url = sync.server
    .url(repo)
    .replace('http://', `http://${sync.server.user}:${sync.server.token}@`)
  await run('git', ['clone', '--quiet', '--bare', url, bare], { env })
  const git = async (args: string[], input?: string): Promise<string> => {
    const child = run('git', ['--git-dir', bare, ...args], { env })
    if (input !== undefined) child.child.stdin?.end(input)
    return (await child).stdout.trim()
  }
  const blob = await git(['hash-object', '-w', '--stdin'], content)
  const listed = await git(['ls-tree', 'main'])
  const tree = await git(['mktree'], `${listed}\n100644 blob ${blob}\t${name}\n`)
  const commit = await git([
    '-c',
    'user.name=Other',
    '-c',
    'user.email=o@x',
    'commit-tree',
    tree,
    '-p',
    'main',
    '-m',
    'other',
  ])
  await git(['push', '--quiet', url, `${commit}:refs/heads/main`])
}

async function connected(dataDir?: string): Promise<{ repo: string; laptop: Machine }> {
  const repo = sync.newRepo('unsafe')
  const laptop = await machine('laptop', dataDir)
  await laptop.write('notes.md', 'hello\n')
  await laptop.connect(sync.server, repo)
  await laptop.sync()
  return { repo, laptop }
}

const big = Buffer.alloc(MAX_VERSIONED_BYTES + 1024 * 1024, 'x')

describe('a remote holding what the memory folder may not', () => {
  it('refuses a file too large to version, changing nothing (fast-forward)', async () => {
    const { repo, laptop } = await connected()
    await pushWithGit(repo, { 'big.md': big })
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()

    expect(status.state).toBe('error')
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('big.md (too large)')
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    await expect(stat(path.join(laptop.dir, 'memories', 'big.md'))).rejects.toThrow()
  })

  it('refuses a file too large to version in a merge, changing nothing', async () => {
    const { repo, laptop } = await connected()
    await pushWithGit(repo, { 'big.md': big })
    await laptop.write('mine.md', 'only here\n')
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()

    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('big.md (too large)')
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    await expect(stat(path.join(laptop.dir, 'memories', 'big.md'))).rejects.toThrow()
  })

  it("refuses an entry named like Cairn's temp files, without calling history damaged", async () => {
    const { repo, laptop } = await connected()
    await pushWithGit(repo, { '.cairn-tmp-evil': 'evil\n' })
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('.cairn-tmp-evil')
    expect(laptop.git('rev-parse', 'main')).toBe(head)

    // The same in a merge (this machine changed something too).
    await laptop.write('mine.md', 'only here\n')
    const merging = await laptop.sync()
    expect(merging.error?.code).toBe('sync-unsafe-content')
    expect(await laptop.files()).toEqual(
      new Map([
        ['mine.md', 'only here\n'],
        ['notes.md', 'hello\n'],
      ]),
    )
  })
})

describe('a remote holding a name that displays as another', () => {
  it('refuses it as Claude’s paths are refused, naming it in escapes, changing nothing', async () => {
    const { repo, laptop } = await connected()
    // Shown as "evildm.jpg": the bidi override turns the rest of the name around.
    await pushNameWithGit(repo, 'evil\u202Egpj.md', 'not a picture\n')
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain(
      'evil\\u202Egpj.md (a name holding an invisible formatting character)',
    )
    expect(status.error?.message).not.toContain('\u202E')
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    expect(await laptop.files()).toEqual(new Map([['notes.md', 'hello\n']]))
  })
})

describe('a versioned file that grows too large to version', () => {
  it('keeps its last version in history; no deletion is committed or pushed', async () => {
    const { repo, laptop } = await connected()
    const desktop = await machine('desktop')
    await desktop.connect(sync.server, repo)
    await desktop.sync()
    const dir = laptop.dir
    const memories = path.join(dir, 'memories')
    await writeFile(path.join(memories, 'notes.md'), big)

    // While running (a command scans the folder) and after a restart (the scan at open).
    await laptop.write('other.md', 'a command\n')
    expect(laptop.git('show', 'main:notes.md')).toBe('hello\n')
    await sync.stop(laptop)
    const again = await machine('laptop', dir)
    expect(again.git('show', 'main:notes.md')).toBe('hello\n')
    // Only the commit that created it ever touched it.
    expect(
      again.git('log', '--format=%H', 'main', '--', 'notes.md').trim().split('\n'),
    ).toHaveLength(1)
    expect(await again.call('memory:notices')).toContainEqual(
      expect.objectContaining({ kind: 'too-large', path: '/memories/notes.md' }),
    )
    expect((await again.sync()).state).toBe('idle')
    expect((await readFile(path.join(memories, 'notes.md'))).equals(big)).toBe(true)

    // The other machine keeps the file.
    await desktop.sync()
    expect((await desktop.files()).get('notes.md')).toBe('hello\n')
    expect((await desktop.files()).get('other.md')).toBe('a command\n')
    await writeFile(path.join(memories, 'notes.md'), 'hello\n')
    await expectSound(sync.server, repo, [again, desktop])
  })

  it('refuses a name too long for this file system, and Cairn still opens', async () => {
    // 100 Japanese characters: 303 bytes of UTF-8, fine on Windows and macOS, over the 255
    // bytes a Linux file name takes.
    const longName = '会議メモ'.repeat(25) + '.md'
    const dataDir = await mkdtemp(path.join(work, 'laptop-'))
    const { repo, laptop } = await connected(dataDir)
    await pushNameWithGit(repo, longName, 'meeting notes\n')
    await laptop.write('notes.md', 'hello\nlocal change\n')
    const head = laptop.git('rev-parse', 'main')

    for (let attempt = 0; attempt < 2; attempt++) {
      const status = await laptop.sync()
      expect(status.error?.code).toBe('sync-unsafe-content')
      expect(status.error?.message).toContain(`${longName} (a name too long for this system)`)
    }
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    await expect(stat(path.join(dataDir, 'history.git', 'cairn-move.json'))).rejects.toThrow()
    await sync.stop(laptop)

    const again = await machine('laptop', dataDir)
    expect(await again.files()).toEqual(new Map([['notes.md', 'hello\nlocal change\n']]))
    expect(again.git('rev-parse', 'main')).toBe(head)
  })

  it('refuses, naming it, a folder of files history never holds where the remote has a file', async () => {
    const dataDir = await mkdtemp(path.join(work, 'laptop-'))
    const { repo, laptop } = await connected(dataDir)
    const own = path.join(dataDir, 'memories', 'projects', '.git')
    await mkdir(own, { recursive: true })
    await writeFile(path.join(own, 'config'), '[core]\n')
    await pushWithGit(repo, { projects: 'list of projects\n' })
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()
    expect(status.state).toBe('error')
    expect(status.error?.message).toContain('/memories/projects is a folder holding files')
    expect(status.error?.message).not.toContain(dataDir)
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    expect(await readFile(path.join(own, 'config'), 'utf8')).toBe('[core]\n')
    await expect(stat(path.join(dataDir, 'history.git', 'cairn-move.json'))).rejects.toThrow()
    await sync.stop(laptop)

    // Cairn opens again; once the person moves the folder, the sync completes.
    const again = await machine('laptop', dataDir)
    await rm(path.join(dataDir, 'memories', 'projects'), { recursive: true })
    expect((await again.sync()).state).toBe('idle')
    expect((await again.files()).get('projects')).toBe('list of projects\n')
    await expectSound(sync.server, repo, [again])
  })
})
