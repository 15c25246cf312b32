/**
 * A remote that misbehaves on the wire (issue #14's "Never lost", checked the hostile way): a
 * proxy in front of the loopback git server redirects to another server, answers HTTP 500
 * halfway through a sync, answers garbage, drops the answer's content type, or sends a pack
 * that is damaged or lacks objects — once, or on every sync. Each must end in a plain error
 * that carries no token, host path or stack, change nothing, and leave both sides sound
 * (`git fsck --strict`) so that the next sync completes; one that comes every time is said
 * to keep failing.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPEATED_SYNC_FAILURES, type SyncStatus } from '../../shared/types'
import type { GitServer } from '../../../test/fixtures/git-server'
import { retryDelay } from './service'
import { startsAsGit } from './transport'
import { expectSound, linesOfHistory, useSyncServer, type Machine } from './test-support'
import {
  isAdvertisement,
  isPackRequest,
  isPushRequest,
  startProxy,
  type Behaviour,
  type Proxy,
} from '../../../test/fixtures/git-proxy'

const ctx = useSyncServer()

/** Points `m` at `repo` through `proxy`, and waits for the sync that saving starts. */
async function viaProxy(m: Machine, proxy: Proxy, repo: string): Promise<SyncStatus> {
  await m.call('sync:configure', {
    url: proxy.url(repo),
    username: ctx.server.user,
    token: ctx.server.token,
    intervalMinutes: 0,
  })
  return m.sync()
}

/** Two machines sharing `log.md`, the laptop synced once through a proxy of its own. */
interface BehindProxy {
  readonly repo: string
  readonly laptop: Machine
  readonly desktop: Machine
  readonly proxy: Proxy
}

/**
 * Runs `test` on a laptop and a desktop sharing `log.md` ("one"), the laptop's first sync
 * through a new proxy done; with `desktopAhead`, the desktop has then pushed a second line for
 * the laptop to fetch. The proxy is closed after, whatever happens.
 */
async function behindProxy(
  prefix: string,
  options: { readonly desktopAhead: boolean },
  test: (t: BehindProxy) => Promise<void>,
): Promise<void> {
  const { repo, laptop, desktop } = await ctx.shared(prefix, (d) => d.write('log.md', 'one\n'))
  const proxy = await startProxy(ctx.server)
  try {
    expect((await viaProxy(laptop, proxy, repo)).state).toBe('idle')
    if (options.desktopAhead) {
      await desktop.write('log.md', 'one\ntwo\n')
      expect((await desktop.sync()).state).toBe('idle')
    }
    await test({ repo, laptop, desktop, proxy })
  } finally {
    await proxy.close()
  }
}

/** Both sides sound, and the laptop's next sync completes with the desktop's second line. */
async function expectNextSyncCatchesUp({ repo, laptop, desktop }: BehindProxy): Promise<void> {
  await expectSound(ctx.server, repo, [laptop, desktop])
  expect((await laptop.sync()).state).toBe('idle')
  expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
  await expectSound(ctx.server, repo, [laptop, desktop])
}

/** The error a person sees: plain words, no token, no host path, no stack. */
function expectPlain(status: SyncStatus, m: Machine): void {
  expect(status.state).toBe('error')
  const shown = JSON.stringify(status)
  expect(shown).not.toContain(ctx.server.token)
  expect(shown).not.toContain(m.dir)
  expect(shown).not.toContain(ctx.server.root)
  expect(status.error?.message ?? '').not.toMatch(/\n\s+at |Error:|ParseError|Pako/)
  expect(status.error?.code).toMatch(/^sync-/)
}

function refs(m: Machine): string {
  return m.git('for-each-ref', '--format=%(refname) %(objectname)')
}

