import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeCommands, fsck, gitCli, headFiles, memoryTestBed } from './test-helpers'

// Stop 30 (outside30), left over by live29: History, blame, search and the versions of a file
// went on showing the history Cairn held until its next change after `git commit` or
// `git reset` was run in the history folder; and what the folder still held of Cairn's commits
// a reset left out was committed as "Changes made outside Cairn", Claude's text told as an
// outside edit.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

const run = claudeCommands(bed, 'conv-reads', 'reads')

const gitdir = () => path.join(bed.dataDir, 'history.git')
const work = () => path.join(bed.dataDir, 'memories')
const mainOid = () => gitCli(bed.dataDir, 'rev-parse', 'main').trim()

/** Ann's commit of `tree` on `main` with git, the memory folder untouched; `main` moved to it. */
function annCommits(tree: string, message: string): string {
  const oid = execFileSync(
    'git',
    ['--git-dir', gitdir(), 'commit-tree', tree, '-p', 'main', '-m', message],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: bed.dataDir,
        GIT_AUTHOR_NAME: 'Ann Smith',
        GIT_AUTHOR_EMAIL: 'ann@example.com',
        GIT_COMMITTER_NAME: 'Ann Smith',
        GIT_COMMITTER_EMAIL: 'ann@example.com',
      },
    },
  ).trim()
  gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', oid)
  return oid
}

/** Ann edits plan.md in the folder and commits it with git, as `git commit` in it would. */
function annEditsPlan(text: string): string {
  writeFileSync(path.join(work(), 'plan.md'), text)
  const blob = execFileSync('git', ['--git-dir', gitdir(), 'hash-object', '-w', '--stdin'], {
    input: text,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir },
  }).trim()
  const entries = gitCli(bed.dataDir, 'ls-tree', 'main')
    .trim()
    .split('\n')
    .map((line) => (line.endsWith('\tplan.md') ? `100644 blob ${blob}\tplan.md` : line))
  const tree = execFileSync('git', ['--git-dir', gitdir(), 'mktree'], {
    input: `${entries.join('\n')}\n`,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir },
  }).trim()
  return annCommits(tree, 'Ann edits the plan')
}

async function two(): Promise<void> {
  await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\nb\nc\n' })
  await run({ command: 'create', path: '/memories/n.md', file_text: 'n\n' })
}

describe('reads after main was moved with git while Cairn is open', () => {
  it('History shows a commit made with git at once, and the window is told', async () => {
    await two()
    const told: string[] = []
    const stop = bed.memory.onCommit((commit) => told.push(commit.oid))
    const ann = annEditsPlan('a\nB by Ann\nc\n')
    // No change of Cairn's in between: the read alone.
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    stop()
    expect(log.total).toBe(3)
    expect(log.entries[0]).toMatchObject({ oid: ann, actor: 'outside', author: 'Ann Smith' })
    expect(told).toContain(ann)
    expect(bed.memory.head()).toBe(ann)
    fsck(bed.dataDir)
  })

  it('a file history, blame, search, a version read and the tree at a commit each follow it', async () => {
    await two()
    const first = annEditsPlan('a\nB by Ann\nc\n')
    expect((await bed.memory.fileHistory('/memories/plan.md'))[0]?.oid).toBe(first)
    const second = annEditsPlan('a\nB by Ann\nC by Ann\n')
    const blame = await bed.memory.blame('/memories/plan.md', second)
    expect(blame.map((line) => line.commit.oid)).toEqual([expect.any(String), first, second])
    const third = annEditsPlan('a\nB by Ann\nC by Ann\nfound\n')
    const found = await bed.memory.searchHistory({ text: 'found', matchCase: true })
    expect(found.hits.map((hit) => hit.commit.oid)).toEqual([third])
    const fourth = annEditsPlan('read\n')
    expect(await bed.memory.readAt('/memories/plan.md', fourth)).toBe('read\n')
    const fifth = annEditsPlan('listed\n')
    const listed = await bed.memory.listAt(fifth)
    expect(listed.map((entry) => entry.path).sort()).toEqual([
      '/memories/n.md',
      '/memories/plan.md',
    ])
    const sixth = annEditsPlan('shown\n')
    expect((await bed.memory.show(sixth)).commit.oid).toBe(sixth)
    expect(bed.memory.head()).toBe(sixth)
    fsck(bed.dataDir)
  })

  it('History no longer lists the commits a reset made with git dropped, before any change', async () => {
    await two()
    const dropped = mainOid()
    gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', 'main~1')
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => entry.oid)).not.toContain(dropped)
    // The folder still holds n.md: kept on top, and History shows that.
    expect(log.entries[0]?.subject).toBe('Kept after main was moved back outside Cairn')
    expect(mainOid()).toBe(log.entries[0]?.oid)
    fsck(bed.dataDir)
  })

  it('a read made by a task in the queue does not wait for the follow queued behind it', async () => {
    await two()
    const head = mainOid()
    const ann = annEditsPlan('a\nB by Ann\nc\n')
    // A sync reads versions inside its own task: the follow runs after it.
    const text = await bed.memory.git.exclusive(() => bed.memory.readAt('/memories/plan.md', head))
    expect(text).toBe('a\nb\nc\n')
    await bed.memory.git.exclusive(async () => undefined)
    expect(bed.memory.head()).toBe(ann)
  })
})

