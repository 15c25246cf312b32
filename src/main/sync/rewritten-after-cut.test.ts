/**
 * A remote rewritten after a fetch was cut part-way (issue #14's acceptance check): the cut
 * fetch moved nothing, the remote then dropped what was half-sent and what this machine had
 * already taken, and the next sync must neither rewrite local history nor take the rewrite
 * unasked; merging brings every line back. Real data folders and `git http-backend`.
 */
import { expect, it } from 'vitest'
import { expectSound, linesOfHistory, otherClient as git, useSyncServer } from './test-support'
import path from 'node:path'

const sync = useSyncServer()

it('never rewrites local history, asks before taking the rewrite, and merging loses no line', async () => {
  const { repo, laptop, desktop } = await sync.shared('cut-then-rewritten', (d) =>
    d.write('facts.md', 'fact one\n'),
  )
  const remote = sync.server.gitdir(repo)
  // Both machines hold "fact two"; then the desktop sends "fact three", whose fetch is cut.
  await laptop.write('facts.md', 'fact one\nfact two\n')
  expect((await laptop.sync()).state).toBe('idle')
  expect((await desktop.sync()).state).toBe('idle')
  const known = git(remote, null, 'rev-parse', 'main')
  await desktop.write('facts.md', 'fact one\nfact two\nfact three\n')
  expect((await desktop.sync()).state).toBe('idle')
  await laptop.write('mine.md', 'written on the laptop\n')
  const before = laptop.git('rev-parse', 'main').trim()
  sync.server.cutNext('upload-pack', 'midway')
  const cut = await laptop.sync()
  expect(cut.state).toBe('error')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(before)

  // Someone rewrites the remote past what the laptop had taken: back before "fact two".
  const base = git(remote, null, 'rev-parse', `${known}~1`)
  const blob = git(remote, 'rewritten\n', 'hash-object', '-w', '--stdin')
  const tree = git(remote, `100644 blob ${blob}\tfacts.md\n`, 'mktree')
  const rewritten = git(remote, null, 'commit-tree', tree, '-p', base, '-m', 'rewrite')
  git(remote, null, 'update-ref', 'refs/heads/main', rewritten)

  const refused = await laptop.sync()
  expect(refused.state).toBe('error')
  expect(refused.error?.code).toBe('sync-join-needed')
  expect(refused.join).toMatchObject({ reason: 'rewritten' })
  laptop.git('merge-base', '--is-ancestor', before, 'main')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(before)
  expect(git(remote, null, 'rev-parse', 'main')).toBe(rewritten)

  const joined = await laptop.call('sync:join', { choice: 'merge' })
  // Both sides changed facts.md since the base they share: both versions kept, and asked.
  expect(joined.state).toBe('conflicts')
  expect(joined.conflicts.map((c) => c.path)).toEqual(['/memories/facts.md'])
  laptop.git('merge-base', '--is-ancestor', before, 'main')
  expect(git(remote, null, 'rev-parse', 'main')).toBe(laptop.git('rev-parse', 'main').trim())
  const mirror = await expectSound(sync.server, repo, [laptop])
  const lines = linesOfHistory(mirror)
  for (const line of ['fact one', 'fact two', 'rewritten', 'written on the laptop']) {
    expect(lines).toContain(line)
  }
  // "fact three" was only ever on the desktop and in the rewritten-away history: still there.
  expect(linesOfHistory(path.join(desktop.dir, 'history.git'))).toContain('fact three')
}, 90_000)
