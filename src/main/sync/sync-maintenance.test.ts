/**
 * Sync and background maintenance on one repository: packs written by fetch are read by
 * Cairn's own reader and folded by maintenance like any other; objects only a backup or the
 * remote's ref reaches are kept; and a fetch or push never sees maintenance change the pack
 * folder under it. The git CLI is the second opinion, on each machine and on a clone.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import type { SyncService } from './index'
import {
  expectSound,
  linesOfHistory,
  startMachine,
  syncServiceOver,
  type Machine,
} from './test-support'

let server: GitServer
let repo: string
let counter = 0
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  server = await startGitServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  repo = `maintained-${++counter}`
  server.createRepo(repo)
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const notes = (...lines: string[]) => `${lines.join('\n')}\n`

async function machine(name: string, dataDir?: string): Promise<Machine> {
  const started = await startMachine(name, dataDir ? { dataDir } : {})
  cleanups.push(() => started.close())
  return started
}

function git(dataDir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
    maxBuffer: 64 * 1024 * 1024,
  })
}

async function packsOf(dataDir: string): Promise<string[]> {
  const names = await readdir(path.join(dataDir, 'history.git', 'objects', 'pack'))
  return names.filter((name) => name.endsWith('.pack')).sort()
}

/** The packs (`pack-X.pack`) a `.keep` keeps from maintenance's folds. */
async function keptOf(dataDir: string): Promise<string[]> {
  const names = await readdir(path.join(dataDir, 'history.git', 'objects', 'pack'))
  return names
    .filter((name) => name.endsWith('.keep'))
    .map((name) => name.replace(/\.keep$/, '.pack'))
}

/** Every file of every commit any ref reaches, read by Cairn, equals what `git show` prints. */
async function expectReadsAsGit(dataDir: string, memory: VersionedMemory): Promise<number> {
  let compared = 0
  const onMain = new Set(git(dataDir, 'rev-list', 'main').trim().split('\n'))
  for (const oid of git(dataDir, 'rev-list', '--all').trim().split('\n')) {
    const listing = git(dataDir, 'ls-tree', '-r', '-z', '--name-only', oid)
    for (const name of listing.split('\0').filter(Boolean)) {
      const expected = Buffer.from(git(dataDir, 'show', `${oid}:${name}`))
      const commit = await memory.git.objects.readCommit(oid)
      let tree = commit.tree
      const segments = name.split('/')
      for (const segment of segments.slice(0, -1)) {
        tree = (await memory.git.objects.readTree(tree)).find((e) => e.name === segment)!.oid
      }
      const blob = (await memory.git.objects.readTree(tree)).find(
        (e) => e.name === segments.at(-1),
      )!
      expect(Buffer.from(await memory.git.objects.readBlob(blob.oid))).toEqual(expected)
      if (onMain.has(oid)) {
        expect(await memory.readAt(`/memories/${name}`, oid)).toBe(expected.toString('utf8'))
      }
      compared++
    }
  }
  return compared
}

