/**
 * Folder listings git itself calls damaged (issue #14's acceptance check): a tree naming one
 * entry twice, a name as both a file and a folder, a name holding `/`. Made with the git CLI
 * (`hash-object --literally`), as a broken or hostile client could push them to a remote
 * that does not check what it receives, or leave them in a repository chosen for import.
 * A sync refuses them as the remote's, never as damage to this machine's history, changing
 * nothing; an import keeps the first of two entries and names the second.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  dialogHost,
  expectSound,
  otherClient as git,
  startMachine,
  useSyncServer,
} from './test-support'

const sync = useSyncServer()
let scratch: string

beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cairn-malformed-'))
})
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
})

type Entry = readonly [mode: string, name: string, oid: string]

/** A tree object written byte for byte, as `git mktree` would refuse to write it. */
function rawTree(gitdir: string, entries: ReadonlyArray<Entry>): string {
  const bytes = Buffer.concat(
    entries.map(([mode, name, oid]) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')]),
    ),
  )
  return git(gitdir, bytes, 'hash-object', '-t', 'tree', '--literally', '-w', '--stdin')
}

/** The hostile listings, with `keep` (a blob already in the history) beside them. */
function shapes(gitdir: string, keep: string): Record<string, ReadonlyArray<Entry>> {
  const hello = git(gitdir, 'hello\n', 'hash-object', '-w', '--stdin')
  const other = git(gitdir, 'other\n', 'hash-object', '-w', '--stdin')
  const folder = git(gitdir, `100644 blob ${hello}\tx.md\n`, 'mktree')
  return {
    'one name twice': [
      ['100644', 'd.md', hello],
      ['100644', 'd.md', other],
      ['100644', 'keep.md', keep],
    ],
    'a name as a file and a folder': [
      ['100644', 'd', other],
      ['40000', 'd', folder],
      ['100644', 'keep.md', keep],
    ],
    'a name holding a slash': [
      ['100644', 'a/b.md', hello],
      ['100644', 'keep.md', keep],
    ],
  }
}

describe('a remote whose new version holds a folder listing git calls damaged', () => {
  for (const [shape, waiting] of [
    ['one name twice', true],
    ['a name as a file and a folder', true],
    ['a name holding a slash', true],
    ['one name twice', false],
    ['a name holding a slash', false],
  ] as const) {
    const to = waiting ? 'a change waiting here (a merge)' : 'nothing waiting (a fast-forward)'
    it(`(${shape}, ${to}) is refused as the remote's, changing nothing; once the remote is mended the next sync completes`, async () => {
      const repo = sync.newRepo('malformed')
      const laptop = await sync.machine('laptop')
      await laptop.write('keep.md', 'keep\n')
      await laptop.connect(sync.server, repo)
      expect((await laptop.sync()).state).toBe('idle')

      // Another client pushes a commit whose tree is damaged (git http-backend takes it, as a
      // server that does not fsck what it receives does).
      const remote = sync.server.gitdir(repo)
      const tip = git(remote, null, 'rev-parse', 'main')
      const keep = git(remote, null, 'rev-parse', 'main:keep.md')
      const tree = rawTree(remote, shapes(remote, keep)[shape] ?? [])
      const bad = git(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'damaged listing')
      git(remote, null, 'update-ref', 'refs/heads/main', bad)
      if (waiting) await laptop.write('mine.md', 'written here\n')
      const head = laptop.git('rev-parse', 'main')
      const folder = await laptop.files()
      // A tag the person made with git (`git tag -a`, its ref naming a tag, not a commit) does
      // not stop the removal (redges32: reading it as a commit failed it, every pack kept).
      laptop.git(
        '-c',
        'user.name=Ann',
        '-c',
        'user.email=ann@example.com',
        'tag',
        '-a',
        '-m',
        'v1',
        'v1',
        'main',
      )
      const seen = laptop.git('rev-parse', 'refs/remotes/cairn-sync/main')
      const packs = readdirSync(path.join(laptop.dir, 'history.git', 'objects', 'pack'))

      const status = await laptop.sync()

      expect(status.state).toBe('error')
      // Before: 'history-damaged', "The memory history is damaged", while git fsck found this
      // machine's history whole: the person was sent to mend what was never broken.
      expect(status.error?.code).toBe('sync-unsafe-content')
      expect(status.error?.message).toContain('The remote holds a version Cairn cannot read')
      expect(status.error?.message).not.toContain(laptop.dir)
      expect(status.error?.message).not.toContain(sync.server.root)
      expect(status.error?.message).not.toMatch(/\n\s+at /)
      expect(laptop.git('rev-parse', 'main')).toBe(head)
      expect(await laptop.files()).toEqual(folder)
      // This machine's own history is whole: git finds no fault in what `main` reaches.
      expect(laptop.git('fsck', '--strict', '--no-dangling', '--connectivity-only', 'main')).toBe(
        '',
      )
      expect(git(remote, null, 'rev-parse', 'main')).toBe(bad)
      // What the refused fetch brought is gone (edges32): git fsck --strict finds nothing in the
      // whole store, the last main seen is as before, and no pack of the fetch is left.
      laptop.git('fsck', '--strict')
      expect(laptop.git('rev-parse', 'refs/remotes/cairn-sync/main')).toBe(seen)
      expect(readdirSync(path.join(laptop.dir, 'history.git', 'objects', 'pack'))).toEqual(packs)

      // The remote put back (the damaged commit dropped): the next sync sends what waited.
      git(remote, null, 'update-ref', 'refs/heads/main', tip)
      expect((await laptop.sync()).state).toBe('idle')
      if (waiting) expect(git(remote, null, 'show', 'main:mine.md')).toBe('written here')
      expect(git(remote, null, 'rev-parse', 'main')).toBe(laptop.git('rev-parse', 'main').trim())
      const clone = path.join(scratch, 'clone')
      execFileSync('git', ['clone', '--quiet', '--no-local', remote, clone])
      execFileSync('git', ['-C', clone, 'fsck', '--strict', '--no-dangling'])
    }, 60_000)
  }
})

