/**
 * A remote commit refused for what it holds is remembered by its id (with the sync state), so
 * the next sync asks only for the remote's refs and, while its `main` is still that commit,
 * downloads nothing: before, its pack came in full at every sync (and every retry) for as long
 * as the remote kept it. A real git server on loopback counts what it served; git as second
 * opinion.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { expect, it } from 'vitest'
import {
  otherClient as git,
  useSyncServer,
  type Machine,
  type MachineOptions,
} from './test-support'

const sync = useSyncServer()

interface Remembered {
  url: string
  commit: string
  message: string
  rules?: string
}

const stateFile = (dataDir: string) => path.join(dataDir, 'sync', 'state.json')

/** The sync state as saved (`<dataDir>/sync/state.json`). */
function savedState(dataDir: string): { refused?: Remembered } {
  return JSON.parse(readFileSync(stateFile(dataDir), 'utf8'))
}

/** The sync state with its `refused` replaced (by hand, as a person or another Cairn may). */
function editState(dataDir: string, refused: unknown): void {
  writeFileSync(stateFile(dataDir), JSON.stringify({ ...savedState(dataDir), refused }))
}

/**
 * The laptop (connected to a new repository and synced), and another client's push of a
 * symbolic link beside a large file that does not compress: the link refuses the commit
 * (`bad`), the file makes its pack weigh.
 */
async function refusedRemote(laptop: Machine) {
  const repo = sync.newRepo('refused-remembered')
  await laptop.write('keep.md', 'keep\n')
  await laptop.connect(sync.server, repo)
  expect((await laptop.sync()).state).toBe('idle')
  const remote = sync.server.gitdir(repo)
  const tip = git(remote, null, 'rev-parse', 'main')
  const keep = git(remote, null, 'rev-parse', 'main:keep.md')
  const big = git(remote, randomBytes(512 * 1024), 'hash-object', '-w', '--stdin')
  const link = git(remote, '/etc/passwd', 'hash-object', '-w', '--stdin')
  const tree = git(
    remote,
    [
      `100644 blob ${big}\tbig.bin`,
      `100644 blob ${keep}\tkeep.md`,
      `120000 blob ${link}\tpasswd.md`,
    ]
      .map((entry) => `${entry}\n`)
      .join(''),
    'mktree',
  )
  const bad = git(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'a link')
  git(remote, null, 'update-ref', 'refs/heads/main', bad)
  return { bad, remote, big, keep }
}

/** The laptop closed and opened again on its data folder (`options`: another Cairn, say). */
async function reopen(laptop: Machine, options: MachineOptions = {}): Promise<Machine> {
  await sync.stop(laptop)
  return sync.machine('laptop', laptop.dir, options)
}

/** A sync, and how many bytes the server sent for it (and since `from`, when given). */
async function measured(laptop: Machine, from = sync.server.bytesSent) {
  const status = await laptop.sync()
  return { status, served: sync.server.bytesSent - from }
}

