/**
 * A remote commit refused for what it holds is remembered by its id (with the sync state), so
 * the next sync asks only for the remote's refs and, while its `main` is still that commit,
 * downloads nothing: before, its pack came in full at every sync (and every retry) for as long
 * as the remote kept it. A real git server on loopback counts what it served; git as second
 * opinion.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { otherClient as git, useSyncServer } from './test-support'

const sync = useSyncServer()

/** The sync state as saved (`<dataDir>/sync/state.json`). */
function savedState(dataDir: string): { refused?: { commit: string; message: string } } {
  return JSON.parse(readFileSync(path.join(dataDir, 'sync', 'state.json'), 'utf8'))
}

it('refuses a commit refused before without downloading it again, until the remote moves past it', async () => {
  const repo = sync.newRepo('refused-remembered')
  const laptop = await sync.machine('laptop')
  await laptop.write('keep.md', 'keep\n')
  await laptop.connect(sync.server, repo)
  expect((await laptop.sync()).state).toBe('idle')

  // Another client pushes a symbolic link beside a large file that does not compress: the
  // link refuses the commit, the file makes its pack weigh.
  const remote = sync.server.gitdir(repo)
  const tip = git(remote, null, 'rev-parse', 'main')
  const keep = git(remote, null, 'rev-parse', 'main:keep.md')
  const big = git(remote, randomBytes(512 * 1024), 'hash-object', '-w', '--stdin')
  const link = git(remote, '/etc/passwd', 'hash-object', '-w', '--stdin')
  const listing = (entries: string[]) => git(remote, `${entries.join('\n')}\n`, 'mktree')
  const tree = listing([
    `100644 blob ${big}\tbig.bin`,
    `100644 blob ${keep}\tkeep.md`,
    `120000 blob ${link}\tpasswd.md`,
  ])
  const bad = git(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'a link')
  git(remote, null, 'update-ref', 'refs/heads/main', bad)

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
  const mended = listing([`100644 blob ${big}\tbig.bin`, `100644 blob ${keep}\tkeep.md`])
  const next = git(remote, null, 'commit-tree', mended, '-p', bad, '-m', 'no link')
  git(remote, null, 'update-ref', 'refs/heads/main', next)
  expect((await laptop.sync()).state).toBe('idle')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(next)
  expect(savedState(laptop.dir).refused).toBeUndefined()
  laptop.git('fsck', '--strict')
}, 60_000)
