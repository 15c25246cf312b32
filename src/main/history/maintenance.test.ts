import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, OPEN, setDisk, type Disk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { UnlinkWorker } from '../lib/unlink-worker'
import { PackFolderGate } from './maintainer'
import { RepackAborted, type RepackReport } from './objects/repack'
import { openVersionedMemory } from './versioned-memory'
import type { VersionedMemory } from './types'
import { decodeRecords, LOG_FILES } from './objects/object-log'
import { removePackLeftovers } from './objects/pack-writer'
import { fsck, gitCli, tempDataDir } from './test-helpers'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const gitdir = (dir = dataDir) => path.join(dir, 'history.git')
// The worker's own `unlink`, for spies that pass batches through.
const realUnlink = UnlinkWorker.prototype.unlink
const claude = (i: number) =>
  ({ actor: 'claude', conversationId: 'c', toolUseId: `t${i}` }) as const

/** A mix of every kind of command over a few folders, each file growing a little. */
async function work(memory: VersionedMemory, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const file = `/memories/area-${i % 3}/note-${i % 7}.md`
    const body = `# Note ${i % 7}\n\n${'The user likes short answers and metric units.\n'.repeat(8)}revision ${i}\n`
    if (i % 23 === 22) {
      await memory.execute(
        { command: 'rename', old_path: file, new_path: `/memories/moved-${i}.md` },
        claude(i),
      )
    } else if (i % 17 === 16) {
      await memory.execute({ command: 'delete', path: file }, claude(i))
    } else {
      await memory.execute({ command: 'create', path: file, file_text: body }, claude(i))
    }
  }
}

/**
 * A history after `commands` of `work` that packs only when asked (`maintain`), its removals
 * of loose files waiting `quietMs` after the last command.
 */
async function openForRemovals(quietMs: number, commands: number): Promise<VersionedMemory> {
  const memory = await openVersionedMemory({
    dataDir,
    now,
    watch: false,
    maintenance: { looseThreshold: Infinity, idleMs: 2 ** 30, quietMs },
  })
  await work(memory, 0, commands)
  return memory
}

/**
 * Spies on the removal thread's batches: each is handed to the thread as before, then
 * `handed(paths)` runs. `mockRestore` when done.
 */
function spyOnBatches(handed: (paths: ReadonlyArray<string>) => unknown) {
  const unlink = vi.spyOn(UnlinkWorker.prototype, 'unlink')
  unlink.mockImplementation(function (this: UnlinkWorker, paths) {
    const batch = realUnlink.call(this, paths)
    handed(paths)
    return batch
  })
  return unlink
}

/**
 * Names added to `dir` and removed again: it stays larger than a fresh folder (ext4 never
 * shrinks one), as thousands of loose objects leave an object folder.
 */
function growFolder(dir: string): void {
  const padding = Array.from({ length: 300 }, (_, i) =>
    path.join(dir, `pad-${'x'.repeat(40)}-${i}`),
  )
  for (const file of padding) writeFileSync(file, '')
  for (const file of padding) rmSync(file)
}

/** Every object id the git CLI can find (loose or packed). */
function allObjects(dir = dataDir): string[] {
  return gitCli(dir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
    .split('\n')
    .filter(Boolean)
    .sort()
}

function looseCount(dir = dataDir): number {
  const line = gitCli(dir, 'count-objects', '-v')
    .split('\n')
    .find((l) => l.startsWith('count:'))
  return Number(line?.split(' ')[1])
}

function packNames(dir = dataDir): string[] {
  return readdirSync(path.join(gitdir(dir), 'objects', 'pack')).sort()
}

/** `git verify-pack` on every pack; returns how many entries are deltas. */
function verifyPacks(dir = dataDir): number {
  let deltas = 0
  for (const name of packNames(dir).filter((n) => n.endsWith('.idx'))) {
    const out = execFileSync(
      'git',
      ['verify-pack', '-v', path.join(gitdir(dir), 'objects', 'pack', name)],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    )
    // Delta entries list a depth and a base: "<id> <type> <size> <packed> <offset> <depth> <base>".
    deltas += out
      .split('\n')
      .filter((line) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line)).length
  }
  return deltas
}

/**
 * After a pass that stopped before removing everything: the history is whole (`git fsck`), a
 * fresh open recovers nothing, `ref` is still `head`, and its next pass removes every loose
 * object left, every read still equal to git's. Returns that pass's report.
 */
async function expectNextPassRemovesTheRest(ref: string, head: string): Promise<RepackReport> {
  fsck(dataDir)
  const reopened = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
  expect(reopened.recovery).toBeNull()
  expect(gitCli(dataDir, 'rev-parse', ref).trim()).toBe(head)
  const report = await reopened.maintain()
  expect(looseCount()).toBe(0)
  fsck(dataDir)
  await expectReadAtMatchesGit(reopened)
  await reopened.close()
  return report
}