describe('maintenance after sync', () => {
  it('folds fetched packs, keeps what only a backup or the remote’s ref reaches, and reads every version as git does', async () => {
    const laptop = await machine('laptop')
    const tabletDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-sync-tablet-'))
    cleanups.push(() => rm(tabletDir, { recursive: true, force: true, maxRetries: 10 }))
    let tablet = await machine('tablet', tabletDir)

    for (let i = 0; i < 6; i++) await laptop.write('a.md', notes('# A', `laptop line ${i}`))
    await laptop.connect(server, repo)
    await laptop.sync()
    // The tablet's own memory goes under a backup ref when it takes the remote's.
    await tablet.write('own.md', notes('the tablet’s own memory'))
    await tablet.write('own.md', notes('the tablet’s own memory', 'second version'))
    const own = tablet.git('rev-parse', 'main').trim()
    await tablet.connect(server, repo)
    expect((await tablet.sync()).join).not.toBeNull()
    await tablet.call('sync:join', { choice: 'use-remote' })
    // Both move on; the tablet's next sync fetches and makes a merge commit.
    await laptop.write('b.md', notes('from the laptop'))
    await laptop.sync()
    await tablet.write('c.md', notes('from the tablet'))
    expect((await tablet.sync()).state).toBe('idle')
    expect(tablet.git('rev-list', '--merges', 'main').trim()).not.toBe('')
    // The laptop's next change is fetched by a connection test only: the remote's ref alone
    // reaches it on the tablet.
    await laptop.sync()
    await laptop.write('d.md', notes('only on the remote'))
    await laptop.sync()
    expect((await tablet.call('sync:test', { url: server.url(repo) })).ok).toBe(true)
    const remoteOnly = tablet.git('rev-parse', 'refs/remotes/cairn-sync/main').trim()
    expect(() => tablet.git('merge-base', '--is-ancestor', remoteOnly, 'main')).toThrow()
    await tablet.close()
    cleanups.pop()

    const fetched = await packsOf(tabletDir)
    expect(fetched.length).toBeGreaterThanOrEqual(2)
    const memory = await openVersionedMemory({
      dataDir: tabletDir,
      watch: false,
      maintenance: false,
      logger: createRecordingLogger(),
    })
    try {
      // Cairn's reader reads the fetched packs before anything is packed...
      expect(await expectReadsAsGit(tabletDir, memory)).toBeGreaterThan(0)
      // The connection test's pack waits, kept, for a sync to judge it (take it in, or remove
      // it as refused): the pass folds the others.
      const waiting = await keptOf(tabletDir)
      expect(waiting).toHaveLength(1)
      const report = await memory.maintain({ mergeAll: true })
      expect(report.mergedPacks).toBe(fetched.length - 1)
      expect(report.loose).toBeGreaterThan(0)
      // ...and everything after: one pack beside the waiting one, nothing loose, every ref's
      // history whole.
      expect(await packsOf(tabletDir)).toHaveLength(2)
      expect(await packsOf(tabletDir)).toContain(waiting[0])
      expect(git(tabletDir, 'count-objects', '-v')).toMatch(/^count: 0$/m)
      git(tabletDir, 'fsck', '--strict', '--no-dangling')
      for (const pack of await packsOf(tabletDir)) {
        git(tabletDir, 'verify-pack', path.join(tabletDir, 'history.git', 'objects', 'pack', pack))
      }
      expect(git(tabletDir, 'cat-file', '-t', own).trim()).toBe('commit')
      expect(git(tabletDir, 'cat-file', '-t', remoteOnly).trim()).toBe('commit')
      await expectReadsAsGit(tabletDir, memory)
      // The timeline still holds the commits that came from the laptop, by machine.
      const log = await memory.log({ offset: 0, limit: 100 })
      expect(log.entries.some((entry) => entry.machine === 'laptop')).toBe(true)
      expect(log.entries.some((entry) => (entry.otherParents ?? []).length > 0)).toBe(true)
    } finally {
      await memory.close()
    }

    // Sync goes on over the packed repository (isomorphic-git reads Cairn's pack), and the
    // backup restores from it.
    tablet = await machine('tablet', tabletDir)
    const status = await tablet.call('sync:status')
    const restored = await tablet.call('sync:restoreBackup', { name: status.backups[0]!.name })
    expect(restored.conflicts).toEqual([])
    await tablet.sync()
    // The sync judged the waiting pack (it took the laptop's change in): folds may take it.
    expect(await keptOf(tabletDir)).toEqual([])
    await laptop.sync()
    expect(await laptop.files()).toEqual(await tablet.files())
    expect(Object.fromEntries(await tablet.files())).toMatchObject({
      'own.md': notes('the tablet’s own memory', 'second version'),
      'd.md': notes('only on the remote'),
    })
    const remote = await expectSound(server, repo, [laptop, tablet])
    const lines = linesOfHistory(remote)
    for (const line of ['laptop line 5', 'the tablet’s own memory', 'only on the remote']) {
      expect(lines.has(line)).toBe(true)
    }
  })
})

describe('maintenance during a sync', () => {
  it('changes nothing in the object folders while a fetch or push runs', async () => {
    const laptop = await machine('laptop')
    await laptop.write('shared.md', notes('# Shared', 'from the laptop'))
    await laptop.connect(server, repo)
    await laptop.sync()

    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-sync-busy-'))
    const memory = await openVersionedMemory({
      dataDir,
      watch: false,
      maintenance: false,
      machine: 'desktop',
      logger: createRecordingLogger(),
    })
    const events: string[] = []
    // Each transfer is logged from inside the gate, and held a moment after its work so that
    // maintenance reaches its install step meanwhile.
    const git = {
      ...memory.git,
      transfer: <T>(task: () => Promise<T>) =>
        memory.git.transfer(async () => {
          events.push('transfer-start')
          try {
            const result = await task()
            await new Promise((resolve) => setTimeout(resolve, 300))
            return result
          } finally {
            events.push('transfer-end')
          }
        }),
    }
    const sync: SyncService = syncServiceOver(dataDir, memory, git)
    cleanups.push(async () => {
      await sync.close()
      await memory.close()
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
    })
    for (let i = 0; i < 40; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/d-${i}.md`, file_text: `desktop ${i}\n` },
        { actor: 'user' },
      )
    }
    await sync.configure({
      url: server.url(repo),
      username: server.user,
      token: server.token,
      intervalMinutes: 0,
    })
    // The first sync asks to join; the person merges while maintenance packs.
    expect((await sync.syncNow()).join).not.toBeNull()
    events.length = 0
    let syncing: Promise<unknown> | null = null
    const report = await memory.maintain({
      onStep: (step) => {
        events.push(step)
        if (step === 'listed') syncing = sync.join('merge')
      },
    })
    await syncing
    expect(report.packed).toBeGreaterThan(0)
    expect((await sync.status()).state).toBe('idle')
    expect(events).toContain('transfer-start')

    // No step that changes the pack folder or removes objects falls inside a transfer.
    const changing = new Set([
      'pack-renamed',
      'pack-durable',
      'removing-loose',
      'removing-packs',
      'done',
    ])
    let inside = 0
    for (const event of events) {
      if (event === 'transfer-start') inside++
      else if (event === 'transfer-end') inside--
      else if (changing.has(event)) expect({ event, inside }).toEqual({ event, inside: 0 })
    }
    execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), 'fsck', '--strict'], {
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
    })
    await laptop.sync()
    expect(Object.fromEntries(await laptop.files())).toMatchObject({
      'shared.md': notes('# Shared', 'from the laptop'),
      'd-39.md': 'desktop 39\n',
    })
  })
})
