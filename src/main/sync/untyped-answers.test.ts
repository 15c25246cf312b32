/**
 * Answers with no content type, judged by git's pkt-line grammar, as a hostile proxy delivers
 * them (rsync29): gzipped, one byte at a time, and git's shortest answers on their own. A real
 * git server behind the proxy; the sync completes where the bytes are git's.
 */
import { describe, expect, it } from 'vitest'
import type { SyncStatus } from '../../shared/types'
import { expectSound, useSyncServer, type Machine } from './test-support'
import {
  isAdvertisement,
  isPackRequest,
  startProxy,
  type Proxy,
} from '../../../test/fixtures/git-proxy'

const ctx = useSyncServer()

async function behind(
  prefix: string,
  test: (t: { repo: string; laptop: Machine; desktop: Machine; proxy: Proxy }) => Promise<void>,
) {
  const { repo, laptop, desktop } = await ctx.behind(prefix)
  const proxy = await startProxy(ctx.server)
  try {
    await laptop.call('sync:configure', {
      url: proxy.url(repo),
      username: ctx.server.user,
      token: ctx.server.token,
      intervalMinutes: 0,
    })
    await test({ repo, laptop, desktop, proxy })
  } finally {
    await proxy.close()
  }
}

async function completes(laptop: Machine, repo: string, desktop: Machine): Promise<void> {
  await laptop.write('notes.md', 'from the laptop\n')
  const status: SyncStatus = await laptop.sync()
  expect(status.error).toBeUndefined()
  expect(status.state).toBe('idle')
  expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
  expect(ctx.server.git(repo, 'show', 'main:notes.md')).toBe('from the laptop\n')
  await expectSound(ctx.server, repo, [laptop, desktop])
}

describe('an answer with no content type, as a hostile proxy delivers it', () => {
  it('gzipped (fetch and push): read as git’s, the sync completes', async () => {
    await behind('untyped-gzip', async ({ repo, laptop, desktop, proxy }) => {
      proxy.on(() => true, { kind: 'rewrite', dropType: true, gzip: true, rewrite: (b) => b })
      await completes(laptop, repo, desktop)
    })
  }, 120_000)

  it('one byte at a time (the advertisement and the pack): read as git’s, the sync completes', async () => {
    await behind('untyped-trickle', async ({ repo, laptop, desktop, proxy }) => {
      proxy.on(
        (req) => (isAdvertisement(req) && !!req.headers.authorization) || isPackRequest(req),
        { kind: 'trickle', everyMs: 1, dropType: true },
      )
      await completes(laptop, repo, desktop)
    })
  }, 120_000)

  for (const [body, code] of [
    ['0008NAK\n', 'sync-interrupted'],
    ['0000', 'sync-interrupted'],
  ] as const) {
    it(`(the pack's answer exactly ${JSON.stringify(body)}): a broken answer, main unchanged, the next sync completes`, async () => {
      await behind('untyped-short', async ({ repo, laptop, desktop, proxy }) => {
        expect((await laptop.sync()).state).toBe('idle')
        await desktop.write('log.md', 'one\ntwo\nthree\n')
        expect((await desktop.sync()).state).toBe('idle')
        // `main` as it was (the tracking ref a pack-less answer left is dropped by design).
        const main = () => laptop.git('rev-parse', 'main')
        const before = main()
        let cutting = true
        proxy.on((req) => cutting && isPackRequest(req), {
          kind: 'status',
          status: 200,
          body,
          contentType: null,
        })
        const status = await laptop.sync()
        expect(status.error?.code).toBe(code)
        expect(main()).toBe(before)
        cutting = false
        expect((await laptop.sync()).state).toBe('idle')
        expect((await laptop.files()).get('log.md')).toBe('one\ntwo\nthree\n')
        await expectSound(ctx.server, repo, [laptop, desktop])
      })
    }, 120_000)
  }
})
