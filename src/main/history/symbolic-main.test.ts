import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { fsck, gitCli, memoryTestBed } from './test-helpers'

// Stop 31 (outside31), left by outside30: `main` made a link to another branch with git
// (`git symbolic-ref refs/heads/main refs/heads/x`, or a ref file holding `ref: refs/heads/x`)
// read as damage, and Cairn's next commit wrote its own old head over the link: the commits
// git had made through it (on x) left `main`, and nothing said so. Cairn now follows the link
// as it follows any move of `main` made with git, makes `main` a branch of its own at that
// commit again (x untouched), and tells the person in plain words.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

let toolUse = 0
async function run(input: Record<string, unknown>): Promise<CommitSummary> {
  const outcome = await bed.memory.execute(input, {
    actor: 'claude',
    conversationId: 'conv-link',
    toolUseId: `toolu_${++toolUse}`,
  })
  if (outcome.isError || !outcome.commit) {
    throw new Error(`${JSON.stringify(input)} failed: ${String(outcome.content)}`)
  }
  return outcome.commit
}

const gitdir = () => path.join(bed.dataDir, 'history.git')
const mainFile = () => path.join(gitdir(), 'refs', 'heads', 'main')
const rev = (name: string) => gitCli(bed.dataDir, 'rev-parse', name).trim()

/** Runs git as Ann in the history folder. */
function asAnn(...args: string[]): string {
  return execFileSync(
    'git',
    [
      '--git-dir',
      gitdir(),
      '-c',
      'user.name=Ann Smith',
      '-c',
      'user.email=ann@example.com',
      ...args,
    ],
    { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir } },
  )
}

/**
 * Ann's commit on x, holding `file` with `text` on top of x's tree, made with git through the
 * link; the file is in the memory folder too, as a commit from the work tree leaves it.
 */
function annCommitsOnX(file: string, text: string): string {
  writeFileSync(path.join(bed.dataDir, 'memories', file), text)
  const blob = execFileSync('git', ['--git-dir', gitdir(), 'hash-object', '-w', '--stdin'], {
    input: text,
    encoding: 'utf8',
  }).trim()
  const index = path.join(bed.dataDir, 'ann-index')
  const env = { ...process.env, GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir }
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitdir(), ...args], { encoding: 'utf8', env }).trim()
  git('read-tree', 'refs/heads/x')
  git('update-index', '--add', '--cacheinfo', `100644,${blob},${file}`)
  const tree = git('write-tree')
  const commit = asAnn('commit-tree', tree, '-p', 'refs/heads/x', '-m', 'Ann adds a plan').trim()
  asAnn('update-ref', 'refs/heads/x', commit)
  return commit
}

describe('main made a link to another branch with git', () => {
  it("follows the link: git's commits through it stay on main, main is a branch again, x is untouched, and it is said", async () => {
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    asAnn('branch', 'x', 'main')
    asAnn('symbolic-ref', 'refs/heads/main', 'refs/heads/x')
    expect(readFileSync(mainFile(), 'utf8')).toBe('ref: refs/heads/x\n')
    // Ann commits through the link: git moves x.
    const ann = annCommitsOnX('plan.md', 'the plan\n')
    expect(rev('main')).toBe(ann)
    const claude = await run({ command: 'create', path: '/memories/more.md', file_text: 'm\n' })
    // Claude's change sits on Ann's commit; main is a plain branch at it; x is where Ann left it.
    expect(rev('main')).toBe(claude.oid)
    expect(rev('main~1')).toBe(ann)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${claude.oid}\n`)
    expect(rev('x')).toBe(ann)
    expect(gitCli(bed.dataDir, 'ls-tree', '--name-only', 'main')).toContain('plan.md')
    const told = bed.memory.recoveries().find((report) => report.commitOid === ann)
    expect(told?.kind).toBe('history-repaired')
    expect(told?.message).toContain('link to the branch "x"')
    expect(told?.message).toContain('nothing was lost')
    expect(told?.message).not.toContain(bed.dataDir)
    fsck(bed.dataDir)
    // The next open finds main as it was left.
    await bed.reopen()
    expect(rev('main')).toBe(claude.oid)
    await run({ command: 'create', path: '/memories/after.md', file_text: 'x\n' })
    expect(rev('main~1')).toBe(claude.oid)
    fsck(bed.dataDir)
  })

  it("a ref file written by hand to link to a branch at Cairn's own head: the link is replaced before a commit, and said", async () => {
    const first = await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    asAnn('branch', 'same', 'main')
    writeFileSync(mainFile(), 'ref: refs/heads/same\n')
    const next = await run({ command: 'create', path: '/memories/b.md', file_text: 'b\n' })
    expect(rev('main~1')).toBe(first.oid)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${next.oid}\n`)
    expect(rev('same')).toBe(first.oid)
    expect(
      bed.memory
        .recoveries()
        .map((report) => report.message)
        .join('\n'),
    ).toContain('link to the branch "same"')
    fsck(bed.dataDir)
  })

  it('a link Cairn finds at open, to a branch git moved while it was closed, is followed the same way', async () => {
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    await bed.close()
    asAnn('branch', 'x', 'main')
    asAnn('symbolic-ref', 'refs/heads/main', 'refs/heads/x')
    const ann = annCommitsOnX('plan.md', 'the plan\n')
    await bed.reopen()
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${ann}\n`)
    const told = bed.memory.recoveries().find((report) => report.kind === 'history-repaired')
    expect(told?.message).toContain('link to the branch "x"')
    const claude = await run({ command: 'create', path: '/memories/more.md', file_text: 'm\n' })
    expect(rev('main~1')).toBe(ann)
    expect(rev('main')).toBe(claude.oid)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${claude.oid}\n`)
    expect(rev('x')).toBe(ann)
    fsck(bed.dataDir)
  })
})
