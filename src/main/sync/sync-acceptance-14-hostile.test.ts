/**
 * Issue #14, checked the unkind way: two machines syncing through the real git server on
 * loopback make the edits that collide worst (a file and a folder of one name, two renames of
 * one file, a rename against a delete, the same change on both sides, each machine's edit and
 * delete crossing), and a remote holds what a hostile client can push (a submodule, `.git`,
 * `..`). After every case the git CLI clones the remote and finds it clean, both folders equal
 * their `main`, and no line either side wrote is missing from the union of history.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  expectSound,
  linesOf,
  linesOfHistory,
  otherClient,
  useSyncServer,
  type Machine,
} from './test-support'

const sync = useSyncServer()

/** Both machines idle and equal after syncing in turns until neither has anything to send. */
async function settle(laptop: Machine, desktop: Machine): Promise<void> {
  for (let round = 0; round < 3; round++) {
    for (const m of [laptop, desktop]) {
      const status = await m.sync()
      expect(status.state === 'idle' || status.state === 'conflicts').toBe(true)
    }
  }
  expect(laptop.git('rev-parse', 'main')).toBe(desktop.git('rev-parse', 'main'))
  expect(await laptop.files()).toEqual(await desktop.files())
}

/** Sound on every side, and every line in `written` somewhere in the union of history. */
async function expectNothingLost(
  repo: string,
  machines: ReadonlyArray<Machine>,
  written: ReadonlyArray<string>,
): Promise<void> {
  const remote = await expectSound(sync.server, repo, machines)
  const union = linesOfHistory(remote)
  for (const m of machines) {
    for (const line of linesOfHistory(path.join(m.dir, 'history.git'))) union.add(line)
  }
  expect(written.filter((line) => !union.has(line))).toEqual([])
}

/** Every line of every file in the folder now (what the person sees, not just history). */
async function linesNow(m: Machine): Promise<Set<string>> {
  const out = new Set<string>()
  for (const text of (await m.files()).values()) for (const l of text.split('\n')) out.add(l)
  return out
}

describe('two machines whose edits collide the worst ways', () => {
  it('a file on one machine and a folder of the same name on the other: both kept, nothing lost', async () => {
    const { repo, laptop, desktop } = await sync.shared('file-folder', (d) =>
      d.write('keep.md', 'keep\n'),
    )
    await laptop.write('topics', 'the laptop’s topics file\n')
    await desktop.write('topics/rust.md', 'the desktop’s rust note\n')
    await laptop.sync()
    await desktop.sync()
    await settle(laptop, desktop)
    const now = await linesNow(desktop)
    expect(now.has('the laptop’s topics file')).toBe(true)
    expect(now.has('the desktop’s rust note')).toBe(true)
    await expectNothingLost(
      repo,
      [laptop, desktop],
      ['the laptop’s topics file', 'the desktop’s rust note'],
    )
  }, 120_000)

  it('one file renamed to different names on each machine: its text survives, the machines agree', async () => {
    const text = linesOf('# Trip', 'Fly on Monday.', 'Hotel by the sea.').join('\n') + '\n'
    const { repo, laptop, desktop } = await sync.shared('two-renames', (d) =>
      d.write('trip.md', text),
    )
    await laptop.rename('trip.md', 'travel/trip.md')
    await desktop.rename('trip.md', 'plans/trip-2026.md')
    await laptop.sync()
    await desktop.sync()
    await settle(laptop, desktop)
    const now = await linesNow(laptop)
    for (const line of linesOf(text)) expect(now.has(line)).toBe(true)
    await expectNothingLost(repo, [laptop, desktop], linesOf(text))
  }, 120_000)

  it('a rename on one machine against a delete on the other, and the same edit made on both', async () => {
    const { repo, laptop, desktop } = await sync.shared('rename-delete', async (d) => {
      await d.write('old.md', 'an old note\n')
      await d.write('same.md', 'one\n')
    })
    await laptop.rename('old.md', 'archive/old.md')
    await desktop.remove('old.md')
    await laptop.write('same.md', 'one\ntwo\n')
    await desktop.write('same.md', 'one\ntwo\n')
    await laptop.write('both.md', 'added alike\n')
    await desktop.write('both.md', 'added alike\n')
    await laptop.sync()
    const status = await desktop.sync()
    expect(status.conflicts).toEqual([])
    await settle(laptop, desktop)
    const files = Object.fromEntries(await desktop.files())
    expect(files['same.md']).toBe('one\ntwo\n')
    expect(files['both.md']).toBe('added alike\n')
    expect(files['same.md']).not.toContain('<<<<<<<')
    await expectNothingLost(repo, [laptop, desktop], ['an old note', 'two', 'added alike'])
  }, 120_000)

  it('an edit against a delete, crossing both ways at once: every edited file stays', async () => {
    const { repo, laptop, desktop } = await sync.shared('cross-delete', async (d) => {
      await d.write('a.md', 'a\n')
      await d.write('b.md', 'b\n')
    })
    await laptop.write('a.md', 'a\nedited on the laptop\n')
    await laptop.remove('b.md')
    await desktop.remove('a.md')
    await desktop.write('b.md', 'b\nedited on the desktop\n')
    await laptop.sync()
    await desktop.sync()
    await settle(laptop, desktop)
    const files = Object.fromEntries(await laptop.files())
    expect(files['a.md']).toBe('a\nedited on the laptop\n')
    expect(files['b.md']).toBe('b\nedited on the desktop\n')
    await expectNothingLost(
      repo,
      [laptop, desktop],
      ['edited on the laptop', 'edited on the desktop'],
    )
  }, 120_000)
})

