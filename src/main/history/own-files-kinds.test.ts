import { spawn, execFileSync } from 'node:child_process'
import { lstatSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { commitCount, fsck, gitCli, leaveStaleLock, recoveryRepo } from './test-helpers'

// The review of probe28n's mend (rprobe28n): history.git's own files that open reads by name
// were read from whatever was there. A fifo (no writer) at the side index's `format` or at
// the stat cache held every open forever, and a link there to /dev/zero read without end; a
// fifo at a part of the side index refused every open instead of being rebuilt. And what is
// moved into cairn-damaged/ followed a link there out of the data folder (or, a file there,
// every open failed). The opens run in a child process, so a hang on the code before ends as
// a failed test (the child killed), not as a run that never ends.

const repo = recoveryRepo()

let outside = ''
beforeEach(async () => {
  outside = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-'))
})
afterEach(() => rm(outside, { recursive: true, force: true, maxRetries: 10 }))

async function seed(): Promise<void> {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'first notes\n')
  await repo.create(memory, 'dir/a.md', 'a\n')
  await memory.close()
}

/**
 * Opens the data folder in a child process and makes one change. Not a timing assert: the
 * guard only ends a child that would otherwise never end (a read of a fifo blocks the thread).
 */
async function openInChild(): Promise<{ code: number | null; out: string }> {
  const script = `
    const { openVersionedMemory } = await import(${JSON.stringify(path.resolve('src/main/history/index.ts'))})
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(repo.dataDir)}, watch: false })
    const result = await memory.execute(
      { command: 'create', path: '/memories/after.md', file_text: 'after' },
      { actor: 'claude', conversationId: 'c', toolUseId: 'after' },
    )
    await memory.close()
    process.stdout.write(result.isError ? 'REFUSED\\n' : 'CHANGED\\n')
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(guard)
  return { code, out }
}

async function expectOpensAndCommits(): Promise<void> {
  const before = commitCount(repo.dataDir)
  const { code, out } = await openInChild()
  expect(out).toContain('CHANGED')
  expect(code).toBe(0)
  expect(commitCount(repo.dataDir)).toBe(before + 1)
  expect(fsck(repo.dataDir)).not.toMatch(/error|missing|broken/i)
}

describe("history.git's own files that are not plain files (nothing hangs, nothing refused for good)", () => {
  it('a fifo at the side index format: the index is rebuilt, open does not wait on it', async () => {
    await seed()
    const format = path.join(repo.gitdir, 'cairn-index', 'format')
    await rm(format)
    execFileSync('mkfifo', [format])
    await expectOpensAndCommits()
    expect(lstatSync(format).isFile()).toBe(true)
  }, 190_000)

  it('a fifo at the stat cache: every file is read again, open does not wait on it', async () => {
    await seed()
    const cache = path.join(repo.gitdir, 'cairn-stat')
    await rm(cache)
    execFileSync('mkfifo', [cache])
    await expectOpensAndCommits()
  }, 190_000)

  it('the format and the stat cache links to /dev/zero: never read without end', async () => {
    await seed()
    await rm(path.join(repo.gitdir, 'cairn-index', 'format'))
    await symlink('/dev/zero', path.join(repo.gitdir, 'cairn-index', 'format'))
    await rm(path.join(repo.gitdir, 'cairn-stat'))
    await symlink('/dev/zero', path.join(repo.gitdir, 'cairn-stat'))
    await expectOpensAndCommits()
  }, 190_000)

  it('a fifo at a part of the side index: rebuilt, not an open refused at every start', async () => {
    await seed()
    const part = path.join(repo.gitdir, 'cairn-index', 'commits')
    await rm(part)
    execFileSync('mkfifo', [part])
    await expectOpensAndCommits()
    expect(lstatSync(part).isFile()).toBe(true)
  }, 190_000)
})

describe('cairn-damaged/ itself not a folder (what is kept aside stays inside)', () => {
  it('a link to a folder outside: the damaged config is kept inside, nothing moved out', async () => {
    await seed()
    await symlink(outside, path.join(repo.gitdir, 'cairn-damaged'))
    await rm(path.join(repo.gitdir, 'config'))
    await symlink('/nonexistent/config', path.join(repo.gitdir, 'config'))
    const memory = await repo.open()
    await repo.create(memory, 'after.md', 'after\n')
    await memory.close()
    expect(await readdir(outside)).toEqual([])
    const aside = path.join(repo.gitdir, 'cairn-damaged')
    expect(lstatSync(aside).isDirectory()).toBe(true)
    expect(readdirSync(aside).filter((name) => name.startsWith('config-'))).toHaveLength(1)
    expect(gitCli(repo.dataDir, 'config', 'core.bare').trim()).toBe('true')
  })

  it('a file: open repairs config as it would, the file kept under a name of its own', async () => {
    await seed()
    await writeFile(path.join(repo.gitdir, 'cairn-damaged'), 'not a folder\n')
    await rm(path.join(repo.gitdir, 'config'))
    await symlink('/nonexistent/config', path.join(repo.gitdir, 'config'))
    const before = commitCount(repo.dataDir)
    const memory = await repo.open()
    await repo.create(memory, 'after.md', 'after\n')
    await memory.close()
    expect(commitCount(repo.dataDir)).toBe(before + 1)
    const kept = readdirSync(repo.gitdir).filter((name) => name.startsWith('cairn-damaged-'))
    expect(kept).toHaveLength(1)
    expect(lstatSync(path.join(repo.gitdir, 'cairn-damaged')).isDirectory()).toBe(true)
  })
})

// disk29: the object log's files in the same way, and names in cairn-damaged/ that collide.
describe('the object log not a file (a fresh log, never a commit owed for good)', () => {
  it('a fifo at cairn-wal-0: kept aside, a fresh log started, the change committed', async () => {
    await seed()
    const log = path.join(repo.gitdir, 'cairn-wal-0')
    await rm(log)
    execFileSync('mkfifo', [log])
    await expectOpensAndCommits()
    expect(lstatSync(log).isFile()).toBe(true)
    const kept = readdirSync(path.join(repo.gitdir, 'cairn-damaged'))
    expect(kept.filter((name) => name.startsWith('cairn-wal-0-'))).toHaveLength(1)
    const fifo = path.join(repo.gitdir, 'cairn-damaged', kept[0] as string)
    expect(lstatSync(fifo).isFIFO()).toBe(true)
    // The next open finds an ordinary log again: nothing more is kept aside.
    const memory = await repo.open()
    await repo.create(memory, 'again.md', 'again\n')
    await memory.close()
    expect(readdirSync(path.join(repo.gitdir, 'cairn-damaged'))).toEqual(kept)
  }, 190_000)

  it('a link to a file outside and a folder at the log: nothing outside written, both kept', async () => {
    await seed()
    const target = path.join(outside, 'other.bin')
    await writeFile(target, 'not the log\n')
    await rm(path.join(repo.gitdir, 'cairn-wal-0'))
    await symlink(target, path.join(repo.gitdir, 'cairn-wal-0'))
    await rm(path.join(repo.gitdir, 'cairn-wal-1'))
    await mkdir(path.join(repo.gitdir, 'cairn-wal-1'))
    await expectOpensAndCommits()
    expect(await readFile(target, 'utf8')).toBe('not the log\n')
    for (const name of ['cairn-wal-0', 'cairn-wal-1']) {
      expect(lstatSync(path.join(repo.gitdir, name)).isFile()).toBe(true)
    }
    const kept = readdirSync(path.join(repo.gitdir, 'cairn-damaged')).sort()
    expect(kept.map((name) => name.replace(/-\d+$/, ''))).toEqual(['cairn-wal-0', 'cairn-wal-1'])
  }, 190_000)
})

describe('names in cairn-damaged/ never collide (nothing kept aside is lost)', () => {
  it('the same orphan pack index found twice: both kept', async () => {
    await seed()
    const orphan = path.join(repo.gitdir, 'objects', 'pack', `pack-${'ab'.repeat(20)}.idx`)
    for (const text of ['first\n', 'second\n']) {
      await writeFile(orphan, text)
      const memory = await repo.open()
      await memory.close()
    }
    const aside = path.join(repo.gitdir, 'cairn-damaged')
    const texts = await Promise.all(
      readdirSync(aside).map((name) => readFile(path.join(aside, name), 'utf8')),
    )
    expect(texts.sort()).toEqual(['first\n', 'second\n'])
    expect(fsck(repo.dataDir)).not.toMatch(/error|missing|broken/i)
  })

  it('HEAD a folder twice in the same millisecond: both kept', async () => {
    await seed()
    const now = vi.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000)
    try {
      for (const name of ['one', 'two']) {
        await rm(path.join(repo.gitdir, 'HEAD'))
        await mkdir(path.join(repo.gitdir, 'HEAD'))
        await writeFile(path.join(repo.gitdir, 'HEAD', name), name)
        const memory = await repo.open()
        await memory.close()
      }
    } finally {
      now.mockRestore()
    }
    const aside = path.join(repo.gitdir, 'cairn-damaged')
    const kept = readdirSync(aside).flatMap((name) => readdirSync(path.join(aside, name)))
    expect(kept.sort()).toEqual(['one', 'two'])
    expect(gitCli(repo.dataDir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main')
  })
})

describe("history.git's records not plain files (kept aside, read as none, never waited on)", () => {
  it('fifos at the notes of a command, a move and a restore in flight: open goes on', async () => {
    await seed()
    const names = ['cairn-command', 'cairn-move.json', 'cairn-restore', 'cairn-restore-given-up']
    for (const name of names) {
      await rm(path.join(repo.gitdir, name), { force: true })
      execFileSync('mkfifo', [path.join(repo.gitdir, name)])
    }
    // A crash: open reads every note a killed Cairn may have left.
    leaveStaleLock(repo.dataDir)
    await expectOpensAndCommits()
    const kept = readdirSync(path.join(repo.gitdir, 'cairn-damaged'))
    for (const name of names) {
      const there = lstatSync(path.join(repo.gitdir, name), { throwIfNoEntry: false })
      expect(there === undefined || there.isFile(), name).toBe(true)
      expect(kept.filter((aside) => aside.startsWith(`${name}-`)).length, name).toBeGreaterThan(0)
    }
  }, 190_000)

  it('the search records a link to a file outside: nothing outside read nor written', async () => {
    await seed()
    const target = path.join(outside, 'elsewhere.jsonl')
    await writeFile(target, 'not records\n')
    await symlink(target, path.join(repo.gitdir, 'cairn-changes.jsonl'))
    const memory = await repo.open()
    await repo.create(memory, 'more.md', 'more notes\n')
    const page = await memory.searchHistory({ text: 'notes', matchCase: false })
    expect(page.hits.length).toBeGreaterThan(0)
    await memory.close()
    expect(await readFile(target, 'utf8')).toBe('not records\n')
    expect(lstatSync(path.join(repo.gitdir, 'cairn-changes.jsonl')).isFile()).toBe(true)
  })
})
