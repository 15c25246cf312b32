import { existsSync, lstatSync, readFileSync, utimesSync, writeFileSync, type Stats } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openRepo } from './open-repo'
import {
  sameLoose,
  STAT_CACHE_LAYOUT as LAYOUT,
  StatCache,
  statCacheOf,
  type KeptTree,
  type LooseStamp,
} from './stat-cache'
import { crc32 } from './objects/crc32'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  sorted,
  tempDataDir,
} from './test-helpers'
import { openVersionedMemory } from './versioned-memory'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const memories = () => path.join(dataDir, 'memories')
/** Ten seconds ago: far enough back that a file's stat can be trusted. */
const past = () => new Date(Date.now() - 10_000)
/** A loose file's stamp as an `lstat` would give it (`size` bytes). */
const stamp = (size: number): LooseStamp => ({
  size,
  ino: 4242 + size,
  ctimeMs: 1_700_000_000_123.456,
  mtimeMs: 1_700_000_000_000.5,
})

/** The bytes of the folder record at `at` of a saved file: its fixed part, path and key. */
function folderBytes(raw: Buffer, at: number): number {
  const { folder } = LAYOUT
  return (
    folder.bytes +
    raw.readUInt32LE(at + folder.pathLength) +
    raw.readUInt32LE(at + folder.keyLength)
  )
}

/** `body` with its CRC-32 after it, as `save` writes the file. */
function withSum(body: Buffer): Buffer {
  const sum = Buffer.alloc(LAYOUT.sum)
  sum.writeUInt32LE(crc32(body) >>> 0, 0)
  return Buffer.concat([body, sum])
}

async function put(relative: string, content: string, when = past()): Promise<void> {
  const file = path.join(memories(), relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, content)
  utimesSync(file, when, when)
}

async function reopen() {
  const { repo, recovery } = await openRepo({ dataDir, now })
  repo.stats.save()
  return { repo, recovery }
}

describe('checking the folder at open by stat', () => {
  it('hashes every file once, then only the files that changed', async () => {
    for (let i = 0; i < 40; i++) await put(`d${i % 4}/note-${i}.md`, `note ${i}`)
    const first = await reopen()
    expect(first.repo.stats.hashed).toBe(40)
    expect(existsSync(statCacheOf(path.join(dataDir, 'history.git')))).toBe(true)

    const second = await reopen()
    expect(second.recovery).toBeNull()
    expect(second.repo.stats.hashed).toBe(0)
    expect(second.repo.stats.trusted).toBe(40)

    // Same size, new content: the mtime tells.
    await put('d1/note-1.md', 'NOTE 1', new Date(Date.now() - 5_000))
    await rm(path.join(memories(), 'd2', 'note-2.md'))
    await put('d3/new.md', 'new')
    const third = await reopen()
    expect(third.recovery?.kind).toBe('outside-changes')
    expect(third.repo.stats.hashed).toBe(2)
    expect(third.repo.index.all().at(-1)?.files).toEqual([
      '/memories/d1/note-1.md',
      '/memories/d2/note-2.md',
      '/memories/d3/new.md',
    ])
    expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
    fsck(dataDir)
  })

  it('catches an edit that kept the size and the mtime (the ctime moved)', async () => {
    await put('a.md', 'aaaa')
    await reopen()
    const before = past()
    await put('a.md', 'bbbb', before)
    // Put the mtime back exactly: only ctime (which no one can set) shows the write.
    utimesSync(path.join(memories(), 'a.md'), before, before)
    const { repo, recovery } = await reopen()
    expect(recovery?.kind).toBe('outside-changes')
    expect(repo.stats.hashed).toBe(1)
    expect(headFiles(dataDir).get('a.md')).toBe('bbbb')
  })

  it('hashes again a file modified right when it was last hashed (racily clean)', async () => {
    await put('a.md', 'one', new Date())
    await reopen()
    const { repo } = await reopen()
    expect(repo.stats.hashed).toBe(1)
    expect(commitCount(dataDir)).toBe(1)
  })

  it('works without the cache file (everything hashed once)', async () => {
    for (let i = 0; i < 5; i++) await put(`n-${i}.md`, `${i}`)
    await reopen()
    await rm(statCacheOf(path.join(dataDir, 'history.git')))
    const { repo, recovery } = await reopen()
    expect(recovery).toBeNull()
    expect(repo.stats.hashed).toBe(5)
  })
})

