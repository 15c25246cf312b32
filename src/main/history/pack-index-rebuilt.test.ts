import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk, type Disk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { indexFromPack } from './objects/index-pack'
import {
  CLAUDE,
  gitCli,
  headFiles,
  folderFiles,
  leftoverTempFiles,
  tempDataDir,
} from './test-helpers'

// After a person's `git gc`, a pack's `.idx` zeroed, cut short or lost left every object of
// the pack reading as missing, and open set the whole history aside (a fresh one started from
// the files). The index is now built again from the pack itself: the history kept, every
// version readable, the damaged index kept in cairn-damaged/, git's own checks clean.

let dir: string
let cleanup: () => Promise<void>
beforeEach(async () => ({ dir, cleanup } = await tempDataDir()))
afterEach(() => cleanup())

const gitdir = () => path.join(dir, 'history.git')
const packDir = () => path.join(gitdir(), 'objects', 'pack')

/** A history of some versions of files that git packs as deltas of each other. */
async function seed(): Promise<void> {
  let time = 1_700_000_000_000
  const memory = await openVersionedMemory({
    dataDir: dir,
    watch: false,
    now: () => (time += 1000),
    logger: createRecordingLogger(),
  })
  const run = async (input: Record<string, unknown>) => {
    const result = await memory.execute(input, CLAUDE)
    expect(result.isError, String(result.content)).toBe(false)
  }
  const body = Array.from({ length: 60 }, (_, i) => `line ${i}: some notes worth keeping`)
  await run({ command: 'create', path: '/memories/notes.md', file_text: body.join('\n') })
  for (let i = 0; i < 6; i++) {
    await run({
      command: 'str_replace',
      path: '/memories/notes.md',
      old_str: `line ${i * 7}:`,
      new_str: `line ${i * 7} (edited):`,
    })
  }
  await run({ command: 'create', path: '/memories/dir/a.md', file_text: 'a\n' })
  await run({ command: 'create', path: '/memories/old.md', file_text: 'only in the past\n' })
  await run({ command: 'delete', path: '/memories/old.md' })
  await memory.close()
}

/** The one pack `git gc` left, and its index's bytes as git wrote them. */
function gc(...config: string[]): { name: string; idx: string; original: Buffer } {
  gitCli(dir, ...config, 'gc', '--quiet', '--prune=now')
  const file = fs.readdirSync(packDir()).find((n) => n.endsWith('.idx'))!
  const idx = path.join(packDir(), file)
  return { name: file.slice(0, -4), idx, original: fs.readFileSync(idx) }
}

function git(...args: string[]): { status: number | null; out: string } {
  const run = spawnSync('git', ['--git-dir', gitdir(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: dir },
  })
  return { status: run.status, out: run.stdout + run.stderr }
}

const DAMAGES: ReadonlyArray<{
  readonly name: string
  readonly damage: (idx: string) => void
  /** Told as a repair: a missing index is what a kill between a pack's renames leaves. */
  readonly keptAside: boolean
}> = [
  {
    name: 'zeroed',
    damage: (idx) => fs.writeFileSync(idx, Buffer.alloc(fs.statSync(idx).size)),
    keptAside: true,
  },
  {
    name: 'cut short',
    damage: (idx) => fs.truncateSync(idx, Math.floor(fs.statSync(idx).size / 2)),
    keptAside: true,
  },
  { name: 'missing', damage: (idx) => fs.rmSync(idx), keptAside: false },
  // hist34: a sound header over a damaged body opened, its damage found one lookup at a time.
  ...(['names', 'CRC-32s', 'offsets', 'own checksum'] as const).map((table) => ({
    name: `sound in its header but damaged in its ${table}`,
    damage: (idx: string) => flipByte(idx, bodyByte(fs.readFileSync(idx), table)),
    keptAside: true,
  })),
]

/** Where in a version 2 index (of at least two objects) a byte of `table` lies. */
function bodyByte(idx: Buffer, table: 'names' | 'CRC-32s' | 'offsets' | 'own checksum'): number {
  const count = idx.readUInt32BE(8 + 255 * 4)
  const names = 8 + 1024
  if (table === 'names') return names + 20 + 7
  if (table === 'CRC-32s') return names + count * 20 + 4 + 1
  if (table === 'offsets') return names + count * 24 + 4 + 3
  return idx.length - 1
}

