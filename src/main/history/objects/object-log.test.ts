import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  appendFileSync,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  statSync,
  truncateSync,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, OPEN, setDisk } from '../../lib/disk'
import { openedOn } from '../../lib/disk-hooks'
import { createRecordingLogger } from '../../lib/logger'
import { createObjectStore, initRepository, type ObjectStore } from '../object-store'
import { fsck, tempDataDir } from '../test-helpers'
import {
  AFTER_COMMAND_MS,
  CHECKPOINT_RECORDS,
  COMMANDS_PAUSED_MS,
  decodeRecords,
  encodeRecord,
  GAP_RECORDS,
  LOG_CAP_BYTES,
  LOG_CAP_RECORDS,
  LOG_FILES,
  MAX_LOGGED_OBJECTS,
  YIELD_BYTES,
  YIELD_RECORDS,
  type Commands,
} from './object-log'
import { deflateSync } from 'node:zlib'

// The write-ahead log of a commit's objects (docs/durability.md, "Cost"), on a real bare
// repository: what a flush appends, what a checkpoint makes durable and empties, what open
// replays after the loose files were lost, and where a torn log stops.

let dataDir: string
let cleanup: () => Promise<void>
let gitdir: string
const opened: ObjectStore[] = []
let restoreDisk: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
})

afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  for (const store of opened.splice(0)) store.close()
  await cleanup()
})

async function openStore(): Promise<ObjectStore> {
  const store = createObjectStore(gitdir)
  opened.push(store)
  await store.openLog()
  return store
}

/** Records the path of every file or folder `fsync`ed from now on (until `restoreDisk`). */
function recordFsyncs(): string[] {
  const synced: string[] = []
  restoreDisk = setDisk({
    ...nodeDisk,
    async fsync(fd) {
      synced.push(readlinkSync(`/proc/self/fd/${fd}`))
      await nodeDisk.fsync(fd)
    },
  })
  return synced
}

/** Writes `count` blobs (`<tag> n`) and flushes them as one batch; returns their ids. */
async function writeBlobs(store: ObjectStore, tag: string, count: number): Promise<string[]> {
  const oids: string[] = []
  for (let n = 0; n < count; n++) {
    oids.push(await store.write('blob', Buffer.from(`${tag} ${n}\n`)))
  }
  await store.flush()
  return oids
}

const logPath = (n: 0 | 1) => path.join(gitdir, LOG_FILES[n])
const loosePath = (oid: string) => path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))
const logged = (n: 0 | 1) => decodeRecords(readFileSync(logPath(n))).map(({ oid }) => oid)

/** A dropped store, as a crash leaves it: its log's records stay, no checkpoint runs. */
function crash(store: ObjectStore): void {
  store.close()
  opened.splice(opened.indexOf(store), 1)
}

/** What a power cut may leave of a loose file that was never fsynced. */
async function lose(oid: string, how: 'missing' | 'empty' | 'cut' | 'zeroed'): Promise<void> {
  const file = loosePath(oid)
  if (how === 'missing') return rm(file)
  const size = statSync(file).size
  if (how === 'empty') return truncateSync(file, 0)
  if (how === 'cut') return truncateSync(file, Math.floor(size / 2))
  truncateSync(file, 0)
  truncateSync(file, size)
}

describe('records', () => {
  const stored = (text: string) => deflateSync(Buffer.from(`blob ${text.length}\0${text}`))
  const store = () => createObjectStore(gitdir)

  it('are read back up to the first that does not check, and nothing after it', () => {
    const s = store()
    const a = s.hash('blob', Buffer.from('one'))
    const b = s.hash('blob', Buffer.from('two'))
    s.close()
    const good = [encodeRecord(a, stored('one')), encodeRecord(b, stored('two'))]
    expect(decodeRecords(Buffer.concat(good)).map(({ oid }) => oid)).toEqual([a, b])
    // A record cut in half, garbage, zeros: the records before them only.
    const whole = Buffer.concat(good)
    expect(decodeRecords(whole.subarray(0, whole.length - 3)).map(({ oid }) => oid)).toEqual([a])
    const garbage = Buffer.concat([
      good[0]!,
      Buffer.from('garbage after the first record'),
      good[1]!,
    ])
    expect(decodeRecords(garbage).map(({ oid }) => oid)).toEqual([a])
    expect(decodeRecords(Buffer.concat([Buffer.alloc(64), ...good]))).toEqual([])
    // Bytes that inflate well but are not the object the record names.
    const lying = encodeRecord(a, stored('two'))
    expect(decodeRecords(Buffer.concat([lying, good[1]!]))).toEqual([])
  })
})

