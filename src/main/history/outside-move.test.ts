import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { IndexFile } from './index-file'
import { createObjectStore } from './object-store'
import { rebuildIndex } from './side-index'
import {
  claudeCommands,
  folderFiles,
  fsck,
  gitAsAnn,
  gitCli,
  headFiles,
  indexDirIn,
  memoryTestBed,
} from './test-helpers'

// Issue #9, found by stop 29's acceptance check of #4 (probe29v): a commit made with git in
// the history folder while Cairn is open was dropped from `main`. Cairn still held the old
// head, committed on it and moved `main` there: the outside commit (its author, its message)
// was no longer reachable and a later `git gc --prune` deleted it. Cairn now compares the ref
// on disk with what it holds before each change and takes the outside history first.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

const run = claudeCommands(bed, 'conv-live')

const work = () => path.join(bed.dataDir, 'memories')
const gitdir = () => path.join(bed.dataDir, 'history.git')
const mainOid = () => gitCli(bed.dataDir, 'rev-parse', 'main').trim()

/** Runs git as Ann, with the memory folder as its work tree (as durability.md says). */
const asAnn = (...args: string[]) => gitAsAnn(bed.dataDir, ...args)

function isAncestor(older: string, newer: string): boolean {
  return isAncestorIn(bed.dataDir, older, newer)
}

function isAncestorIn(dataDir: string, older: string, newer: string): boolean {
  try {
    gitCli(dataDir, 'merge-base', '--is-ancestor', older, newer)
    return true
  } catch {
    return false
  }
}

async function two(): Promise<void> {
  await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\nb\nc\n' })
  await run({ command: 'create', path: '/memories/n.md', file_text: 'n\n' })
}

/** After the memory is closed: the side index equals one rebuilt from `main`, fsck is clean. */
async function expectWhole(): Promise<void> {
  await bed.close()
  const kept = IndexFile.open(indexDirIn(bed.dataDir))
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'cairn-rebuilt-'))
  try {
    const rebuilt = await rebuildIndex(
      createObjectStore(gitdir()),
      path.join(scratch, 'index'),
      mainOid(),
    )
    expect(kept.all()).toEqual(rebuilt.all())
    expect(kept.head()).toBe(mainOid())
    rebuilt.close()
  } finally {
    kept.close()
    await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
  }
  fsck(bed.dataDir)
  expect(headFiles(bed.dataDir)).toEqual(await folderFiles(bed.dataDir))
}

describe('main moved with git while Cairn is open and watching its folder', () => {
  const watched = memoryTestBed({
    memory: { now: () => (clock += 1000), watch: { debounceMs: 30 } },
  })

  it("saves an edit made outside on the outside commit, not on Cairn's old head", async () => {
    const made = await watched.memory.execute(
      { command: 'create', path: '/memories/plan.md', file_text: 'a\n' },
      { actor: 'claude', conversationId: 'conv-live', toolUseId: 'toolu_w1' },
    )
    expect(made.isError).toBe(false)
    const dir = watched.dataDir
    const annTree = gitCli(dir, 'rev-parse', 'main^{tree}').trim()
    const ann = execFileSync(
      'git',
      [
        '--git-dir',
        path.join(dir, 'history.git'),
        'commit-tree',
        annTree,
        '-p',
        'main',
        '-m',
        'Ann',
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_CONFIG_NOSYSTEM: '1',
          HOME: dir,
          GIT_AUTHOR_NAME: 'Ann Smith',
          GIT_AUTHOR_EMAIL: 'ann@example.com',
          GIT_COMMITTER_NAME: 'Ann Smith',
          GIT_COMMITTER_EMAIL: 'ann@example.com',
        },
      },
    ).trim()
    gitCli(dir, 'update-ref', 'refs/heads/main', ann)
    const saved = new Promise<CommitSummary>((resolve) => {
      const stop = watched.memory.onCommit((commit) => {
        if (commit.oid === ann) return
        stop()
        resolve(commit)
      })
    })
    // The watcher saves this edit: on Ann's commit.
    await writeFile(path.join(dir, 'memories', 'mine.md'), 'mine\n')
    const commit = await saved
    expect(commit.parent).toBe(ann)
    expect(gitCli(dir, 'rev-parse', 'main').trim()).toBe(commit.oid)
    expect(isAncestorIn(dir, ann, 'main')).toBe(true)
    fsck(dir)
  })
})