it('refuses a commit refused before without downloading it again, until the remote moves past it', async () => {
  const laptop = await sync.machine('laptop')
  const { bad, remote, big, keep } = await refusedRemote(laptop)

  const before = sync.server.bytesSent
  const first = await laptop.sync()
  // The refused fetch downloaded the whole pack (the large file in it).
  expect(sync.server.bytesSent - before).toBeGreaterThan(512 * 1024)
  expect(first.error?.code).toBe('sync-unsafe-content')
  expect(first.error?.message).toContain('passwd.md')
  const packs = laptop.git('count-objects', '-v')

  const bytes = sync.server.bytesSent
  const second = await laptop.sync()
  // Only the remote's refs were asked for: a few hundred bytes served where the first
  // refusal took the whole pack (before: the same half megabyte again).
  expect(sync.server.bytesSent - bytes).toBeLessThan(2048)
  // The same refusal, saying it was not downloaded again.
  expect(second.error?.code).toBe('sync-unsafe-content')
  expect(second.error?.message).toContain(first.error?.message ?? '(none)')
  expect(second.error?.message).toContain('did not download it again')
  expect(laptop.git('count-objects', '-v')).toBe(packs)
  expect(savedState(laptop.dir).refused?.commit).toBe(bad)
  laptop.git('fsck', '--strict')

  // The remote moves past it (the link dropped in a later commit): the next sync fetches,
  // takes it, and forgets the refusal.
  const mended = git(
    remote,
    `100644 blob ${big}\tbig.bin\n100644 blob ${keep}\tkeep.md\n`,
    'mktree',
  )
  const next = git(remote, null, 'commit-tree', mended, '-p', bad, '-m', 'no link')
  git(remote, null, 'update-ref', 'refs/heads/main', next)
  expect((await laptop.sync()).state).toBe('idle')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(next)
  expect(savedState(laptop.dir).refused).toBeUndefined()
  laptop.git('fsck', '--strict')
}, 60_000)