describe('the write-ahead log', () => {
  it('is made at open, with its name flushed, and a clean history holds it empty', async () => {
    const synced = recordFsyncs()
    await openStore()
    restoreDisk?.()
    restoreDisk = null
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    expect(synced).toContain(gitdir)
  })

  it("takes a commit's objects with one fsync of the log and none of their files", async () => {
    const store = await openStore()
    for (const oid of await writeBlobs(store, 'warm', 2))
      expect(store.looseStat(oid)).not.toBeNull()
    const synced = recordFsyncs()
    const oids = await writeBlobs(store, 'batch', 4)
    expect(synced).toEqual([logPath(0)])
    expect(logged(0)).toEqual(expect.arrayContaining(oids))
  })

  it('flushes a larger batch file by file, leaving the log alone', async () => {
    const store = await openStore()
    const synced = recordFsyncs()
    const oids = await writeBlobs(store, 'large', MAX_LOGGED_OBJECTS + 1)
    expect(
      synced.filter((file) => file.includes('/tmp_obj_') || /[0-9a-f]{38}/.test(file)).length,
    ).toBe(oids.length)
    expect(synced).not.toContain(logPath(0))
    expect(statSync(logPath(0)).size).toBe(0)
  })

  it('checkpoints: every logged file, its folder and objects/ flushed, then the log emptied', async () => {
    const store = await openStore()
    const oids = await writeBlobs(store, 'cp', 6)
    const synced: string[] = []
    restoreDisk = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        const file = readlinkSync(`/proc/self/fd/${fd}`)
        await nodeDisk.fsync(fd)
        synced.push(file)
      },
      async ftruncate(fd, length) {
        synced.push(`emptied ${readlinkSync(`/proc/self/fd/${fd}`)}`)
        await nodeDisk.ftruncate(fd, length)
      },
    })
    await store.checkpoint()
    const emptied = synced.indexOf(`emptied ${logPath(0)}`)
    expect(emptied).toBeGreaterThan(-1)
    // Emptied only once every file, its folder and objects/ were flushed.
    for (const flushed of [
      ...oids.map(loosePath),
      ...oids.map((oid) => path.dirname(loosePath(oid))),
      path.join(gitdir, 'objects'),
    ]) {
      expect(synced.indexOf(flushed)).toBeGreaterThan(-1)
      expect(synced.indexOf(flushed)).toBeLessThan(emptied)
    }
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
  })

  it('keeps the records of objects flushed while a checkpoint runs', async () => {
    const store = await openStore()
    const before = await writeBlobs(store, 'before', 3)
    // The checkpoint's flushes of the loose files wait until released.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding = 0
    restoreDisk = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        if (/[0-9a-f]{38}$/.test(readlinkSync(`/proc/self/fd/${fd}`))) {
          holding++
          await held
        }
        await nodeDisk.fsync(fd)
      },
    })
    const checkpoint = store.checkpoint()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(holding).toBeGreaterThan(0)
    const during = await writeBlobs(store, 'during', 3)
    release()
    await checkpoint
    restoreDisk()
    restoreDisk = null
    // The first file was emptied; the records made meanwhile are in the other one.
    expect(statSync(logPath(0)).size).toBe(0)
    expect(logged(1)).toEqual(during)
    // They still count: a power cut now loses their loose files, and open brings them back.
    crash(store)
    for (const oid of during) await lose(oid, 'missing')
    const reopened = await openStore()
    for (const oid of [...before, ...during]) expect(await reopened.isIntact(oid)).toBe(true)
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
  })

  for (const how of ['missing', 'empty', 'cut', 'zeroed'] as const) {
    it(`brings back at open the logged objects a power cut left ${how}, and empties the log`, async () => {
      const store = await openStore()
      const oids = [...(await writeBlobs(store, 'a', 3)), ...(await writeBlobs(store, 'b', 2))]
      crash(store)
      for (const oid of oids) await lose(oid, how)
      const reopened = await openStore()
      for (const oid of oids) {
        expect(await reopened.isIntact(oid)).toBe(true)
        expect(Buffer.from(await reopened.readBlob(oid)).toString()).toMatch(/^[ab] \d\n$/)
      }
      for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    })
  }

  it('brings back lost object folders too', async () => {
    const store = await openStore()
    const oids = await writeBlobs(store, 'folder', 3)
    crash(store)
    for (const oid of oids)
      await rm(path.dirname(loosePath(oid)), { recursive: true, force: true, maxRetries: 10 })
    const reopened = await openStore()
    for (const oid of oids) expect(await reopened.isIntact(oid)).toBe(true)
  })

  it('cuts a torn tail: the records before it are used, nothing after', async () => {
    const store = await openStore()
    const kept = await writeBlobs(store, 'kept', 2)
    const torn = await writeBlobs(store, 'torn', 1)
    crash(store)
    // The last record cut in half, then garbage as a power cut may leave past it.
    const size = statSync(logPath(0)).size
    truncateSync(logPath(0), size - 10)
    appendFileSync(logPath(0), Buffer.from('\x00\x00\x01\x00not a record at all'))
    for (const oid of [...kept, ...torn]) await lose(oid, 'missing')
    const reopened = await openStore()
    for (const oid of kept) expect(await reopened.isIntact(oid)).toBe(true)
    expect(await reopened.isIntact(torn[0]!)).toBe(false)
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
  })

  it('makes a failed append take its file out of use until a checkpoint empties it', async () => {
    const store = await openStore()
    restoreDisk = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        if (readlinkSync(`/proc/self/fd/${fd}`).includes('cairn-wal-')) {
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
        }
        await nodeDisk.fsync(fd)
      },
    })
    await expect(writeBlobs(store, 'fails', 2)).rejects.toThrow(/EIO/)
    restoreDisk()
    restoreDisk = null
    await store.checkpoint()
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    // Logged again afterwards.
    const oids = await writeBlobs(store, 'after', 2)
    expect([...logged(0), ...logged(1)]).toEqual(oids)
  })

  it('opens without waiting for the fsync of its empty files, and appends nothing before it', async () => {
    // The fsyncs of the log files are held (the first one fails) until released.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const logSyncs: string[] = []
    restoreDisk = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        const name = readlinkSync(`/proc/self/fd/${fd}`)
        if (name.includes('cairn-wal-')) {
          const nth = logSyncs.push(name)
          await held
          if (nth === 1) throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
        }
        await nodeDisk.fsync(fd)
      },
    })
    // Resolves with both fsyncs still held.
    const store = await openStore()
    expect(logSyncs.sort()).toEqual([logPath(0), logPath(1)])
    let settled = false
    const first = writeBlobs(store, 'first', 2).finally(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(settled).toBe(false)
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    // The failed fsync fails the append before it counted or wrote anything ...
    release()
    await expect(first).rejects.toThrow(/EIO/)
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    // ... and the next one makes the files' emptiness durable again first, then logs.
    const oids = await writeBlobs(store, 'second', 2)
    expect(logSyncs.filter((name) => name === logPath(0)).length).toBeGreaterThanOrEqual(2)
    expect(logSyncs.filter((name) => name === logPath(1)).length).toBeGreaterThanOrEqual(2)
    expect(logged(0)).toEqual(oids)
  })

  it('keeps its files open under an emptying in flight when closed, and closes them after', async () => {
    const store = await openStore()
    await writeBlobs(store, 'held', 2)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let emptying!: (fd: number) => void
    const started = new Promise<number>((resolve) => (emptying = resolve))
    restoreDisk = setDisk({
      ...nodeDisk,
      async ftruncate(fd, length) {
        emptying(fd)
        await held
        await nodeDisk.ftruncate(fd, length)
      },
    })
    const checkpoint = store.checkpoint()
    const fd = await started
    crash(store)
    // Still the log's file: a descriptor closed now could name another file by the time the
    // pool thread empties it.
    expect(readlinkSync(`/proc/self/fd/${fd}`)).toBe(logPath(0))
    release()
    await checkpoint
    expect(statSync(logPath(0)).size).toBe(0)
    let now: string | null = null
    try {
      now = readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      // Closed.
    }
    expect(now).not.toBe(logPath(0))
  })

  it('closes its files once, though a checkpoint that lost the folder closed it first', async () => {
    const logFiles = openedOn((file) => file.includes('cairn-wal-'))
    restoreDisk = setDisk(logFiles.disk)
    let owned = true
    const store = createObjectStore(gitdir)
    opened.push(store)
    await store.openLog({ owns: () => owned })
    restoreDisk()
    restoreDisk = null
    const fds = [...logFiles.opened]
    expect(fds.length).toBeGreaterThan(0)
    await writeBlobs(store, 'lost', 2)
    // Another instance took the folder over: the checkpoint leaves its files and closes them.
    owned = false
    await store.checkpoint()
    expect(logged(0).length).toBe(2)
    // Their numbers go to unrelated files, which the store's own close must leave open.
    const others: number[] = []
    for (let n = 0; n < 64 && !fds.every((fd) => others.includes(fd)); n++) {
      others.push(openSync(logPath(1), 'r'))
    }
    expect(others).toEqual(expect.arrayContaining(fds))
    crash(store)
    for (const fd of others) expect(() => fstatSync(fd)).not.toThrow()
    for (const fd of others) closeSync(fd)
  })

  it("never writes over a second instance's records from a stale one: appends land at the end", async () => {
    // The first instance logged a small batch; its lock was removed by hand and a second one
    // opened (replaying and emptying the log), checkpointed, and logged a larger batch into
    // the file the first still appends to.
    const first = await openStore()
    const mine = await writeBlobs(first, 'stale', 1)
    const second = await openStore()
    await writeBlobs(second, 'other', 1)
    await second.checkpoint()
    const theirs = await writeBlobs(second, `acknowledged ${'x'.repeat(200)}`, 4)
    expect(logged(0)).toEqual(theirs)
    // The first's next append, at what it took for the end of its file, was inside them.
    const late = await writeBlobs(first, 'late', 1)
    expect(logged(0)).toEqual([...theirs, ...late])
    // A power cut: every record the second was acknowledged for still brings its object back.
    crash(first)
    crash(second)
    for (const oid of [...theirs, ...late]) await lose(oid, 'missing')
    const reopened = await openStore()
    for (const oid of [...mine, ...theirs, ...late]) expect(await reopened.isIntact(oid)).toBe(true)
  })

  it('writes again a damaged loose copy beside a pack that holds the object', async () => {
    const store = await openStore()
    const oids = await writeBlobs(store, 'packed', 2)
    crash(store)
    // Maintenance packed them, then a power cut lost its removals of the loose files and
    // their data (never fsynced): zeroed files beside a pack, their records still logged.
    execFileSync('git', ['pack-objects', '-q', path.join(gitdir, 'objects', 'pack', 'pack')], {
      cwd: gitdir,
      input: `${oids.join('\n')}\n`,
      env: { ...process.env, GIT_DIR: gitdir },
    })
    for (const oid of oids) await lose(oid, 'zeroed')
    const reopened = await openStore()
    expect(() => fsck(dataDir)).not.toThrow()
    for (const oid of oids) expect(reopened.db.readLoose(oid)).not.toBeNull()
  })

  it('backs off while checkpoints fail, warns once, and past its cap flushes file by file', async () => {
    const logger = createRecordingLogger()
    const store = createObjectStore(gitdir)
    opened.push(store)
    await store.openLog({ logger })
    // A checkpoint's fsync of a logged file (opened again by name, read-only) fails with EIO;
    // every attempt on the first such file is one round.
    let failing = true
    let first: string | null = null
    let rounds = 0
    const reopened = new Set<number>()
    restoreDisk = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        if (
          /\/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(file) &&
          flags === (OPEN.READ | OPEN.NOFOLLOW)
        ) {
          reopened.add(fd)
          first ??= file
          if (file === first) rounds++
        } else reopened.delete(fd)
        return fd
      },
      async fsync(fd) {
        if (failing && reopened.has(fd)) {
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
        }
        await nodeDisk.fsync(fd)
      },
    })
    // Batches past the checkpoint bound, each of which used to queue another full round.
    const batches = CHECKPOINT_RECORDS / MAX_LOGGED_OBJECTS + 16
    for (let n = 0; n < batches; n++) await writeBlobs(store, `bound ${n}`, MAX_LOGGED_OBJECTS)
    // Runs after every round queued so far: one that started, at most one queued, and the
    // retries of the back-off timer (1.5 s, then 3 s, 6 s ...) rather than one per batch.
    await expect(store.checkpoint()).rejects.toThrow(/EIO/)
    expect(rounds).toBeGreaterThan(1)
    expect(rounds).toBeLessThanOrEqual(6)
    await expect(store.checkpoint()).rejects.toThrow(/EIO/)
    expect(logger.entries.filter(({ level }) => level === 'warn')).toHaveLength(1)
    // Past the cap the log takes no more records: a batch is flushed file by file.
    // Counted as they go (reading the files back each time made this quadratic in the cap).
    let held = logged(0).length + logged(1).length
    while (held < LOG_CAP_RECORDS) {
      await writeBlobs(store, `cap ${held}`, MAX_LOGGED_OBJECTS)
      held += MAX_LOGGED_OBJECTS
    }
    expect(logged(0).length + logged(1).length).toBe(held)
    await writeBlobs(store, 'past the cap', 2)
    expect(logged(0).length + logged(1).length).toBe(held)
    // Once a checkpoint succeeds, the log is emptied and takes records again.
    failing = false
    await store.checkpoint()
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    const oids = await writeBlobs(store, 'again', 2)
    expect([...logged(0), ...logged(1)]).toEqual(oids)
  })
})

