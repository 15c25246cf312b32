/**
 * A link at `history.git/objects/pack` to a folder outside the data folder (open keeps it: its
 * packs are the history, read through it): a sync's fetch, and a Test connection's, refuse to
 * store anything through it, plainly, and write nothing there. Before, the fetch's pack, its
 * index and `.keep` were written through the link, outside the data folder, where every other
 * write and clean-up of Cairn's refuses to go. A real git server; git as second opinion.
 */
import { readdirSync, renameSync, symlinkSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { useSyncServer, type Machine } from './test-support'

const sync = useSyncServer()

it('refuses to fetch through a linked pack folder, writing nothing outside the data folder', async () => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'cairn-linked-packs-'))
  const { repo, laptop } = await sync.behind('linked-pack-folder')
  const dir = laptop.dir
  // Closed before the folders go, should the test fail part-way.
  let open: Machine | null = laptop
  try {
    const head = laptop.git('rev-parse', 'main').trim()
    await sync.stop(laptop)
    open = null
    // The pack folder moved elsewhere, a link left in its place.
    const packs = path.join(dir, 'history.git', 'objects', 'pack')
    const elsewhere = path.join(outside, 'pack')
    renameSync(packs, elsewhere)
    symlinkSync(elsewhere, packs)
    const again = await sync.machine('laptop', dir)
    open = again
    const before = readdirSync(elsewhere).sort()

    const status = await again.sync()
    expect(status.error?.code).toBe('io-error')
    expect(status.error?.message).toContain('history.git/objects/pack')
    expect(status.error?.message).not.toContain(outside)
    const tested = await again.call('sync:test', {
      url: sync.server.url(repo),
      username: sync.server.user,
      token: sync.server.token,
    })
    expect(tested).toMatchObject({ ok: false, found: 'disk' })
    // Nothing was written through the link; the history is as it was and sound.
    expect(readdirSync(elsewhere).sort()).toEqual(before)
    expect(again.git('rev-parse', 'main').trim()).toBe(head)
    expect((await again.files()).get('log.md')).toBe('one\n')
    again.git('fsck', '--strict')
  } finally {
    if (open) await sync.stop(open)
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    await rm(outside, { recursive: true, force: true, maxRetries: 10 })
  }
}, 120_000)