/** The pack data of an upload-pack answer replaced by `pack` (side-band-64k framing). */
function withPack(answer: Buffer, pack: Buffer): Buffer {
  const at = answer.indexOf('PACK')
  // What comes before the pkt-line that starts the pack: its 4-digit length and band byte.
  const parts: Buffer[] = [answer.subarray(0, at - 5)]
  for (let i = 0; i < pack.length; i += 60_000) {
    const chunk = pack.subarray(i, i + 60_000)
    const length = (chunk.length + 5).toString(16).padStart(4, '0')
    parts.push(Buffer.from(`${length}\x01`, 'latin1'), chunk)
  }
  parts.push(Buffer.from('0000'))
  return Buffer.concat(parts)
}

describe('a redirect to another server', () => {
  for (const host of ['127.0.0.1', 'localhost']) {
    it(`never takes the token there (${host}, another port), and changes nothing`, async () => {
      const { server } = ctx
      const repo = ctx.newRepo('redirect')
      const laptop = await ctx.machine('laptop')
      await laptop.write('notes.md', 'private\n')
      const head = laptop.git('rev-parse', 'main')
      // The other server: it passes what it gets on to the git server, and records it.
      const other = await startProxy(server, host)
      const front = await startProxy(server)
      front.on(() => true, { kind: 'redirect', to: `http://${host}:${other.port}` })
      try {
        const status = await viaProxy(laptop, front, repo)
        expectPlain(status, laptop)
        // Told as what happened, not as a token the remote refused.
        expect(status.error).toEqual({
          code: 'sync-redirected',
          message: `The remote redirected Cairn to another address (${host}:${other.port}), and Cairn does not send your token there. If you trust that address, enter it as the remote’s address and sync again.`,
        })
        expect(other.authorizations.length).toBeGreaterThan(0)
        expect(other.authorizations.filter((a) => a !== undefined)).toEqual([])
        // The configured server was asked for (and sent) the token; only it.
        expect(front.authorizations).toContain(
          `Basic ${Buffer.from(`${server.user}:${server.token}`).toString('base64')}`,
        )
        expect(laptop.git('rev-parse', 'main')).toBe(head)
        expect(server.git(repo, 'rev-list', '--all').trim()).toBe('')
      } finally {
        await front.close()
        await other.close()
      }
      await laptop.connect(server, repo)
      expect((await laptop.sync()).state).toBe('idle')
      await expectSound(server, repo, [laptop])
    })
  }
})

describe('Test connection of an address that redirects to another server', () => {
  it('says it was sent elsewhere, in its own category, never taking the token there', async () => {
    const { server } = ctx
    const repo = ctx.newRepo('redirect-test')
    const laptop = await ctx.machine('laptop')
    const other = await startProxy(server)
    const front = await startProxy(server)
    front.on(() => true, { kind: 'redirect', to: `http://127.0.0.1:${other.port}` })
    try {
      const result = await laptop.call('sync:test', {
        url: front.url(repo),
        username: server.user,
        token: server.token,
      })
      // Not "unreachable": the remote answered, and sent Cairn elsewhere.
      expect(result).toEqual({
        ok: false,
        found: 'redirected',
        message: `The remote redirected Cairn to another address (127.0.0.1:${other.port}), and Cairn does not send your token there. If you trust that address, enter it as the remote’s address and sync again.`,
      })
      expect(other.authorizations.length).toBeGreaterThan(0)
      expect(other.authorizations.filter((a) => a !== undefined)).toEqual([])
    } finally {
      await front.close()
      await other.close()
    }
  })
})

