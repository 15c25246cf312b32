/**
 * Stop 30 (outside30): a sync after `main` was moved back with git while Cairn is open. The
 * remote is never rewound by it (a push of a rewind would have to be forced, and sync never
 * forces): what the reset left out is still on the remote, and comes back as any change of
 * the remote's does (docs/sync.md, "main moved back outside Cairn").
 */
import { execFileSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectSound, useSyncServer } from './test-support'

const sync = useSyncServer()

describe('a sync after main was moved back with git', () => {
  it('never rewinds the remote: a reset of synced changes is undone by the fast-forward', async () => {
    const repo = sync.newRepo('outside-reset')
    const desktop = await sync.machine('desktop')
    await desktop.write('a.md', 'a\n')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    await desktop.write('b.md', 'b\n')
    await desktop.write('c.md', 'c\n')
    expect((await desktop.sync()).state).toBe('idle')
    const remoteBefore = sync.server.git(repo, 'rev-parse', 'main').trim()
    const back = desktop.git('rev-parse', 'main~2').trim()
    // The person resets the history and the folder with git, dropping b.md and c.md.
    desktop.git('read-tree', 'main')
    execFileSync(
      'git',
      [
        '--git-dir',
        path.join(desktop.dir, 'history.git'),
        '--work-tree',
        path.join(desktop.dir, 'memories'),
        'reset',
        '-q',
        '--hard',
        'HEAD~2',
      ],
      { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: desktop.dir } },
    )
    expect(desktop.git('rev-parse', 'main').trim()).toBe(back)
    const status = await desktop.sync()
    expect(status.state).toBe('idle')
    expect(status.unsynced).toBe(0)
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(remoteBefore)
    expect(desktop.git('rev-parse', 'main').trim()).toBe(remoteBefore)
    expect([...(await desktop.files()).keys()].sort()).toEqual(['a.md', 'b.md', 'c.md'])
    await expectSound(sync.server, repo, [desktop])
  })

  it('never rewinds the remote when the folder kept the files: they are merged, not pushed over it', async () => {
    const repo = sync.newRepo('outside-back')
    const desktop = await sync.machine('desktop')
    await desktop.write('a.md', 'a\n')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    await desktop.write('b.md', 'b\n')
    await desktop.write('c.md', 'c\n')
    expect((await desktop.sync()).state).toBe('idle')
    const remoteBefore = sync.server.git(repo, 'rev-parse', 'main').trim()
    // Only the ref goes back (update-ref): the folder still holds b.md and c.md.
    desktop.git('update-ref', 'refs/heads/main', 'main~2')
    const status = await desktop.sync()
    expect(status.state).toBe('idle')
    expect(status.unsynced).toBe(0)
    const remoteAfter = sync.server.git(repo, 'rev-parse', 'main').trim()
    // The remote went forward from what it held (the kept files merged in), never back.
    expect(sync.server.git(repo, 'merge-base', '--is-ancestor', remoteBefore, remoteAfter)).toBe('')
    expect(desktop.git('rev-parse', 'main').trim()).toBe(remoteAfter)
    expect(desktop.git('log', '--format=%s', 'main')).toContain(
      'Kept after main was moved back outside Cairn',
    )
    expect([...(await desktop.files()).keys()].sort()).toEqual(['a.md', 'b.md', 'c.md'])
    await expectSound(sync.server, repo, [desktop])
  })

  it("waits for git's lock on main, then leaves the folder as it was and says which file to remove", async () => {
    const { repo, laptop } = await sync.behind('outside-lock')
    const before = laptop.git('rev-parse', 'main').trim()
    const filesBefore = await laptop.files()
    // A git killed while it moved main left its lock.
    writeFileSync(path.join(laptop.dir, 'history.git', 'refs', 'heads', 'main.lock'), '')
    const refused = await laptop.sync()
    expect(refused.state).toBe('error')
    expect(refused.error?.message).toContain('refs/heads/main.lock')
    expect(refused.error?.message).not.toContain(laptop.dir)
    expect(laptop.git('rev-parse', 'main').trim()).toBe(before)
    expect(await laptop.files()).toEqual(filesBefore)
    rmSync(path.join(laptop.dir, 'history.git', 'refs', 'heads', 'main.lock'))
    expect((await laptop.sync()).state).toBe('idle')
    expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
    await expectSound(sync.server, repo, [laptop])
  })
})
