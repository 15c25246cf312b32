import { execFileSync } from 'node:child_process'
import { chmod, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { BLAME_MAX_LINES } from './blame'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, gitAsAnn, gitCli, tempDataDir } from './test-helpers'

// "What Claude saw" at a reply reads the commit the reply recorded. After a person's
// `git reset --hard` moved `main` back past it, the side index no longer lists that commit,
// and every read of it said "That version is not in the history." though git still had it
// whole. It is now read from its objects (its files dated along its first parents); only when
// the objects are truly gone (reflog expired, `git gc --prune=now`) does the read say, plainly,
// that the history was rewritten outside Cairn.

let dir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null = null
beforeEach(async () => ({ dir, cleanup } = await tempDataDir()))
afterEach(async () => {
  await memory?.close()
  memory = null
  await cleanup()
})

/** The memory on `dir`, each change a minute after the one before. */
async function openMemory(): Promise<VersionedMemory> {
  let time = 1_700_000_000_000
  return (memory = await openVersionedMemory({
    dataDir: dir,
    watch: false,
    now: () => (time += 60_000),
    logger: createRecordingLogger(),
  }))
}

/**
 * Three commits: notes.md made, plan.md made, notes.md edited (the reply's commit); Cairn left
 * open, as it is when a person works on its history with git beside it.
 */
async function seed(): Promise<{
  m: VersionedMemory
  first: string
  second: string
  reply: string
}> {
  const m = await openMemory()
  const first = await run(m, { command: 'create', path: '/memories/notes.md', file_text: 'one\n' })
  const second = await run(m, {
    command: 'create',
    path: '/memories/dir/plan.md',
    file_text: 'p\n',
  })
  const reply = await run(m, {
    command: 'str_replace',
    path: '/memories/notes.md',
    old_str: 'one',
    new_str: 'one, then two',
  })
  return { m, first, second, reply }
}

async function run(m: VersionedMemory, input: Record<string, unknown>): Promise<string> {
  const result = await m.execute(input, CLAUDE)
  expect(result.isError, String(result.content)).toBe(false)
  return result.commit!.oid
}

/** The person goes back to `to`, as git does it (git's own index read first). */
function resetHard(to: string): void {
  gitCli(dir, 'read-tree', 'main')
  gitAsAnn(dir, 'reset', '-q', '--hard', to)
}

const committedAt = (oid: string) => Number(gitCli(dir, 'log', '-1', '--format=%ct', oid)) * 1000

