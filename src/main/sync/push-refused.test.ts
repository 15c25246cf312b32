/**
 * A push refused by the server (or a proxy in front of it) says why in plain words: never
 * "not a git repository" for an address that has just answered a fetch. A real git server on
 * loopback behind a small proxy that refuses uploads with the status under test.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useSyncServer, type Machine } from './test-support'

const sync = useSyncServer()
let proxy: http.Server
let refuseWith = 413
/**
 * Set: the proxy stands for a server under contention that words a lost race its own way
 * (JGit's "failed to lock"): on each push another writer's commit really lands on `main` of
 * `busyRepo`, and the push is answered `ng refs/heads/main <words>`.
 */
let raceWords: string | null = null
let busyRepo = ''
let busyPushes = 0
/** Set: pushes go through to the server (a first sync before the server gets busy). */
let passPushes = false

beforeAll(async () => {
  const server = sync.server
  proxy = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url?.endsWith('git-receive-pack') && raceWords !== null) {
      const words = raceWords
      req.resume()
      req.on('end', () => {
        busyPushes++
        const tree = server.git(busyRepo, 'rev-parse', 'main^{tree}').trim()
        const bot = server
          .git(
            busyRepo,
            '-c',
            'user.name=o',
            '-c',
            'user.email=o@example.com',
            'commit-tree',
            tree,
            '-p',
            'main',
            '-m',
            `bot ${busyPushes}`,
          )
          .trim()
        server.git(busyRepo, 'update-ref', 'refs/heads/main', bot)
        const report = Buffer.concat([
          pkt(Buffer.from('unpack ok\n')),
          pkt(Buffer.from(`ng refs/heads/main ${words}\n`)),
          Buffer.from('0000'),
        ])
        res.writeHead(200, { 'Content-Type': 'application/x-git-receive-pack-result' })
        res.end(
          Buffer.concat([pkt(Buffer.concat([Buffer.from([1]), report])), Buffer.from('0000')]),
        )
      })
      return
    }
    if (req.method === 'POST' && req.url?.endsWith('git-receive-pack') && !passPushes) {
      req.resume()
      res.writeHead(refuseWith, { 'Content-Type': 'text/html' })
      res.end(`<h1>${refuseWith}</h1>`)
      return
    }
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
})
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve))
})

// One pkt-line: its length in four hex digits, then the bytes.
const pkt = (bytes: Buffer) =>
  Buffer.concat([Buffer.from((bytes.length + 4).toString(16).padStart(4, '0')), bytes])

/** Points `laptop` at `repo` through the proxy. */
async function connectThroughProxy(laptop: Machine, repo: string): Promise<void> {
  const port = (proxy.address() as AddressInfo).port
  await laptop.call('sync:configure', {
    url: `http://127.0.0.1:${port}/${repo}.git`,
    username: sync.server.user,
    token: sync.server.token,
    intervalMinutes: 0,
  })
}

/** A laptop that has synced `a.md` to a new repository (`<prefix>-<n>`) straight to the server. */
async function syncedLaptop(prefix: string): Promise<{ repo: string; laptop: Machine }> {
  const repo = sync.newRepo(prefix)
  const laptop = await sync.machine('laptop')
  await laptop.write('a.md', 'a\n')
  await laptop.connect(sync.server, repo)
  expect((await laptop.sync()).state).toBe('idle')
  return { repo, laptop }
}

/** Installs `script` as `repo`'s pre-receive hook on the server. */
function preReceive(repo: string, script: string): void {
  const hook = path.join(sync.server.gitdir(repo), 'hooks', 'pre-receive')
  writeFileSync(hook, script)
  chmodSync(hook, 0o755)
}

// In a hook: another writer's commit lands on `main` (outside the push's quarantine).
const OTHER_COMMIT_ON_MAIN = `env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
  GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@example.com GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@example.com \\
  sh -c 'T=$(git rev-parse main^{tree}); C=$(echo other | git commit-tree $T -p main); git update-ref refs/heads/main $C'`

async function pushThroughProxy(status: number): Promise<{ code?: string; message?: string }> {
  refuseWith = status
  const server = sync.server
  const repo = sync.newRepo('refused')
  const laptop = await sync.machine('laptop')
  await laptop.write('notes.md', 'hello\n')
  await connectThroughProxy(laptop, repo)
  const result = await laptop.sync()
  expect(result.state).toBe('error')
  // Nothing reached the remote, and this machine's history is as it was.
  expect(server.git(repo, 'for-each-ref').trim()).toBe('')
  expect(laptop.git('show', 'main:notes.md')).toBe('hello\n')
  return { code: result.error?.code, message: result.error?.message }
}

describe('a push the server refuses', () => {
  it('says an upload refused as too large (HTTP 413) was too large', async () => {
    const { code, message } = await pushThroughProxy(413)
    expect(code).toBe('sync-push-refused')
    expect(message).toContain('refused the upload as too large')
    expect(message).not.toContain('not as a git repository')
  })

  it('names the status of any other refusal', async () => {
    const { code, message } = await pushThroughProxy(422)
    expect(code).toBe('sync-push-refused')
    expect(message).toBe('The remote refused the push (HTTP 422).')
  })

  it('keeps the words for a token without permission (HTTP 403)', async () => {
    const { code } = await pushThroughProxy(403)
    expect(code).toBe('sync-auth')
  })
})

