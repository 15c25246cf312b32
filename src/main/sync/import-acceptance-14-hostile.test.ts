/**
 * Issue #14's import, the unkind way: a folder whose links lead out of it or back into
 * itself and whose "file" is a pipe that never ends, and a bundle whose history a hostile
 * client crafted (a submodule, a `.git` folder, an entry named `..`, a link). Each import is
 * one commit by You that holds none of it (or changes nothing), memory's earlier history
 * kept, and the git CLI finds the repository sound.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dialogHost, otherClient, startMachine, type Machine } from './test-support'

let scratch: string
let machines: Machine[] = []
beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'probe34b-import-'))
})
afterEach(async () => {
  await Promise.all(machines.map((m) => m.close()))
  machines = []
  await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
})

async function machine(name: string) {
  const host = dialogHost()
  const m = await startMachine(name, { host })
  machines.push(m)
  return { m, host }
}

describe('importing a hostile folder', () => {
  it('follows no link out of it or back into it, reads no pipe, and keeps memory’s history', async () => {
    const { m, host } = await machine('laptop')
    await m.write('me.md', 'Name: Sam\n')
    const before = m.git('rev-parse', 'main').trim()
    const outside = path.join(scratch, 'outside')
    await mkdir(outside)
    await writeFile(path.join(outside, 'secret.md'), 'outside the folder\n')
    const folder = path.join(scratch, 'notes')
    await mkdir(path.join(folder, 'sub'), { recursive: true })
    await writeFile(path.join(folder, 'sub', 'book.md'), 'Reading: Dune\n')
    await symlink(outside, path.join(folder, 'escape'))
    await symlink(path.join(outside, 'secret.md'), path.join(folder, 'secret.md'))
    await symlink(folder, path.join(folder, 'sub', 'loop'))
    execFileSync('mkfifo', [path.join(folder, 'pipe.md')])
    host.answer(folder)
    const result = await m.call('sync:import', { kind: 'folder' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(Object.fromEntries(await m.files())).toEqual({
      'me.md': 'Name: Sam\n',
      'sub/book.md': 'Reading: Dune\n',
    })
    expect(result.message).not.toContain(scratch)
    for (const skipped of result.skipped) expect(skipped.reason).not.toContain(scratch)
    expect(m.git('rev-parse', 'main~1').trim()).toBe(before)
    m.git('fsck', '--strict', '--no-dangling')
  }, 60_000)
})

/** A bundle of one commit on `main` whose root tree lists `entries` (ls-tree lines). */
function craftedBundle(dir: string, entries: (gitdir: string) => string[]): string {
  const gitdir = path.join(dir, 'crafted.git')
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir])
  const blob = otherClient(gitdir, 'a plain note\n', 'hash-object', '-w', '--stdin')
  const lines = [`100644 blob ${blob}\tplain.md`, ...entries(gitdir)]
  const tree = otherClient(gitdir, `${lines.join('\n')}\n`, 'mktree', '--missing')
  const commit = otherClient(gitdir, null, 'commit-tree', tree, '-m', 'crafted')
  otherClient(gitdir, null, 'update-ref', 'refs/heads/main', commit)
  const file = path.join(dir, 'crafted.bundle')
  otherClient(gitdir, null, 'bundle', 'create', file, 'main')
  return file
}

