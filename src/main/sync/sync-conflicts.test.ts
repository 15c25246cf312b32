/**
 * Conflicts that must not get lost or turned around: the machine that merged is killed or
 * meets a full disk before it records the conflict; two machines carry the same name; a
 * conflicted file is renamed. Real machines through the real git server, as in sync.test.ts.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { startMachine, type Machine } from './test-support'

const conflictChild = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/sync-conflict-child.ts',
)

let server: GitServer
let repo: string
let counter = 0
let machines: Machine[] = []
const dirs: string[] = []

beforeAll(async () => {
  server = await startGitServer()
})
afterAll(async () => {
  await server.close()
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10 })))
})
beforeEach(() => {
  repo = `conflicts-${++counter}`
  server.createRepo(repo)
})
afterEach(async () => {
  await Promise.all(machines.map((m) => m.close()))
  machines = []
})

async function machine(name: string, dataDir?: string): Promise<Machine> {
  const started = await startMachine(name, dataDir ? { dataDir } : {})
  machines.push(started)
  return started
}

/** Both machines hold `prefs.md` from the laptop; then the laptop changes its line and syncs. */
async function laptopAhead(
  laptopName: string,
  desktopName: string,
  desktopDir?: string,
): Promise<[Machine, Machine]> {
  const laptop = await machine(laptopName)
  const desktop = await machine(desktopName, desktopDir)
  await laptop.write('prefs.md', 'Editor: Vim\n')
  await laptop.connect(server, repo)
  expect((await laptop.sync()).state).toBe('idle')
  await desktop.connect(server, repo)
  expect((await desktop.sync()).state).toBe('idle')
  await laptop.write('prefs.md', 'Editor: Zed\n')
  expect((await laptop.sync()).state).toBe('idle')
  return [laptop, desktop]
}

describe('a conflict the merging machine had no time to record', () => {
  it('is raised after the machine was killed between the push and saving its state', async () => {
    const desktopDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-conflict-kill-'))
    dirs.push(desktopDir)
    const [, desktop] = await laptopAhead('laptop', 'desktop', desktopDir)
    await desktop.close()
    machines = machines.filter((m) => m !== desktop)
    const signal = await new Promise<string | null>((resolve, reject) => {
      const proc = spawn(
        process.execPath,
        ['--import', 'tsx', conflictChild, desktopDir, 'desktop', 'prefs.md', 'Editor: Helix\n'],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      )
      let errors = ''
      proc.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
      proc.on('error', reject)
      proc.on('exit', (_code, killed) => (killed ? resolve(killed) : reject(new Error(errors))))
    })
    expect(signal).toBe('SIGKILL')
    // The merge went out before the kill: the remote holds it.
    expect(server.git(repo, 'rev-parse', 'main').trim()).toMatch(/^[0-9a-f]{40}$/)
    const restarted = await machine('desktop', desktopDir)
    expect(restarted.git('rev-parse', 'main').trim()).toBe(
      server.git(repo, 'rev-parse', 'main').trim(),
    )
    const status = await restarted.sync()
    expect(status.state).toBe('conflicts')
    expect(status.conflicts).toMatchObject([
      { path: '/memories/prefs.md', oursLabel: 'desktop', theirsLabel: 'laptop' },
    ])
    expect(status.conflicts[0]?.blocks).toEqual([
      { ours: 'Editor: Helix\n', theirs: 'Editor: Zed\n' },
    ])
  }, 60_000)

  it('is raised once space is back after the disk filled while saving the state', async () => {
    const [laptop, desktop] = await laptopAhead('laptop', 'desktop')
    await desktop.write('prefs.md', 'Editor: Helix\n')
    const stateTemp = path.join(desktop.dir, 'sync')
    let armed = false
    const full = hookDisk(nodeDisk, (call) => {
      const args = call.args.filter((arg) => typeof arg === 'string')
      if (args.includes(stateTemp)) armed = true
      if (armed && call.name === 'openSync' && args.some((arg) => arg.includes('.cairn-tmp'))) {
        return errnoError(call, 'ENOSPC')
      }
      return undefined
    })
    const restore = setDisk(full.disk)
    let during
    try {
      during = await desktop.sync()
    } finally {
      restore()
    }
    expect(during.state).toBe('error')
    // The merge was made and pushed all the same.
    expect(server.git(repo, 'rev-parse', 'main').trim()).toBe(
      desktop.git('rev-parse', 'main').trim(),
    )
    const after = await desktop.sync()
    expect(after.state).toBe('conflicts')
    expect(after.conflicts.map((c) => c.path)).toEqual(['/memories/prefs.md'])
    expect(after.conflicts[0]?.blocks).toEqual([
      { ours: 'Editor: Helix\n', theirs: 'Editor: Zed\n' },
    ])
    // The laptop learns the same conflict from the merge's trailers.
    expect((await laptop.sync()).conflicts[0]?.blocks).toEqual([
      { ours: 'Editor: Zed\n', theirs: 'Editor: Helix\n' },
    ])
  })
})

describe('two machines with the same name', () => {
  it('gives each machine its own version as “ours”, and says which is the other', async () => {
    const [laptop, desktop] = await laptopAhead('studio', 'studio')
    await desktop.write('prefs.md', 'Editor: Helix\n')
    // The desktop merges: its side first.
    const merged = await desktop.sync()
    expect(merged.conflicts).toMatchObject([
      {
        oursLabel: 'studio',
        theirsLabel: 'the other machine',
        blocks: [{ ours: 'Editor: Helix\n', theirs: 'Editor: Zed\n' }],
      },
    ])
    // The laptop learns the merge: its own line is still “ours”.
    const learnt = await laptop.sync()
    expect(learnt.conflicts).toMatchObject([
      {
        oursLabel: 'studio',
        theirsLabel: 'the other machine',
        blocks: [{ ours: 'Editor: Zed\n', theirs: 'Editor: Helix\n' }],
      },
    ])
    await laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await laptop.files()).get('prefs.md')).toBe('Editor: Zed\n')
  })
})

describe('a conflicted file renamed before it was settled', () => {
  it('keeps the conflict on the file where it is now, and settles it there', async () => {
    const [laptop, desktop] = await laptopAhead('laptop', 'desktop')
    await desktop.write('prefs.md', 'Editor: Helix\n')
    expect((await desktop.sync()).state).toBe('conflicts')
    await desktop.rename('prefs.md', 'settings/prefs.md')
    const moved = await desktop.call('sync:status')
    expect(moved.conflicts).toMatchObject([
      {
        path: '/memories/settings/prefs.md',
        blocks: [{ ours: 'Editor: Helix\n', theirs: 'Editor: Zed\n' }],
      },
    ])
    // Its whole folder moves too; the laptop learns the conflict and the moves.
    await desktop.rename('settings', 'config')
    expect((await desktop.call('sync:status')).conflicts.map((c) => c.path)).toEqual([
      '/memories/config/prefs.md',
    ])
    expect((await desktop.sync()).conflicts.map((c) => c.path)).toEqual([
      '/memories/config/prefs.md',
    ])
    expect((await laptop.sync()).conflicts).toMatchObject([
      {
        path: '/memories/config/prefs.md',
        blocks: [{ ours: 'Editor: Zed\n', theirs: 'Editor: Helix\n' }],
      },
    ])
    const settled = await desktop.call('sync:resolve', {
      path: '/memories/config/prefs.md',
      choice: 'ours',
    })
    expect(settled.conflicts).toEqual([])
    expect((await desktop.files()).get('config/prefs.md')).toBe('Editor: Helix\n')
  })
})