describe('a push a server hook refuses (push protection, a protected branch)', () => {
  it('says the server’s reason in its own words, and does not retry it as a race', async () => {
    const server = sync.server
    const { repo, laptop } = await syncedLaptop('hook')
    preReceive(
      repo,
      '#!/bin/sh\necho "GH013: Push cannot contain secrets: notes.md line 3" >&2\nexit 1\n',
    )
    await laptop.write('notes.md', 'x\n')
    const before = server.requests.length

    const status = await laptop.sync()
    expect(status.state).toBe('error')
    expect(status.error?.code).toBe('sync-push-refused')
    expect(status.error?.message).toContain('pre-receive hook declined')
    expect(status.error?.message).toContain('GH013: Push cannot contain secrets: notes.md line 3')
    expect(status.error?.message).not.toContain(laptop.dir)
    expect(status.unsynced).toBe(1)
    // One fetch and one push: a refusal that is not a race is not fetched and pushed again.
    expect(
      server.requests.slice(before).filter((s) => s === 'receive-pack').length,
    ).toBeLessThanOrEqual(3)
    expect(server.git(repo, 'log', '--format=%s', 'main')).not.toContain('notes.md')
  })
})

describe('a lost push race, however the server words it (review11 N2)', () => {
  it('is fetched, merged and pushed again when the branch moved, whatever the reason said', async () => {
    const server = sync.server
    const { repo, laptop } = await syncedLaptop('race')
    // Once: another push lands between this machine's fetch and its ref update, and the server
    // declines with words that are not git's (as GitLab's and Gitea's "incorrect old value").
    preReceive(
      repo,
      `#!/bin/sh
if [ -e "$GIT_DIR/raced" ]; then exit 0; fi
touch "$GIT_DIR/raced"
${OTHER_COMMIT_ON_MAIN}
echo "incorrect old value provided" >&2
exit 1
`,
    )
    await laptop.write('notes.md', 'x\n')

    const status = await laptop.sync()
    expect([status.state, status.error?.message]).toEqual(['idle', undefined])
    expect(status.unsynced).toBe(0)
    const log = server.git(repo, 'log', '--format=%s', 'main')
    expect(log).toContain('other')
    expect(server.git(repo, 'show', 'main:notes.md')).toBe('x\n')
  })
})

describe('a push refused for good on a remote that moves during every push (review11-fixsync2 R3)', () => {
  it('is retried as a race within the sync, then says the server’s reason, not a race', async () => {
    const server = sync.server
    const { repo, laptop } = await syncedLaptop('busy')
    // Every push: another writer's commit lands on main meanwhile (a bot committing on each
    // push), and the push is declined by policy.
    preReceive(
      repo,
      `#!/bin/sh
echo x >> "$GIT_DIR/pushes"
${OTHER_COMMIT_ON_MAIN}
echo "GH013: Repository rule violations found for refs/heads/main. Push cannot contain secrets." >&2
exit 1
`,
    )
    await laptop.write('notes.md', 'x\n')

    const status = await laptop.sync()
    expect([status.state, status.error?.code]).toEqual(['error', 'sync-push-refused'])
    expect(status.error?.message).toContain('pre-receive hook declined')
    expect(status.error?.message).toContain('GH013: Repository rule violations found')
    // Each push but the last found main moved, so each was a race worth another try.
    const pushes = readFileSync(path.join(server.gitdir(repo), 'pushes'), 'utf8')
    expect(pushes).toBe('x\n'.repeat(4))
    expect(server.git(repo, 'log', '--format=%s', 'main')).not.toContain('notes.md')
    expect(laptop.git('show', 'main:notes.md')).toBe('x\n')
  })
})

describe('a lost race on the sync’s last push, in a server’s own words (review12-sync D2)', () => {
  it.each(['failed to lock', 'non-fast forward', 'some words no server list holds'])(
    'stays a race (“%s”) when main moved during every push',
    async (words) => {
      const server = sync.server
      const repo = sync.newRepo('jgit')
      const laptop = await sync.machine('laptop')
      await laptop.write('a.md', 'a\n')
      await connectThroughProxy(laptop, repo)
      passPushes = true
      try {
        expect((await laptop.sync()).state).toBe('idle')
      } finally {
        passPushes = false
      }
      await laptop.write('notes.md', 'x\n')
      busyRepo = repo
      busyPushes = 0
      raceWords = words
      try {
        const status = await laptop.sync()
        expect([status.state, status.error?.code]).toEqual(['error', 'sync-rejected'])
        expect(status.error?.message).not.toContain(words)
      } finally {
        raceWords = null
      }
      // Four pushes, each of which met another writer's commit on main: a race every time.
      expect(busyPushes).toBe(4)
      expect(server.git(repo, 'log', '--format=%s', 'main').split('\n')).toContain('bot 4')
      expect(server.git(repo, 'ls-tree', '--name-only', 'main')).not.toContain('notes.md')
      expect(laptop.git('show', 'main:notes.md')).toBe('x\n')
    },
  )
})
