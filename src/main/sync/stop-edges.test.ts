/**
 * Stop at the edges of a sync (edge30): pressed in the gap after one sync ended and before the
 * follow-up asked for meanwhile began; while a join answer waits behind a running sync; and
 * during the hourly back-off's wait. Each time the status tells what happened, nothing is lost,
 * and the next Sync now syncs. A real git server on 127.0.0.1, behind a proxy where a request
 * must be held or a pack damaged. The first two failed before edge30 (the follow-up ran as if
 * no Stop had come; the answer was carried out by the next sync, unasked); the wait was found
 * sound and is kept here so it stays so.
 *
 * The gap lasts two file reads, too short to hit from outside by timing. The sync store is
 * wrapped (the real one underneath) so the test can press Stop at the moment the follow-up
 * reads the sync settings, its first step: exactly in the gap, every run.
 */
import { describe, expect, it, vi } from 'vitest'
import { expectSound, useSyncServer } from './test-support'
import { REPEATED_SYNC_FAILURES, type SyncStatus } from '../../shared/types'
import { isPackRequest, startProxy } from '../../../test/fixtures/git-proxy'

const gap = vi.hoisted(() => ({
  /** Called when a sync (not a status read) reads the sync settings, with how many did so far. */
  onSyncStart: null as ((n: number) => void) | null,
  starts: 0,
  /** Awaited when a sync saves what it reached, after its work with the server is done. */
  onSyncSaved: null as (() => Promise<void>) | null,
}))

vi.mock('./store', async (importOriginal) => {
  const original = await importOriginal<typeof import('./store')>()
  return {
    ...original,
    createSyncStore: (...args: Parameters<typeof original.createSyncStore>) => {
      const store = original.createSyncStore(...args)
      return {
        ...store,
        config() {
          // A sync's first step is this read (its caller is the sync itself); the status, the
          // token and the settings read it too, from elsewhere.
          const caller = (new Error().stack ?? '').split('\n')[2] ?? ''
          if (gap.onSyncStart && /\brunOnce\b/.test(caller)) {
            gap.onSyncStart(++gap.starts)
          }
          return store.config()
        },
        async saveState(...state: Parameters<typeof store.saveState>) {
          const caller = (new Error().stack ?? '').split('\n')[2] ?? ''
          if (gap.onSyncSaved && /\brunOnce\b/.test(caller)) await gap.onSyncSaved()
          return store.saveState(...state)
        },
      }
    },
  }
})

const ctx = useSyncServer()