describe('a fetch whose answer breaks', () => {
  const damaged: Array<[string, Behaviour]> = [
    ['HTTP 500 for the pack', { kind: 'status', status: 500, body: 'Internal error in /srv/git' }],
    [
      'garbage where the pack was due',
      {
        kind: 'status',
        status: 200,
        body: 'garbage',
        contentType: 'application/x-git-upload-pack-result',
      },
    ],
    [
      'a pack cut short (the connection closed cleanly)',
      { kind: 'rewrite', rewrite: (body) => body.subarray(0, body.indexOf('PACK') + 20) },
    ],
    [
      'a pack damaged on the way',
      {
        kind: 'rewrite',
        rewrite(body) {
          const copy = Buffer.from(body)
          copy[body.indexOf('PACK') + 30]! ^= 0xff
          return copy
        },
      },
    ],
  ]
  for (const [what, behaviour] of damaged) {
    it(`(${what}) says so plainly, is retried, changes nothing, and the next sync completes`, async () => {
      await behindProxy('broken', { desktopAhead: true }, async (t) => {
        const { laptop, proxy } = t
        const before = refs(laptop)
        proxy.on(isPackRequest, behaviour, 1)
        const status = await laptop.sync()
        expectPlain(status, laptop)
        // A broken answer is the network's, worth retrying: never "not a repository".
        expect(status.error?.code).toMatch(/^sync-(interrupted|unreachable)$/)
        expect(refs(laptop)).toBe(before)
        await expectNextSyncCatchesUp(t)
      })
    })
  }
})

describe('an answer that is not git’s at all once the handshake was read', () => {
  // A sign-in page or a proxy's own page in place of the answer to the sync's request (a
  // firewall that lets GETs through and answers POSTs itself): it says the same on every
  // try, so it is not a broken connection to retry for ever, every few minutes.
  for (const [stage, when] of [
    ['fetch', isPackRequest],
    ['push', isPushRequest],
  ] as const) {
    it(`(${stage}) is not called a broken connection, changes nothing, and is not retried`, async () => {
      const { server } = ctx
      const { repo, laptop, desktop } = await ctx.shared(`html-${stage}`, (d) =>
        d.write('log.md', 'one\n'),
      )
      const proxy = await startProxy(server)
      try {
        expect((await viaProxy(laptop, proxy, repo)).state).toBe('idle')
        if (stage === 'fetch') {
          await desktop.write('log.md', 'one\ntwo\n')
          expect((await desktop.sync()).state).toBe('idle')
        } else await laptop.write('log.md', 'one\nfrom the laptop\n')
        const before = refs(laptop)
        const remoteBefore = server.git(repo, 'rev-parse', 'main')
        const page = '<!doctype html><html><body>Sign in to continue</body></html>'
        proxy.on(when, { kind: 'status', status: 200, body: page, contentType: 'text/html' })
        for (let attempt = 1; attempt <= 2; attempt++) {
          const status = await laptop.sync()
          expectPlain(status, laptop)
          expect(status.error?.code).toBe('sync-not-a-repository')
          expect(status.error?.message).toContain('something other than git')
        }
        expect(refs(laptop)).toBe(before)
        expect(server.git(repo, 'rev-parse', 'main')).toBe(remoteBefore)
      } finally {
        await proxy.close()
      }
      await laptop.connect(server, repo)
      expect((await laptop.sync()).state).toBe('idle')
      await expectSound(server, repo, [laptop, desktop])
    })
  }
})

describe('a push whose answer arrives garbled', () => {
  it('says so plainly, and the next sync finds the push landed, losing nothing', async () => {
    await behindProxy('garbled-push', { desktopAhead: false }, async (t) => {
      const { repo, laptop, desktop, proxy } = t
      await laptop.write('log.md', 'one\nfrom the laptop\n')
      // The server takes the push; its report never arrives readable.
      proxy.on(isPushRequest, { kind: 'rewrite', rewrite: () => Buffer.from('garbage') }, 1)
      const status = await laptop.sync()
      expectPlain(status, laptop)
      expect(status.error?.code).toMatch(/^sync-(interrupted|unreachable)$/)
      expect((await laptop.sync()).state).toBe('idle')
      expect((await desktop.sync()).state).toBe('idle')
      expect((await desktop.files()).get('log.md')).toBe('one\nfrom the laptop\n')
      const remote = await expectSound(ctx.server, repo, [laptop, desktop])
      expect(linesOfHistory(remote)).toContain('from the laptop')
    })
  })
})

