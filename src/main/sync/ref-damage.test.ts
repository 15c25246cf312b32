/**
 * A damaged tracking ref (a link, empty, past its cap) or a disk that fails every ref read during
 * a sync: the sync says so without a host path, and the next sync once the disk is well is idle.
 * A real git server on loopback; faults through the disk seam. (A tracking ref that is a folder
 * still stops every sync: see redge31's report.)
 */
import { rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { TRACKING_REF } from './transport'
import { useSyncServer } from './test-support'

const sync = useSyncServer()
const trackingFile = (gitdir: string) => path.join(gitdir, ...TRACKING_REF.split('/'))

async function withEio<T>(matches: (call: DiskCall) => boolean, task: () => Promise<T>) {
  let failed = 0
  const undo = setDisk(
    hookDisk(nodeDisk, (call) => {
      if (!matches(call)) return undefined
      failed++
      return errnoError(call, 'EIO')
    }).disk,
  )
  try {
    return { result: await task(), failed }
  } finally {
    undo()
  }
}

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
      const laptop = await sync.machine('laptop')
      await laptop.write('a.md', 'a\n')
      const repo = sync.newRepo(`r-${shape}`)
      await laptop.connect(sync.server, repo)
      expect((await laptop.sync()).state).toBe('idle')
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

  it('EIO on every ref read during sync, then recovery', async () => {
    const laptop = await sync.machine('laptop')
    await laptop.write('a.md', 'a\n')
    const repo = sync.newRepo('eio-all')
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
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