/** For every commit and every file in it: Cairn's `readAt` equals `git show <commit>:<file>`. */
async function expectReadAtMatchesGit(memory: VersionedMemory, dir = dataDir): Promise<number> {
  const commits = gitCli(dir, 'rev-list', 'main').split('\n').filter(Boolean)
  const requests: Array<{ oid: string; file: string }> = []
  for (const oid of commits) {
    for (const file of gitCli(dir, 'ls-tree', '-r', '--name-only', '-z', oid)
      .split('\0')
      .filter(Boolean)) {
      requests.push({ oid, file })
    }
  }
  const out = execFileSync('git', ['--git-dir', gitdir(dir), 'cat-file', '--batch'], {
    input: requests.map((r) => `${r.oid}:${r.file}`).join('\n') + '\n',
    maxBuffer: 256 * 1024 * 1024,
  })
  let at = 0
  for (const request of requests) {
    const eol = out.indexOf(0x0a, at)
    const size = Number(out.toString('latin1', at, eol).split(' ')[2])
    const expected = out.toString('utf8', eol + 1, eol + 1 + size)
    at = eol + 1 + size + 1
    expect(await memory.readAt(`/memories/${request.file}`, request.oid)).toBe(expected)
  }
  return requests.length
}

describe('background maintenance', () => {
  it('packs loose objects into a pack git verifies, with deltas, and reads the same after', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 120)
    const before = allObjects()
    const report = await memory.maintain()
    expect(report.packed).toBe(before.length)
    expect(report.removedLoose).toBe(before.length)
    expect(looseCount()).toBe(0)
    expect(allObjects()).toEqual(before)
    expect(verifyPacks()).toBeGreaterThan(before.length / 2)
    fsck(dataDir)
    expect(await expectReadAtMatchesGit(memory)).toBeGreaterThan(500)
    await memory.close()
  })

  // 200 commands and two passes, each removal a thread-pool round trip: 16-21 s at
  // load 8-12, past 30 s at load 17-19 (other sessions on the 2 cores).
  it(
    'keeps the object folders it emptied, replacing one that grew by a fresh empty one',
    {
      timeout: 120_000,
    },
    async () => {
      const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
      await work(memory, 0, 120)
      const objectsDir = path.join(gitdir(), 'objects')
      const folders = () => readdirSync(objectsDir).filter((name) => /^[0-9a-f]{2}$/.test(name))
      const used = folders()
      expect(used.length).toBeGreaterThan(200)
      // One folder made to grow, as thousands of loose objects make them.
      const grown = used[0] as string
      growFolder(path.join(objectsDir, grown))
      expect(statSync(path.join(objectsDir, grown)).size).toBeGreaterThan(4096)
      const inodes = new Map(used.map((name) => [name, statSync(path.join(objectsDir, name)).ino]))

      await memory.maintain()
      expect(looseCount()).toBe(0)
      // Every folder is still there and small (the grown one, which ext4 never shrinks, so is a
      // new folder); the others are the same folders. The new one's inode number is not checked:
      // ext4 may give it the number the removed one had (an inode freed within the same second
      // does not count as recently deleted), which failed this test once under load.
      expect(folders()).toEqual(used)
      for (const name of used) {
        const stats = statSync(path.join(objectsDir, name))
        expect(stats.size).toBeLessThanOrEqual(4096)
        if (name !== grown) expect(stats.ino).toBe(inodes.get(name))
      }
      fsck(dataDir)

      // Commits after the pass write into the folders as they are, and into folders a kill
      // between a removal and its re-making left missing.
      for (const name of used.slice(1, 40)) rmdirSync(path.join(objectsDir, name))
      await work(memory, 120, 40)
      expect(looseCount()).toBeGreaterThan(100)
      fsck(dataDir)
      await expectReadAtMatchesGit(memory)
      await memory.close()
      const reopened = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
      expect(reopened.recovery).toBeNull()
      await work(reopened, 160, 40)
      await reopened.maintain()
      fsck(dataDir)
      await expectReadAtMatchesGit(reopened)
      await reopened.close()
    },
  )

  it('leaves a commit made while folders it re-made are not durable yet to the write-ahead log', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 60)
    const objectsDir = path.join(gitdir(), 'objects')
    // Every folder there (so no later commit makes one of its own), one of them grown.
    for (let i = 0; i < 256; i++) {
      mkdirSync(path.join(objectsDir, i.toString(16).padStart(2, '0')), { recursive: true })
    }
    const grown = readdirSync(objectsDir).find(
      (name) => /^[0-9a-f]{2}$/.test(name) && readdirSync(path.join(objectsDir, name)).length > 0,
    ) as string
    growFolder(path.join(objectsDir, grown))
    // Records fsyncs of objects/ itself, and holds the pass's one after it re-made the folders
    // (the checkpoint before the pass flushes objects/ too) until released.
    const folderFds = new Set<number>()
    let synced = 0
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    let passWaiting: () => void = () => undefined
    const waiting = new Promise<void>((resolve) => (passWaiting = resolve))
    let holding = false
    const restore = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        if (file === objectsDir && (flags & OPEN.DIRECTORY) !== 0) folderFds.add(fd)
        else folderFds.delete(fd)
        return fd
      },
      async fsync(fd) {
        await nodeDisk.fsync(fd)
        if (!folderFds.has(fd)) return
        synced++
        if (holding) {
          holding = false
          passWaiting()
          await held
        }
      },
    })
    try {
      const pass = memory.maintain({
        onStep(step) {
          if (step === 'removing-loose') holding = true
        },
      })
      await waiting
      expect(existsSync(path.join(objectsDir, grown))).toBe(true)
      // The folders were re-made and are not durable yet: a commit's objects go to the log
      // (written again at open, folder and all, if a power cut takes the folder), and the
      // command flushes no object folder.
      const before = synced
      await work(memory, 60, 1)
      expect(synced).toBe(before)
      const head = gitCli(dataDir, 'rev-parse', 'main').trim()
      const logged = LOG_FILES.flatMap((name) =>
        decodeRecords(readFileSync(path.join(gitdir(), name))).map(({ oid }) => oid),
      )
      expect(logged).toContain(head)
      release()
      await pass
    } finally {
      release()
      restore()
    }
    fsck(dataDir)
    await memory.close()
    // Closed: the log checkpointed, the folders durable.
    for (const name of LOG_FILES) expect(statSync(path.join(gitdir(), name)).size).toBe(0)
  })

  it('removes loose objects off the main thread: a command completes while an unlink is held', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 40)
    const gate = holdOnce()
    const report = await commitDuringHeldPass(
      memory,
      gate,
      {
        ...nodeDisk,
        promises: {
          ...nodeDisk.promises,
          async unlink(file) {
            // The first loose object's removal waits (a disk slow to discard what it frees).
            if (/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(file)) await gate.hold()
            return nodeDisk.promises.unlink(file)
          },
        },
      },
      'written while packing\n',
    )
    expect(report.removedLoose).toBeGreaterThan(100)
    await memory.close()
  })

  it("empties the log off the main thread: a command commits while a checkpoint's emptying is held", async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 5)
    const gate = holdOnce()
    // The pass checkpoints the log first, and waits on that emptying.
    await commitDuringHeldPass(
      memory,
      gate,
      {
        ...nodeDisk,
        async ftruncate(fd, length) {
          // The log's emptying waits (a disk slow to discard the blocks it frees).
          await gate.hold()
          return nodeDisk.ftruncate(fd, length)
        },
      },
      'written while emptying\n',
    )
    await memory.close()
    for (const name of LOG_FILES) expect(statSync(path.join(gitdir(), name)).size).toBe(0)
  })

  it('reads object folders, and loose objects once one read was slow, off the main thread: a command completes while one read is held', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 40)
    const held = {
      readdir: (file: string) => /objects\/[0-9a-f]{2}$/.test(file),
      readFile: (file: string) => /objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(file),
    }
    let from = 40
    let slowed = false
    let looseFd = -1
    for (const call of ['readdir', 'readFile'] as const) {
      await work(memory, from, 10)
      from += 10
      const gate = holdOnce()
      const report = await commitDuringHeldPass(
        memory,
        gate,
        {
          ...nodeDisk,
          openSync(file, flags, mode) {
            const fd = nodeDisk.openSync(file, flags, mode)
            looseFd = held.readFile(file) ? fd : -1
            return fd
          },
          readSync(fd, buffer, offset, length, position) {
            // The first loose object read on the main thread (opened, then read into the
            // scratch buffer) is slow (a busy disk): the walk's next reads go through the
            // thread pool. (A checkpoint's fsync of loose files opens them too, but reads none.)
            if (call === 'readFile' && fd === looseFd && !slowed) {
              slowed = true
              Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15)
            }
            return nodeDisk.readSync(fd, buffer, offset, length, position)
          },
          promises: {
            ...nodeDisk.promises,
            async readdir(file) {
              // The first object folder's listing waits (a disk busy with other work).
              if (call === 'readdir' && held.readdir(file)) await gate.hold()
              return nodeDisk.promises.readdir(file)
            },
            async readFile(file) {
              // The first loose object the pack walk reads waits.
              if (call === 'readFile' && held.readFile(file)) await gate.hold()
              return nodeDisk.promises.readFile(file)
            },
          },
        },
        `written while a ${call} was held\n`,
      )
      expect(report.packed).toBeGreaterThan(0)
      expect(looseCount()).toBeLessThanOrEqual(5)
    }
    await memory.close()
  })

  it('removes loose files in batches on a thread of its own, each batch once no command has run for quietMs', async () => {
    // More loose objects than one batch holds (256): a pass with fewer keeps the thread pool.
    const memory = await openForRemovals(200, 80)
    const before = allObjects()
    expect(before.length).toBeGreaterThan(256)
    const batches: number[] = []
    const unlink = spyOnBatches((paths) => batches.push(paths.length))
    let looseAtAnswer = -1
    let command: Promise<void> | null = null
    try {
      const report = await memory.maintain({
        onStep(step) {
          // A command arrives as the removals are about to start: they wait for it, then for
          // quietMs without one, so nothing is removed by the time it answers.
          if (step !== 'removing-loose') return
          command = memory
            .execute(
              { command: 'create', path: '/memories/arrived.md', file_text: 'arrived\n' },
              claude(2000),
            )
            .then(() => {
              looseAtAnswer = before.filter((oid) =>
                existsSync(path.join(gitdir(), 'objects', oid.slice(0, 2), oid.slice(2))),
              ).length
            })
        },
      })
      await command
      expect(looseAtAnswer).toBe(before.length)
      expect(report.removedLoose).toBe(before.length)
      // All of them on the thread, in full batches and the rest.
      expect(batches).toEqual([256, before.length - 256])
    } finally {
      unlink.mockRestore()
    }
    // The command's own objects are still loose (written after the pass listed them).
    expect(looseCount()).toBeLessThanOrEqual(5)
    expect(allObjects()).toEqual(expect.arrayContaining(before))
    fsck(dataDir)
    expect(gitCli(dataDir, 'show', 'HEAD:arrived.md')).toBe('arrived\n')
    await memory.close()
  })

  it('a close during a batch of removals ends the pass, closes the thread, and the next pass removes the rest', async () => {
    const memory = await openForRemovals(0, 80)
    const before = allObjects()
    const head = gitCli(dataDir, 'rev-parse', 'main').trim()
    let closing: Promise<void> | null = null
    let worker: UnlinkWorker | undefined
    // The history closes as the first batch is on its way to the thread.
    const unlink = spyOnBatches(() => (closing ??= memory.close()))
    const close = vi.spyOn(UnlinkWorker.prototype, 'close')
    try {
      // Ended by the close, the pass is refused as the memory's reads are after it.
      await expect(memory.maintain()).rejects.toMatchObject({
        code: 'closed',
        message: 'The memory folder is closed.',
      })
      await closing
      worker = unlink.mock.contexts[0] as UnlinkWorker | undefined
      expect(worker).toBeInstanceOf(UnlinkWorker)
      expect(close.mock.contexts).toContain(worker)
    } finally {
      unlink.mockRestore()
      close.mockRestore()
    }
    await expect((worker as unknown as UnlinkWorker).unlink([])).rejects.toThrow('closed')
    expect(allObjects()).toEqual(expect.arrayContaining(before))
    await expectNextPassRemovesTheRest('main', head)
    expect(allObjects()).toEqual(before)
  })

  it('a loose file the thread cannot unlink stays, is not counted, and the rest go', async () => {
    const memory = await openForRemovals(0, 80)
    const before = allObjects()
    const stuck = before[7]!
    const batches = vi.spyOn(UnlinkWorker.prototype, 'unlink')
    const stuckPath = path.join(gitdir(), 'objects', stuck.slice(0, 2), stuck.slice(2))
    const report = await memory.maintain({
      onStep(step) {
        // Once the pack is durable, the loose file turns into a folder with something in it:
        // its unlink fails (EISDIR), as one on a failing disk would.
        if (step !== 'pack-durable') return
        rmSync(stuckPath)
        mkdirSync(stuckPath)
        writeFileSync(path.join(stuckPath, 'inside'), '')
      },
    })
    expect(batches).toHaveBeenCalled()
    batches.mockRestore()
    expect(report.packed).toBe(before.length)
    expect(report.removedLoose).toBe(before.length - 1)
    expect(statSync(stuckPath).isDirectory()).toBe(true)
    rmSync(stuckPath, { recursive: true })
    expect(looseCount()).toBe(0)
    expect(allObjects()).toEqual(before)
    fsck(dataDir)
    await expectReadAtMatchesGit(memory)
    await memory.close()
  })

  it('removes one object at a time, each once no command has run for quietMs: the thread-pool path, taken while a test wraps the disk', async () => {
    const quietMs = 200
    const memory = await openForRemovals(quietMs, 40)
    let inFlight = 0
    let most = 0
    const starts: number[] = []
    const restore = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        async unlink(file) {
          if (!/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(file))
            return nodeDisk.promises.unlink(file)
          starts.push(performance.now())
          most = Math.max(most, ++inFlight)
          try {
            return await nodeDisk.promises.unlink(file)
          } finally {
            inFlight--
          }
        },
      },
    })
    let command: Promise<number> | null = null
    let sent = 0
    try {
      const report = await memory.maintain({
        onStep(step) {
          // A command arrives as the removals are about to start: they wait for it, then for
          // quietMs without one.
          if (step !== 'removing-loose') return
          sent = performance.now()
          command = memory
            .execute(
              { command: 'create', path: '/memories/arrived.md', file_text: 'arrived\n' },
              claude(2000),
            )
            .then(() => performance.now())
        },
      })
      expect(command).not.toBeNull()
      const answered = await (command as unknown as Promise<number>)
      expect(report.removedLoose).toBeGreaterThan(100)
      expect(starts).toHaveLength(report.removedLoose)
      expect(most).toBe(1)
      // Removal is ordering, not speed: the first unlink started after the command answered,
      // and quietMs after the command ended inside the core — which lies between its sending
      // and its answer reaching this test (a busy machine delays the latter by milliseconds, so
      // the quiet time is counted from the sending, which comes before the core's end).
      expect(Math.min(...starts)).toBeGreaterThan(answered)
      expect(Math.min(...starts) - sent).toBeGreaterThanOrEqual(quietMs)
    } finally {
      restore()
    }
    fsck(dataDir)
    expect(gitCli(dataDir, 'show', 'HEAD:arrived.md')).toBe('arrived\n')
    await memory.close()
  })

  it('a close while removals wait for quiet ends the pass at once, losing nothing', async () => {
    // Removals would wait an hour after the command below.
    const memory = await openForRemovals(3_600_000, 40)
    const before = allObjects()
    const head = gitCli(dataDir, 'rev-parse', 'main').trim()
    let reached: () => void = () => undefined
    const removing = new Promise<void>((resolve) => (reached = resolve))
    const pass = memory.maintain({
      onStep(step) {
        if (step === 'removing-loose') reached()
      },
    })
    const ended = pass.then(
      () => null,
      (error: unknown) => error,
    )
    await removing
    await memory.execute(
      { command: 'create', path: '/memories/last.md', file_text: 'last\n' },
      claude(3000),
    )
    await memory.close()
    expect(await ended).toMatchObject({ code: 'closed', message: 'The memory folder is closed.' })
    // Everything is there, twice over (packed, and still loose), and the next pass tidies up.
    expect(allObjects()).toEqual(expect.arrayContaining(before))
    expect(looseCount()).toBeGreaterThan(before.length / 2)
    const report = await expectNextPassRemovesTheRest('main^', head)
    expect(report.removedLoose).toBeGreaterThan(before.length / 2)
  })

  it('stops removing for the pass when a transfer waits for the pack folder; the next pass removes the rest', async () => {
    const memory = await openForRemovals(0, 40)
    const before = allObjects()
    let transfer: Promise<string> | null = null
    const report = await memory.maintain({
      onStep(step) {
        // A fetch asks for the folder just as the removals are about to start.
        if (step === 'removing-loose') transfer = memory.git.transfer(async () => 'fetched')
      },
    })
    expect(await (transfer as unknown as Promise<string>)).toBe('fetched')
    expect(report.packed).toBe(before.length)
    expect(report.removedLoose).toBe(0)
    expect(looseCount()).toBe(before.length)
    fsck(dataDir)
    const next = await memory.maintain()
    expect(next.removedLoose).toBe(before.length)
    expect(looseCount()).toBe(0)
    expect(allObjects()).toEqual(before)
    fsck(dataDir)
    await memory.close()
  })

  // A whole maintenance pass beside commands and restores: 32–46 s at load 15–17 on two shared
  // cores (clean-clone CIs beside other work), past the default 30 s.
  it('interleaved with commands and restores keeps fsck clean and every readAt equal to git show', async () => {
    const memory = await openVersionedMemory({
      dataDir,
      now,
      watch: false,
      // Packs itself every few commands and yields at every step: the most interleaving.
      maintenance: { looseThreshold: 12, sliceMs: 0, idleMs: 50, idleMinimum: 1 },
    })
    await work(memory, 0, 30)
    for (let round = 0; round < 6; round++) {
      const pass = memory.maintain()
      const log = await memory.log({ offset: 0, limit: 40 })
      const older = log.entries[Math.min(10, log.entries.length - 1)]!.oid
      await Promise.all([
        work(memory, 30 + round * 12, 12),
        memory.restoreAll(older).catch(() => undefined),
        memory.revert(log.entries[2]!.oid).catch(() => undefined),
        memory.restoreFile('/memories/area-1/note-1.md', older).catch(() => undefined),
        memory.restoreDeleted('/memories/area-2/note-2.md').catch(() => undefined),
      ])
      await pass
      fsck(dataDir)
    }
    await memory.maintain()
    fsck(dataDir)
    expect(verifyPacks()).toBeGreaterThan(0)
    expect(packNames().filter((n) => n.endsWith('.pack')).length).toBeLessThanOrEqual(4)
    await expectReadAtMatchesGit(memory)
    await memory.close()

    // And the same after a fresh open, reading from the packs only.
    const reopened = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(reopened.recovery).toBeNull()
    await expectReadAtMatchesGit(reopened)
    await reopened.close()
  }, 120_000)

  it('keeps unreachable objects, and leaves a damaged loose object where it is', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 10)
    const stray = execFileSync('git', ['--git-dir', gitdir(), 'hash-object', '-w', '--stdin'], {
      input: 'written, never committed\n',
      encoding: 'utf8',
    }).trim()
    const damaged = path.join(gitdir(), 'objects', 'ab', 'c'.repeat(38))
    mkdirSync(path.dirname(damaged), { recursive: true })
    writeFileSync(damaged, 'not zlib at all')
    const report = await memory.maintain()
    expect(report.unreadable).toEqual([`ab${'c'.repeat(38)}`])
    expect(existsSync(damaged)).toBe(true)
    expect(gitCli(dataDir, 'cat-file', '-p', stray)).toBe('written, never committed\n')
    await memory.close()
  })

  it('folds small packs into bigger ones so their number stays small', async () => {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (let round = 0; round < 10; round++) {
      await work(memory, round * 8, 8)
      await memory.maintain()
    }
    const packs = packNames().filter((n) => n.endsWith('.pack'))
    expect(packs.length).toBeLessThanOrEqual(4)
    await memory.maintain({ mergeAll: true })
    expect(packNames().filter((n) => n.endsWith('.pack'))).toHaveLength(1)
    fsck(dataDir)
    await expectReadAtMatchesGit(memory)
    await memory.close()
  })

  it('works on top of packs git gc made (REF_DELTA ones too)', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 40)
    await memory.close()
    gitCli(dataDir, 'gc', '-q')
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 40, 30)
    await memory.close()
    gitCli(dataDir, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-d', '-q')
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    await work(memory, 70, 20)
    await expectReadAtMatchesGit(memory)
    await memory.maintain({ mergeAll: true })
    expect(looseCount()).toBe(0)
    fsck(dataDir)
    await expectReadAtMatchesGit(memory)
    await memory.close()
  })
})