describe("the folder's totals for the Memory tool's limits", () => {
  it('come from the commits, with no walk, and follow every kind of change', async () => {
    await put('outside.md', 'written before Cairn started')
    await put('.hidden/x.md', 'not counted')
    const memory = await openVersionedMemory({
      dataDir,
      now,
      watch: false,
      limits: { maxFiles: 3 },
    })
    const claude = { actor: 'claude', conversationId: 'c', toolUseId: 't' } as const
    const create = (file: string) =>
      memory.execute({ command: 'create', path: `/memories/${file}`, file_text: 'x' }, claude)
    expect((await create('a.md')).isError).toBe(false)
    expect((await create('b.md')).isError).toBe(false)
    const refused = await create('c.md')
    expect(refused.isError).toBe(true)
    expect(String(refused.content)).toContain('memory already holds 3 files')
    await memory.execute({ command: 'delete', path: '/memories/a.md' }, claude)
    expect((await create('c.md')).isError).toBe(false)
    // A restore brings a.md back: the total counts it again.
    await memory.restoreDeleted('/memories/a.md')
    expect((await create('d.md')).isError).toBe(true)
    await memory.close()
  })
})

describe('the stat cache file', () => {
  const later = () => Date.now() + 60_000
  const oid = (n: number) => n.toString(16).padStart(40, '0')
  const files = ['a.md', 'd1/x.md', 'd1/sub/y.md', 'd1/sub/z.md', '.hidden/h.md', 'd2/.h.md']

  async function recorded(file: string): Promise<StatCache> {
    const cache = new StatCache(file, later)
    for (const [i, relative] of files.entries()) {
      await put(relative, 'x'.repeat(i + 1))
      cache.record(relative, lstatSync(path.join(memories(), relative)), oid(i + 1))
    }
    return cache
  }
  const statOf = (relative: string) => lstatSync(path.join(memories(), relative))

  // Open's shortcut leaves a blob for later when its record keeps a stamp: `hasObjectStamp`
  // must answer as `checkedObject` does (a stamp of size 0 reads as none), for a record loaded
  // from the file and one in memory.
  it("says a record keeps its blob's stamp exactly when checkedObject has one, loaded or not", async () => {
    const file = path.join(dataDir, 'cairn-stat')
    const saved = await recorded(file)
    const zero = { size: 0, ino: 0, ctimeMs: 0, mtimeMs: 0 }
    saved.noteObjectChecked('d1/x.md', stamp(123_456))
    saved.noteObjectChecked('d1/sub/y.md', zero)
    const expectSame = (cache: StatCache) => {
      for (const relative of [...files, 'gone.md']) {
        expect(cache.hasObjectStamp(relative), relative).toBe(
          (cache.checkedObject(relative)?.size ?? 0) > 0,
        )
      }
      expect(cache.hasObjectStamp('d1/x.md')).toBe(true)
      expect(cache.hasObjectStamp('d1/sub/y.md')).toBe(false)
      expect(cache.hasObjectStamp('a.md')).toBe(false)
    }
    expectSame(saved)
    saved.save()
    const loaded = StatCache.load(file, later)
    expectSame(loaded)
    // A loaded record given a stamp in memory (a blob written again) answers from there.
    loaded.noteObjectChecked('a.md', stamp(7))
    expect(loaded.hasObjectStamp('a.md')).toBe(true)
    expect(loaded.checkedObject('a.md')).toEqual(stamp(7))
  })

  it('loads the entries, totals and folders it saved', async () => {
    const file = path.join(dataDir, 'cairn-stat')
    const saved = await recorded(file)
    // Hidden paths are not counted: a.md (1 byte), x.md (2), y.md (3), z.md (4).
    expect(saved.totals()).toEqual({ files: 4, bytes: 10 })
    saved.noteObjectChecked('d1/x.md', stamp(123_456))
    // A stamp of size 0 is kept as written, but no loose object is empty: it reads as none.
    const zero = { size: 0, ino: 0, ctimeMs: 0, mtimeMs: 0 }
    saved.noteObjectChecked('d1/sub/y.md', zero)
    saved.save()
    const loaded = StatCache.load(file, later)
    expect(loaded.checkedObject('d1/x.md')).toEqual(stamp(123_456))
    expect(loaded.checkedObject('a.md')).toBeNull()
    expect(loaded.checkedObject('d1/sub/y.md')).toBeNull()
    expect(loaded.objectCheckedAs('d1/sub/y.md', zero)).toBe(false)
    expect(loaded.objectCheckedAs('a.md', zero)).toBe(false)
    // The same answers compared where the loaded record lies, as `sameLoose` gives them.
    expect(loaded.objectCheckedAs('d1/x.md', stamp(123_456))).toBe(true)
    for (const field of ['size', 'ino', 'ctimeMs', 'mtimeMs'] as const) {
      const other = { ...stamp(123_456), [field]: stamp(123_456)[field] + 1 }
      expect(loaded.objectCheckedAs('d1/x.md', other), field).toBe(false)
      expect(sameLoose(other, loaded.checkedObject('d1/x.md')), field).toBe(false)
    }
    expect(loaded.objectCheckedAs('a.md', stamp(1))).toBe(false)
    expect(loaded.objectCheckedAs('gone.md', stamp(123_456))).toBe(false)
    for (const [i, relative] of files.entries()) {
      expect(loaded.lookup(relative, statOf(relative))).toBe(oid(i + 1))
    }
    expect(loaded.totals()).toEqual({ files: 4, bytes: 10 })
    // A folder is forgotten with all under it; a name nothing is under changes nothing.
    loaded.forget('d1/sub')
    expect(loaded.totals()).toEqual({ files: 2, bytes: 3 })
    loaded.forget('nothing-here')
    loaded.forget('d1/sub')
    expect(loaded.lookup('d1/x.md', statOf('d1/x.md'))).toBe(oid(2))
    expect(loaded.lookup('d1/sub/y.md', statOf('d1/sub/y.md'))).toBeUndefined()
    loaded.forget('d1')
    expect(loaded.totals()).toEqual({ files: 1, bytes: 1 })
    expect(loaded.lookup('d1/x.md', statOf('d1/x.md'))).toBeUndefined()
    // Forgotten before the totals were first asked for: the same totals.
    const again = StatCache.load(file, later)
    again.forget('d1')
    again.forget('a.md')
    expect(again.totals()).toEqual({ files: 0, bytes: 0 })
    again.record('d1/x.md', statOf('d1/x.md'), oid(9))
    expect(again.totals()).toEqual({ files: 1, bytes: 2 })
    again.forget('d1')
    expect(again.totals()).toEqual({ files: 0, bytes: 0 })
  })

  // Loaded records are read where they lie in the file (no object made of each at load).
  it('takes a loaded record only for the very stat it recorded, and saves it as it was', async () => {
    const file = path.join(dataDir, 'cairn-stat')
    ;(await recorded(file)).save()
    const loaded = StatCache.load(file, later)
    const looked = statOf('d1/x.md')
    expect(loaded.lookup('d1/x.md', looked)).toBe(oid(2))
    // Each number told apart: size, mtime, ctime, inode (a copy renamed over, or written in
    // place with the size and mtime put back).
    for (const field of ['size', 'mtimeMs', 'ctimeMs', 'ino'] as const) {
      const other = { ...looked, [field]: looked[field] + 1 } as Stats
      expect(loaded.lookup('d1/x.md', other), field).toBeUndefined()
    }
    expect(loaded.lookup('d1/y.md', looked)).toBeUndefined()
    // Racily clean when recorded (hashed within 3 s of its mtime): never taken.
    const racy = path.join(dataDir, 'racy')
    const close = new StatCache(racy, () => looked.mtimeMs + 1000)
    close.record('d1/x.md', looked, oid(7))
    close.save()
    expect(StatCache.load(racy, later).lookup('d1/x.md', looked)).toBeUndefined()
    // Saved again: the loaded records byte for byte, a changed one and a new one after them.
    const before = readFileSync(file).subarray(0, -4)
    loaded.noteObjectChecked('a.md', stamp(77))
    loaded.save()
    const once = StatCache.load(file, later)
    expect(once.checkedObject('a.md')).toEqual(stamp(77))
    expect(once.checkedObject('d1/x.md')).toBeNull()
    expect(once.objectCheckedAs('d1/x.md', stamp(123_456))).toBe(false)
    // A record changed since load is compared as its entry holds it.
    expect(loaded.objectCheckedAs('a.md', stamp(77))).toBe(true)
    expect(loaded.objectCheckedAs('a.md', stamp(78))).toBe(false)
    for (const [i, relative] of files.entries()) {
      expect(once.lookup(relative, statOf(relative))).toBe(oid(i + 1))
    }
    await put('new.md', 'new')
    once.record('new.md', statOf('new.md'), oid(8))
    once.save()
    const body = readFileSync(file).subarray(0, -4)
    // No tree or folder records or extents (their three counts); `a.md`'s record first, its
    // fixed part and its name. Only its loose file's stamp changed; the records after it are
    // the loaded bytes.
    const first = LAYOUT.header.length + 3 * LAYOUT.count
    const record = LAYOUT.file.bytes + 'a.md'.length
    const rest = before.subarray(first + record)
    expect(body.subarray(first + record, first + record + rest.length).equals(rest)).toBe(true)
    const stampAt = first + LAYOUT.file.object
    expect(body.subarray(first, stampAt).equals(before.subarray(first, stampAt))).toBe(true)
    expect(body.readDoubleLE(stampAt)).toBe(stamp(77).size)
    expect(body.toString('utf8', first + LAYOUT.file.bytes, first + record)).toBe('a.md')
    const twice = StatCache.load(file, later)
    expect(twice.lookup('new.md', statOf('new.md'))).toBe(oid(8))
    expect(twice.checkedObject('a.md')).toEqual(stamp(77))
    expect(twice.totals()).toEqual({ files: 5, bytes: 13 })
  })

  it('keeps the last of two entries for one path, counted once', async () => {
    const first = path.join(dataDir, 'first')
    const second = path.join(dataDir, 'second')
    await put('a.md', 'abc')
    const one = new StatCache(first, later)
    one.record('a.md', statOf('a.md'), oid(1))
    one.save()
    const two = new StatCache(second, later)
    two.record('a.md', statOf('a.md'), oid(2))
    two.save()
    // The header line and the counts of tree and folder records and packed extents (none); the
    // file's CRC-32 at its end.
    const header = LAYOUT.header.length + 3 * LAYOUT.count
    const both = path.join(dataDir, 'both')
    writeFileSync(
      both,
      withSum(
        Buffer.concat([
          readFileSync(first).subarray(0, -4),
          readFileSync(second).subarray(header, -4),
        ]),
      ),
    )
    const loaded = StatCache.load(both, later)
    expect(loaded.lookup('a.md', statOf('a.md'))).toBe(oid(2))
    expect(loaded.totals()).toEqual({ files: 1, bytes: 3 })
    loaded.forget('a.md')
    expect(loaded.totals()).toEqual({ files: 0, bytes: 0 })
  })
})

