/**
 * A commit made with git in this machine's history while Cairn is open, then Sync now with no
 * change by Cairn in between (issue #14's acceptance check: every local commit reaches the
 * remote; live29 follows an outside `main` before each change, and a sync is one). The
 * outside commit is neither dropped nor moved past: it reaches the remote, as it is or under
 * the merge with the other machine's change. Real data folders and `git http-backend`.
 */
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, it } from 'vitest'
import { expectSound, useSyncServer } from './test-support'

const sync = useSyncServer()

for (const otherMachine of [false, true]) {
  const what = otherMachine ? 'merged with the other machine’s change' : 'by fast-forward'
  it(`sends a commit made with git while Cairn was open to the remote, ${what}`, async () => {
    const { repo, laptop, desktop } = await sync.shared('outside-commit', (d) =>
      d.write('a.md', 'a\n'),
    )
    const gitdir = path.join(laptop.dir, 'history.git')
    const git = (input: string | null, ...args: string[]) =>
      execFileSync('git', ['--git-dir', gitdir, ...args], {
        encoding: 'utf8',
        ...(input !== null ? { input } : {}),
        env: {
          ...process.env,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_AUTHOR_NAME: 'Ann Smith',
          GIT_AUTHOR_EMAIL: 'ann@example.com',
          GIT_COMMITTER_NAME: 'Ann Smith',
          GIT_COMMITTER_EMAIL: 'ann@example.com',
        },
      }).trim()
    // Ann commits a note with git, and puts it in the folder as a checkout would.
    const blob = git('by Ann\n', 'hash-object', '-w', '--stdin')
    const tree = git(`${git(null, 'ls-tree', 'main')}\n100644 blob ${blob}\tann.md\n`, 'mktree')
    const ann = git(null, 'commit-tree', tree, '-p', 'main', '-m', 'Ann adds a note')
    await writeFile(path.join(laptop.dir, 'memories', 'ann.md'), 'by Ann\n')
    git(null, 'update-ref', 'refs/heads/main', ann)
    if (otherMachine) {
      await desktop.write('d.md', 'from the desktop\n')
      expect((await desktop.sync()).state).toBe('idle')
    }

    expect((await laptop.sync()).state).toBe('idle')

    git(null, 'merge-base', '--is-ancestor', ann, 'main')
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(git(null, 'rev-parse', 'main'))
    expect(sync.server.git(repo, 'show', 'main:ann.md')).toBe('by Ann\n')
    if (!otherMachine) expect(git(null, 'rev-parse', 'main')).toBe(ann)
    expect(Object.fromEntries(await laptop.files())).toEqual({
      'a.md': 'a\n',
      'ann.md': 'by Ann\n',
      ...(otherMachine ? { 'd.md': 'from the desktop\n' } : {}),
    })
    expect((await desktop.sync()).state).toBe('idle')
    expect((await desktop.files()).get('ann.md')).toBe('by Ann\n')
    await expectSound(sync.server, repo, [laptop, desktop])
  }, 90_000)
}
