/**
 * A remote that starts its answer and then stops part way (a server stalled mid-pack, a proxy
 * holding the rest): the sync gives up after the quiet time, says the answer broke off,
 * changes nothing and lets the connection go.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { refsOf, useSyncServer } from './test-support'
import { isPackRequest, startProxy } from '../../../test/fixtures/git-proxy'

const ctx = useSyncServer()
// A short quiet time, and no quick retry within the test.
const quick = { idleTimeoutMs: 1000, retryFirstMs: 60_000 }

describe('a remote that stalls part way through its answer', () => {
  it('ends the sync after the quiet time as interrupted, and changes nothing', async () => {
    const { server } = ctx
    const { repo, laptop } = await ctx.behind('stalled', quick)
    const refs = () => refsOf(laptop)
    const before = refs()
    const proxy = await startProxy(server)
    // The pack's answer: its headers and a first few bytes (`0008NAK\n` and a little), no more.
    proxy.on(isPackRequest, { kind: 'stall', bytes: 12 })
    try {
      await laptop.call('sync:configure', {
        url: proxy.url(repo),
        username: server.user,
        token: server.token,
        intervalMinutes: 0,
      })
      const status = await laptop.sync()
      expect(status.error?.code).toBe('sync-interrupted')
      expect(JSON.stringify(status)).not.toContain(laptop.dir)
      expect(refs()).toBe(before)
      await proxy.allClosed()
    } finally {
      await proxy.close()
    }
  }, 30_000)

  it('gives up an answer that trickles in too slowly to ever finish, and changes nothing', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.behind('trickle', quick)
    // A pack of some 30 KB that does not compress: at a byte every 50 ms it would take 25 min.
    await desktop.write('big.md', randomBytes(22_000).toString('base64') + '\n')
    expect((await desktop.sync()).state).toBe('idle')
    const refs = () => refsOf(laptop)
    const before = refs()
    const proxy = await startProxy(server)
    // Never quiet for the quiet time (a byte every 50 ms), never done either.
    proxy.on(isPackRequest, { kind: 'trickle', everyMs: 50 })
    try {
      await laptop.call('sync:configure', {
        url: proxy.url(repo),
        username: server.user,
        token: server.token,
        intervalMinutes: 0,
      })
      const status = await laptop.sync()
      expect(status.error).toEqual({
        code: 'sync-interrupted',
        message:
          'The remote’s answer came too slowly to finish (under 1 KB in 1 second). Nothing was lost; Cairn tries again on the next sync.',
      })
      expect(refs()).toBe(before)
      await proxy.allClosed()
    } finally {
      await proxy.close()
    }
  }, 30_000)
})