describe("the stat cache's tree records (HEAD's loose trees, checked whole)", () => {
  const oid = (n: number) => n.toString(16).padStart(40, '0')

  it('keeps exactly the last set given, through a save, beside the file entries', async () => {
    await put('a.md', 'abc')
    const file = path.join(dataDir, 'cairn-stat')
    const cache = new StatCache(file, () => Date.now() + 60_000)
    cache.record('a.md', lstatSync(path.join(memories(), 'a.md')), oid(1))
    cache.keepTreesChecked(
      new Map([
        [oid(7), stamp(123)],
        [oid(8), stamp(45_678)],
      ]),
    )
    cache.save()
    const loaded = StatCache.load(file, () => Date.now() + 60_000)
    expect(loaded.checkedTree(oid(7))).toEqual(stamp(123))
    expect(loaded.checkedTree(oid(8))).toEqual(stamp(45_678))
    expect(loaded.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBe(oid(1))
    // A new HEAD's trees replace the old ones' records.
    loaded.keepTreesChecked(new Map([[oid(9), stamp(9)]]))
    loaded.save()
    const next = StatCache.load(file)
    expect(next.checkedTree(oid(7))).toBeNull()
    expect(next.checkedTree(oid(9))).toEqual(stamp(9))
  })

  it('tells a loose file written in place, copied or renamed over from the one checked', () => {
    const checked = stamp(100)
    expect(sameLoose(stamp(100), checked)).toBe(true)
    for (const changed of [
      { ...checked, size: 101 },
      { ...checked, ino: checked.ino + 1 },
      { ...checked, ctimeMs: checked.ctimeMs + 0.001 },
      { ...checked, mtimeMs: checked.mtimeMs - 1 },
    ]) {
      expect(sameLoose(changed, checked)).toBe(false)
    }
    expect(sameLoose(checked, null)).toBe(false)
  })

  it('takes formats 2 to 4 (no CRC-32) and a torn tree section for no cache', async () => {
    await put('a.md', 'abc')
    const file = path.join(dataDir, 'cairn-stat')
    const cache = new StatCache(file, () => Date.now() + 60_000)
    cache.record('a.md', lstatSync(path.join(memories(), 'a.md')), oid(1))
    cache.noteObjectChecked('a.md', stamp(50))
    cache.keepTreesChecked(new Map([[oid(5), stamp(5)]]))
    cache.save()
    const raw = readFileSync(file)
    for (const format of [2, 3, 4]) {
      // The body as format 4 wrote it (no CRC at the end), under the older header.
      const body = raw.subarray(LAYOUT.header.length, -LAYOUT.sum)
      writeFileSync(file, Buffer.concat([Buffer.from(`cairn-stat ${format}\n`), body]))
      const old = StatCache.load(file)
      expect(old.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBeUndefined()
      expect(old.checkedTree(oid(5))).toBeNull()
    }
    writeFileSync(file, withSum(Buffer.from('cairn-stat 5\n\x05\x00\x00\x00')))
    const torn = StatCache.load(file)
    expect(torn.totals()).toEqual({ files: 0, bytes: 0 })
    expect(torn.checkedTree(oid(5))).toBeNull()
  })

  it('takes a file whose CRC-32 does not match for no cache: no record of it is trusted', async () => {
    await put('a.md', 'abc')
    await put('b.md', 'def')
    const file = path.join(dataDir, 'cairn-stat')
    const cache = new StatCache(file, () => Date.now() + 60_000)
    cache.record('a.md', lstatSync(path.join(memories(), 'a.md')), oid(1))
    cache.record('b.md', lstatSync(path.join(memories(), 'b.md')), oid(2))
    cache.save()
    const raw = readFileSync(file)
    expect(StatCache.load(file).lookup('b.md', lstatSync(path.join(memories(), 'b.md')))).toBe(
      oid(2),
    )
    // b.md's record names a.md's blob (one byte of its oid: ...02 -> ...01).
    const at = raw.indexOf(Buffer.from(oid(2), 'hex'))
    raw[at + 19] = 1
    writeFileSync(file, raw)
    const loaded = StatCache.load(file)
    expect(loaded.lookup('b.md', lstatSync(path.join(memories(), 'b.md')))).toBeUndefined()
    expect(loaded.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBeUndefined()
  })
})

describe('a stat cache record changed to name another stored blob', () => {
  it('is not trusted: open hashes the files, commits nothing, and HEAD stays equal to the folder', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (const name of ['a', 'b', 'c']) {
      await memory.execute(
        { command: 'create', path: `/memories/${name}.md`, file_text: `content of ${name}\n` },
        { actor: 'claude', conversationId: 'c', toolUseId: `t-${name}` },
      )
    }
    await memory.close()
    // Modified long before they are hashed next: the records the next open saves are trusted.
    for (const name of ['a', 'b', 'c']) {
      utimesSync(path.join(memories(), `${name}.md`), past(), past())
    }
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await memory.close()
    const commits = commitCount(dataDir)
    const heads = headFiles(dataDir)

    // b.md's record now names a.md's blob, which the history holds.
    const file = statCacheOf(path.join(dataDir, 'history.git'))
    const raw = readFileSync(file)
    const blobOf = (name: string) => gitCli(dataDir, 'rev-parse', `main:${name}`).trim()
    const at = raw.indexOf(Buffer.from(blobOf('b.md'), 'hex'))
    expect(at).toBeGreaterThan(0)
    Buffer.from(blobOf('a.md'), 'hex').copy(raw, at)
    writeFileSync(file, raw)

    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    await memory.close()
    expect(commitCount(dataDir)).toBe(commits)
    expect(headFiles(dataDir)).toEqual(heads)
    expect(sorted(headFiles(dataDir))).toEqual(sorted(await folderFiles(dataDir)))
    fsck(dataDir)
  })
})

describe('a file Cairn just wrote (recordWritten)', () => {
  it('counts in the totals, is never taken as unchanged, and keeps so through a save', async () => {
    await put('a.md', 'hello')
    const file = path.join(dataDir, 'cairn-stat-test')
    // A clock far ahead of the file's times: only the record's unknown times keep it untrusted.
    const cache = new StatCache(file, () => Date.now() + 3_600_000)
    cache.recordWritten('a.md', 5, 'b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0')
    expect(cache.totals()).toEqual({ files: 1, bytes: 5 })
    const stats = lstatSync(path.join(memories(), 'a.md'))
    expect(cache.lookup('a.md', stats)).toBeUndefined()
    cache.save()
    const loaded = StatCache.load(file)
    expect(loaded.totals()).toEqual({ files: 1, bytes: 5 })
    expect(loaded.lookup('a.md', stats)).toBeUndefined()
    // The scan that reads and hashes it records it whole: from then on its stat vouches for it.
    loaded.record('a.md', stats, 'b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0')
    expect(loaded.totals()).toEqual({ files: 1, bytes: 5 })
    expect(loaded.lookup('a.md', stats)).toBe('b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0')
  })
})

describe("the stat cache's folder records (each folder's tree, under the key it was made from)", () => {
  const oid = (n: number) => n.toString(16).padStart(40, '0')
  // Keys as open makes them (head-match.ts, `treeKeyOf`); the cache keeps them as given.
  const key = (...parts: Array<[string, string, number]>) =>
    parts.map(([mode, name, n]) => `${mode} ${name}\0${oid(n)}`).join('')
  // Names beyond ASCII, in paths and keys: both are stored as UTF-8.
  const folders = new Map<string, KeptTree>([
    ['', { oid: oid(100), key: key(['100644', 'a.md', 1], ['40000', 'dé', 101]) }],
    ['dé', { oid: oid(101), key: key(['100644', 'x y.md', 2], ['40000', 'sub', 102]) }],
    ['dé/sub', { oid: oid(102), key: key(['100644', 'z.md', 3]) }],
  ])
  const keptOf = (cache: StatCache) =>
    new Map([...folders.keys()].map((folder) => [folder, cache.keptTree(folder)]))
  const none = new Map([...folders.keys()].map((folder) => [folder, undefined]))

  /** A cache of one file, `folders` kept, saved. */
  async function keptAndSaved(file: string): Promise<void> {
    await put('a.md', 'abc')
    const cache = new StatCache(file, () => Date.now() + 60_000)
    cache.record('a.md', lstatSync(path.join(memories(), 'a.md')), oid(1))
    cache.keepTrees(folders)
    cache.save()
  }

  it('keeps exactly the last set given, through a save, beside the file entries', async () => {
    const file = path.join(dataDir, 'cairn-stat')
    await keptAndSaved(file)
    const loaded = StatCache.load(file)
    expect(keptOf(loaded)).toEqual(folders)
    expect(loaded.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBe(oid(1))
    // The next open's set replaces it whole.
    loaded.keepTrees(new Map([['dé/sub', folders.get('dé/sub')!]]))
    loaded.save()
    const next = StatCache.load(file)
    expect(keptOf(next)).toEqual(new Map([...none, ['dé/sub', folders.get('dé/sub')]]))
  })

  it('reads format 5 (no folder records) with its entries and no folder kept; a torn folder section as no cache', async () => {
    const file = path.join(dataDir, 'cairn-stat')
    await keptAndSaved(file)
    const raw = readFileSync(file).subarray(0, -4)
    const header = LAYOUT.header.length
    // Format 5: the tree records (none here), then the files, no folder section (nor the
    // packed extents after it: none here, their count alone).
    const section = header + LAYOUT.count + raw.readUInt32LE(header) * LAYOUT.tree.bytes
    let at = section + LAYOUT.count
    for (let n = raw.readUInt32LE(section); n > 0; n--) at += folderBytes(raw, at)
    expect(raw.readUInt32LE(at)).toBe(0)
    const five = Buffer.concat([
      Buffer.from('cairn-stat 5\n'),
      raw.subarray(header, section),
      raw.subarray(at + 4),
    ])
    writeFileSync(file, withSum(five))
    const old = StatCache.load(file)
    expect(old.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBe(oid(1))
    expect(keptOf(old)).toEqual(none)
    // Saved again in the new format.
    old.keepTrees(folders)
    old.save()
    expect(readFileSync(file).subarray(0, header).toString()).toBe(LAYOUT.header)
    expect(keptOf(StatCache.load(file))).toEqual(folders)
    // A folder section whose count says more than there is (its sum right): no cache.
    for (const cut of [section + 4, section + 4 + 30, at - 1]) {
      writeFileSync(file, withSum(Buffer.concat([raw.subarray(0, cut)])))
      const torn = StatCache.load(file)
      expect(keptOf(torn), `cut at ${cut}`).toEqual(none)
      expect(torn.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBeUndefined()
    }
    // A byte of a kept id changed (its sum not): no cache at all.
    await keptAndSaved(file)
    const damaged = readFileSync(file)
    const idAt = damaged.indexOf(Buffer.from(oid(102), 'hex'))
    expect(idAt).toBeGreaterThan(0)
    damaged[idAt + 19] = damaged[idAt + 19]! ^ 1
    writeFileSync(file, damaged)
    const unsummed = StatCache.load(file)
    expect(keptOf(unsummed)).toEqual(none)
    expect(unsummed.lookup('a.md', lstatSync(path.join(memories(), 'a.md')))).toBeUndefined()
  })
})

describe("the stat cache's packed extents (where HEAD's packed trees lie)", () => {
  const oid = (n: number) => n.toString(16).padStart(40, '0')
  const extents = new Map([
    [oid(7), { pack: 'ab'.repeat(20), start: 12, end: 345 }],
    [oid(8), { pack: 'ab'.repeat(20), start: 345, end: 2 ** 33 + 5 }],
  ])

  it('keeps exactly the last set given through a save; format 6 reads with none; a torn section as no cache', async () => {
    await put('a.md', 'abc')
    const file = path.join(dataDir, 'cairn-stat')
    const stats = () => lstatSync(path.join(memories(), 'a.md'))
    const save = () => {
      const cache = new StatCache(file, () => Date.now() + 60_000)
      cache.record('a.md', stats(), oid(1))
      cache.keepTrees(new Map([['', { oid: oid(100), key: 'k' }]]))
      cache.keepPackedExtents(extents)
      cache.save()
    }
    save()
    const loaded = StatCache.load(file)
    expect(loaded.packedExtents()).toEqual(extents)
    expect(loaded.keptTree('')).toEqual({ oid: oid(100), key: 'k' })
    expect(loaded.lookup('a.md', stats())).toBe(oid(1))
    // The next open's set replaces it whole.
    loaded.keepPackedExtents(new Map([[oid(9), { pack: 'cd'.repeat(20), start: 1, end: 2 }]]))
    loaded.save()
    expect([...StatCache.load(file).packedExtents().keys()]).toEqual([oid(9)])

    // Format 6: the same without the extent section, read with its folders and entries.
    save()
    const raw = readFileSync(file).subarray(0, -4)
    const header = LAYOUT.header.length
    const folders = header + LAYOUT.count + raw.readUInt32LE(header) * LAYOUT.tree.bytes
    let at = folders + LAYOUT.count
    for (let n = raw.readUInt32LE(folders); n > 0; n--) at += folderBytes(raw, at)
    expect(raw.readUInt32LE(at)).toBe(2)
    const extentsEnd = at + LAYOUT.count + 2 * LAYOUT.extent.bytes
    writeFileSync(
      file,
      withSum(
        Buffer.concat([
          Buffer.from('cairn-stat 6\n'),
          raw.subarray(header, at),
          raw.subarray(extentsEnd),
        ]),
      ),
    )
    const six = StatCache.load(file)
    expect(six.packedExtents().size).toBe(0)
    expect(six.keptTree('')).toEqual({ oid: oid(100), key: 'k' })
    expect(six.lookup('a.md', stats())).toBe(oid(1))
    // An extent section whose count says more than there is (its sum right): no cache.
    for (const cut of [at + 2, at + 4 + 30, extentsEnd - 1]) {
      writeFileSync(file, withSum(raw.subarray(0, cut)))
      const torn = StatCache.load(file)
      expect(torn.packedExtents().size, `cut at ${cut}`).toBe(0)
      expect(torn.keptTree('')).toBeUndefined()
      expect(torn.lookup('a.md', stats())).toBeUndefined()
    }
  })
})