describe('temp files of interrupted object writes', () => {
  it('a pass removes those a minute old, which an open after a clean close leaves to it', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 20)
    await memory.close()
    const dir = path.join(gitdir(), 'objects', 'ab')
    mkdirSync(dir, { recursive: true })
    const stale = path.join(dir, 'tmp_obj_stale1')
    const fresh = path.join(dir, 'tmp_obj_fresh1')
    writeFileSync(stale, 'x')
    writeFileSync(fresh, 'y')
    const old = new Date(Date.now() - 5 * 60_000)
    utimesSync(stale, old, old)
    // No crash (the lock was released): open does not look for them.
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(existsSync(stale)).toBe(true)
    await memory.maintain()
    await memory.close()
    expect(existsSync(stale)).toBe(false)
    // One being written right now (by a git command, say) is left alone.
    expect(existsSync(fresh)).toBe(true)
    fsck(dataDir)
  })
})

// The crash tests' child (test/stress/crash-child.ts), in its one-maintenance-pass mode.
const child = path.resolve('test/stress/crash-child.ts')

/** Runs the crash child on `dir`; kills it with SIGKILL at `step` or after `afterMs`. */
function runChild(dir: string, stop: { step?: string; afterMs?: number }, mergeAll = false) {
  return new Promise<{ killed: boolean; output: string }>((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', child, 'maintain', dir, stop.step ?? ''],
      {
        env: { ...process.env, CAIRN_MERGE_ALL: mergeAll ? '1' : '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    let errors = ''
    let timer: NodeJS.Timeout | null = null
    proc.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (stop.step && output.includes(`step ${stop.step}\n`)) proc.kill('SIGKILL')
      if (stop.afterMs !== undefined && !timer && output.includes('opened\n')) {
        timer = setTimeout(() => proc.kill('SIGKILL'), stop.afterMs)
      }
    })
    proc.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    proc.on('error', reject)
    proc.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer)
      if (signal === 'SIGKILL') resolve({ killed: true, output })
      else if (code === 0) resolve({ killed: false, output })
      else reject(new Error(`crash child failed (${code}): ${errors}`))
    })
  })
}

