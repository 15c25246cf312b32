/**
 * A damaged tracking ref (a link, empty, past its cap) or a disk that fails every ref read during
 * a sync: the sync says so without a host path, and the next sync once the disk is well is idle.
 * A real git server on loopback; faults through the disk seam. A tracking ref that is a folder
 * (it stopped every sync, for good: redge31) is kept aside in cairn-damaged/ and written again.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { expectSound, trackingFile, useSyncServer, withEio } from './test-support'
import { forgetTracking } from './transport'

const sync = useSyncServer()

const shapes: Record<string, (file: string, oid: string) => void> = {
  symlink: (file) => {
    rmSync(file)
    writeFileSync(`${file}.real`, 'x')
    symlinkSync(`${file}.real`, file)
  },
  empty: (file) => writeFileSync(file, ''),
  overCap: (file, oid) => writeFileSync(file, `${oid}\n${' '.repeat(OWN_FILE_CAP.TINY)}`),
}

describe('a damaged or unreadable tracking ref', () => {
  for (const [shape, make] of Object.entries(shapes)) {
    it(`tracking ref ${shape}: the next sync writes it again`, async () => {
      const { laptop, repo } = await sync.alone(`r-${shape}`)
      const gitdir = path.join(laptop.dir, 'history.git')
      const oid = laptop.git('rev-parse', 'HEAD').trim()
      make(trackingFile(gitdir), oid)
      await laptop.write('b.md', 'b\n')
      const first = await laptop.sync()
      const second = await laptop.sync()
      const t = await laptop
        .call('sync:test', {
          url: sync.server.url(repo),
          username: sync.server.user,
          token: sync.server.token,
        })
        .catch((e: unknown) => e)
      expect(first.state).toBe('idle')
      expect(second.state).toBe('idle')
      expect(t).toMatchObject({ ok: true })
    })
  }

  it('tracking ref a folder: kept aside, and this sync and the next succeed', async () => {
    const logger = createRecordingLogger()
    const { laptop, repo } = await sync.alone('r-folder', { logger })
    const gitdir = path.join(laptop.dir, 'history.git')
    const file = trackingFile(gitdir)
    rmSync(file)
    mkdirSync(file)
    // Something inside it, as a person's hand-made ref might be: it must be kept, not deleted.
    writeFileSync(path.join(file, 'mine'), 'kept\n')
    await laptop.write('b.md', 'b\n')
    const first = await laptop.sync()
    const second = await laptop.sync()
    expect(first.state).toBe('idle')
    expect(second.state).toBe('idle')
    const head = laptop.git('rev-parse', 'HEAD').trim()
    expect(readFileSync(file, 'utf8').trim()).toBe(head)
    const aside = path.join(gitdir, 'cairn-damaged')
    const kept = readdirSync(aside).filter((n) => n.startsWith('refs-remotes-cairn-sync-main-'))
    expect(kept).toHaveLength(1)
    expect(readFileSync(path.join(aside, kept[0]!, 'mine'), 'utf8')).toBe('kept\n')
    expect(existsSync(path.join(file, 'mine'))).toBe(false)
    expect(logger.entries.map((e) => e.message)).toContainEqual(
      expect.stringContaining(
        'refs/remotes/cairn-sync/main was in the way of the ref refs/remotes/cairn-sync/main: kept aside as cairn-damaged/refs-remotes-cairn-sync-main-',
      ),
    )
    const remote = await expectSound(sync.server, repo, [laptop])
    expect(laptop.git('--git-dir', remote, 'rev-parse', 'main').trim()).toBe(head)
  })

  it('a file where refs/remotes/cairn-sync goes: kept aside, and the sync succeeds', async () => {
    const { laptop, repo } = await sync.alone('r-parent')
    const gitdir = path.join(laptop.dir, 'history.git')
    const parent = path.dirname(trackingFile(gitdir))
    rmSync(parent, { recursive: true })
    writeFileSync(parent, 'someone else’s\n')
    await laptop.write('b.md', 'b\n')
    expect((await laptop.sync()).state).toBe('idle')
    expect((await laptop.sync()).state).toBe('idle')
    const head = laptop.git('rev-parse', 'HEAD').trim()
    expect(readFileSync(trackingFile(gitdir), 'utf8').trim()).toBe(head)
    const aside = path.join(gitdir, 'cairn-damaged')
    const kept = readdirSync(aside).filter((n) => n.startsWith('refs-remotes-cairn-sync-'))
    expect(kept).toHaveLength(1)
    expect(readFileSync(path.join(aside, kept[0]!), 'utf8')).toBe('someone else’s\n')
    await expectSound(sync.server, repo, [laptop])
  })

  it('forgetTracking with a folder or a file in the ref’s way: kept aside, the ref gone', async () => {
    const logger = createRecordingLogger()
    const { laptop } = await sync.alone('r-forget')
    const gitdir = path.join(laptop.dir, 'history.git')
    const file = trackingFile(gitdir)
    // A folder where the ref goes (a delete met EISDIR), then a file where its folder goes
    // (ENOTDIR): each kept aside, nothing in it deleted.
    rmSync(file)
    mkdirSync(file)
    writeFileSync(path.join(file, 'mine'), 'kept\n')
    await forgetTracking(gitdir, logger)
    expect(existsSync(file)).toBe(false)
    rmSync(path.dirname(file), { recursive: true })
    writeFileSync(path.dirname(file), 'someone else’s\n')
    await forgetTracking(gitdir, logger)
    expect(existsSync(path.dirname(file))).toBe(false)
    const kept = readdirSync(path.join(gitdir, 'cairn-damaged'))
    expect(kept.filter((n) => n.startsWith('refs-remotes-cairn-sync-main-'))).toHaveLength(1)
    expect(kept.filter((n) => /^refs-remotes-cairn-sync-\d+$/.test(n))).toHaveLength(1)
    expect(logger.entries.filter((e) => e.message.includes('was in the way'))).toHaveLength(2)
    expect(laptop.git('for-each-ref', 'refs/remotes').trim()).toBe('')
    // The next sync fetches from local main and writes the ref again.
    expect((await laptop.sync()).state).toBe('idle')
    expect(laptop.git('rev-parse', 'refs/remotes/cairn-sync/main').trim()).toBe(
      laptop.git('rev-parse', 'HEAD').trim(),
    )
  })

  it('a file where refs/cairn goes: "use the remote’s memory" keeps the backup all the same', async () => {
    const { repo } = await sync.alone('r-backup', {}, ['remote.md', 'the remote’s\n'])
    const desktop = await sync.machine('desktop')
    await desktop.write('mine.md', 'the desktop’s\n')
    const before = desktop.git('rev-parse', 'main').trim()
    const gitdir = path.join(desktop.dir, 'history.git')
    writeFileSync(path.join(gitdir, 'refs', 'cairn'), 'someone else’s\n')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).join).not.toBeNull()
    const used = await desktop.call('sync:join', { choice: 'use-remote' })
    expect(used).toMatchObject({ state: 'idle', join: null })
    expect(used.backups).toHaveLength(1)
    expect(used.backups[0]).toMatchObject({ commit: before })
    const aside = path.join(gitdir, 'cairn-damaged')
    const kept = readdirSync(aside).filter((n) => n.startsWith('refs-cairn-'))
    expect(kept).toHaveLength(1)
    expect(readFileSync(path.join(aside, kept[0]!), 'utf8')).toBe('someone else’s\n')
    expect((await desktop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [desktop])
  })

  it('EIO on every ref read during sync, then recovery', async () => {
    const { laptop, repo } = await sync.alone('eio-all')
    const gitdir = path.join(laptop.dir, 'history.git')
    await laptop.write('b.md', 'b\n')
    const refs = path.join(gitdir, 'refs')
    const { result, failed } = await withEio(
      (c) =>
        (c.name === 'promises.open' || c.name === 'promises.readFile') &&
        String(c.args[0]).startsWith(refs),
      async () => {
        const s = await laptop.sync()
        const st = await laptop.call('sync:status')
        const t = await laptop
          .call('sync:test', {
            url: sync.server.url(repo),
            username: sync.server.user,
            token: sync.server.token,
          })
          .catch((e: unknown) => e)
        return { s, st, t }
      },
    )

    for (const v of [result.s.error, result.t])
      expect(JSON.stringify(v) ?? '').not.toContain(laptop.dir)
    const after = await laptop.sync()
    expect(failed).toBeGreaterThan(0)
    expect(result.s.state).toBe('error')
    expect(result.s.error?.code).toBe('io-error')
    expect(after.state).toBe('idle')
  })
})
