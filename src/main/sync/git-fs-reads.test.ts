/**
 * What isomorphic-git reads during a sync (through `gitFs`) is read as Cairn reads its own
 * files: within a cap for its kind, and a disk that fails the read is said, never taken for
 * "no such file". A real git server on loopback; faults through the disk seam.
 */
import { writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { errorCode, TOO_LARGE } from '../lib/disk'
import type { DiskCall } from '../lib/disk-hooks'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { gitFs, readRef } from './git-fs'
import { TRACKING_REF } from './transport'
import { otherClient as git, trackingFile, useSyncServer, withEio } from './test-support'

const sync = useSyncServer()

const opens = (file: string) => (call: DiskCall) =>
  (call.name === 'promises.open' || call.name === 'promises.readFile') && call.args[0] === file

describe('the reads isomorphic-git makes for a sync', () => {
  it('refuse a ref past its cap as damage, never reading it whole; readRef takes it for no ref', async () => {
    const laptop = await sync.machine('laptop')
    await laptop.write('a.md', 'a\n')
    await laptop.connect(sync.server, sync.newRepo('caps'))
    expect((await laptop.sync()).state).toBe('idle')
    const gitdir = path.join(laptop.dir, 'history.git')
    const file = trackingFile(gitdir)
    const oid = laptop.git('rev-parse', 'HEAD').trim()
    // The commit, then spaces to past the cap: whole, it would still read as that commit.
    writeFileSync(file, `${oid}\n${' '.repeat(OWN_FILE_CAP.TINY)}`)
    const refused = await gitFs.promises.readFile(file).catch((e: unknown) => e)
    expect(errorCode(refused)).toBe(TOO_LARGE)
    expect(await readRef(gitdir, TRACKING_REF)).toBeNull()
    // The next sync writes the ref again.
    expect((await laptop.sync()).state).toBe('idle')
    expect(await readRef(gitdir, TRACKING_REF)).toBe(oid)
  })

  it('follow a chain of symbolic refs as far as git does: 4 of them, not 5', async () => {
    const gitdir = await mkdtemp(path.join(os.tmpdir(), 'cairn-symref-chain-'))
    try {
      git(gitdir, null, 'init', '-q', '--bare')
      const tree = git(gitdir, '', 'mktree')
      const oid = git(gitdir, null, 'commit-tree', tree, '-m', 'one')
      // refs/r<n> leads through n symbolic refs to the commit.
      writeFileSync(path.join(gitdir, 'refs', 'r0'), `${oid}\n`)
      for (let n = 1; n <= 6; n++) {
        writeFileSync(path.join(gitdir, 'refs', `r${n}`), `ref: refs/r${n - 1}\n`)
      }
      const byGit = (n: number) => {
        try {
          return git(gitdir, null, 'rev-parse', '--verify', '-q', `refs/r${n}`)
        } catch {
          return null
        }
      }
      for (let n = 0; n <= 6; n++) {
        expect([n, await readRef(gitdir, `refs/r${n}`)]).toEqual([n, n <= 4 ? oid : null])
        expect([n, byGit(n)]).toEqual([n, n <= 4 ? oid : null])
      }
    } finally {
      await rm(gitdir, { recursive: true, force: true, maxRetries: 10 })
    }
  })

  it('say a disk that fails a ref’s read (readRef throws EIO, never "no such ref")', async () => {
    const laptop = await sync.machine('laptop')
    await laptop.write('a.md', 'a\n')
    await laptop.connect(sync.server, sync.newRepo('eio'))
    expect((await laptop.sync()).state).toBe('idle')
    const gitdir = path.join(laptop.dir, 'history.git')
    const { result } = await withEio(opens(trackingFile(gitdir)), () =>
      readRef(gitdir, TRACKING_REF).catch((e: unknown) => e),
    )
    expect(errorCode(result)).toBe('EIO')
  })

  it('keep the remote’s main last seen when Test connection of another address cannot read it', async () => {
    const other = await sync.machine('other')
    await other.write('theirs.md', 'theirs\n')
    const otherRepo = sync.newRepo('other')
    await other.connect(sync.server, otherRepo)
    expect((await other.sync()).state).toBe('idle')

    const laptop = await sync.machine('laptop')
    await laptop.write('a.md', 'a\n')
    await laptop.connect(sync.server, sync.newRepo('mine'))
    expect((await laptop.sync()).state).toBe('idle')
    const gitdir = path.join(laptop.dir, 'history.git')
    const seen = laptop.git('rev-parse', TRACKING_REF).trim()

    const { result, failed } = await withEio(opens(trackingFile(gitdir)), () =>
      laptop.call('sync:test', {
        url: sync.server.url(otherRepo),
        username: sync.server.user,
        token: sync.server.token,
      }),
    )
    expect(failed).toBeGreaterThan(0)
    // Said, and nothing changed: the ref is where the last sync left it (main deleted it).
    expect(result.ok).toBe(false)
    expect(result.found).toBe('disk')
    expect(result.message).toMatch(/because the disk/)
    expect(result.message).not.toContain(laptop.dir)
    expect(laptop.git('rev-parse', TRACKING_REF).trim()).toBe(seen)
    expect((await laptop.sync()).state).toBe('idle')
  })
})