function flipByte(file: string, at: number): void {
  const bytes = fs.readFileSync(file)
  bytes[at] = bytes[at]! ^ 0x40
  fs.writeFileSync(file, bytes)
}

describe('a pack index lost or damaged after git gc', () => {
  for (const { name, damage, keptAside } of DAMAGES) {
    it(`is built again from its pack when ${name}: the history kept, git's checks clean`, async () => {
      await seed()
      const commits = gitCli(dir, 'rev-list', 'main').trim().split('\n')
      const before = await folderFiles(dir)
      const pack = gc()
      expect(git('count-objects', '-v').out).toMatch(/^count: 0$/m)
      fs.chmodSync(pack.idx, 0o644)
      damage(pack.idx)

      const memory = await openVersionedMemory({
        dataDir: dir,
        watch: false,
        logger: createRecordingLogger(),
      })
      try {
        // Not set aside: the same history, every commit of it, every version readable.
        expect(fs.readdirSync(dir).filter((n) => n.startsWith('history.git.'))).toEqual([])
        if (keptAside) {
          expect(memory.recovery?.kind).toBe('history-repaired')
          expect(memory.recovery?.message).toMatch(/rebuilt from the stored versions/)
          expect(memory.recovery?.message).not.toContain(dir)
        } else expect(memory.recovery).toBeNull()
        const log = await memory.log({ offset: 0, limit: 100 })
        expect(log.entries.map((entry) => entry.oid)).toEqual(commits)
        for (const oid of commits) {
          const listed = gitCli(dir, 'ls-tree', '-r', '--name-only', oid).trim().split('\n')
          for (const file of listed.filter(Boolean)) {
            expect(await memory.readAt(`/memories/${file}`, oid)).toBe(
              gitCli(dir, 'show', `${oid}:${file}`),
            )
          }
        }
        const next = await memory.execute(
          { command: 'create', path: '/memories/after.md', file_text: 'after\n' },
          CLAUDE,
        )
        expect(next.isError, String(next.content)).toBe(false)
      } finally {
        await memory.close()
      }
      // The index as git wrote it, byte for byte; the damaged one kept, never deleted.
      expect(fs.readFileSync(pack.idx).equals(pack.original)).toBe(true)
      const damaged = path.join(gitdir(), 'cairn-damaged')
      const kept = fs.existsSync(damaged) ? fs.readdirSync(damaged) : []
      expect(kept).toEqual(keptAside ? [`${pack.name}.idx`] : [])
      expect(headFiles(dir)).toEqual(await folderFiles(dir))
      expect([...(await folderFiles(dir)).keys()]).toEqual([...before.keys(), 'after.md'].sort())
      expect(leftoverTempFiles(dir)).toEqual([])
      const verify = git('verify-pack', pack.idx)
      expect(verify.out).toBe('')
      expect(verify.status).toBe(0)
      const fsck = git('fsck', '--strict', '--no-dangling')
      expect(fsck.out).toBe('')
      expect(fsck.status).toBe(0)
    }, 120_000)
  }

  // hist34: open built a lost index again, but a maintenance pass that found a pack without
  // its index moved the pack into cairn-damaged/, its objects gone from the history.
  it('is built again by a maintenance pass when lost between open and the pass', async () => {
    await seed()
    const commits = gitCli(dir, 'rev-list', 'main').trim().split('\n')
    const pack = gc()
    const logger = createRecordingLogger()
    const memory = await openVersionedMemory({
      dataDir: dir,
      watch: false,
      maintenance: false,
      logger,
    })
    try {
      fs.chmodSync(pack.idx, 0o644)
      fs.rmSync(pack.idx)
      await memory.maintain()
      expect(fs.readFileSync(pack.idx).equals(pack.original)).toBe(true)
      // Told as open tells it (mendX: the pass rebuilt it without a word).
      const name = path.basename(pack.idx, '.idx')
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: `History maintenance: the index of ${name} was built again from its pack`,
        }),
      )
      expect(fs.existsSync(path.join(gitdir(), 'cairn-damaged'))).toBe(false)
      for (const oid of commits) {
        const listed = gitCli(dir, 'ls-tree', '-r', '--name-only', oid).trim().split('\n')
        for (const file of listed.filter(Boolean)) {
          expect(await memory.readAt(`/memories/${file}`, oid)).toBe(
            gitCli(dir, 'show', `${oid}:${file}`),
          )
        }
      }
    } finally {
      await memory.close()
    }
    expect(leftoverTempFiles(dir)).toEqual([])
    const fsck = git('fsck', '--strict', '--no-dangling')
    expect(fsck.out).toBe('')
    expect(fsck.status).toBe(0)
  }, 120_000)

  /** Opens the history with `disk` in place of the real one for the open only. */
  async function openOn(disk: Disk): Promise<VersionedMemory> {
    const restore = setDisk(disk)
    try {
      return await openVersionedMemory({
        dataDir: dir,
        watch: false,
        logger: createRecordingLogger(),
      })
    } finally {
      restore()
    }
  }

  /**
   * A person's repack caught half-way: a second pack holding every object (another checksum),
   * the old pack's index deleted and its pack not yet. Returns the old pack's name and a disk
   * on which the person's `git gc` deletes that pack just before Cairn opens it (how many
   * times it did so: `removed`).
   */
  function repackCaughtHalfWay() {
    const old = gc()
    gitCli(dir, '-c', 'pack.compression=0', 'repack', '-a', '-F', '--quiet')
    expect(fs.readdirSync(packDir()).filter((n) => n.endsWith('.idx'))).toHaveLength(2)
    const pack = path.join(packDir(), `${old.name}.pack`)
    const state = { removed: 0 }
    const gcDisk = hookDisk(nodeDisk, (call) => {
      const file = call.args[0]
      if (call.name !== 'openSync' || typeof file !== 'string') return undefined
      if (path.basename(file) !== path.basename(pack) || !fs.existsSync(file)) return undefined
      fs.rmSync(file)
      state.removed++
      return undefined
    }).disk
    const loseIndex = () => {
      fs.chmodSync(old.idx, 0o644)
      fs.rmSync(old.idx)
    }
    return { old, pack, state, gcDisk, loseIndex }
  }

  /** Every version of every file reads as git shows it; nothing kept aside, git's checks clean. */
  async function expectWhole(memory: VersionedMemory, commits: ReadonlyArray<string>) {
    for (const oid of commits) {
      const listed = gitCli(dir, 'ls-tree', '-r', '--name-only', oid).trim().split('\n')
      for (const file of listed.filter(Boolean)) {
        expect(await memory.readAt(`/memories/${file}`, oid)).toBe(
          gitCli(dir, 'show', `${oid}:${file}`),
        )
      }
    }
    expect(fs.existsSync(path.join(gitdir(), 'cairn-damaged'))).toBe(false)
    const fsck = git('fsck', '--strict', '--no-dangling')
    expect(fsck.out).toBe('')
    expect(fsck.status).toBe(0)
  }

  // rhist34: the pass listed a pack without its index, then built the index from the pack; a
  // pack gone in between (a person's `git gc` deleting it, its index first) threw ENOENT, with
  // the pack's host path, out of the rebuild, and the whole pass failed.
  it('goes on when a pack without its index is gone before the pass rebuilds it', async () => {
    await seed()
    const commits = gitCli(dir, 'rev-list', 'main').trim().split('\n')
    const { pack, state, gcDisk, loseIndex } = repackCaughtHalfWay()
    const memory = await openVersionedMemory({
      dataDir: dir,
      watch: false,
      maintenance: false,
      logger: createRecordingLogger(),
    })
    const restore = setDisk(gcDisk)
    try {
      loseIndex()
      await memory.maintain()
      expect(state.removed).toBe(1)
      expect(fs.existsSync(pack)).toBe(false)
      await expectWhole(memory, commits)
    } finally {
      restore()
      await memory.close()
    }
    expect(leftoverTempFiles(dir)).toEqual([])
  }, 120_000)

  // rhist34: the same at open, where the ENOENT failed the open of the history.
  it('opens the history whole when a pack without its index is gone before open rebuilds it', async () => {
    await seed()
    const commits = gitCli(dir, 'rev-list', 'main').trim().split('\n')
    const { pack, state, gcDisk, loseIndex } = repackCaughtHalfWay()
    loseIndex()
    const memory = await openOn(gcDisk)
    try {
      expect(state.removed).toBe(1)
      expect(fs.existsSync(pack)).toBe(false)
      expect(memory.recovery).toBeNull()
      expect(fs.readdirSync(dir).filter((n) => n.startsWith('history.git.'))).toEqual([])
      await expectWhole(memory, commits)
    } finally {
      await memory.close()
    }
  }, 120_000)

  it('hashes each index once: one remembered as sound by its stamp is not read again', async () => {
    await seed()
    const pack = gc()
    const open = () =>
      openVersionedMemory({ dataDir: dir, watch: false, logger: createRecordingLogger() })
    await (await open()).close()
    const record = path.join(gitdir(), 'cairn-idx-checked')
    const stamp = (idx: string) => {
      const stats = fs.statSync(idx)
      return `${stats.size} ${stats.mtimeMs} ${stats.ctimeMs}`
    }
    expect(fs.readFileSync(record, 'utf8')).toBe(`${pack.name} ${stamp(pack.idx)}\n`)
    // The record stands for the check: an index it vouches for (by its stamp now) is not read.
    fs.chmodSync(pack.idx, 0o644)
    flipByte(pack.idx, bodyByte(pack.original, 'own checksum'))
    fs.writeFileSync(record, `${pack.name} ${stamp(pack.idx)}\n`)
    const trusted = await open()
    expect(trusted.recovery).toBeNull()
    await trusted.close()
    // A garbled record is none: the index is hashed again, found damaged and rebuilt.
    fs.writeFileSync(record, `${pack.name} not a stamp\n`)
    const checked = await open()
    expect(checked.recovery?.kind).toBe('history-repaired')
    await checked.close()
    expect(fs.readFileSync(pack.idx).equals(pack.original)).toBe(true)
    expect(fs.readdirSync(path.join(gitdir(), 'cairn-damaged'))).toEqual([`${pack.name}.idx`])
  }, 120_000)

  it('opens as before when the disk fails to give an index for its check, and checks it next time', async () => {
    await seed()
    const pack = gc()
    // The pack's first open of its index goes through; the check's read of it fails (EIO).
    let opens = 0
    const memory = await openOn(
      hookDisk(nodeDisk, (call) => {
        if (call.name !== 'openSync' || call.args[0] !== pack.idx) return undefined
        return ++opens === 2
          ? Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })
          : undefined
      }).disk,
    )
    expect(opens).toBeGreaterThanOrEqual(2)
    expect(memory.recovery).toBeNull()
    expect(await memory.readAt('/memories/dir/a.md', memory.head()!)).toBe('a\n')
    await memory.close()
    const record = path.join(gitdir(), 'cairn-idx-checked')
    expect(fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : '').toBe('')
    await (
      await openVersionedMemory({ dataDir: dir, watch: false, logger: createRecordingLogger() })
    ).close()
    expect(fs.readFileSync(record, 'utf8')).toMatch(new RegExp(`^${pack.name} `))
    expect(fs.existsSync(path.join(gitdir(), 'cairn-damaged'))).toBe(false)
  }, 120_000)

  it('resolves REF_DELTA entries (a pack written without offset deltas)', async () => {
    await seed()
    const pack = gc('-c', 'repack.useDeltaBaseOffset=false')
    const listing = git('verify-pack', '-v', pack.idx).out
    // Deltas there are: each against its base by name.
    expect(listing).toMatch(/ blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}/)
    expect((await indexFromPack(pack.idx.replace(/\.idx$/, '.pack'))).equals(pack.original)).toBe(
      true,
    )
  }, 60_000)

  it('keeps a pack that is not whole aside, as before (nothing can index it)', async () => {
    await seed()
    const pack = gc()
    const packFile = pack.idx.replace(/\.idx$/, '.pack')
    fs.chmodSync(packFile, 0o644)
    fs.truncateSync(packFile, fs.statSync(packFile).size - 30)
    fs.rmSync(pack.idx)
    await expect(indexFromPack(packFile)).rejects.toThrow(/checksum|cut short/)
    const memory = await openVersionedMemory({
      dataDir: dir,
      watch: false,
      logger: createRecordingLogger(),
    })
    await memory.close()
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('history.git.'))).toHaveLength(1)
  }, 60_000)
})