describe('Stop at the edges of a sync', () => {
  it('in the gap before a queued follow-up: the follow-up does not begin, the status says so, the next Sync now sends it', async () => {
    const { repo, laptop, desktop } = await ctx.behind('stop-gap')
    await laptop.write('mine.md', 'one\n')
    const requestsBefore = ctx.server.requests.length
    const stop: { answer: ReturnType<typeof laptop.core.dispatch> | null } = { answer: null }
    gap.starts = 0
    gap.onSyncStart = (n) => {
      // The second sync of the loop, at its first step: the first has ended.
      if (n === 2) stop.answer = laptop.core.dispatch('sync:stop', undefined)
    }
    try {
      const first = laptop.sync()
      // Asked while the first runs: a follow-up, run right after it.
      const second = laptop.sync()
      await Promise.all([first, second])
    } finally {
      gap.onSyncStart = null
    }
    expect(stop.answer).not.toBeNull()
    const stopped = await stop.answer
    expect(stopped).toMatchObject({ ok: true, value: { state: 'error' } })
    expect(stopped?.ok && (stopped.value as SyncStatus).error).toEqual({
      code: 'sync-stopped',
      message:
        'Sync stopped before the next sync began. The sync before it had finished whole; anything changed since was not sent, and the next sync sends it.',
    })
    // One sync went to the server (its fetch and push), the follow-up none: as many requests
    // as the one Sync now below makes, which fetches and pushes too.
    const firstOnly = ctx.server.requests.slice(requestsBefore)
    const status = await laptop.call('sync:status')
    expect(status.state).toBe('error')
    expect(status.error?.code).toBe('sync-stopped')
    // The first sync's work is whole: the desktop's change here, this machine's on the remote.
    expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
    expect(ctx.server.git(repo, 'show', 'main:mine.md')).toBe('one\n')
    // A change meanwhile, then Sync now: it goes out.
    await laptop.write('mine.md', 'one\ntwo\n')
    const requestsThen = ctx.server.requests.length
    const after = await laptop.sync()
    expect(firstOnly).toEqual(ctx.server.requests.slice(requestsThen))
    expect(after).toMatchObject({ state: 'idle', unsynced: 0 })
    expect(ctx.server.git(repo, 'show', 'main:mine.md')).toBe('one\ntwo\n')
    expect((await desktop.sync()).state).toBe('idle')
    await expectSound(ctx.server, repo, [laptop, desktop])
  }, 120_000)

  it('as a sync saves what it reached, with a change made meanwhile: no follow-up is queued, the status says so, Sync now sends it', async () => {
    const { repo, laptop, desktop } = await ctx.behind('stop-late')
    await laptop.write('mine.md', 'one\n')
    const stop: { answer: ReturnType<typeof laptop.core.dispatch> | null } = { answer: null }
    gap.onSyncSaved = async () => {
      gap.onSyncSaved = null
      // The sync's work with the server is done (its abort can stop nothing now): a change
      // made meanwhile, then Stop, which waits for the sync to end.
      await laptop.write('mine.md', 'one\nlate\n')
      stop.answer = laptop.core.dispatch('sync:stop', undefined)
    }
    let synced: SyncStatus
    try {
      synced = await laptop.sync()
    } finally {
      gap.onSyncSaved = null
    }
    expect(stop.answer).not.toBeNull()
    const stopped = await stop.answer
    // The sync before the Stop is whole; the change made meanwhile waits for the person (on
    // main, a follow-up was queued as if no Stop had come, and the status said nothing).
    expect(ctx.server.git(repo, 'show', 'main:mine.md')).toBe('one\n')
    for (const status of [synced, await laptop.call('sync:status')]) {
      expect(status.state).toBe('error')
      expect(status.error).toEqual({
        code: 'sync-stopped',
        message:
          'Sync stopped before the next sync began. The sync before it had finished whole; anything changed since was not sent, and the next sync sends it.',
      })
    }
    expect(stopped).toMatchObject({ ok: true, value: { state: 'error' } })
    const after = await laptop.sync()
    expect(after).toMatchObject({ state: 'idle', unsynced: 0 })
    expect(ctx.server.git(repo, 'show', 'main:mine.md')).toBe('one\nlate\n')
    expect((await desktop.sync()).state).toBe('idle')
    await expectSound(ctx.server, repo, [laptop, desktop])
  }, 120_000)

  it('during the hourly back-off’s wait: nothing changes, the wait goes on, and Sync now syncs', async () => {
    const { repo, laptop, desktop } = await ctx.shared(
      'stop-wait',
      (d) => d.write('log.md', 'one\n'),
      undefined,
      {
        retryFirstMs: 100_003,
      },
    )
    const proxy = await startProxy(ctx.server)
    try {
      await laptop.call('sync:configure', {
        url: proxy.url(repo),
        username: ctx.server.user,
        token: ctx.server.token,
        intervalMinutes: 0,
      })
      await desktop.write('log.md', 'one\ntwo\n')
      expect((await desktop.sync()).state).toBe('idle')
      // Every pack damaged on the way: downloads keep breaking, and sync backs off to the hour.
      let damaging = true
      proxy.on((req) => damaging && isPackRequest(req), {
        kind: 'rewrite',
        rewrite(body) {
          const copy = Buffer.from(body)
          copy[body.indexOf('PACK') + 30]! ^= 0xff
          return copy
        },
      })
      let waiting: SyncStatus | null = null
      for (let n = 0; n < REPEATED_SYNC_FAILURES; n++) waiting = await laptop.sync()
      expect(waiting?.repeated?.advice).toContain('only about once an hour')
      const status = await laptop.call('sync:status')
      // No sync runs: the Stop (from another window, or pressed as the last one ended) changes
      // nothing, and the status still says what Cairn will do.
      const stopped = await laptop.call('sync:stop')
      expect(stopped).toEqual(status)
      expect(await laptop.call('sync:status')).toEqual(status)
      expect((await laptop.files()).get('log.md')).toBe('one\n')
      // The network mended, Sync now takes the desktop's change at once.
      damaging = false
      expect(await laptop.sync()).toMatchObject({ state: 'idle', unsynced: 0 })
      expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
      await proxy.allClosed()
      await expectSound(ctx.server, repo, [laptop, desktop])
    } finally {
      await proxy.close()
    }
  }, 120_000)

  it('with a join answer waiting behind a running sync: the answer is dropped, the question stays, answering again joins', async () => {
    const repo = ctx.newRepo('stop-join')
    const desktop = await ctx.machine('desktop')
    await desktop.write('theirs.md', 'desktop\n')
    await desktop.connect(ctx.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    const laptop = await ctx.machine('laptop')
    await laptop.write('mine.md', 'laptop\n')
    const proxy = await startProxy(ctx.server)
    try {
      const asked = await laptop.call('sync:configure', {
        url: proxy.url(repo),
        username: ctx.server.user,
        token: ctx.server.token,
        intervalMinutes: 0,
      })
      const question = asked.join ?? (await laptop.sync()).join
      expect(question).toMatchObject({ reason: 'unrelated' })
      const before = laptop.git('rev-parse', 'main').trim()
      // A sync runs (held at its first request), and the person answers meanwhile.
      let reached: () => void = () => {}
      const held = new Promise<void>((resolve) => (reached = resolve))
      proxy.on(
        (req) => {
          if (!(req.url ?? '').includes('/info/refs') || !req.headers.authorization) return false
          reached()
          return true
        },
        { kind: 'silent' },
        1,
      )
      const syncing = laptop.sync()
      await held
      const answering = laptop.core.dispatch('sync:join', { choice: 'use-remote' })
      const stopped = await laptop.call('sync:stop')
      expect(stopped.error?.code).toBe('sync-stopped')
      await syncing
      await answering
      const status = await laptop.call('sync:status')
      // Nothing was joined: the question stands, this machine's memory and history as before.
      expect(status.join).toMatchObject({ reason: 'unrelated' })
      expect(laptop.git('rev-parse', 'main').trim()).toBe(before)
      expect((await laptop.files()).get('mine.md')).toBe('laptop\n')
      expect((await laptop.files()).has('theirs.md')).toBe(false)
      // A later sync does not carry the dropped answer out: it asks again.
      expect((await laptop.sync()).join).toMatchObject({ reason: 'unrelated' })
      expect(laptop.git('rev-parse', 'main').trim()).toBe(before)
      // Answering again joins.
      const joined = await laptop.call('sync:join', { choice: 'merge' })
      expect(joined).toMatchObject({ join: null })
      expect((await laptop.files()).get('theirs.md')).toBe('desktop\n')
      expect((await laptop.files()).get('mine.md')).toBe('laptop\n')
      await proxy.allClosed()
    } finally {
      await proxy.close()
    }
  }, 120_000)
})