describe('importing a bundle a hostile client crafted', () => {
  const cases: ReadonlyArray<[string, (gitdir: string) => string[]]> = [
    ['a submodule', () => [`160000 commit ${'1'.repeat(40)}\tvendor`]],
    [
      'a .git folder',
      (gitdir) => {
        const blob = otherClient(gitdir, '[core]\n\tbare = false\n', 'hash-object', '-w', '--stdin')
        const inner = otherClient(gitdir, `100644 blob ${blob}\tconfig\n`, 'mktree')
        return [`040000 tree ${inner}\t.git`]
      },
    ],
    [
      'a link out of memory',
      (gitdir) => [
        `120000 blob ${otherClient(gitdir, '/etc/passwd', 'hash-object', '-w', '--stdin')}\tpasswd.md`,
      ],
    ],
  ]
  for (const [what, entries] of cases) {
    it(`(${what}) imports the rest as one commit by You, leaving it out, named`, async () => {
      const { m, host } = await machine('laptop')
      await m.write('me.md', 'Name: Sam\n')
      const before = m.git('rev-parse', 'main').trim()
      host.answer(craftedBundle(scratch, entries))
      const result = await m.call('sync:import', { kind: 'bundle' })
      expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
      expect(result.skipped).toHaveLength(1)
      expect(result.skipped[0]!.path).toMatch(/^(vendor|\.git\/config|passwd\.md)$/)
      expect(Object.fromEntries(await m.files())).toEqual({
        'me.md': 'Name: Sam\n',
        'plain.md': 'a plain note\n',
      })
      m.git('merge-base', '--is-ancestor', before, 'main')
      const names = m.git('log', '--all', '--name-only', '--format=', 'main')
      expect(names).not.toMatch(/vendor|\.git\/|passwd/)
      m.git('fsck', '--strict', '--no-dangling')
    }, 60_000)
  }

  it('(entries named .. and a/b.md, which git’s own tools refuse to write) leaves each out, named; an old mode reads as git reads it', async () => {
    const { m, host } = await machine('laptop')
    await m.write('me.md', 'Name: Sam\n')
    const before = m.git('rev-parse', 'main').trim()
    const gitdir = path.join(scratch, 'dots.git')
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir])
    const blob = otherClient(gitdir, 'escaped\n', 'hash-object', '-w', '--stdin')
    const inner = otherClient(gitdir, `100644 blob ${blob}\tescape.md\n`, 'mktree')
    const plain = otherClient(gitdir, 'a plain note\n', 'hash-object', '-w', '--stdin')
    // Written byte by byte, as a hostile client would: git's mktree refuses both names.
    const entry = (mode: string, name: string, oid: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')])
    const tree = otherClient(
      gitdir,
      Buffer.concat([
        entry('40000', '..', inner),
        entry('100644', 'a/b.md', blob),
        // A mode old versions of git wrote, which git reads as a plain file.
        entry('100664', 'old.md', blob),
        entry('100644', 'plain.md', plain),
      ]),
      ...['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'],
    )
    const commit = otherClient(gitdir, null, 'commit-tree', tree, '-m', 'dots')
    otherClient(gitdir, null, 'update-ref', 'refs/heads/main', commit)
    const file = path.join(scratch, 'dots.bundle')
    otherClient(gitdir, null, 'bundle', 'create', file, 'main')
    host.answer(file)
    const result = await m.call('sync:import', { kind: 'bundle' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]))).toEqual({
      '../escape.md': 'not a valid file name',
      'a/b.md': 'not a valid file name',
    })
    expect(Object.fromEntries(await m.files())).toEqual({
      'me.md': 'Name: Sam\n',
      'old.md': 'escaped\n',
      'plain.md': 'a plain note\n',
    })
    expect(m.git('ls-tree', 'main', 'old.md')).toMatch(/^100644 blob /)
    m.git('merge-base', '--is-ancestor', before, 'main')
    expect(m.git('log', '--all', '--name-only', '--format=', 'main')).not.toContain('escape.md')
    await expect(stat(path.join(m.dir, 'escape.md'))).rejects.toThrow()
    m.git('fsck', '--strict', '--no-dangling')
  }, 60_000)

  it('(a folder with no name at the top, which git calls damage) leaves it out, named', async () => {
    const { m, host } = await machine('laptop')
    await m.write('me.md', 'Name: Sam\n')
    const before = m.git('rev-parse', 'main').trim()
    const gitdir = path.join(scratch, 'empty-name.git')
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir])
    const blob = otherClient(gitdir, 'under no name\n', 'hash-object', '-w', '--stdin')
    const inner = otherClient(gitdir, `100644 blob ${blob}\tinner.md\n`, 'mktree')
    const plain = otherClient(gitdir, 'a plain note\n', 'hash-object', '-w', '--stdin')
    const entry = (mode: string, name: string, oid: string) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')])
    const tree = otherClient(
      gitdir,
      Buffer.concat([entry('40000', '', inner), entry('100644', 'plain.md', plain)]),
      ...['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'],
    )
    const commit = otherClient(gitdir, null, 'commit-tree', tree, '-m', 'no name')
    otherClient(gitdir, null, 'update-ref', 'refs/heads/main', commit)
    // A repository, not a bundle: git's pack-objects refuses to pack such a tree.
    host.answer(gitdir)
    const result = await m.call('sync:import', { kind: 'repository' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(result.skipped).toEqual([{ path: '(no name)', reason: 'not a valid file name' }])
    expect(Object.fromEntries(await m.files())).toEqual({
      'me.md': 'Name: Sam\n',
      'plain.md': 'a plain note\n',
    })
    m.git('merge-base', '--is-ancestor', before, 'main')
    // Before, the folder was copied with its empty name (its files' paths, `inner.md`, passed
    // every check), and git fsck --strict found memory's repository damaged.
    m.git('fsck', '--strict', '--no-dangling')
  }, 60_000)
})
