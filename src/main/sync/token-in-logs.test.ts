/**
 * The sync token never reaches the log, whatever a failing sync carries: a real git server
 * behind a proxy that answers with the token echoed (as it is, in an address's user part, in
 * the Authorization header it was sent, in base64 and hex), through the real core, its logger
 * writing to a real file that is read back (as `key-in-logs.test.ts` does for the API key).
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { startProxy, type Proxy } from '../../../test/fixtures/git-proxy'
import { logFileIn, runsIn } from '../../../test/fixtures/log-file'
import { startMachine, type Machine } from './test-support'

/** A token as a forge makes one, with a `/` and a `+` that an address must encode. */
const TOKEN = `ghp_${randomBytes(30).toString('base64').slice(0, 34)}/+${randomBytes(3).toString('hex')}`
const BASE64 = Buffer.from(TOKEN).toString('base64')
const HEX = Buffer.from(TOKEN).toString('hex')

/** Every form of `token` a log could hold, as 8-long runs: as it is, encoded, base64, hex. */
function tokenFormsIn(text: string, token: string, user: string): string[] {
  const hex = Buffer.from(token).toString('hex')
  const basic = Buffer.from(`${user}:${token}`).toString('base64')
  // The Basic header's letters that carry the user name alone are not the token's.
  const basicStart = Math.ceil(((user.length + 1) * 8) / 6)
  return (
    [
      [token, 4],
      [encodeURIComponent(token), 4],
      [Buffer.from(token).toString('base64'), 0],
      [hex, 0],
      [hex.toUpperCase(), 0],
      [basic, basicStart],
    ] as const
  ).flatMap(([form, start]) => runsIn(text, form, start))
}

let logDir = ''
const { logger: fileLogger, read: readLog } = logFileIn(() => logDir)

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function setUp(): Promise<{ server: GitServer; proxy: Proxy; machine: Machine }> {
  logDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-token-log-'))
  cleanups.push(() => rm(logDir, { recursive: true, force: true, maxRetries: 10 }))
  const server = await startGitServer({ token: TOKEN })
  cleanups.push(() => server.close())
  server.createRepo('memory')
  const proxy = await startProxy(server)
  cleanups.push(() => proxy.close())
  const machine = await startMachine('laptop', { logger: fileLogger })
  cleanups.push(() => machine.close())
  await machine.write('notes.md', 'hello\n')
  return { server, proxy, machine }
}

describe('the sync token in the log', () => {
  it('is hidden in every form when a failing server echoes it', async () => {
    const { server, proxy, machine } = await setUp()
    const user = server.user
    const echoed = [
      `token ${TOKEN}`,
      `remote https://${user}:${encodeURIComponent(TOKEN)}@forge.example/you/memory.git`,
      `Authorization: Basic ${Buffer.from(`${user}:${TOKEN}`).toString('base64')}`,
      `base64 ${BASE64}`,
      `hex ${HEX}`,
    ].join('\n')
    proxy.on((req) => !!req.headers.authorization, {
      kind: 'status',
      status: 500,
      body: `the forge failed: ${echoed}`,
    })
    const status = await machine.call('sync:configure', {
      url: proxy.url('memory'),
      username: user,
      token: TOKEN,
      intervalMinutes: 0,
    })
    expect(status.config.hasToken).toBe(true)
    expect((await machine.sync()).state).toBe('error')
    const log = await readLog()
    expect(tokenFormsIn(log, TOKEN, user)).toEqual([])
    // What failed was written, the server's words among it.
    expect(log).toContain('Sync did not complete')
    expect(log).toContain('the forge failed')
    expect(log).toContain('the sync token')
  }, 60_000)
})