// A background checkpoint yields to commands (docs/durability.md, "Cost"): the history's serial
// queue, faked here, tells whether a command runs and when it has returned.
describe('a checkpoint beside commands', () => {
  /**
   * A queue with one command running until `returns` is called; `parked` counts the calls
   * of `idle()`: a checkpoint makes one each time it stops to wait for the command.
   */
  function runningCommand(): Commands & { returns(): void; readonly parked: number } {
    let busy = true
    let parked = 0
    let returned!: () => void
    const idle = new Promise<void>((resolve) => (returned = resolve))
    return {
      busy: () => busy,
      idle: () => {
        parked++
        return idle
      },
      // Returned long ago once it has: the checkpoint then goes on at once.
      lastActive: () => (busy ? performance.now() : -Infinity),
      returns() {
        busy = false
        returned()
      },
      get parked() {
        return parked
      },
    }
  }

  /** Resolves once a checkpoint has stopped to wait for `command` (more than `before` times). */
  async function parkedOn(command: { readonly parked: number }, before = 0): Promise<void> {
    await vi.waitFor(() => expect(command.parked).toBeGreaterThan(before), { timeout: 20_000 })
  }

  /** The loose object files, object folders and `objects/` `fsync`ed from now on. */
  function recordObjectFsyncs(): string[] {
    const synced: string[] = []
    restoreDisk = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        const file = readlinkSync(`/proc/self/fd/${fd}`)
        if (file.startsWith(path.join(gitdir, 'objects'))) synced.push(file)
        await nodeDisk.fsync(fd)
      },
    })
    return synced
  }

  it('starts no fsync while a command runs, and goes on once it has returned', async () => {
    const store = await openStore()
    const command = runningCommand()
    store.yieldCheckpointsTo(command)
    const synced = recordObjectFsyncs()
    // The record bound reached while the command runs: the checkpoint starts and yields.
    let oids: string[] = []
    for (let n = 0; n < CHECKPOINT_RECORDS / MAX_LOGGED_OBJECTS; n++) {
      oids = [...oids, ...(await writeBlobs(store, `bound ${n}`, MAX_LOGGED_OBJECTS))]
    }
    // Parked before its first fsync (without yielding it never asks, and this times out).
    await parkedOn(command)
    expect(synced).toEqual([])
    // The command's own appends still go to the log (the other file), fsynced at once.
    const during = await writeBlobs(store, 'during', 2)
    expect(synced).toEqual([])
    expect(logged(0).length).toBe(CHECKPOINT_RECORDS)
    command.returns()
    // Waits for the round in progress: it went on and emptied its file.
    await store.checkpoint()
    for (const oid of oids) expect(synced).toContain(loosePath(oid))
    expect(synced).toContain(path.join(gitdir, 'objects'))
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    for (const oid of [...oids, ...during]) expect(await store.isIntact(oid)).toBe(true)
  })

  /**
   * Commands run by `run`, the last of which returned `ago` milliseconds before each look,
   * unless the checkpoint stopped to wait for it (`idle()` while it ran): the wake on its
   * append let it follow the command, and its next `window` looks see it just returned (the
   * `fsync`s that fit in the moment after a command, without a clock in the test).
   */
  function spacedCommands(
    store: ObjectStore,
    window: number,
  ): { ago: number; looks: number; run(tag: string, count: number): Promise<string[]> } {
    let running = false
    let returned = () => {}
    let idle = Promise.resolve()
    let followed = 0
    const commands = {
      ago: (AFTER_COMMAND_MS + COMMANDS_PAUSED_MS) / 2,
      looks: 0,
      async run(tag: string, count: number) {
        running = true
        followed = 0
        idle = new Promise<void>((resolve) => (returned = resolve))
        try {
          return await writeBlobs(store, tag, count)
        } finally {
          running = false
          returned()
        }
      },
    }
    store.yieldCheckpointsTo({
      busy: () => running,
      idle: () => {
        if (running) followed = window
        return idle
      },
      lastActive: () => {
        commands.looks++
        if (running) return performance.now()
        if (followed > 0) {
          followed--
          return performance.now()
        }
        return performance.now() - commands.ago
      },
    })
    return commands
  }

  it('between commands, starts its fsyncs only right after one returned or once they pause', async () => {
    const store = await openStore()
    // No command runs; the last returned `ago` milliseconds before each look.
    const commands = spacedCommands(store, Infinity)
    const synced = recordObjectFsyncs()
    // The record bound reached in the gap: the checkpoint starts, and waits for the pause.
    let oids: string[] = []
    for (let n = 0; n < CHECKPOINT_RECORDS / MAX_LOGGED_OBJECTS; n++) {
      oids = [...oids, ...(await writeBlobs(store, `gap ${n}`, MAX_LOGGED_OBJECTS))]
    }
    // It looks again when the pause would have come (still a gap), and starts nothing.
    await vi.waitFor(() => expect(commands.looks).toBeGreaterThan(3), { timeout: 20_000 })
    expect(synced).toEqual([])
    expect(logged(0).length).toBe(CHECKPOINT_RECORDS)
    // A command: its append wakes the checkpoint, which waits for it to return and goes on
    // right after (a timer's look would still see the gap), and empties the file.
    await commands.run('next command', 1)
    await vi.waitFor(() => expect(logged(0)).toEqual([]), { timeout: 20_000 })
    for (const oid of oids) expect(synced).toContain(loosePath(oid))
    // The next one waits in the gap again, and goes on once the commands have paused.
    const more = await commands.run('gap again', 3)
    const checkpoint = store.checkpoint({ yields: true })
    const seen = commands.looks
    await vi.waitFor(() => expect(commands.looks).toBeGreaterThan(seen + 2), { timeout: 20_000 })
    for (const oid of more) expect(synced).not.toContain(loosePath(oid))
    commands.ago = COMMANDS_PAUSED_MS + 1
    await checkpoint
    for (const oid of more) expect(synced).toContain(loosePath(oid))
  })

  it('takes the gaps again once it falls behind commands spaced in them', async () => {
    const store = await openStore()
    // A slow disk: one `fsync` fits in the moment after each command, which adds sixteen.
    const commands = spacedCommands(store, 1)
    let written = 0
    while (written < 3 * CHECKPOINT_RECORDS) {
      await commands.run(`spaced ${written}`, MAX_LOGGED_OBJECTS / 2)
      written += MAX_LOGGED_OBJECTS / 2
    }
    // The commands go on coming in the gap (never a pause), the log holds more than twice
    // what starts a checkpoint and less than the yield bound: the checkpoint goes on in the
    // gap, and the log drops below twice a checkpoint's worth.
    expect(written).toBeLessThan(YIELD_RECORDS)
    await vi.waitFor(() => expect(logged(0).length + logged(1).length).toBeLessThan(GAP_RECORDS), {
      timeout: 60_000,
    })
    await store.checkpoint()
    expect(logged(0).length + logged(1).length).toBe(0)
  }, 120_000)

  it('never yields when a caller waits for it (a command flushing, close)', async () => {
    const store = await openStore()
    // A command that never returns: an awaited checkpoint must not wait for it.
    const command = runningCommand()
    store.yieldCheckpointsTo(command)
    const oids = await writeBlobs(store, 'awaited', 3)
    const synced = recordObjectFsyncs()
    await store.checkpoint()
    for (const oid of oids) expect(synced).toContain(loosePath(oid))
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
    // One yielding (maintenance's, before a pass) is woken by one awaited after it.
    const more = await writeBlobs(store, 'woken', 3)
    const parked = command.parked
    const yielding = store.checkpoint({ yields: true })
    await parkedOn(command, parked)
    for (const oid of more) expect(synced).not.toContain(loosePath(oid))
    await store.checkpoint()
    await yielding
    for (const oid of more) expect(synced).toContain(loosePath(oid))
  })

  it('stops yielding once the log holds its yield bound, so commands never fill it to its cap', async () => {
    const store = await openStore()
    const command = runningCommand()
    store.yieldCheckpointsTo(command)
    const synced = recordObjectFsyncs()
    let held = 0
    while (held < YIELD_RECORDS) {
      await writeBlobs(store, `busy ${held}`, MAX_LOGGED_OBJECTS)
      held += MAX_LOGGED_OBJECTS
    }
    // No command ever returns: the checkpoint goes on beside them, and empties a file.
    await vi.waitFor(() => expect(logged(0).length + logged(1).length).toBeLessThan(held), {
      timeout: 60_000,
    })
    expect(synced.length).toBeGreaterThan(0)
    expect(held).toBeLessThan(LOG_CAP_RECORDS)
    command.returns()
    await store.checkpoint()
  }, 120_000)

  it('stops yielding at a quarter of the byte cap too: large files fill it in a few records', async () => {
    const store = await openStore()
    const command = runningCommand()
    store.yieldCheckpointsTo(command)
    const synced = recordFsyncs()
    // Loose files and their folders (a logged batch fsyncs none of them).
    const objectFile = (file: string) =>
      file.startsWith(`${path.join(gitdir, 'objects')}${path.sep}`)
    const held = () => statSync(logPath(0)).size + statSync(logPath(1)).size
    // A large memory file per command (random: its loose file is as large), none returning.
    let records = 0
    while (held() < YIELD_BYTES) {
      const before = synced.length
      await store.write('blob', randomBytes(900 * 1024))
      await store.flush()
      records++
      // Logged: the log's fsync, and (below the bound, the checkpoint parked) no object file's.
      const flushed = synced.slice(before)
      expect(flushed.some((file) => file.includes('cairn-wal-'))).toBe(true)
      if (held() < YIELD_BYTES) expect(flushed.filter(objectFile)).toEqual([])
    }
    expect(records).toBeLessThan(YIELD_RECORDS / 100)
    // The checkpoint goes on beside the commands, and empties a file, long before the cap
    // (16 MiB, some 19 such records), past which each would be flushed file by file.
    const full = held()
    await vi.waitFor(() => expect(held()).toBeLessThan(full), { timeout: 60_000 })
    expect(synced.filter(objectFile).length).toBeGreaterThan(0)
    expect(full).toBeLessThan(LOG_CAP_BYTES)
    command.returns()
    await store.checkpoint()
  }, 120_000)

  it('loses nothing when the process dies while a checkpoint yields', async () => {
    const store = await openStore()
    const command = runningCommand()
    store.yieldCheckpointsTo(command)
    let oids: string[] = []
    for (let n = 0; n < CHECKPOINT_RECORDS / MAX_LOGGED_OBJECTS; n++) {
      oids = [...oids, ...(await writeBlobs(store, `killed ${n}`, MAX_LOGGED_OBJECTS))]
    }
    const after = await writeBlobs(store, 'after', 2)
    await parkedOn(command)
    // Killed: the loose files never reached the disk (a power cut before their write-back).
    crash(store)
    for (const oid of [...oids, ...after]) await lose(oid, 'missing')
    const reopened = await openStore()
    for (const oid of [...oids, ...after]) expect(await reopened.isIntact(oid)).toBe(true)
    for (const n of [0, 1] as const) expect(statSync(logPath(n)).size).toBe(0)
  })
})
