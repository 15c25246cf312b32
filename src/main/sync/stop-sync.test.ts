/**
 * Stop for a running sync: the person's Stop aborts the network work and lets the connection
 * go; nothing is half-applied (stopped before `main` moved, the folder, refs and history are
 * as before; after, the merge is whole), the status says "Sync stopped" and what it left, and
 * the next automatic sync runs as usual. A real git server behind a proxy that stalls.
 */
import type http from 'node:http'
import { describe, expect, it } from 'vitest'
import { expectSound, refsOf, statusWhen, useSyncServer, type Machine } from './test-support'
import {
  isPackRequest,
  isPushRequest,
  startProxy,
  type Proxy,
} from '../../../test/fixtures/git-proxy'

const ctx = useSyncServer()

/** Resolves once the proxy met a request `when` matches (and holds it as `behaviour` says). */
function holdFirst(
  proxy: Proxy,
  when: (req: http.IncomingMessage) => boolean,
  behaviour: Parameters<Proxy['on']>[1],
): Promise<void> {
  let reached: () => void = () => {}
  const held = new Promise<void>((resolve) => (reached = resolve))
  proxy.on(
    (req) => {
      if (!when(req)) return false
      reached()
      return true
    },
    behaviour,
    1,
  )
  return held
}

async function connectThrough(machine: Machine, proxy: Proxy, repo: string) {
  const { server } = ctx
  await machine.call('sync:configure', {
    url: proxy.url(repo),
    username: server.user,
    token: server.token,
    intervalMinutes: 0,
  })
}

describe('Stop for a running sync', () => {
  it('stops a fetch stalled mid-pack: nothing changes, the connection goes, the next automatic sync runs', async () => {
    const { server } = ctx
    // The default quiet time (60 s): only Stop ends this sync within the test's time.
    const { repo, laptop, desktop } = await ctx.behind('stop-fetch', { debounceMs: 100 })
    const proxy = await startProxy(server)
    try {
      await connectThrough(laptop, proxy, repo)
      // The settings change started a sync: let it finish first.
      await laptop.sync()
      await desktop.write('log.md', 'one\ntwo\nthree\n')
      expect((await desktop.sync()).state).toBe('idle')
      const refs = () => refsOf(laptop)
      const before = refs()
      const packs = () => laptop.git('count-objects', '-v')
      const objectsBefore = packs()
      const stalled = holdFirst(proxy, isPackRequest, { kind: 'stall', bytes: 12 })
      const syncing = laptop.sync()
      await stalled
      const stopped = await laptop.call('sync:stop')
      expect(stopped.state).toBe('error')
      expect(stopped.error).toEqual({
        code: 'sync-stopped',
        message:
          'Sync stopped. Memory and its history here are as they were before it; nothing was sent to the remote, and the next sync starts again.',
      })
      expect(stopped.repeated).toBeUndefined()
      expect((await syncing).error?.code).toBe('sync-stopped')
      expect(refs()).toBe(before)
      expect(packs()).toBe(objectsBefore)
      expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
      await proxy.allClosed()

      // The next automatic sync (a memory change here) runs as usual, and takes everything.
      const synced = statusWhen(laptop, (s) => s.state === 'idle' && s.unsynced === 0)
      await laptop.write('here.md', 'laptop\n')
      await synced
      expect((await laptop.files()).get('log.md')).toBe('one\ntwo\nthree\n')
      await expectSound(server, repo, [laptop])
    } finally {
      await proxy.close()
    }
  }, 30_000)

  it('stopped after the merge: the merge stays whole, the push is not sent, the next sync sends it', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.shared('stop-push', (m) =>
      m.write('log.md', 'a\nb\nc\n'),
    )
    await desktop.write('log.md', 'a\nb\nc\nfrom desktop\n')
    expect((await desktop.sync()).state).toBe('idle')
    await laptop.write('log.md', 'from laptop\na\nb\nc\n')
    const remoteBefore = server.git(repo, 'rev-parse', 'main').trim()
    const proxy = await startProxy(server)
    try {
      // Held before the settings change's own sync can push: that is the sync stopped.
      const held = holdFirst(proxy, isPushRequest, { kind: 'silent' })
      await connectThrough(laptop, proxy, repo)
      await held
      const stopped = await laptop.call('sync:stop')
      expect(stopped.error).toEqual({
        code: 'sync-stopped',
        message:
          'Sync stopped. The remote’s changes had been taken in already, and that part was finished whole; this machine’s changes may or may not have reached the remote: the next sync finishes either way.',
      })
      // The merge is whole here: two parents, the folder equal to it; the remote untouched.
      expect(laptop.git('rev-list', '--parents', '-n', '1', 'main').trim().split(' ')).toHaveLength(
        3,
      )
      expect((await laptop.files()).get('log.md')).toBe('from laptop\na\nb\nc\nfrom desktop\n')
      expect(server.git(repo, 'rev-parse', 'main').trim()).toBe(remoteBefore)
      await proxy.allClosed()
      await expectSound(server, repo, [laptop, desktop])

      const again = await laptop.sync()
      expect(again.state).toBe('idle')
      expect(again.error).toBeUndefined()
      expect(server.git(repo, 'rev-parse', 'main').trim()).toBe(
        laptop.git('rev-parse', 'main').trim(),
      )
    } finally {
      await proxy.close()
    }
  }, 30_000)

  it('with no sync running, changes nothing and says nothing stopped', async () => {
    const { server } = ctx
    const repo = ctx.newRepo('stop-idle')
    const laptop = await ctx.machine('laptop')
    await laptop.write('log.md', 'one\n')
    await laptop.connect(server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    const status = await laptop.call('sync:stop')
    expect(status.state).toBe('idle')
    expect(status.error).toBeUndefined()
  })
})