describe('a remote that sends a pack lacking an object its commits name', () => {
  /** The desktop's new commit and its tree, without the blob the tree names. */
  function incompletePack(server: GitServer, repo: string): Buffer {
    const tip = server.git(repo, 'rev-parse', 'main').trim()
    const tree = server.git(repo, 'rev-parse', 'main^{tree}').trim()
    return execFileSync('git', ['--git-dir', server.gitdir(repo), 'pack-objects', '--stdout'], {
      input: `${tip}\n${tree}\n`,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    })
  }

  for (const times of [1, 2]) {
    it(`${times === 1 ? 'once: the sync fetches again and completes' : 'twice: the sync fails plainly, and the next completes'}`, async () => {
      await behindProxy('incomplete', { desktopAhead: true }, async (t) => {
        const { repo, laptop, proxy } = t
        const { server } = ctx
        const pack = incompletePack(server, repo)
        proxy.on(isPackRequest, { kind: 'rewrite', rewrite: (body) => withPack(body, pack) }, times)
        const status = await laptop.sync()
        if (times === 1) {
          expect(status.state).toBe('idle')
          expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
        } else {
          expect(status.state).toBe('error')
          expect(JSON.stringify(status)).not.toContain(server.token)
          // The remote's answer lacked it, not this machine's history (git fsck agrees below):
          // never "your memory is damaged"; retried like any broken answer.
          expect(status.error?.code).toBe('sync-interrupted')
          expect(status.error?.message).not.toMatch(/memory history is damaged/)
          expect((await laptop.files()).get('log.md')).toBe('one\n')
          // No ref is left on the commit this repository cannot read whole.
          expect(refs(laptop)).not.toContain('refs/remotes/cairn-sync/main')
        }
        await expectNextSyncCatchesUp(t)
      })
    })
  }
})

describe('an object missing from this machine’s own history (local damage, not the remote’s)', () => {
  it('is said as this machine’s damage, never as the remote’s answer, and changes nothing', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.shared('local-damage', (d) =>
      d.write('log.md', 'one\ntwo\nthree\n'),
    )
    await laptop.write('log.md', 'one\ntwo\nthree\nfrom the laptop\n')
    expect((await laptop.sync()).state).toBe('idle')
    expect((await desktop.sync()).state).toBe('idle')
    await desktop.write('log.md', 'desktop\none\ntwo\nthree\nfrom the laptop\n')
    expect((await desktop.sync()).state).toBe('idle')
    await laptop.write('log.md', 'one\ntwo\nthree\nfrom the laptop\nand more\n')
    // The laptop's own version, which only it holds (a loose object, in no pack), goes.
    const ours = laptop.git('rev-parse', 'main:log.md').trim()
    const loose = path.join(laptop.dir, 'history.git', 'objects', ours.slice(0, 2), ours.slice(2))
    fs.rmSync(loose)
    expect(() => laptop.git('cat-file', '-e', ours)).toThrow()
    const head = laptop.git('rev-parse', 'main')
    const remoteHead = server.git(repo, 'rev-parse', 'main')
    const status = await laptop.sync()
    expect(status.state).toBe('error')
    // The damage is this machine's: not a sync-* error that blames the network or the remote.
    expect(status.error?.code).toBe('history-damaged')
    expect(JSON.stringify(status)).not.toContain(laptop.dir)
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    expect(server.git(repo, 'rev-parse', 'main')).toBe(remoteHead)
    // git agrees on whose damage it is: the laptop misses the blob, the remote is whole.
    expect(() => laptop.git('fsck', '--strict')).toThrow()
    server.git(repo, 'fsck', '--strict')
  })
})