/** Pushes, as another client would, a commit on the remote's `main` adding `entry` to its tree. */
function pushEntry(repo: string, entry: string): string {
  const remote = sync.server.gitdir(repo)
  const listed = otherClient(remote, null, 'ls-tree', 'main')
  const tree = otherClient(remote, `${listed}\n${entry}\n`, 'mktree', '--missing')
  const tip = otherClient(remote, null, 'rev-parse', 'main')
  const commit = otherClient(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'hostile')
  otherClient(remote, null, 'update-ref', 'refs/heads/main', commit)
  return commit
}

describe('a remote holding what a hostile client pushed', () => {
  const blobOf = (repo: string, text: string) =>
    otherClient(sync.server.gitdir(repo), text, 'hash-object', '-w', '--stdin')
  const cases: ReadonlyArray<[string, (repo: string) => string]> = [
    ['a submodule', () => `160000 commit ${'1'.repeat(40)}\tvendor`],
    [
      'a .git folder',
      (repo) => {
        const remote = sync.server.gitdir(repo)
        const blob = blobOf(repo, '[core]\n\tfsmonitor = touch /tmp/probe34b-pwned\n')
        const inner = otherClient(remote, `100644 blob ${blob}\tconfig\n`, 'mktree')
        return `040000 tree ${inner}\t.git`
      },
    ],
    [
      'a .GIT folder in another spelling',
      (repo) => {
        const remote = sync.server.gitdir(repo)
        const blob = blobOf(repo, 'x\n')
        const inner = otherClient(remote, `100644 blob ${blob}\tconfig\n`, 'mktree')
        return `040000 tree ${inner}\t.GIT`
      },
    ],
    ['a link out of the folder', (repo) => `120000 blob ${blobOf(repo, '../../etc')}\tnotes`],
  ]
  for (const [what, entry] of cases) {
    it(`(${what}) is refused plainly, changing nothing, and the next sync completes once it goes`, async () => {
      const { repo, laptop } = await sync.alone(`hostile-${what.replace(/\W+/g, '-')}`)
      const tip = sync.server.git(repo, 'rev-parse', 'main').trim()
      await laptop.write('mine.md', 'written here\n')
      const head = laptop.git('rev-parse', 'main')
      const before = await laptop.files()
      pushEntry(repo, entry(repo))
      const status = await laptop.sync()
      expect(status.state).toBe('error')
      expect(status.error?.code).toBe('sync-unsafe-content')
      expect(status.error?.message).not.toMatch(/\/tmp|\/home|Error:|at /)
      expect(laptop.git('rev-parse', 'main')).toBe(head)
      expect(await laptop.files()).toEqual(before)
      sync.server.git(repo, 'update-ref', 'refs/heads/main', tip)
      expect((await laptop.sync()).state).toBe('idle')
      expect(sync.server.git(repo, 'show', 'main:mine.md')).toBe('written here\n')
      await expectSound(sync.server, repo, [laptop])
    }, 120_000)
  }
})
