/**
 * A push refused by the server (or a proxy in front of it) says why in plain words: never
 * "not a git repository" for an address that has just answered a fetch. A real git server on
 * loopback behind a small proxy that refuses uploads with the status under test.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { startMachine, type Machine } from './test-support'

let server: GitServer
let proxy: http.Server
let refuseWith = 413
const open: Machine[] = []
let repoCount = 0

beforeAll(async () => {
  server = await startGitServer()
  proxy = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url?.endsWith('git-receive-pack')) {
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
  await server.close()
})
afterEach(async () => {
  for (const machine of open.splice(0)) await machine.close()
})

async function pushThroughProxy(status: number): Promise<{ code?: string; message?: string }> {
  refuseWith = status
  const repo = `refused-${++repoCount}`
  server.createRepo(repo)
  const laptop = await startMachine('laptop')
  open.push(laptop)
  await laptop.write('notes.md', 'hello\n')
  const port = (proxy.address() as AddressInfo).port
  await laptop.call('sync:configure', {
    url: `http://127.0.0.1:${port}/${repo}.git`,
    username: server.user,
    token: server.token,
    intervalMinutes: 0,
  })
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
    const repo = `hook-${++repoCount}`
    server.createRepo(repo)
    const laptop = await startMachine('laptop')
    open.push(laptop)
    await laptop.write('a.md', 'a\n')
    await laptop.connect(server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    const hook = path.join(server.gitdir(repo), 'hooks', 'pre-receive')
    writeFileSync(
      hook,
      '#!/bin/sh\necho "GH013: Push cannot contain secrets: notes.md line 3" >&2\nexit 1\n',
    )
    chmodSync(hook, 0o755)
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
    const repo = `race-${++repoCount}`
    server.createRepo(repo)
    const laptop = await startMachine('laptop')
    open.push(laptop)
    await laptop.write('a.md', 'a\n')
    await laptop.connect(server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    // Once: another push lands between this machine's fetch and its ref update, and the server
    // declines with words that are not git's (as GitLab's and Gitea's "incorrect old value").
    const hook = path.join(server.gitdir(repo), 'hooks', 'pre-receive')
    writeFileSync(
      hook,
      `#!/bin/sh
if [ -e "$GIT_DIR/raced" ]; then exit 0; fi
touch "$GIT_DIR/raced"
env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
  GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@example.com GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@example.com \\
  sh -c 'T=$(git rev-parse main^{tree}); C=$(echo other | git commit-tree $T -p main); git update-ref refs/heads/main $C'
echo "incorrect old value provided" >&2
exit 1
`,
    )
    chmodSync(hook, 0o755)
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
    const repo = `busy-${++repoCount}`
    server.createRepo(repo)
    const laptop = await startMachine('laptop')
    open.push(laptop)
    await laptop.write('a.md', 'a\n')
    await laptop.connect(server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    // Every push: another writer's commit lands on main meanwhile (a bot committing on each
    // push), and the push is declined by policy.
    const hook = path.join(server.gitdir(repo), 'hooks', 'pre-receive')
    writeFileSync(
      hook,
      `#!/bin/sh
echo x >> "$GIT_DIR/pushes"
env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
  GIT_AUTHOR_NAME=o GIT_AUTHOR_EMAIL=o@example.com GIT_COMMITTER_NAME=o GIT_COMMITTER_EMAIL=o@example.com \\
  sh -c 'T=$(git rev-parse main^{tree}); C=$(echo other | git commit-tree $T -p main); git update-ref refs/heads/main $C'
echo "GH013: Repository rule violations found for refs/heads/main. Push cannot contain secrets." >&2
exit 1
`,
    )
    chmodSync(hook, 0o755)
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