describe('a pack lacking an object, sent to a machine that holds a memory of its own', () => {
  it('fetches again and asks the join question, taking nothing unasked', async () => {
    const { server } = ctx
    const repo = ctx.newRepo('incomplete-join')
    const desktop = await ctx.machine('desktop')
    await desktop.write('log.md', 'from the desktop\n')
    await desktop.connect(server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    const laptop = await ctx.machine('laptop')
    await laptop.write('mine.md', 'the laptop’s own\n')
    const head = laptop.git('rev-parse', 'main')
    // Every object of the remote's history but the blob of log.md.
    const blob = server.git(repo, 'rev-parse', 'main:log.md').trim()
    const wanted = server
      .git(repo, 'rev-list', '--objects', 'main')
      .split('\n')
      .map((line) => line.split(' ')[0]!)
      .filter((oid) => oid !== '' && oid !== blob)
    const pack = execFileSync(
      'git',
      ['--git-dir', server.gitdir(repo), 'pack-objects', '--stdout'],
      {
        input: `${wanted.join('\n')}\n`,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
      },
    )
    const proxy = await startProxy(server)
    proxy.on(isPackRequest, { kind: 'rewrite', rewrite: (body) => withPack(body, pack) }, 1)
    try {
      const status = await viaProxy(laptop, proxy, repo)
      expect(status.error?.code).toBe('sync-join-needed')
      expect(status.join).toMatchObject({ reason: 'unrelated', remoteFiles: 1, localFiles: 1 })
      expect(laptop.git('rev-parse', 'main')).toBe(head)
      expect(Object.fromEntries(await laptop.files())).toEqual({ 'mine.md': 'the laptop’s own\n' })
      const joined = await laptop.call('sync:join', { choice: 'merge' })
      expect(joined.state).toBe('idle')
      expect(Object.fromEntries(await laptop.files())).toEqual({
        'mine.md': 'the laptop’s own\n',
        'log.md': 'from the desktop\n',
      })
    } finally {
      await proxy.close()
    }
    await laptop.connect(server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    await expectSound(server, repo, [laptop, desktop])
  })
})

/** A pack damaged on the way: one byte flipped inside it. */
/** The proxy's own answer, `200` with no content type at all, holding `body`. */
function untyped(body: string): Behaviour {
  return { kind: 'status', status: 200, body, contentType: null }
}

const damagedPack: Behaviour = {
  kind: 'rewrite',
  rewrite(body) {
    const copy = Buffer.from(body)
    copy[body.indexOf('PACK') + 30]! ^= 0xff
    return copy
  },
}

describe('an answer whose content type a proxy dropped', () => {
  // Some proxies drop headers but pass git's bytes: git's own start (a pkt-line's four hex
  // digits; `# service=` in the advertisement) tells its answer from a page, which only an
  // answer with no content type at all is judged by. A damaged one is then the network's.
  const cases: Array<[string, (req: IncomingMessage) => boolean, Behaviour]> = [
    [
      'the pack, cut short',
      isPackRequest,
      {
        kind: 'rewrite',
        dropType: true,
        rewrite: (body) => body.subarray(0, body.indexOf('PACK') + 20),
      },
    ],
    ['the pack, damaged', isPackRequest, { ...damagedPack, dropType: true }],
    [
      'the advertisement, cut short',
      // The one sent with the token (the first, without it, is the server's 401).
      (req) => isAdvertisement(req) && req.headers.authorization !== undefined,
      { kind: 'rewrite', dropType: true, rewrite: (body) => body.subarray(0, 20) },
    ],
    // Cut before git's first line was whole: nothing at all, or part of its length.
    ['the pack, cut to 2 bytes', isPackRequest, untyped('00')],
    [
      'the advertisement, cut to nothing',
      (req) => isAdvertisement(req) && req.headers.authorization !== undefined,
      untyped(''),
    ],
  ]
  for (const [what, when, behaviour] of cases) {
    it(`(${what}) is a broken answer, retried, not "not a repository"`, async () => {
      await behindProxy('untyped', { desktopAhead: true }, async (t) => {
        const { laptop, proxy } = t
        const before = refs(laptop)
        proxy.on(when, behaviour, 1)
        const status = await laptop.sync()
        expectPlain(status, laptop)
        expect(status.error?.code).toBe('sync-interrupted')
        expect(refs(laptop)).toBe(before)
        await expectNextSyncCatchesUp(t)
      })
    })
  }

  it('(whole, fetch and push) is read as git’s and the sync completes', async () => {
    await behindProxy('untyped-whole', { desktopAhead: true }, async (t) => {
      const { repo, laptop, proxy } = t
      const keep = (body: Buffer) => body
      proxy.on(() => true, { kind: 'rewrite', dropType: true, rewrite: keep })
      await laptop.write('notes.md', 'from the laptop\n')
      expect((await laptop.sync()).state).toBe('idle')
      expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
      expect(ctx.server.git(repo, 'show', 'main:notes.md')).toBe('from the laptop\n')
      await expectSound(ctx.server, repo, [laptop, t.desktop])
    })
  })

  // Four hex digits that are no pkt-line of git's: a length no line of that answer has.
  for (const [what, when] of [
    ['the pack', isPackRequest],
    [
      'the advertisement',
      (req: IncomingMessage) => isAdvertisement(req) && !!req.headers.authorization,
    ],
  ] as const) {
    it(`(${what}: a page beginning with a date) is not git’s`, async () => {
      await behindProxy('untyped-date', { desktopAhead: true }, async (t) => {
        const { laptop, proxy } = t
        const before = refs(laptop)
        proxy.on(when, untyped('2024-12-05 maintenance: back at 06:00\n'), 1)
        const status = await laptop.sync()
        expectPlain(status, laptop)
        expect(status.error?.code).toBe('sync-not-a-repository')
        expect(refs(laptop)).toBe(before)
        await expectNextSyncCatchesUp(t)
      })
    })
  }

  it('judges a start by git’s pkt-line grammar', () => {
    const result = (text: string, ended = true) =>
      startsAsGit(Buffer.from(text, 'latin1'), ended, ['NAK', 'ACK ', 'unpack ', '\x01'])
    expect(result('0008NAK\n')).toBe(true)
    expect(result('0031ACK 1234')).toBe(true)
    expect(result('0030\x01000eunpack ok\n', false)).toBe(true)
    expect(result('0031AC')).toBe(true) // cut inside its first line
    expect(result('00')).toBe(true) // cut inside the length
    expect(result('')).toBe(true)
    expect(result('2024-12-05 maintenance')).toBe(false)
    expect(result('0006NA')).toBe(false) // whole, and no line of git's
    expect(result('0003')).toBe(false)
    expect(result('fff1NAK\n')).toBe(false) // longer than git's longest line
    expect(result('0008nak\n')).toBe(false)
    expect(result('<!do')).toBe(false)
    expect(result('0z')).toBe(false)
  })

  it('(a page, with no type either) is still not git’s', async () => {
    await behindProxy('untyped-page', { desktopAhead: true }, async (t) => {
      const { laptop, proxy } = t
      const before = refs(laptop)
      const page = '<!doctype html><html><body>Sign in to continue</body></html>'
      proxy.on(isPackRequest, { kind: 'status', status: 200, body: page, contentType: null }, 1)
      const status = await laptop.sync()
      expectPlain(status, laptop)
      expect(status.error?.code).toBe('sync-not-a-repository')
      expect(refs(laptop)).toBe(before)
      await expectNextSyncCatchesUp(t)
    })
  })
})

describe('a sync that keeps failing the same way', () => {
  it(`says so after ${REPEATED_SYNC_FAILURES} in a row (since when, what to do) until one completes`, async () => {
    await behindProxy('keeps-failing', { desktopAhead: true }, async (t) => {
      const { laptop, proxy } = t
      // A proxy that damages every pack while saying it is git's.
      let damaging = true
      proxy.on((req) => damaging && isPackRequest(req), damagedPack)
      const before = Date.now()
      const first = await laptop.sync()
      const after = Date.now()
      const code = first.error?.code
      expect(code).toMatch(/^sync-(interrupted|unreachable)$/)
      for (let count = 2; count < REPEATED_SYNC_FAILURES; count++) {
        const status = await laptop.sync()
        expect(status.error?.code).toBe(code)
        expect(status.repeated).toBeUndefined()
      }
      for (const count of [REPEATED_SYNC_FAILURES, REPEATED_SYNC_FAILURES + 1]) {
        const status = await laptop.sync()
        expectPlain(status, laptop)
        expect(status.error?.code).toBe(code)
        expect(status.repeated?.count).toBe(count)
        // Since the first of them.
        expect(status.repeated?.since).toBeGreaterThanOrEqual(before)
        expect(status.repeated?.since).toBeLessThanOrEqual(after)
        expect(status.repeated?.advice).toContain('a proxy, VPN, antivirus or firewall')
        // Broken downloads: each try downloads again, so they go further apart.
        expect(status.repeated?.advice).toContain(
          code === 'sync-interrupted' ? 'only about once an hour' : 'Cairn keeps trying by itself',
        )
      }
      damaging = false
      const healed = await laptop.sync()
      expect(healed.state).toBe('idle')
      expect(healed.repeated).toBeUndefined()
      await expectNextSyncCatchesUp(t)
    })
  })

  it('counts two failures taking turns as failing (the latest named), from the first of them', async () => {
    await behindProxy('failing-by-turns', { desktopAhead: true }, async (t) => {
      const { laptop, proxy } = t
      let turn = 0
      // A damaged pack, then a server error, and so on: never twice the same way in a row.
      proxy.on((req) => isPackRequest(req) && turn % 2 === 0, damagedPack)
      proxy.on((req) => isPackRequest(req) && turn % 2 === 1, {
        kind: 'status',
        status: 500,
        body: 'Internal error',
      })
      const before = Date.now()
      const codes: string[] = []
      let status: SyncStatus | null = null
      for (; turn < REPEATED_SYNC_FAILURES; turn++) {
        status = await laptop.sync()
        codes.push(status.error?.code ?? '')
        if (turn < REPEATED_SYNC_FAILURES - 1) expect(status.repeated).toBeUndefined()
      }
      expect(new Set(codes).size).toBe(2)
      expect(status?.repeated?.count).toBe(REPEATED_SYNC_FAILURES)
      expect(status?.repeated?.mixed).toBe(true)
      expect(status?.repeated?.since).toBeGreaterThanOrEqual(before)
      expect(status?.error?.code).toBe(codes.at(-1))
    })
  })

  it('keeps the count over a restart, and reads the kept count by strict rules', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-keeps-failing-'))
    try {
      const { repo, laptop, desktop } = await ctx.shared(
        'failing-restart',
        (d) => d.write('log.md', 'one\n'),
        dir,
      )
      const proxy = await startProxy(ctx.server)
      try {
        expect((await viaProxy(laptop, proxy, repo)).state).toBe('idle')
        await desktop.write('log.md', 'one\ntwo\n')
        expect((await desktop.sync()).state).toBe('idle')
        proxy.on(isPackRequest, damagedPack)
        const first = await laptop.sync()
        expect(first.error).toBeDefined()
        for (let n = 2; n < REPEATED_SYNC_FAILURES; n++) await laptop.sync()
        const saved = JSON.parse(await readFile(path.join(dir, 'sync', 'state.json'), 'utf8')) as {
          failing?: { count: number; since: number }
        }
        expect(saved.failing?.count).toBe(REPEATED_SYNC_FAILURES - 1)
        await ctx.stop(laptop)
        const again = await ctx.machine('laptop', dir)
        // Its start's sync and this one (one or two more): without the kept count, at most 2.
        const status = await again.sync()
        expect(status.repeated?.count).toBeGreaterThanOrEqual(REPEATED_SYNC_FAILURES)
        expect(status.repeated?.since).toBe(saved.failing?.since)

        // A kept count that is not as Cairn writes it is dropped, and the rest of the state kept.
        await ctx.stop(again)
        const state = JSON.parse(await readFile(path.join(dir, 'sync', 'state.json'), 'utf8')) as {
          lastRemote: string
        }
        for (const failing of [
          // An older build's file: none kept.
          undefined,
          { code: 'sync-interrupted', count: '9', since: 1 },
          { code: 'sync-interrupted', count: 9, since: -1 },
          { code: 'sync-interrupted', count: 0, since: 1 },
          { code: 'Sync interrupted <b>', count: 9, since: 1 },
          { code: 'sync-interrupted', count: 9, since: 1, extra: true },
        ]) {
          await writeFile(
            path.join(dir, 'sync', 'state.json'),
            JSON.stringify({ ...state, failing }),
          )
          const reopened = await ctx.machine('laptop', dir)
          const after = await reopened.sync()
          expect(after.repeated).toBeUndefined()
          expect(after.lastSyncedAt).not.toBeNull()
          await ctx.stop(reopened)
        }
      } finally {
        await proxy.close()
      }
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    }
  })

  it('tries by itself only about hourly once downloads keep breaking, and says so', async () => {
    await behindProxy('failing-slow', { desktopAhead: true }, async (t) => {
      const { laptop, proxy } = t
      proxy.on(isPackRequest, damagedPack)
      let status: SyncStatus | null = null
      for (let n = 0; n < REPEATED_SYNC_FAILURES; n++) status = await laptop.sync()
      expect(status?.error?.code).toBe('sync-interrupted')
      expect(status?.repeated?.advice).toContain(
        'Each try downloads the memory again, so Cairn now tries by itself only about once an hour',
      )
    })
    // The waits: doubling to 10 minutes, and on to an hour once downloads keep breaking.
    expect([0, 1, 5, 10].map((n) => retryDelay(n, 30_000, false))).toEqual([
      30_000, 60_000, 600_000, 600_000,
    ])
    expect([0, 5, 6, 7, 40].map((n) => retryDelay(n, 30_000, true))).toEqual([
      30_000, 960_000, 1_920_000, 3_600_000, 3_600_000,
    ])
  })

  it('counts again when the remote’s settings change', async () => {
    await behindProxy('keeps-failing-again', { desktopAhead: true }, async (t) => {
      const { repo, laptop, proxy } = t
      let mode: 'damage' | 'fail' | 'pass' = 'damage'
      proxy.on((req) => mode === 'damage' && isPackRequest(req), damagedPack)
      proxy.on((req) => mode === 'fail' && isPackRequest(req), {
        kind: 'status',
        status: 500,
        body: 'Internal error',
      })
      const failures = async (count: number): Promise<SyncStatus> => {
        let status = await laptop.sync()
        for (let n = 1; n < count; n++) status = await laptop.sync()
        return status
      }
      const damaged = await failures(REPEATED_SYNC_FAILURES)
      expect(damaged.repeated?.count).toBe(REPEATED_SYNC_FAILURES)
      expect(damaged.repeated?.mixed).toBeUndefined()
      // Failing another way is failing still: counted, the latest failure's words and advice.
      mode = 'fail'
      const other = await laptop.sync()
      expect(other.error?.code).toBe('sync-unreachable')
      expect(other.error?.code).not.toBe(damaged.error?.code)
      expect(other.repeated).toMatchObject({
        count: REPEATED_SYNC_FAILURES + 1,
        since: damaged.repeated?.since,
        mixed: true,
      })
      expect(other.repeated?.advice).toContain(
        'If the server is your own, check that it is running',
      )
      // The person saves the remote's settings again (a new token): what failed before says
      // nothing about them.
      await laptop.call('sync:configure', {
        url: proxy.url(repo),
        username: ctx.server.user,
        token: ctx.server.token,
        intervalMinutes: 0,
      })
      const saved = await laptop.sync()
      expect(saved.error?.code).toBe('sync-unreachable')
      expect(saved.repeated).toBeUndefined()
      mode = 'pass'
      await expectNextSyncCatchesUp(t)
    })
  })
})