describe('an imported repository whose folder listing names one entry twice', () => {
  for (const shape of ['one name twice', 'a name as a file and a folder']) {
    it(`(${shape}) keeps the first, names the second, in one commit by You git calls sound`, async () => {
      const source = path.join(scratch, 'source.git')
      execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', source])
      const keep = git(source, 'kept before\n', 'hash-object', '-w', '--stdin')
      const tree = rawTree(source, shapes(source, keep)[shape] ?? [])
      const commit = git(source, null, 'commit-tree', tree, '-m', 'from elsewhere')
      git(source, null, 'update-ref', 'refs/heads/main', commit)

      const host = dialogHost()
      const m = await startMachine('laptop', { host })
      try {
        await m.write('mine.md', 'mine\n')
        const before = m.git('rev-parse', 'main').trim()
        host.answer(source)
        // Before: 'internal' ("Something went wrong inside Cairn"), the damaged tree written
        // into memory's repository, where git fsck --strict failed on it from then on.
        const result = await m.call('sync:import', { kind: 'repository' })
        expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
        const second = shape === 'one name twice' ? 'd.md' : 'd'
        expect(result.skipped).toEqual([
          { path: second, reason: 'a second entry of the same name' },
        ])
        expect(m.git('rev-parse', 'main^1').trim()).toBe(before)
        const files = Object.fromEntries(await m.files())
        expect(files['mine.md']).toBe('mine\n')
        expect(files['keep.md']).toBe('kept before\n')
        expect(files[second]).toBe(shape === 'one name twice' ? 'hello\n' : 'other\n')
        m.git('fsck', '--strict', '--no-dangling')
        await expectSound(sync.server, sync.newRepo('unused'), [m])
      } finally {
        await m.close()
      }
    }, 60_000)
  }
})

describe('a remote whose new commit cannot be read (no author line)', () => {
  it('is refused as the remote’s, changing nothing; once the remote is mended the next sync completes', async () => {
    const repo = sync.newRepo('unreadable-commit')
    const laptop = await sync.machine('laptop')
    await laptop.write('keep.md', 'keep\n')
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    const remote = sync.server.gitdir(repo)
    const tip = git(remote, null, 'rev-parse', 'main')
    const tree = git(remote, null, 'rev-parse', 'main^{tree}')
    const record = `tree ${tree}\nparent ${tip}\ncommitter Other <o@x> 1 +0000\n\nno author\n`
    const bad = git(remote, record, 'hash-object', '-t', 'commit', '--literally', '-w', '--stdin')
    git(remote, null, 'update-ref', 'refs/heads/main', bad)
    await laptop.write('mine.md', 'written here\n')
    const head = laptop.git('rev-parse', 'main')

    const status = await laptop.sync()

    // Before: 'history-damaged', this machine's history blamed for the remote's record.
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('The remote holds a version Cairn cannot read')
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    git(remote, null, 'update-ref', 'refs/heads/main', tip)
    expect((await laptop.sync()).state).toBe('idle')
    expect(git(remote, null, 'show', 'main:mine.md')).toBe('written here')
  }, 60_000)
})