describe('what Claude saw at a reply whose commit a reset --hard left behind', () => {
  it('is read from the commit objects, its files dated along its first parents', async () => {
    const { m, first, second, reply } = await seed()
    resetHard(first)
    // The next change takes the reset (outside-move.ts): the side index follows `main` back.
    await run(m, { command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    const log = await m.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => entry.oid)).not.toContain(reply)
    const atFirst = await m.listAt(first)

    const listed = await m.listAt(reply)
    expect(listed.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ['/memories/dir', 'dir', 2],
      ['/memories/dir/plan.md', 'file', 2],
      ['/memories/notes.md', 'file', 'one, then two\n'.length],
    ])
    const dated = new Map(listed.map((entry) => [entry.path, entry.modifiedAt]))
    expect(dated.get('/memories/notes.md')).toBe(committedAt(reply))
    expect(dated.get('/memories/dir/plan.md')).toBe(committedAt(second))
    expect(dated.get('/memories/dir')).toBe(committedAt(second))
    expect(atFirst.find((entry) => entry.path === '/memories/notes.md')?.modifiedAt).toBe(
      committedAt(first),
    )

    expect(await m.readAt('/memories/notes.md', reply)).toBe(
      gitCli(dir, 'show', `${reply}:notes.md`),
    )
    const compared = await m.compare(reply)
    expect(compared.changes.map((change) => [change.path, change.status])).toEqual([
      ['/memories/dir/plan.md', 'deleted'],
      ['/memories/later.md', 'added'],
      ['/memories/notes.md', 'modified'],
    ])
  }, 60_000)

  // hist34: showing, blaming or restoring from such a commit said "not in the history".
  it('is shown, blamed and restored from, read from its objects as git reads them', async () => {
    const { m, first, reply } = await seed()
    const fourth = await run(m, {
      command: 'insert',
      path: '/memories/notes.md',
      insert_line: 1,
      insert_text: 'three',
    })
    resetHard(first)
    await run(m, { command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect((await m.log({ offset: 0, limit: 10 })).entries.map((e) => e.oid)).not.toContain(fourth)

    const shown = await m.show(reply)
    expect(shown.commit.oid).toBe(reply)
    expect(shown.changes.map((c) => [c.path, c.status, c.before, c.after])).toEqual([
      ['/memories/notes.md', 'modified', 'one\n', 'one, then two\n'],
    ])
    expect(gitCli(dir, 'show', '--name-status', '--format=', reply).trim()).toBe('M\tnotes.md')

    // Each line's commit, as `git blame` gives it.
    const blamed = await m.blame('/memories/notes.md', fourth)
    const porcelain = gitCli(dir, 'blame', '--porcelain', fourth, '--', 'notes.md')
    const byGit = [...porcelain.matchAll(/^([0-9a-f]{40}) \d+ (\d+)/gm)].map((h) => [
      Number(h[2]),
      h[1],
    ])
    expect(blamed.map((line) => [line.line, line.commit.oid])).toEqual(byGit)
    expect(blamed.map((line) => [line.text, line.commit.oid])).toEqual([
      ['one, then two', reply],
      ['three', fourth],
    ])
    // The version before the reset, lines and all, from the index's own blame.
    expect((await m.blame('/memories/notes.md', first)).map((l) => l.commit.oid)).toEqual([first])

    const restored = await m.restoreFile('/memories/notes.md', fourth)
    expect(restored.commit).toMatchObject({ command: 'restore-file', restoredFrom: fourth })
    expect(gitCli(dir, 'show', 'HEAD:notes.md')).toBe(gitCli(dir, 'show', `${fourth}:notes.md`))
    const all = await m.restoreAll(reply)
    expect(all.commit).toMatchObject({ command: 'restore-all', restoredFrom: reply })
    expect(gitCli(dir, 'rev-parse', 'HEAD^{tree}')).toBe(
      gitCli(dir, 'rev-parse', `${reply}^{tree}`),
    )
  }, 60_000)

  // mendX: the lines kept from the newest version the index holds lost its blame's marks, and
  // a version there too large (or not text) to trace gave its lines as its own, unmarked.
  it('keeps the "may be older" mark on the lines it takes from a version it could not trace', async () => {
    const m = await openMemory()
    const count = BLAME_MAX_LINES + 1
    const lines = Array.from({ length: count }, (_, i) => `l${i + 1}`)
    const big = await run(m, {
      command: 'create',
      path: '/memories/big.md',
      file_text: `${lines.join('\n')}\n`,
    })
    await expect(m.blame('/memories/big.md', big)).rejects.toMatchObject({ code: 'too-large' })
    const trimmed = await run(m, {
      command: 'str_replace',
      path: '/memories/big.md',
      old_str: lines.slice(-3).join('\n'),
      new_str: 'end',
    })
    resetHard(big)
    await run(m, { command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect((await m.log({ offset: 0, limit: 10 })).entries.map((e) => e.oid)).not.toContain(trimmed)

    const blamed = await m.blame('/memories/big.md', trimmed)
    expect(blamed).toHaveLength(count - 2)
    const kept = blamed.slice(0, -1)
    expect(kept.every((line) => line.commit.oid === big && line.damagedBefore === true)).toBe(true)
    expect(blamed.at(-1)).toMatchObject({ text: 'end', commit: { oid: trimmed } })
    expect(blamed.at(-1)).not.toHaveProperty('damagedBefore')
  }, 120_000)

  it('keeps the mark of a line whose trace met damage before the version it starts from', async () => {
    const { m, first, reply } = await seed()
    const fourth = await run(m, {
      command: 'str_replace',
      path: '/memories/notes.md',
      old_str: 'one, then two',
      new_str: 'one, then two\nthree',
    })
    resetHard(reply)
    await run(m, { command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    // The first version of notes.md is lost: the index's trace of "one, then two" stops at
    // the reply, and says so.
    const blob = gitCli(dir, 'rev-parse', `${first}:notes.md`).trim()
    const file = path.join(dir, 'history.git', 'objects', blob.slice(0, 2), blob.slice(2))
    await chmod(file, 0o644)
    await rm(file)
    expect(
      (await m.blame('/memories/notes.md', reply)).map((l) => [l.commit.oid, l.damagedBefore]),
    ).toEqual([[reply, true]])

    const blamed = await m.blame('/memories/notes.md', fourth)
    expect(blamed.map((l) => [l.text, l.commit.oid, l.damagedBefore ?? false])).toEqual([
      ['one, then two', reply, true],
      ['three', fourth, false],
    ])
  }, 60_000)

  it('says plainly that the history was rewritten outside Cairn once the version is gone', async () => {
    const { m, first, reply } = await seed()
    resetHard(first)
    await run(m, { command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    const git = (...args: string[]) =>
      execFileSync('git', ['--git-dir', path.join(dir, 'history.git'), ...args], {
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
        stdio: 'ignore',
      })
    git('reflog', 'expire', '--expire=now', '--all')
    git('gc', '--quiet', '--prune=now')
    expect(() => gitCli(dir, 'cat-file', '-e', reply)).toThrow()
    const head = m.head()
    for (const read of [
      () => m.listAt(reply),
      () => m.readAt('/memories/notes.md', reply),
      () => m.show(reply),
      () => m.blame('/memories/notes.md', reply),
      () => m.restoreFile('/memories/notes.md', reply),
      () => m.restoreAll(reply),
    ]) {
      const error = await read().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(CairnError)
      expect(error).toMatchObject({ code: 'not-found' })
      expect((error as Error).message).toMatch(/rewritten outside Cairn/)
      expect((error as Error).message).not.toContain(dir)
    }
    expect(m.head()).toBe(head)
    // A version the history still has reads as ever.
    expect(await m.readAt('/memories/notes.md', first)).toBe('one\n')
  }, 60_000)
})
