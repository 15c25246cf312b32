/**
 * Issue #14 against a remote holding a 200 MB file (compressed to a few hundred KB, so the
 * download is small and only the inflated size is large): refused plainly from the pack's own
 * headers, before anything inflates it (it took 410 MB more of the process, and a file of a few
 * GB stopped Cairn), changing nothing; the next sync completes once the remote drops it.
 */
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { expectSound, otherClient, useSyncServer } from './test-support'

const sync = useSyncServer()

describe('a remote holding a 200 MB file', () => {
  it('is refused plainly, changing nothing; once it goes, the next sync completes', async () => {
    const { repo, laptop } = await sync.alone('huge-blob')
    const remote = sync.server.gitdir(repo)
    const tip = otherClient(remote, null, 'rev-parse', 'main')
    const blob = execFileSync(
      'sh',
      ['-c', `head -c 209715200 /dev/zero | git --git-dir "${remote}" hash-object -w --stdin`],
      { encoding: 'utf8' },
    ).trim()
    const listed = otherClient(remote, null, 'ls-tree', 'main')
    const tree = otherClient(remote, `${listed}\n100644 blob ${blob}\thuge.md\n`, 'mktree')
    const commit = otherClient(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'huge')
    otherClient(remote, null, 'update-ref', 'refs/heads/main', commit)
    // Test connection says the same sentence (its `found` is `unreachable`, the nearest it has).
    const tested = await laptop.call('sync:test', {
      url: sync.server.url(repo),
      username: sync.server.user,
    })
    expect(tested).toMatchObject({ ok: false, message: expect.stringContaining('200 MB') })
    await laptop.write('mine.md', 'written here\n')
    const head = laptop.git('rev-parse', 'main').trim()
    const status = await laptop.sync()
    expect(status.state).toBe('error')
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('200 MB (too large')
    expect(status.error?.message).not.toMatch(/\/tmp|127\.0\.0\.1/)
    expect(laptop.git('rev-parse', 'main').trim()).toBe(head)
    expect([...(await laptop.files()).keys()].sort()).toEqual(['a.md', 'mine.md'])
    otherClient(remote, null, 'update-ref', 'refs/heads/main', tip)
    expect((await laptop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [laptop])
  }, 120_000)
})
