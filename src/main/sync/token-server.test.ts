/**
 * A sync token is only ever sent to the server it was given for, even when a sync starts
 * while the person saves a new address and token (review hunt11 D2: the new token was saved
 * first, the address after, and a sync in between sent the new server's token to the old
 * server). Two local HTTP servers stand in for the old and the new server and record the
 * credentials they are sent; the interleaving is forced by starting the sync from inside the
 * secret store's save.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { noHost } from '../app'
import { openVersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import { DEFAULT_LIMITS } from '../memory'
import { createMemorySecretStore, type SecretStore } from '../settings'
import { createSyncService, type SyncService } from './index'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A server that answers 401 to everything and records the credentials it is sent. */
async function recorder(): Promise<{ readonly url: string; readonly seen: string[] }> {
  const seen: string[] = []
  const server = http.createServer((request, response) => {
    const auth = request.headers.authorization
    if (auth) seen.push(Buffer.from(auth.split(' ')[1] ?? '', 'base64').toString())
    request.resume()
    response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="memory"' })
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/memory.git`, seen }
}

async function service(tokens: SecretStore): Promise<SyncService> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-token-server-'))
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    maintenance: false,
    machine: 'laptop',
    logger: createRecordingLogger(),
  })
  await memory.execute(
    { command: 'create', path: '/memories/a.md', file_text: 'a\n' },
    { actor: 'user' },
  )
  const sync = createSyncService({
    dataDir,
    memory,
    tokens,
    logger: createRecordingLogger(),
    host: noHost,
    importPolicy: async () => ({ secretScanning: false, limits: DEFAULT_LIMITS }),
    hostName: () => 'laptop',
    debounceMs: 3_600_000,
  })
  cleanups.push(async () => {
    await sync.close()
    await memory.close()
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
  })
  return sync
}

describe('the sync token and its server', () => {
  it('never sends a new token to the old server, when a sync starts while both are saved', async () => {
    const oldServer = await recorder()
    const newServer = await recorder()
    const inner = createMemorySecretStore()
    let syncing: Promise<unknown> | null = null
    let sync: SyncService | null = null
    // A sync that starts right after the token is saved and before the address is.
    const tokens: SecretStore = {
      ...inner,
      get: () => inner.get(),
      clear: () => inner.clear(),
      async set(value) {
        await inner.set(value)
        if (syncing === null && sync !== null && value.includes('NEW_TOKEN')) {
          syncing = sync.syncNow()
          await syncing
        }
      },
    }
    sync = await service(tokens)
    await sync.configure({
      url: oldServer.url,
      username: 'sam',
      token: 'OLD_TOKEN',
      intervalMinutes: 0,
    })
    await sync.syncNow()
    expect(oldServer.seen).toContain('sam:OLD_TOKEN')

    await sync.configure({
      url: newServer.url,
      username: 'sam',
      token: 'NEW_TOKEN',
      intervalMinutes: 0,
    })
    expect(syncing).not.toBeNull()
    await sync.syncNow()
    expect(oldServer.seen.filter((sent) => sent.includes('NEW_TOKEN'))).toEqual([])
    expect(newServer.seen).toContain('sam:NEW_TOKEN')
    expect(newServer.seen.filter((sent) => sent.includes('OLD_TOKEN'))).toEqual([])
    expect((await sync.status()).config.hasToken).toBe(true)
  })

  it('keeps using a token saved before tokens were kept with their server', async () => {
    const server = await recorder()
    const tokens = createMemorySecretStore()
    const sync = await service(tokens)
    await sync.configure({ url: server.url, username: 'sam', intervalMinutes: 0 })
    await tokens.set('LEGACY_TOKEN')
    expect((await sync.status()).config.hasToken).toBe(true)
    await sync.syncNow()
    expect(server.seen).toContain('sam:LEGACY_TOKEN')
  })
})