describe('a kill during packing', () => {
  const steps = [
    'listed',
    'writing',
    'index-durable',
    'pack-renamed',
    'pack-durable',
    'removing-loose',
    'removing-packs',
    'done',
  ]

  /** A history with one pack and loose objects on top, so a full pass both packs and merges. */
  async function seed(): Promise<{ objects: string[]; head: string; log: string }> {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 0, 60)
    await memory.maintain()
    await work(memory, 60, 60)
    await memory.close()
    return {
      objects: allObjects(),
      head: gitCli(dataDir, 'rev-parse', 'main').trim(),
      log: gitCli(dataDir, 'log', '--format=%H %s'),
    }
  }

  async function expectNothingLost(
    dir: string,
    before: { objects: string[]; head: string; log: string },
  ) {
    expect(allObjects(dir)).toEqual(before.objects)
    fsck(dir)
    // Cairn opens it as it was, and a full pass afterwards leaves one tidy pack.
    const memory = await openVersionedMemory({
      dataDir: dir,
      now,
      watch: false,
      maintenance: false,
    })
    expect(memory.recovery).toBeNull()
    expect(gitCli(dir, 'rev-parse', 'main').trim()).toBe(before.head)
    await memory.maintain({ mergeAll: true })
    await memory.close()
    expect(allObjects(dir)).toEqual(before.objects)
    expect(looseCount(dir)).toBe(0)
    expect(packNames(dir).filter((n) => !/^pack-[0-9a-f]{40}\.(pack|idx)$/.test(n))).toEqual([])
    expect(gitCli(dir, 'log', '--format=%H %s')).toBe(before.log)
    fsck(dir)
  }

  // Copies go beside the seeded data folder, inside the test's temp folder.
  let root: string
  beforeEach(() => {
    root = dataDir
    dataDir = path.join(root, 'seed')
  })

  /** A copy of the seeded folder (`copy-<name>`) whose full pass was killed at `step`. */
  async function killedCopy(step: string, name: string = step): Promise<string> {
    const dir = path.join(root, `copy-${name}`)
    cpSync(dataDir, dir, { recursive: true })
    const result = await runChild(dir, { step }, true)
    expect(result.killed, `killed at ${step}`).toBe(true)
    expect(result.output).toContain(`step ${step}`)
    return dir
  }

  /** Opens `dir` as the app does after the kill (finding nothing to recover), then closes it. */
  async function openAfterKill(dir: string): Promise<void> {
    const memory = await openVersionedMemory({
      dataDir: dir,
      now,
      watch: false,
      maintenance: false,
    })
    expect(memory.recovery).toBeNull()
    await memory.close()
  }

  /** The new pack a kill between the two renames left without its index. */
  function waitingPack(dir: string): string {
    const names = packNames(dir)
    const waiting = names.filter(
      (name) => name.endsWith('.pack') && !names.includes(name.replace(/\.pack$/, '.idx')),
    )
    expect(waiting.length).toBe(1)
    expect(names.some((name) => name.startsWith('tmp_idx_'))).toBe(true)
    return waiting[0] as string
  }

  // Eight kills, each a child process (a tsx start, then a full pass up to the step) and then
  // an open and a full pass of the copy it left, with git's fsck twice: about 113 s of 120 at
  // load 6 on the shared 2-core machine, past 120 above load 10. Given the time that takes
  // rather than fewer steps: each step is a different state of the folders to recover from.
  it('at every step loses nothing', { timeout: 400_000 }, async () => {
    const before = await seed()
    for (const step of steps) await expectNothingLost(await killedCopy(step), before)
  })

  it(
    'between the unlinks of a folded pack: the next open removes the rest, and files nothing as damaged',
    { timeout: 120_000 },
    async () => {
      const before = await seed()
      const folded = packNames()
        .filter((name) => name.endsWith('.pack'))
        .map((name) => name.slice(0, -'.pack'.length))
      expect(folded.length).toBe(1)
      const dir = await killedCopy('pack-unindexed', 'unindexed')
      // What the kill left: the folded pack without its index (every object of it is in the
      // new pack), marked as folded.
      const left = packNames(dir).filter((name) => name.startsWith(`${folded[0]}.`))
      expect(left).toContain(`${folded[0]}.pack`)
      expect(left).not.toContain(`${folded[0]}.idx`)

      await openAfterKill(dir)
      expect(packNames(dir).filter((name) => name.startsWith(`${folded[0]}.`))).toEqual([])
      expect(existsSync(path.join(gitdir(dir), 'cairn-damaged'))).toBe(false)
      await expectNothingLost(dir, before)
    },
  )

  it(
    'between the renames of a new pack and of its index: the next open finishes the write, filing nothing as damaged',
    { timeout: 120_000 },
    async () => {
      const before = await seed()
      const dir = await killedCopy('pack-renamed', 'half-installed')
      // What the kill left: the new pack under its name, its index still under a temp name.
      const idx = waitingPack(dir).replace(/\.pack$/, '.idx')

      await openAfterKill(dir)
      expect(packNames(dir)).toContain(idx)
      expect(packNames(dir).filter((name) => name.startsWith('tmp_'))).toEqual([])
      expect(existsSync(path.join(gitdir(dir), 'cairn-damaged'))).toBe(false)
      // git reads the finished pack as its own.
      execFileSync('git', ['verify-pack', path.join(gitdir(dir), 'objects', 'pack', idx)])
      await expectNothingLost(dir, before)
    },
  )

  it(
    "between the renames, an index under its temp name that is torn, damaged or not the pack's is not installed: the pack's index is built again from the pack",
    { timeout: 180_000 },
    async () => {
      const before = await seed()
      const killed = await killedCopy('pack-renamed', 'killed')
      const packDir = (dir: string) => path.join(gitdir(dir), 'objects', 'pack')
      const waiting = waitingPack(killed)
      const temp = packNames(killed).find((name) => name.startsWith('tmp_idx_')) as string
      const older = packNames().find((name) => name.endsWith('.idx')) as string
      const spoilers: Record<string, (file: string) => void> = {
        // Cut short, as a write stopped part way leaves it.
        torn: (file) => truncateSync(file, statSync(file).size - 9),
        // One bit of an object name flipped: its own checksum no longer holds.
        damaged: (file) => {
          const bytes = readFileSync(file)
          bytes[8 + 1024 + 5]! ^= 0x10
          writeFileSync(file, bytes)
        },
        // A whole index of the older pack: it names that pack, not this one.
        other: (file) => writeFileSync(file, readFileSync(path.join(packDir(dataDir), older))),
        // The older pack's index made to name this pack (its checksum made to hold again):
        // whole, but it lists another pack's objects (its count is not this pack's).
        renamed: (file) => {
          const bytes = readFileSync(path.join(packDir(dataDir), older))
          Buffer.from(waiting.slice('pack-'.length, -'.pack'.length), 'hex').copy(
            bytes,
            bytes.length - 40,
          )
          createHash('sha1')
            .update(bytes.subarray(0, bytes.length - 20))
            .digest()
            .copy(bytes, bytes.length - 20)
          writeFileSync(file, bytes)
        },
      }
      for (const [how, spoil] of Object.entries(spoilers)) {
        const dir = path.join(root, `copy-${how}`)
        cpSync(killed, dir, { recursive: true })
        chmodSync(path.join(packDir(dir), temp), 0o644)
        spoil(path.join(packDir(dir), temp))
        await openAfterKill(dir)
        // The pack is whole (fsynced before its rename): indexed from itself (hist33b), where
        // it was filed as damage before; the spoiled temp index is removed as any temp file.
        expect(packNames(dir), how).toContain(waiting.replace(/\.pack$/, '.idx'))
        expect(
          packNames(dir).filter((name) => name.startsWith('tmp_')),
          how,
        ).toEqual([])
        expect(existsSync(path.join(gitdir(dir), 'cairn-damaged')), how).toBe(false)
        // Its objects were still loose: nothing is lost.
        expect(allObjects(dir), how).toEqual(before.objects)
        fsck(dir)
      }

      // The pack folder is listed once when no index was renamed into place, twice when one was.
      for (const [how, installs] of [
        ['torn', false],
        ['as written', true],
      ] as const) {
        const dir = path.join(root, `copy-listed-${how}`)
        cpSync(killed, dir, { recursive: true })
        if (!installs) {
          chmodSync(path.join(packDir(dir), temp), 0o644)
          spoilers.torn!(path.join(packDir(dir), temp))
        }
        let listings = 0
        const hooked = hookDisk(nodeDisk, (call) => {
          if (call.name === 'readdirSync' && call.args[0] === packDir(dir)) listings++
        })
        const restore = setDisk(hooked.disk)
        try {
          removePackLeftovers(packDir(dir))
        } finally {
          restore()
        }
        expect(listings, how).toBe(installs ? 2 : 1)
        expect(packNames(dir).includes(waiting.replace(/\.pack$/, '.idx')), how).toBe(installs)
      }
    },
  )

  it('a pack whose index is missing for no fold is still filed under cairn-damaged/', async () => {
    const before = await seed()
    const pack = packNames().find((name) => name.endsWith('.pack')) as string
    const stray = `pack-${'ab'.repeat(20)}.pack`
    const packDir = path.join(gitdir(), 'objects', 'pack')
    copyFileSync(path.join(packDir, pack), path.join(packDir, stray))
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await memory.close()
    expect(packNames()).not.toContain(stray)
    expect(readdirSync(path.join(gitdir(), 'cairn-damaged'))).toEqual([stray])
    expect(allObjects()).toEqual(before.objects)
  })

  it('at random moments loses nothing', { timeout: 120_000 }, async () => {
    const before = await seed()
    const finished = await runChild(path.join(dataDir), {}, true).then(() => null)
    expect(finished).toBeNull()
    // The pass above packed everything; make loose objects again for the kills to interrupt.
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await work(memory, 120, 80)
    await memory.close()
    const state = {
      objects: allObjects(),
      head: gitCli(dataDir, 'rev-parse', 'main').trim(),
      log: gitCli(dataDir, 'log', '--format=%H %s'),
    }
    expect(state.head).not.toBe(before.head)
    for (const delay of [0, 15, 40, 80, 150]) {
      const dir = path.join(root, `copy-${delay}`)
      cpSync(dataDir, dir, { recursive: true })
      await runChild(dir, { afterMs: delay }, true)
      await expectNothingLost(dir, state)
    }
  })
})