it('judges again a commit another Cairn version refused: fetched once under this version, then remembered anew', async () => {
  const first = await sync.machine('laptop', undefined, { appVersion: '1.0.0' })
  const { bad } = await refusedRemote(first)
  expect((await measured(first)).status.error?.code).toBe('sync-unsafe-content')
  expect(savedState(first.dir).refused?.commit).toBe(bad)
  // Remembered by 1.0.0: 1.0.0 opened again does not download it.
  const again = await reopen(first, { appVersion: '1.0.0' })
  expect((await measured(again)).served).toBeLessThan(2048)
  // A new Cairn (whose rules may take the commit) fetches and judges it itself (its first sync
  // runs as it opens); before, it was refused unfetched with the old version's words for as long
  // as the remote kept it.
  const from = sync.server.bytesSent
  const upgraded = await reopen(again, { appVersion: '1.1.0' })
  try {
    const judged = await measured(upgraded, from)
    expect(judged.served).toBeGreaterThan(512 * 1024)
    expect(judged.status.error?.code).toBe('sync-unsafe-content')
    expect(savedState(upgraded.dir).refused?.rules).toContain('1.1.0')
    // Remembered under this version now: the next sync asks only for the refs.
    const next = await measured(upgraded)
    expect(next.served).toBeLessThan(2048)
    expect(next.status.error?.message).toContain('did not download it again')
    upgraded.git('fsck', '--strict')
  } finally {
    await sync.stop(upgraded)
    await rm(first.dir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 120_000)

it('never holds back a commit this Cairn takes: a refusal remembered without its rules (an older build, a hand edit) is ignored', async () => {
  const laptop = await sync.machine('laptop')
  const repo = sync.newRepo('refused-remembered')
  await laptop.write('keep.md', 'keep\n')
  await laptop.connect(sync.server, repo)
  expect((await laptop.sync()).state).toBe('idle')
  const remote = sync.server.gitdir(repo)
  const blob = git(remote, 'theirs\n', 'hash-object', '-w', '--stdin')
  const keep = git(remote, null, 'rev-parse', 'main:keep.md')
  const tree = git(remote, `100644 blob ${keep}\tkeep.md\n100644 blob ${blob}\tnew.md\n`, 'mktree')
  const good = git(remote, null, 'commit-tree', tree, '-p', 'main', '-m', 'a plain file')
  git(remote, null, 'update-ref', 'refs/heads/main', good)
  await sync.stop(laptop)
  // As the first build that remembered refusals wrote it: no rules, words of the right shape.
  editState(laptop.dir, {
    url: sync.server.url(repo),
    commit: good,
    message:
      'The remote holds files Cairn will not put in your memory folder: new.md (a link). Nothing was changed; remove them from the remote to sync.',
  })
  const reopened = await sync.machine('laptop', laptop.dir)
  try {
    // Before: refused unfetched, the person's change held back until the remote moved on.
    expect((await reopened.sync()).state).toBe('idle')
    expect(reopened.git('rev-parse', 'main').trim()).toBe(good)
    expect((await reopened.files()).get('new.md')).toBe('theirs\n')
    expect(savedState(reopened.dir).refused).toBeUndefined()
  } finally {
    await sync.stop(reopened)
    await rm(laptop.dir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 120_000)

it('ignores a remembered refusal edited into another shape: never says its words (a path, markup, a line break), never crashes, judges the commit anew', async () => {
  let laptop = await sync.machine('laptop')
  const dir = laptop.dir
  try {
    const { bad } = await refusedRemote(laptop)
    expect((await laptop.sync()).error?.code).toBe('sync-unsafe-content')
    const remembered = savedState(dir).refused!
    expect(remembered.commit).toBe(bad)
    const shaped = (inner: string) =>
      `The remote holds files Cairn will not put in your memory folder: ${inner}. Nothing was changed; remove them from the remote to sync.`
    const edits: ReadonlyArray<() => void> = [
      { ...remembered, message: shaped(`${dir}/history.git (a link)`) },
      { ...remembered, message: shaped('a.md (a link)\nCall this number') },
      { ...remembered, message: `<b>${dir}</b> is where your memory lives` },
      { ...remembered, message: shaped('x'.repeat(9000)) },
      { ...remembered, commit: 'not-hex' },
      { ...remembered, commit: `../../${dir}` },
      { ...remembered, rules: 42 },
    ]
      .map((refused) => () => editState(dir, refused))
      .concat(() => {
        // Torn: the file cut in the middle of the refusal.
        const text = JSON.stringify({ ...savedState(dir), refused: remembered })
        writeFileSync(stateFile(dir), text.slice(0, text.indexOf('"message"') + 20))
      })
    for (const [n, edit] of edits.entries()) {
      await sync.stop(laptop)
      edit()
      const from = sync.server.bytesSent
      laptop = await sync.machine('laptop', dir)
      const { status, served } = await measured(laptop, from)
      // Judged anew (the sync as it opened fetched it again), refused in this Cairn's own words.
      expect({ n, served: served > 512 * 1024 }).toEqual({ n, served: true })
      expect(status.error?.code).toBe('sync-unsafe-content')
      expect(status.error?.message.startsWith(remembered.message)).toBe(true)
      expect(status.error?.message).not.toContain(dir)
      expect(status.error?.message).not.toMatch(/<b>|Call this number|not-hex/)
      expect(savedState(dir).refused?.message).toBe(remembered.message)
    }
    laptop.git('fsck', '--strict')
  } finally {
    await sync.stop(laptop)
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 240_000)

it('removes what a refused fetch brought though a ref of this machine loops (a symbolic ref naming itself)', async () => {
  const laptop = await sync.machine('laptop')
  const { big } = await refusedRemote(laptop)
  // A broken ref a person left (git ignores it): it names nothing, so it keeps nothing.
  const odd = path.join(laptop.dir, 'history.git', 'refs', 'odd')
  mkdirSync(odd, { recursive: true })
  writeFileSync(path.join(odd, 'loop'), 'ref: refs/odd/loop\n')
  writeFileSync(path.join(odd, 'a'), 'ref: refs/odd/b\n')
  writeFileSync(path.join(odd, 'b'), 'ref: refs/odd/a\n')
  const status = await laptop.sync()
  expect(status.error?.code).toBe('sync-unsafe-content')
  // Before, the removal failed reading that ref and kept every pack: the refused large file
  // (and the link) stayed in the history for good.
  expect(() => laptop.git('cat-file', '-e', big)).toThrow()
  expect(laptop.git('show', 'main:keep.md')).toBe('keep\n')
  // git's own check, once the broken refs it would report are gone.
  rmSync(odd, { recursive: true })
  laptop.git('fsck', '--strict')
}, 60_000)
