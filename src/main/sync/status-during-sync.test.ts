/**
 * The sync status, computed while a sync runs, never writes back the sync state it read
 * before: a status that pruned a settled conflict once saved that older state over the one
 * the sync had just saved, dropping the conflict the sync raised (and its `lastRemote`).
 * A real history and a real git server on loopback; the overlap forced by holding the
 * status's first read of a conflicted file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { noHost } from '../app'
import { openVersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import { DEFAULT_LIMITS } from '../memory'
import { createMemorySecretStore } from '../settings'
import { createSyncService } from './index'
import { startMachine, type Machine } from './test-support'

let server: GitServer
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  server = await startGitServer()
})
afterAll(async () => {
  await server.close()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the sync status during a sync', () => {
  it('keeps the conflicts and remote the sync saved meanwhile', async () => {
    const repo = 'status-race'
    server.createRepo(repo)
    const laptop: Machine = await startMachine('laptop')
    cleanups.push(() => laptop.close())
    await laptop.write('a.md', 'Editor: Helix\n')
    await laptop.write('b.md', 'Shell: fish\n')
    await laptop.connect(server, repo)
    await laptop.sync()

    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-status-race-'))
    const memory = await openVersionedMemory({
      dataDir,
      watch: false,
      maintenance: false,
      machine: 'desktop',
      logger: createRecordingLogger(),
    })
    // The status's first read of a conflicted file waits, once armed, until released.
    let armed = false
    let reached: () => void = () => {}
    const reachedRead = new Promise<void>((resolve) => (reached = resolve))
    let release: () => void = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const sync = createSyncService({
      dataDir,
      memory: {
        git: memory.git,
        execute: memory.execute,
        async readAt(file, oid) {
          if (armed) {
            armed = false
            reached()
            await released
          }
          return memory.readAt(file, oid)
        },
        setMachine: memory.setMachine,
        limits: memory.limits,
      },
      tokens: createMemorySecretStore(),
      logger: createRecordingLogger(),
      host: noHost,
      importPolicy: async () => ({ secretScanning: false, limits: DEFAULT_LIMITS }),
      hostName: () => 'desktop',
      debounceMs: 3_600_000,
    })
    cleanups.push(async () => {
      await sync.close()
      await memory.close()
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
    })
    const write = (file: string, content: string) =>
      memory.execute(
        { command: 'create', path: `/memories/${file}`, file_text: content },
        { actor: 'user' },
        { createExisting: 'overwrite' },
      )
    await sync.configure({
      url: server.url(repo),
      username: server.user,
      token: server.token,
      intervalMinutes: 0,
    })
    await sync.syncNow()

    // A conflict in a.md, then settled here by hand (the status will prune it).
    await laptop.write('a.md', 'Editor: Zed\n')
    await laptop.sync()
    await write('a.md', 'Editor: Neovim\n')
    expect((await sync.syncNow()).conflicts.map((c) => c.path)).toEqual(['/memories/a.md'])
    await write('a.md', 'Editor: Zed or Neovim\n')
    // The next conflict waits on the remote: b.md.
    await laptop.write('b.md', 'Shell: zsh\n')
    await laptop.sync()
    await write('b.md', 'Shell: nushell\n')

    armed = true
    const status = sync.status()
    await reachedRead
    // While that status is between reading the state and saving it, the sync runs.
    const synced = await sync.syncNow()
    expect(synced.conflicts.map((c) => c.path)).toEqual(['/memories/b.md'])
    release()
    await status

    const after = await sync.status()
    expect(after.conflicts.map((c) => c.path)).toEqual(['/memories/b.md'])
    // And as saved: a fresh service on the same folder reads it back.
    const saved = JSON.parse(await readFile(path.join(dataDir, 'sync', 'state.json'), 'utf8')) as {
      conflicts: Array<{ path: string }>
      lastRemote: string | null
    }
    expect(saved.conflicts.map((c) => c.path)).toEqual(['/memories/b.md'])
    expect(saved.lastRemote).toBe(server.git(repo, 'rev-parse', 'main').trim())
  })
})