describe("Cairn's writes a reset made with git left out of main", () => {
  it("are kept as Cairn's, naming the commits that left main, never as an outside edit", async () => {
    await two()
    const dropped = mainOid()
    const back = gitCli(bed.dataDir, 'rev-parse', 'main~1').trim()
    // git reset --soft (or update-ref): the folder keeps n.md, which Claude wrote.
    gitCli(bed.dataDir, 'reset', '--soft', 'HEAD~1')
    // And Ann drops a file of her own in the folder meanwhile.
    await writeFile(path.join(work(), 'ann.md'), 'from Ann\n')
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    const [later, outside, kept, first] = gitCli(
      bed.dataDir,
      'rev-list',
      '--first-parent',
      next.oid,
    )
      .trim()
      .split('\n')
    expect(later).toBe(next.oid)
    expect(first).toBe(back)
    const keptCommit = gitCli(bed.dataDir, 'log', '-1', '--format=%s%n%b%an', kept!)
    expect(keptCommit).toContain('Kept after main was moved back outside Cairn')
    expect(keptCommit).toContain(dropped.slice(0, 12))
    expect(keptCommit).toContain('create /memories/n.md')
    expect(keptCommit).toContain('Command: recovery')
    expect(keptCommit).not.toContain('Command: outside')
    expect(gitCli(bed.dataDir, 'show', '--format=', '--name-only', kept!).trim()).toBe('n.md')
    expect(gitCli(bed.dataDir, 'show', '--format=%s', '--name-only', outside!).trim()).toBe(
      'Changes made outside Cairn\n\nann.md',
    )
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.entries.find((entry) => entry.oid === kept)).toMatchObject({
      actor: 'system',
      command: 'recovery',
    })
    const report = bed.memory.recoveries().find((told) => told.commitOid === kept)
    expect(report?.message).toContain('n.md')
    expect(report?.message).not.toMatch(/outside Cairn and saved|interrupted/)
    expect([...headFiles(bed.dataDir).keys()].sort()).toEqual([
      'ann.md',
      'later.md',
      'n.md',
      'plan.md',
    ])
    fsck(bed.dataDir)
  })

  it('are not brought back when the reset took them from the folder too', async () => {
    await two()
    gitCli(bed.dataDir, 'read-tree', 'main')
    execFileSync(
      'git',
      ['--git-dir', gitdir(), '--work-tree', work(), 'reset', '-q', '--hard', 'HEAD~1'],
      { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir } },
    )
    const back = mainOid()
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect(next.parent).toBe(back)
    expect([...headFiles(bed.dataDir).keys()].sort()).toEqual(['later.md', 'plan.md'])
  })
})

// Stop 30 (rout30): the kept commit's body said "and older ones" whenever it named 100
// commits, so a reset of exactly 100 claimed commits it did not name.
describe('the kept commit after a reset of many commits', () => {
  async function resetBack(count: number): Promise<{ dropped: string[]; body: string }> {
    await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\n' })
    const base = mainOid()
    for (let k = 0; k < count; k++) {
      await run({ command: 'create', path: `/memories/n${k}.md`, file_text: `${k}\n` })
    }
    const dropped = gitCli(bed.dataDir, 'rev-list', `${base}..main`).trim().split('\n')
    gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', base)
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    const kept = gitCli(bed.dataDir, 'rev-parse', `${next.oid}~1`).trim()
    expect(gitCli(bed.dataDir, 'rev-parse', `${kept}~1`).trim()).toBe(base)
    return { dropped, body: gitCli(bed.dataDir, 'log', '-1', '--format=%b', kept) }
  }
  const named = (body: string) =>
    body
      .split('\n')
      .map((line) => /^([0-9a-f]{12}) create /.exec(line)?.[1])
      .filter((id) => id !== undefined)

  it('names all of exactly 100, newest first as git log, and claims no older ones', async () => {
    const { dropped, body } = await resetBack(100)
    expect(dropped).toHaveLength(100)
    expect(named(body)).toEqual(dropped.map((oid) => oid.slice(0, 12)))
    expect(body).not.toContain('and older ones')
    fsck(bed.dataDir)
  })

  it('names the newest 100 of 101 and says older ones left too', async () => {
    const { dropped, body } = await resetBack(101)
    expect(named(body)).toEqual(dropped.slice(0, 100).map((oid) => oid.slice(0, 12)))
    expect(body).toContain('and older ones')
    // The oldest, not named, is kept with the rest: never told as an outside edit.
    expect(gitCli(bed.dataDir, 'log', '--format=%s', '-2', 'main')).toBe(
      'create /memories/later.md\nKept after main was moved back outside Cairn\n',
    )
    expect(gitCli(bed.dataDir, 'show', '--format=', '--name-only', 'main~1')).toContain('n0.md')
    fsck(bed.dataDir)
  })
})