describe('the pack folder gate between maintenance and transfers', () => {
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

  it('holds a maintenance step while a transfer runs, and a transfer while a step runs', async () => {
    const gate = new PackFolderGate()
    const events: string[] = []
    let endTransfer!: () => void
    const transfer = gate.transfer(async () => {
      events.push('transfer')
      await new Promise<void>((resolve) => (endTransfer = resolve))
      events.push('transfer done')
    })
    const step = gate.change(async () => {
      events.push('step')
      await tick()
      events.push('step done')
    })
    for (let i = 0; i < 5; i++) await tick()
    expect(events).toEqual(['transfer'])
    expect(gate.busy()).toBe(true)
    endTransfer()
    await transfer
    // The step now runs; a transfer asked for meanwhile waits for it to finish.
    const second = gate.transfer(async () => void events.push('second transfer'))
    await Promise.all([step, second])
    expect(events).toEqual(['transfer', 'transfer done', 'step', 'step done', 'second transfer'])
  })

  it('lets a waiting step give up when maintenance stops', async () => {
    const gate = new PackFolderGate()
    let endTransfer!: () => void
    const transfer = gate.transfer(() => new Promise<void>((resolve) => (endTransfer = resolve)))
    let stopped = false
    const step = gate.change(
      async () => 'ran',
      () => stopped,
    )
    await tick()
    stopped = true
    gate.wake()
    await expect(step).rejects.toBeInstanceOf(RepackAborted)
    endTransfer()
    await transfer
  })
})

