/**
 * The back-off once downloads keep breaking (five `sync-interrupted` in a row: each try
 * downloads the pack again) holds when the count it rests on holds: over a restart (the count
 * is kept in state.json) and over the person's Stop (which leaves the count as it was). Before,
 * both started the quick retries again at their first wait while the status kept saying
 * "only about once an hour". The waits are read where the service sets its retry timer; a real
 * git server behind a proxy that damages every pack (rsync29).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { REPEATED_SYNC_FAILURES, type SyncStatus } from '../../shared/types'
import { RETRY_SLOW_MAX_MS } from './service'
import { useSyncServer, type Machine } from './test-support'
import {
  isPackRequest,
  startProxy,
  type Proxy,
  type Behaviour,
} from '../../../test/fixtures/git-proxy'

// Registered before useSyncServer's own after-each, so it runs after that one has closed
// every machine (Vitest runs after-each hooks last registered first): a data folder is never
// removed under a core still open, whose timers may still make folders in it.
const dirs: string[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(
    dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10 })),
  )
})

const ctx = useSyncServer()

// Long enough that no retry fires while the test runs, short enough that 2^5 of it is under
// the hour: a wait of the slowed series is told from the first one by its length alone.
const FIRST_MS = 100_003
const OPTIONS = { retryFirstMs: FIRST_MS, debounceMs: 3_500_000 }

const damagedPack: Behaviour = {
  kind: 'rewrite',
  rewrite(body) {
    const copy = Buffer.from(body)
    copy[body.indexOf('PACK') + 30]! ^= 0xff
    return copy
  },
}

/** The waits the service set its retry timer to since the spy began (FIRST_MS · 2^n, or the hour). */
function retryWaits(spy: { mock: { calls: ReadonlyArray<ReadonlyArray<unknown>> } }): number[] {
  return spy.mock.calls
    .map((call) => call[1])
    .filter(
      (ms): ms is number =>
        typeof ms === 'number' &&
        (ms === RETRY_SLOW_MAX_MS ||
          (ms % FIRST_MS === 0 && Number.isInteger(Math.log2(ms / FIRST_MS)))),
    )
}

async function viaProxy(m: Machine, proxy: Proxy, repo: string): Promise<SyncStatus> {
  await m.call('sync:configure', {
    url: proxy.url(repo),
    username: ctx.server.user,
    token: ctx.server.token,
    intervalMinutes: 0,
  })
  return m.sync()
}

/** The laptop one change behind, behind a proxy that damages every pack, failed five times. */
async function slowedDown(prefix: string) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-back-off-'))
  dirs.push(dir)
  const { repo, laptop, desktop } = await ctx.shared(
    prefix,
    (d) => d.write('log.md', 'one\n'),
    dir,
    OPTIONS,
  )
  const proxy = await startProxy(ctx.server)
  expect((await viaProxy(laptop, proxy, repo)).state).toBe('idle')
  await desktop.write('log.md', 'one\ntwo\n')
  expect((await desktop.sync()).state).toBe('idle')
  // Counts every pack request (each a download of the pack), asked first and passing each on.
  const packs = { count: 0 }
  proxy.on((req) => {
    if (isPackRequest(req)) packs.count++
    return false
  }, damagedPack)
  // The next pack request held part way (for a Stop) once `hold` is called; every other one
  // damaged.
  let holding: (() => void) | null = null
  proxy.on(
    (req) => {
      if (!holding || !isPackRequest(req)) return false
      holding()
      holding = null
      return true
    },
    { kind: 'stall', bytes: 12 },
  )
  proxy.on(isPackRequest, damagedPack)
  const hold = () => new Promise<void>((resolve) => (holding = resolve))
  let status: SyncStatus | null = null
  for (let n = 0; n < REPEATED_SYNC_FAILURES; n++) status = await laptop.sync()
  expect(status?.error?.code).toBe('sync-interrupted')
  expect(status?.repeated?.advice).toContain('only about once an hour')
  return { dir, repo, laptop, proxy, hold, packs }
}

describe('the hourly back-off after downloads keep breaking', () => {
  it('holds over a restart: the first retry after it waits as long as the count says', async () => {
    const { dir, laptop, proxy } = await slowedDown('back-off-restart')
    try {
      await ctx.stop(laptop)
      const spy = vi.spyOn(globalThis, 'setTimeout')
      const again = await ctx.machine('laptop', dir, OPTIONS)
      const status = await again.sync()
      expect(status.error?.code).toBe('sync-interrupted')
      expect(status.repeated?.advice).toContain('only about once an hour')
      const waits = retryWaits(spy)
      expect(waits.length).toBeGreaterThan(0)
      // At least the wait the fifth failure in a row had (FIRST_MS · 2^4), never the first one.
      for (const ms of waits) expect(ms).toBeGreaterThanOrEqual(FIRST_MS * 2 ** 4)
    } finally {
      await proxy.close()
    }
  }, 120_000)

  it('holds over a Stop: the retry after the next broken download is not the first wait again', async () => {
    const { laptop, proxy, hold } = await slowedDown('back-off-stop')
    try {
      // A sync stopped mid-pack (held by the proxy), then the next one broken again.
      const held = hold()
      const syncing = laptop.sync()
      await held
      const stopped = await laptop.call('sync:stop')
      expect(stopped.error?.code).toBe('sync-stopped')
      expect((await syncing).error?.code).toBe('sync-stopped')
      // The count is left as it was by the Stop.
      expect(stopped.repeated).toBeUndefined()
      const spy = vi.spyOn(globalThis, 'setTimeout')
      const status = await laptop.sync()
      expect(status.error?.code).toBe('sync-interrupted')
      expect(status.repeated?.advice).toContain('only about once an hour')
      const waits = retryWaits(spy)
      expect(waits.length).toBeGreaterThan(0)
      for (const ms of waits) expect(ms).toBeGreaterThanOrEqual(FIRST_MS * 2 ** 4)
    } finally {
      await proxy.close()
    }
  }, 120_000)

  it('holds over a Stop of its own retry: the interval waits it out, downloading nothing', async () => {
    const { repo, laptop, proxy, hold, packs } = await slowedDown('back-off-own-retry')
    try {
      const timeouts = vi.spyOn(globalThis, 'setTimeout')
      const intervals = vi.spyOn(globalThis, 'setInterval')
      // Syncing every 5 minutes: its first sync is broken again, and the back-off's retry set.
      await laptop.call('sync:configure', { url: proxy.url(repo), intervalMinutes: 5 })
      expect((await laptop.sync()).error?.code).toBe('sync-interrupted')
      const retryCall = timeouts.mock.calls.find(
        (call) => retryWaits({ mock: { calls: [call] } })[0],
      )
      const tick = intervals.mock.calls.find((call) => call[1] === 5 * 60_000)?.[0] as () => void
      expect(retryCall).toBeDefined()
      expect(tick).toBeDefined()

      // The back-off's own retry (its timer's work, run now), stopped mid-pack.
      const held = hold()
      ;(retryCall![0] as () => void)()
      await held
      expect((await laptop.call('sync:stop')).error?.code).toBe('sync-stopped')

      // The interval's next tick, then Sync now (which waits for a sync the tick began, and
      // then syncs once more): only Sync now downloads, as the interval still waits.
      const before = packs.count
      tick()
      expect((await laptop.sync()).error?.code).toBe('sync-interrupted')
      expect(packs.count - before).toBe(1)
    } finally {
      await proxy.close()
    }
  }, 120_000)
})
