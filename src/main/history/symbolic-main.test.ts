import { execFileSync } from 'node:child_process'
import { lstatSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeCommands, fsck, gitAsAnn, gitCli, memoryTestBed } from './test-helpers'

// Stop 31 (outside31), left by outside30: `main` made a link to another branch with git
// (`git symbolic-ref refs/heads/main refs/heads/x`, or a ref file holding `ref: refs/heads/x`)
// read as damage, and Cairn's next commit wrote its own old head over the link: the commits
// git had made through it (on x) left `main`, and nothing said so. Cairn now follows the link
// as it follows any move of `main` made with git, makes `main` a branch of its own at that
// commit again (x untouched), and tells the person in plain words.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

const run = claudeCommands(bed, 'conv-link')

const gitdir = () => path.join(bed.dataDir, 'history.git')
const mainFile = () => path.join(gitdir(), 'refs', 'heads', 'main')
const rev = (name: string) => gitCli(bed.dataDir, 'rev-parse', name).trim()

/** Runs git as Ann, with the memory folder as its work tree (as durability.md says). */
const asAnn = (...args: string[]) => gitAsAnn(bed.dataDir, ...args)

/**
 * Ann's commit on x, holding `file` with `text` on top of x's tree, made with git through the
 * link; the file is in the memory folder too, as a commit from the work tree leaves it.
 */
function annCommitsOnX(file: string, text: string, branch = 'x'): string {
  writeFileSync(path.join(bed.dataDir, 'memories', file), text)
  const blob = execFileSync('git', ['--git-dir', gitdir(), 'hash-object', '-w', '--stdin'], {
    input: text,
    encoding: 'utf8',
  }).trim()
  const index = path.join(bed.dataDir, 'ann-index')
  const env = { ...process.env, GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir }
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', gitdir(), ...args], { encoding: 'utf8', env }).trim()
  git('read-tree', `refs/heads/${branch}`)
  git('update-index', '--add', '--cacheinfo', `100644,${blob},${file}`)
  const tree = git('write-tree')
  const commit = asAnn(
    'commit-tree',
    tree,
    '-p',
    `refs/heads/${branch}`,
    '-m',
    'Ann adds a plan',
  ).trim()
  asAnn('update-ref', `refs/heads/${branch}`, commit)
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

  // rout31: git reads `ref:` with any white space after it (none, a tab) and a file system
  // link whose target is a ref's name (what `git symbolic-ref` makes under
  // core.preferSymlinkRefs) as the same link; Cairn read all three as damage, and its next
  // commit wrote its old head over the link, so Ann's commit on x left main unsaid.
  it.each([
    ['ref: with no space', 'ref:refs/heads/x\n'],
    ['ref: with a tab and a CRLF', 'ref:\trefs/heads/x\r\n'],
  ])('a link written as git also reads it (%s) is followed the same way', async (_, text) => {
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    asAnn('branch', 'x', 'main')
    writeFileSync(mainFile(), text)
    const ann = annCommitsOnX('plan.md', 'the plan\n')
    expect(rev('main')).toBe(ann)
    expect(asAnn('symbolic-ref', 'refs/heads/main').trim()).toBe('refs/heads/x')
    const claude = await run({ command: 'create', path: '/memories/more.md', file_text: 'm\n' })
    expect(rev('main~1')).toBe(ann)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${claude.oid}\n`)
    expect(rev('x')).toBe(ann)
    expect(
      bed.memory
        .recoveries()
        .map((report) => report.message)
        .join('\n'),
    ).toContain('link to the branch "x"')
    fsck(bed.dataDir)
  })

  it('a link git made as a file system link (core.preferSymlinkRefs) is followed, while running and at open', async () => {
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    asAnn('branch', 'x', 'main')
    asAnn('-c', 'core.preferSymlinkRefs=true', 'symbolic-ref', 'refs/heads/main', 'refs/heads/x')
    expect(lstatSync(mainFile()).isSymbolicLink()).toBe(true)
    const ann = annCommitsOnX('plan.md', 'the plan\n')
    expect(rev('main')).toBe(ann)
    const claude = await run({ command: 'create', path: '/memories/more.md', file_text: 'm\n' })
    expect(rev('main~1')).toBe(ann)
    expect(lstatSync(mainFile()).isFile()).toBe(true)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${claude.oid}\n`)
    expect(rev('x')).toBe(ann)
    fsck(bed.dataDir)
    // The same link made while Cairn is closed: followed at open.
    await bed.close()
    asAnn('branch', '-f', 'x', 'main')
    asAnn('-c', 'core.preferSymlinkRefs=true', 'symbolic-ref', 'refs/heads/main', 'refs/heads/x')
    const later = annCommitsOnX('later.md', 'later\n')
    await bed.reopen()
    expect(lstatSync(mainFile()).isFile()).toBe(true)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${later}\n`)
    const last = await run({ command: 'create', path: '/memories/last.md', file_text: 'l\n' })
    expect(rev('main~1')).toBe(later)
    expect(rev('main')).toBe(last.oid)
    expect(rev('x')).toBe(later)
    fsck(bed.dataDir)
  })

  // rout31: a branch named as git allows (`+`, `@`, letters beyond ASCII) read as damage too.
  it('a link to a branch whose name holds +, @ and an accent is followed the same way', async () => {
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'a\n' })
    const branch = 'ann+plan@café'
    asAnn('branch', branch, 'main')
    asAnn('symbolic-ref', 'refs/heads/main', `refs/heads/${branch}`)
    const ann = annCommitsOnX('plan.md', 'the plan\n', branch)
    expect(rev('main')).toBe(ann)
    const claude = await run({ command: 'create', path: '/memories/more.md', file_text: 'm\n' })
    expect(rev('main~1')).toBe(ann)
    expect(readFileSync(mainFile(), 'utf8')).toBe(`${claude.oid}\n`)
    expect(rev(`refs/heads/${branch}`)).toBe(ann)
    expect(
      bed.memory
        .recoveries()
        .map((report) => report.message)
        .join('\n'),
    ).toContain(`link to the branch "${branch}"`)
    fsck(bed.dataDir)
  })
})