/**
 * Holds one disk call: the first `hold()` waits until `release()` (later ones pass), and
 * `reached` resolves once it is waiting.
 */
function holdOnce(): { hold(): Promise<void>; release(): void; reached: Promise<void> } {
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => (release = resolve))
  let arrived: () => void = () => undefined
  const reached = new Promise<void>((resolve) => (arrived = resolve))
  let first = true
  return {
    reached,
    release: () => release(),
    async hold() {
      if (!first) return
      first = false
      arrived()
      await held
    },
  }
}

/**
 * Runs a maintenance pass on `held` (whose held call waits on `gate`) and checks that a command
 * still runs, commits and answers while the pass waits: `text` is then in HEAD, and the
 * history passes fsck. Returns the pass's report.
 */
async function commitDuringHeldPass(
  memory: VersionedMemory,
  gate: ReturnType<typeof holdOnce>,
  held: Disk,
  text: string,
): Promise<Awaited<ReturnType<VersionedMemory['maintain']>>> {
  const restore = setDisk(held)
  let report: Awaited<ReturnType<VersionedMemory['maintain']>>
  try {
    const pass = memory.maintain()
    await gate.reached
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/during.md', file_text: text },
      claude(1000),
    )
    expect(outcome.commit).toBeTruthy()
    gate.release()
    report = await pass
  } finally {
    gate.release()
    restore()
  }
  fsck(dataDir)
  expect(gitCli(dataDir, 'show', 'HEAD:during.md')).toBe(text)
  return report
}