describe('main moved with git while Cairn is open', () => {
  it('keeps a commit made with git and builds the next one on it (the probe29v script)', async () => {
    await two()
    await writeFile(path.join(work(), 'plan.md'), 'a\nB by Ann\nc\n')
    gitCli(bed.dataDir, 'read-tree', 'main')
    asAnn('add', 'plan.md')
    asAnn('commit', '-q', '-m', 'Ann edits')
    const ann = mainOid()
    const next = await run({
      command: 'str_replace',
      path: '/memories/plan.md',
      old_str: 'c\n',
      new_str: 'C\n',
    })
    expect(next.parent).toBe(ann)
    expect(mainOid()).toBe(next.oid)
    expect(isAncestor(ann, 'main')).toBe(true)
    expect(gitCli(bed.dataDir, 'show', 'main:plan.md')).toBe('a\nB by Ann\nC\n')
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.total).toBe(4)
    expect(log.entries[1]).toMatchObject({ oid: ann, actor: 'outside', author: 'Ann Smith' })
    await expectWhole()
  })

  it('takes an amend of its head made outside: the outside history wins, nothing in the folder is lost', async () => {
    await two()
    const cairnHead = mainOid()
    // Ann amends Cairn's last commit, adding a file of hers to it.
    await writeFile(path.join(work(), 'ann.md'), 'from Ann\n')
    gitCli(bed.dataDir, 'read-tree', 'main')
    asAnn('add', 'ann.md')
    asAnn('commit', '-q', '--amend', '-m', 'Ann rewords and adds')
    const amended = mainOid()
    expect(isAncestor(cairnHead, amended)).toBe(false)
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect(next.parent).toBe(amended)
    expect(isAncestor(amended, 'main')).toBe(true)
    // Cairn's files are all still in the folder and in `main`.
    for (const file of ['plan.md', 'n.md', 'ann.md', 'later.md']) {
      expect(gitCli(bed.dataDir, 'cat-file', '-t', `main:${file}`).trim()).toBe('blob')
    }
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => entry.oid)).not.toContain(cairnHead)
    expect(log.entries.find((entry) => entry.oid === amended)).toMatchObject({
      author: 'Ann Smith',
    })
    await expectWhole()
  })

  it('takes a reset --hard made outside, and commits on the commit it went back to', async () => {
    await two()
    const first = gitCli(bed.dataDir, 'rev-parse', 'main~1').trim()
    // git's own index first, or reset leaves the files it does not know of in the folder.
    gitCli(bed.dataDir, 'read-tree', 'main')
    asAnn('reset', '-q', '--hard', 'HEAD~1')
    expect(mainOid()).toBe(first)
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect(next.parent).toBe(first)
    expect([...headFiles(bed.dataDir).keys()].sort()).toEqual(['later.md', 'plan.md'])
    expect((await bed.memory.log({ offset: 0, limit: 10 })).total).toBe(2)
    await expectWhole()
  })

  it("commits what the folder holds beyond a ref put back outside, so nothing of Cairn's is lost", async () => {
    await two()
    gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', 'main~1')
    const back = mainOid()
    const next = await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    const outside = gitCli(bed.dataDir, 'rev-parse', `${next.oid}~1`).trim()
    expect(gitCli(bed.dataDir, 'rev-parse', `${outside}~1`).trim()).toBe(back)
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%s', outside).trim()).toContain(
      'outside Cairn',
    )
    expect([...headFiles(bed.dataDir).keys()].sort()).toEqual(['later.md', 'n.md', 'plan.md'])
    await expectWhole()
  })

  it('refuses a change when main names no commit it can read, and changes nothing', async () => {
    await two()
    const before = mainOid()
    const blob = gitCli(bed.dataDir, 'rev-parse', 'main:plan.md').trim()
    await writeFile(path.join(gitdir(), 'refs', 'heads', 'main'), `${blob}\n`)
    const outcome = await bed.memory.execute(
      { command: 'create', path: '/memories/later.md', file_text: 'l\n' },
      { actor: 'claude', conversationId: 'conv-live', toolUseId: 'toolu_refused' },
    )
    expect(outcome.isError).toBe(true)
    expect(String(outcome.content)).toMatch(/moved outside Cairn/)
    expect(String(outcome.content)).not.toContain(bed.dataDir)
    expect(await readFile(path.join(gitdir(), 'refs', 'heads', 'main'), 'utf8')).toBe(`${blob}\n`)
    expect(Object.keys(Object.fromEntries(await folderFiles(bed.dataDir))).sort()).toEqual([
      'n.md',
      'plan.md',
    ])
    // Put back, Cairn goes on from it.
    await writeFile(path.join(gitdir(), 'refs', 'heads', 'main'), `${before}\n`)
    expect(
      (await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })).parent,
    ).toBe(before)
    await expectWhole()
  })

  it('does not move main back past a commit made with git during a restore', async () => {
    await two()
    const first = gitCli(bed.dataDir, 'rev-parse', 'main~1').trim()
    await run({ command: 'str_replace', path: '/memories/plan.md', old_str: 'b', new_str: 'B' })
    let ann: string | null = null
    // Ann commits (without touching the folder) at the restore's first flush.
    const undo = setDisk(
      hookDisk(nodeDisk, (call) => {
        if (ann === null && call.name === 'fsync') {
          const tree = gitCli(bed.dataDir, 'rev-parse', 'main^{tree}').trim()
          ann = execFileSync(
            'git',
            ['--git-dir', gitdir(), 'commit-tree', tree, '-p', 'main', '-m', 'Ann mid-restore'],
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
          gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', ann)
        }
        return undefined
      }).disk,
    )
    try {
      await bed.memory.restoreFile('/memories/plan.md', first).catch(() => null)
    } finally {
      undo()
    }
    expect(ann).not.toBeNull()
    expect(isAncestor(ann!, 'main')).toBe(true)
    // The next change goes on from Ann's commit, and takes whatever the restore left.
    await run({ command: 'create', path: '/memories/later.md', file_text: 'l\n' })
    expect(isAncestor(ann!, 'main')).toBe(true)
    await expectWhole()
  })
})
