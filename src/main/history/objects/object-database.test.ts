import { execFileSync, spawn } from 'node:child_process'
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  chmodSync,
  lstatSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { deflateSync, inflateSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../../lib/disk'
import { closesFailing } from '../../lib/disk-hooks'
import { storedZlib } from '../object-store'
import { countIndexReads, gitIn } from '../test-helpers'
import { DamagedObjectError, MissingObjectError, ObjectDatabase } from './object-database'
import { OFS_DELTA, REF_DELTA } from './pack-file'
import { positionsIn } from './pack-index'

let work: string
let gitdir: string

const git = (...args: string[]): string => gitIn(work, ...args)

/** Every object of the repository as the git CLI reads it: id -> (type, content). */
function gitObjects(): Map<string, { type: string; content: Buffer }> {
  const ids = git('cat-file', '--batch-all-objects', '--batch-check=%(objectname)').split('\n')
  const out = execFileSync('git', ['cat-file', '--batch'], {
    cwd: work,
    input: ids.filter(Boolean).join('\n') + '\n',
    maxBuffer: 64 * 1024 * 1024,
  })
  const objects = new Map<string, { type: string; content: Buffer }>()
  let at = 0
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at)
    const [oid, type, size] = out.toString('latin1', at, eol).split(' ') as [string, string, string]
    const content = out.subarray(eol + 1, eol + 1 + Number(size))
    objects.set(oid, { type, content: Buffer.from(content) })
    at = eol + 1 + Number(size) + 1
  }
  return objects
}

/** A number from `text` that orders ids other than by name (for a shuffled order that repeats). */
function hashOf(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0)
}

/** Commits `rounds` edits to a few files that grow, so git makes real delta chains. */
function makeHistory(rounds: number, from = 0): void {
  for (let i = from; i < from + rounds; i++) {
    const lines = Array.from(
      { length: 200 + i * 3 },
      (_, n) => `line ${n} of the notes, round ${n % 7 === 0 ? i : 0}`,
    )
    writeFileSync(path.join(work, 'notes.md'), lines.join('\n'))
    writeFileSync(path.join(work, `file-${i % 5}.txt`), `small file ${i}\n`.repeat(20 + i))
    git('add', '-A')
    git('commit', '-q', '-m', `round ${i}`)
  }
}

function expectAllReadable(db: ObjectDatabase): number {
  const expected = gitObjects()
  for (const [oid, object] of expected) {
    const read = db.read(oid)
    expect(read.type).toBe(object.type)
    expect(read.content.equals(object.content)).toBe(true)
  }
  return expected.size
}

function packFiles(): string[] {
  return readdirSync(path.join(gitdir, 'objects', 'pack')).filter((name) => name.endsWith('.pack'))
}

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'cairn-odb-'))
  gitdir = path.join(work, '.git')
  git('init', '-q')
})
afterEach(() => rm(work, { recursive: true, force: true, maxRetries: 10 }))

describe('reading objects git wrote', () => {
  it('reads loose objects', () => {
    makeHistory(5)
    const db = new ObjectDatabase(gitdir)
    expect(db.packs()).toHaveLength(0)
    expect(expectAllReadable(db)).toBeGreaterThan(10)
    db.close()
  })

  it('reads loose files of any size, one after another, each as its own content', () => {
    // Random bytes do not compress: loose files of about 1 KiB, exactly 64 KiB and past it,
    // read in turns (a small one right after a large one, and again).
    const sizes = [1000, 64 * 1024 - 19, 64 * 1024 + 1, 300 * 1024, 50]
    for (const [i, size] of sizes.entries()) {
      writeFileSync(path.join(work, `random-${i}.bin`), randomBytes(size))
    }
    git('add', '-A')
    git('commit', '-q', '-m', 'random files')
    const looseSizes = readdirSync(path.join(gitdir, 'objects'))
      .filter((dir) => /^[0-9a-f]{2}$/.test(dir))
      .flatMap((dir) =>
        readdirSync(path.join(gitdir, 'objects', dir)).map(
          (name) => statSync(path.join(gitdir, 'objects', dir, name)).size,
        ),
      )
    expect(looseSizes.some((size) => size > 64 * 1024)).toBe(true)
    expect(looseSizes.some((size) => size < 2048)).toBe(true)
    const db = new ObjectDatabase(gitdir)
    const expected = [...gitObjects()]
    expect(expected).toHaveLength(sizes.length + 2)
    // All read before any is compared: no content may share memory with a later read.
    const read = [...expected, ...expected].map(([oid]) => db.read(oid))
    for (const [i, object] of read.entries()) {
      const [, want] = expected[i % expected.length]!
      expect(object.type).toBe(want.type)
      expect(Buffer.from(object.content).equals(want.content)).toBe(true)
    }
    db.close()
  })

  it('holds small loose objects in buffers about their size, not a 16 KiB zlib chunk each', () => {
    // A maintenance pass reads every loose object: each buffer lives outside the JavaScript
    // heap until a collection, and V8 answers their sum with full collections.
    for (let i = 0; i < 200; i++) {
      writeFileSync(
        path.join(work, `note-${i}.md`),
        `# note ${i}\n\n${'some text. '.repeat(i % 20)}\n`,
      )
    }
    git('add', '-A')
    git('commit', '-q', '-m', 'small notes')
    const db = new ObjectDatabase(gitdir)
    const objects = [...gitObjects()]
    expect(objects.length).toBeGreaterThan(200)
    const read = objects.map(([oid]) => db.read(oid))
    for (const [i, object] of read.entries()) {
      expect(Buffer.from(object.content).equals(objects[i]![1].content)).toBe(true)
    }
    // What they hold, each backing buffer counted once (small ones share Node's pool).
    const held = new Set(read.map((object) => object.content.buffer))
    const bytes = [...held].reduce((sum, buffer) => sum + buffer.byteLength, 0)
    expect(bytes).toBeLessThan(read.length * 4096)
    db.close()
  })

  it('reads a pack made by git gc, with OFS_DELTA chains', () => {
    makeHistory(40)
    git('gc', '-q')
    const db = new ObjectDatabase(gitdir)
    expect(db.packs()).toHaveLength(1)
    const pack = db.packs()[0]!
    const codes = [...pack.index.entries()].map((entry) => pack.pack.peek(entry.offset).code)
    expect(codes).toContain(OFS_DELTA)
    expectAllReadable(db)
    db.close()
  })

  it('reads down a delta chain of small entries lying together in a few reads, not one per link', () => {
    // One short file edited line by line: git keeps the newest version whole and each older
    // one as a delta on the next newer, written after it, so reading the oldest version goes
    // down the chain to ever lower offsets (as blame's walk into old trees does).
    const lines = Array.from({ length: 20 }, (_, n) => `line ${n}: version 0`)
    for (let i = 1; i <= 40; i++) {
      lines[i % 20] = `line ${i % 20}: version ${i}`
      writeFileSync(path.join(work, 'notes.md'), `${lines.join('\n')}\n`)
      git('add', '-A')
      git('commit', '-q', '-m', `edit ${i}`)
    }
    git('repack', '-adfq', '--depth=50', '--window=250')
    // Columns: id, type, size, size in pack, offset, depth, base (deltas only).
    const entries = git('verify-pack', '-v', path.join(gitdir, 'objects', 'pack', packFiles()[0]!))
      .split('\n')
      .map((line) => line.split(/\s+/))
      .filter((cols) => /^[0-9a-f]{40}$/.test(cols[0] ?? '') && cols.length >= 5)
      .map((cols) => ({
        oid: cols[0]!,
        type: cols[1],
        offset: Number(cols[4]),
        depth: cols.length === 7 ? Number(cols[5]) : 0,
      }))
    const deepest = entries
      .filter((entry) => entry.type === 'blob')
      .reduce((a, b) => (b.depth > a.depth ? b : a))
    const last = entries
      .filter((entry) => entry.type !== 'blob')
      .reduce((a, b) => (b.offset > a.offset ? b : a))
    expect(deepest.depth).toBeGreaterThanOrEqual(8)
    const packSize = statSync(path.join(gitdir, 'objects', 'pack', packFiles()[0]!)).size
    expect(packSize).toBeLessThan(12 * 1024)

    const db = new ObjectDatabase(gitdir)
    // Everything opened (the pack's index read) by a first read of another chain (no base of
    // the file's kept), as far up the pack as there is one: the window read last lies above.
    db.read(last.oid)
    let reads = 0
    const restore = setDisk({
      ...nodeDisk,
      readSync(...args) {
        reads++
        return nodeDisk.readSync(...args)
      },
    })
    try {
      const read = db.read(deepest.oid)
      expect(read.content.equals(Buffer.from(git('cat-file', 'blob', deepest.oid)))).toBe(true)
    } finally {
      restore()
    }
    // The whole pack fits in the read window: at most a read up and one down, whatever the
    // chain's depth (one read per link before).
    expect(reads).toBeLessThanOrEqual(3)
    db.close()
  })

  it('objects read earlier keep their bytes while later reads refill the read window', () => {
    makeHistory(30)
    git('gc', '-q')
    const expected = gitObjects()
    const db = new ObjectDatabase(gitdir)
    // All read first, in name order (all over the pack), and only then compared with git's.
    const read = new Map([...expected.keys()].map((oid) => [oid, db.read(oid)]))
    for (const [oid, object] of expected) {
      expect(read.get(oid)?.type).toBe(object.type)
      expect(read.get(oid)?.content.equals(object.content)).toBe(true)
    }
    db.close()
  })

  it('reads every object of a large pack in any order (offsets and data read in blocks)', () => {
    makeHistory(30)
    // Over a thousand more objects: the offset table is read 1,024 entries at a time, and a
    // pack far larger than one read window, read here in name order (all over the pack).
    for (let i = 0; i < 1_500; i++) {
      writeFileSync(path.join(work, `many-${i}.txt`), `file ${i}: ${'x'.repeat(i % 97)}\n`)
    }
    git('add', '-A')
    git('commit', '-q', '-m', 'many files')
    git('gc', '-q')
    const db = new ObjectDatabase(gitdir)
    const pack = db.packs()[0]!
    expect(pack.index.count).toBeGreaterThan(1024)
    expect(pack.bytes).toBeGreaterThan(64 * 1024)
    expectAllReadable(db)
    // And backwards through the pack, as a walk to older commits may go.
    const entries = [...pack.index.entries()].sort((a, b) => b.offset - a.offset)
    for (const entry of entries) expect(db.read(entry.oid.toString('hex')).type).toBeTruthy()
    db.close()
  })

  // Builds and packs a history whose name table spans several reads: 35 s at load 17 on two
  // shared cores (a clean-clone CI beside other work), past the default 30 s.
  it('finds every object of a pack whose name table is read in several parts, and no other', () => {
    // 8,000 blobs in one pack (fast-import writes it): the names of 16 first bytes are read at
    // a time (64 by a lookup of many ids at once), 16 parts and 4, so lookups cross the parts'
    // edges; the same with a version 1 index.
    const stream = Array.from({ length: 8_000 }, (_, i) => {
      const content = `blob number ${i}\n`
      return `blob\ndata ${Buffer.byteLength(content)}\n${content}\n`
    }).join('')
    execFileSync('git', ['fast-import', '--quiet'], { cwd: work, input: stream })
    const ids = git('cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
      .split('\n')
      .filter(Boolean)
    expect(ids).toHaveLength(8_000)
    const known = new Set(ids)
    // Ids next to each real one (last digit changed), and the two ends of the name space.
    const absent = ids
      .map((oid) => oid.slice(0, 39) + (oid[39] === '0' ? '1' : '0'))
      .filter((oid) => !known.has(oid))
    absent.push('0'.repeat(40), 'f'.repeat(40))
    const [pack] = packFiles()
    const packPath = path.join(gitdir, 'objects', 'pack', pack!)
    const idxPath = packPath.replace(/\.pack$/, '.idx')
    for (const version of ['2', '1']) {
      if (version === '1') {
        const scratch = path.join(work, 'scratch.pack')
        copyFileSync(packPath, scratch)
        git('index-pack', '--index-version=1', '-o', path.join(work, 'scratch.idx'), scratch)
        chmodSync(idxPath, 0o644)
        copyFileSync(path.join(work, 'scratch.idx'), idxPath)
      }
      const db = new ObjectDatabase(gitdir)
      expect(db.packs()[0]!.index.version).toBe(Number(version))
      for (const [i, oid] of ids.entries()) {
        expect(db.inPack(oid)).toBe(true)
        if (i % 37 === 0) expect(db.read(oid).content.toString()).toMatch(/^blob number \d+\n$/)
      }
      for (const oid of absent) expect(db.inPack(oid)).toBe(false)
      // All at once (open's check): the same answers in any order, with ids that are not ids,
      // and the same positions as one lookup each.
      // (An id whose last byte, 00, is cut off or not hex: its 19 bytes and a zero would name it.)
      const cut = ids.find((oid) => oid.endsWith('00'))!.slice(0, 38)
      const mixed = [...ids, ...absent, 'zz'.repeat(20), cut, `${cut}zz`, ''].sort(
        (a, b) => hashOf(a) - hashOf(b),
      )
      expect(db.inPackEach(mixed)).toEqual(mixed.map((oid) => known.has(oid)))
      const index = db.packs()[0]!.index
      expect([...positionsIn([index], mixed).byIndex.get(index)!]).toEqual(
        mixed.map((oid) => (known.has(oid) ? index.position(Buffer.from(oid, 'hex')) : -1)),
      )
      expect(db.inPackEach([])).toEqual([])
      // A few ids, most parts of the name table not asked for.
      const few = [ids[4000]!, absent[17]!, ids[123]!, ids[7999]!]
      expect(db.inPackEach(few)).toEqual([true, false, true, true])
      db.close()
    }
  }, 120_000)

  it('reads REF_DELTA packs, several packs at once, and loose objects beside them', () => {
    makeHistory(20)
    git('-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '-q')
    makeHistory(15, 20)
    git('-c', 'repack.useDeltaBaseOffset=false', 'repack', '-d', '-q')
    makeHistory(3, 35)
    expect(packFiles().length).toBe(2)
    const db = new ObjectDatabase(gitdir)
    const codes = db
      .packs()
      .flatMap((open) =>
        [...open.index.entries()].map((entry) => open.pack.peek(entry.offset).code),
      )
    expect(codes).toContain(REF_DELTA)
    expect(codes).not.toContain(OFS_DELTA)
    expectAllReadable(db)
    // All at once, across both packs: loose-only objects (the last three rounds') in none.
    const all = [...gitObjects().keys()]
    const each = db.inPackEach(all)
    expect(each).toEqual(all.map((oid) => db.inPack(oid)))
    expect(each).toContain(true)
    expect(each).toContain(false)
    // Looked up once for both of open's checks: the same answers as each looking up its own,
    // and the same where the lookup did not cover every id asked about (then looked up again).
    const sound = db.packedRecordsSound(all)
    expect([...sound.keys()].sort()).toEqual(all.filter((_, i) => each[i]).sort())
    const looked = db.packedPositions([...all, 'zz'.repeat(20)])
    expect(db.inPackEach(all, looked)).toEqual(each)
    expect(db.packedRecordsSound(all, undefined, looked)).toEqual(sound)
    expect(db.packedRecordsSound(all, undefined, db.packedPositions(all.slice(0, 10)))).toEqual(
      sound,
    )
    db.close()
  })

  it('looks up many ids in several packs at once as git lists them, ids that are not ids in none', () => {
    makeHistory(12)
    git('repack', '-a', '-d', '-q')
    makeHistory(6, 12)
    git('repack', '-d', '-q')
    // A third pack holding some objects the first two hold as well, and loose objects beside.
    const some = git('rev-list', '--objects', 'HEAD~3').split('\n').filter(Boolean)
    execFileSync('git', ['pack-objects', '-q', path.join(gitdir, 'objects', 'pack', 'pack')], {
      cwd: work,
      input:
        some
          .filter((_, i) => i % 3 === 0)
          .map((line) => line.slice(0, 40))
          .join('\n') + '\n',
    })
    makeHistory(2, 18)
    expect(packFiles()).toHaveLength(3)
    const all = [...gitObjects().keys()]
    const known = new Set(all)
    const absent = all
      .map((oid) => oid.slice(0, 39) + (oid[39] === '0' ? '1' : '0'))
      .filter((oid) => !known.has(oid))
    // The git CLI's word that these are no objects at all.
    const checked = execFileSync('git', ['cat-file', '--batch-check'], {
      cwd: work,
      input: absent.join('\n') + '\n',
    }).toString()
    expect(checked.trim().split('\n')).toEqual(absent.map((oid) => `${oid} missing`))
    const isId = (oid: string) => /^[0-9a-f]{40}$/.test(oid)
    const cut = all[0]!.slice(0, 38)
    const invalid = ['zz'.repeat(20), cut, `${cut}zz`, `${all[1]!}0`, '']
    const asked = [...all, ...absent, ...invalid, ...all.slice(0, 9)].sort(
      (a, b) => hashOf(a) - hashOf(b),
    )

    const indexReads = countIndexReads()
    const db = new ObjectDatabase(gitdir)
    let looked: ReturnType<typeof positionsIn>
    let lookedInvalid: ReturnType<typeof positionsIn>
    try {
      expect(db.packs()).toHaveLength(3)
      indexReads.reads.length = 0
      looked = db.packedPositions(asked)
      // Each pack's few hundred names are one slice: read once however many ids ask for it.
      expect(indexReads.reads).toHaveLength(3)
      indexReads.reads.length = 0
      lookedInvalid = db.packedPositions(invalid)
      expect(indexReads.reads).toHaveLength(0)
    } finally {
      indexReads.stop()
    }
    expect(lookedInvalid.at.size).toBe(0)
    for (const positions of lookedInvalid.byIndex.values()) {
      expect([...positions]).toEqual(invalid.map(() => -1))
    }
    // Each id's place (its last, for one asked twice); never one that is not an id.
    expect([...looked.at.keys()].sort()).toEqual([...all, ...absent].sort())
    for (const [oid, at] of looked.at) expect(asked.lastIndexOf(oid)).toBe(at)
    let inTwo = 0
    for (const open of db.packs()) {
      // git show-index: "<offset> <id> (<crc>)" per object, in the index's (sorted) order.
      const listed = execFileSync('git', ['show-index'], {
        input: readFileSync(open.index.file),
      })
        .toString()
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[1]!)
      const position = new Map(listed.map((oid, i) => [oid, i]))
      const expected = asked.map((oid) => (isId(oid) ? (position.get(oid) ?? -1) : -1))
      expect([...looked.byIndex.get(open.index)!]).toEqual(expected)
      // One index alone (packed-crc's lookup): the same positions.
      expect([...positionsIn([open.index], asked).byIndex.get(open.index)!]).toEqual(expected)
      inTwo += listed.filter((oid) =>
        db.packs().some((other) => other !== open && other.index.has(Buffer.from(oid, 'hex'))),
      ).length
    }
    expect(inTwo).toBeGreaterThan(0)
    const packed = asked.map((oid) =>
      db.packs().some((open) => looked.byIndex.get(open.index)![asked.indexOf(oid)]! >= 0),
    )
    expect(packed).toContain(false)
    expect(db.inPackEach(asked)).toEqual(packed)
    expect(db.inPackEach(asked, looked)).toEqual(packed)
    db.close()
  })

  it('reads an index with 64-bit offsets, and a version 1 index', () => {
    makeHistory(12)
    git('gc', '-q')
    const [pack] = packFiles()
    const packPath = path.join(gitdir, 'objects', 'pack', pack!)
    const idxPath = packPath.replace(/\.pack$/, '.idx')
    // 2,256: every object past offset 256 goes into the 64-bit table (git allows up to n-1).
    for (const version of ['2,256', '1']) {
      const scratch = path.join(work, 'scratch.pack')
      copyFileSync(packPath, scratch)
      git('index-pack', `--index-version=${version}`, '-o', path.join(work, 'scratch.idx'), scratch)
      chmodSync(idxPath, 0o644)
      copyFileSync(path.join(work, 'scratch.idx'), idxPath)
      const db = new ObjectDatabase(gitdir)
      const index = db.packs()[0]!.index
      expect(index.version).toBe(version === '1' ? 1 : 2)
      if (version !== '1') {
        const large = (readFileSync(idxPath).length - (8 + 1024 + index.count * 28 + 40)) / 8
        expect(large).toBeGreaterThan(index.count / 2)
      }
      expectAllReadable(db)
      db.close()
      rmSync(path.join(work, 'scratch.pack'), path.join(work, 'scratch.idx'))
    }
  })

  it('finds an object packed after it opened (the loose file gone)', () => {
    makeHistory(4)
    const db = new ObjectDatabase(gitdir)
    const head = git('rev-parse', 'HEAD').trim()
    expect(db.read(head).type).toBe('commit')
    git('gc', '-q', '--prune=now')
    expect(db.packs()).toHaveLength(0)
    expectAllReadable(db)
    expect(db.packs()).toHaveLength(1)
    db.close()
  })

  it('a refresh or a retire whose pack closes fail still takes the new packs and drops the old', () => {
    makeHistory(4)
    git('gc', '-q', '--prune=now')
    // The closes of the packs' descriptors (only ever read) fail: the old one's in the refresh,
    // the new one's in the retire.
    const failing = closesFailing((file) => /\.(pack|idx)$/.test(file))
    let restore = setDisk(failing.disk)
    const db = new ObjectDatabase(gitdir)
    restore()
    const [before] = packFiles()
    expect(db.packs().map((open) => `${open.name}.pack`)).toEqual([before])
    makeHistory(3, 4)
    // One pack again, another one: the next read finds the loose file gone and refreshes.
    git('gc', '-q', '--prune=now')
    const [after] = packFiles()
    expect(after).not.toBe(before)
    const head = git('rev-parse', 'HEAD').trim()
    restore = setDisk(failing.disk)
    try {
      expect(db.read(head).type).toBe('commit')
    } finally {
      restore()
    }
    expect(db.packs().map((open) => `${open.name}.pack`)).toEqual([after])
    expectAllReadable(db)
    restore = setDisk(failing.disk)
    try {
      db.retire(db.packs().map((open) => open.name))
    } finally {
      restore()
    }
    expect(db.packs()).toEqual([])
    expect(failing.failed()).toBe(4)
    db.close()
  })

  it('names the loose file of every object git wrote, and tells loose from packed', () => {
    makeHistory(3)
    const loose = new ObjectDatabase(gitdir)
    const ids = [...gitObjects().keys()]
    for (const oid of ids) {
      const file = loose.loosePath(oid)
      expect(file).toBe(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)))
      expect(readFileSync(file).length).toBeGreaterThan(0)
      // No pack yet: loose only.
      expect(loose.inPack(oid)).toBe(false)
      expect(loose.has(oid)).toBe(true)
    }
    // Anything that is not an id is normalized as a path, as before.
    expect(loose.loosePath('ab/../cd')).toBe(path.join(gitdir, 'objects', 'ab', '/../cd'))
    loose.close()
    git('gc', '-q')
    const packed = new ObjectDatabase(gitdir)
    for (const oid of ids) {
      expect(packed.inPack(oid)).toBe(true)
      expect(packed.has(oid)).toBe(true)
    }
    expect(packed.inPack('0'.repeat(40))).toBe(false)
    packed.close()
  })

  it('reports a missing object as missing', () => {
    makeHistory(1)
    const db = new ObjectDatabase(gitdir)
    expect(() => db.read('0'.repeat(40))).toThrow(MissingObjectError)
    expect(db.has('0'.repeat(40))).toBe(false)
    db.close()
  })

  it('reports damaged pack data as damage, never as other content', () => {
    makeHistory(10)
    git('gc', '-q')
    const [pack] = packFiles()
    const file = path.join(gitdir, 'objects', 'pack', pack!)
    const bytes = readFileSync(file)
    const db0 = new ObjectDatabase(gitdir)
    const open = db0.packs()[0]!
    const entries = [...open.index.entries()]
    db0.close()
    // Flip one byte in the middle of every object's data.
    const sorted = entries.map((entry) => entry.offset).sort((a, b) => a - b)
    for (let i = 0; i < sorted.length; i++) {
      const start = sorted[i]!
      const end = sorted[i + 1] ?? bytes.length - 20
      const middle = start + Math.floor((end - start) * 0.7)
      bytes[middle] = (bytes[middle] as number) ^ 0x55
    }
    chmodSync(file, 0o644)
    writeFileSync(file, bytes)
    const db = new ObjectDatabase(gitdir)
    let damaged = 0
    for (const entry of entries) {
      const oid = entry.oid.toString('hex')
      try {
        db.read(oid)
      } catch (error) {
        expect(error).toBeInstanceOf(DamagedObjectError)
        damaged++
      }
    }
    expect(damaged).toBe(entries.length)
    db.close()
  })
})

describe('loose objects framed as stored blocks (as Cairn writes them)', () => {
  /** Writes `content` as a loose blob in `stream`'s framing; returns its id. */
  function writeLoose(content: Buffer, frame: (whole: Buffer) => Buffer): string {
    const whole = Buffer.concat([Buffer.from(`blob ${content.length}\0`), content])
    const oid = createHash('sha1').update(whole).digest('hex')
    mkdirSync(path.join(gitdir, 'objects', oid.slice(0, 2)), { recursive: true })
    writeFileSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)), frame(whole))
    return oid
  }
  const byHand = (whole: Buffer) =>
    storedZlib(whole.subarray(0, whole.indexOf(0) + 1), whole.subarray(whole.indexOf(0) + 1))
  const levelZero = (whole: Buffer) => deflateSync(whole, { level: 0 })

  it('reads every size, framed by hand or by zlib at level 0, as git reads it', () => {
    const ids: string[] = []
    for (const size of [0, 1, 300, 8192, 65_000, 150_000]) {
      const content = randomBytes(size)
      if (size < 65_000) ids.push(writeLoose(content, byHand))
      ids.push(writeLoose(Buffer.concat([content, Buffer.from('x')]), levelZero))
    }
    const db = new ObjectDatabase(gitdir)
    for (const oid of ids) {
      const read = db.read(oid)
      expect(read.type).toBe('blob')
      expect(
        read.content.equals(
          Buffer.from(execFileSync('git', ['cat-file', 'blob', oid], { cwd: work })),
        ),
      ).toBe(true)
    }
    db.close()
  })

  it('reports a damaged one as zlib does, and reads the next one as usual', () => {
    const content = Buffer.from('The user likes short answers.\n'.repeat(20))
    const oid = writeLoose(content, byHand)
    const file = path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))
    const sound = readFileSync(file)
    const second = writeLoose(Buffer.from('another note\n'.repeat(10)), byHand)
    const db = new ObjectDatabase(gitdir)
    // A byte of the data, of the block's length, of its checksum; cut short.
    const damages = [
      (bytes: Buffer) => ((bytes[40] = bytes[40]! ^ 0x04), bytes),
      (bytes: Buffer) => ((bytes[3] = bytes[3]! ^ 0x01), bytes),
      (bytes: Buffer) => ((bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 0x10), bytes),
      (bytes: Buffer) => bytes.subarray(0, bytes.length - 3),
    ]
    for (const damage of damages) {
      const bytes = damage(Buffer.from(sound))
      chmodSync(file, 0o644)
      writeFileSync(file, bytes)
      let zlibSays = ''
      try {
        inflateSync(bytes)
      } catch (error) {
        zlibSays = (error as Error).message
      }
      expect(zlibSays).not.toBe('')
      expect(() => db.read(oid)).toThrow(new DamagedObjectError(oid, zlibSays).message)
      // Nothing of the damaged read is left over for the next one.
      expect(db.read(second).content.equals(Buffer.from('another note\n'.repeat(10)))).toBe(true)
    }
    db.close()
  })
})

describe('reading off the thread pool (maintenance)', () => {
  it('reads as read does: loose and packed objects, and a damaged packed copy gives way to a sound loose one', async () => {
    makeHistory(10)
    const before = new ObjectDatabase(gitdir)
    const packedLater = [...gitObjects().keys()]
    // Loose copies of a few objects, written back after git packs them and the pack rots.
    const spare = new Map(
      packedLater.slice(0, 6).map((oid) => [oid, readFileSync(before.loosePath(oid))] as const),
    )
    before.close()
    git('gc', '-q')
    makeHistory(2, 10)
    const expected = gitObjects()
    const intact = new ObjectDatabase(gitdir)
    expect(intact.packs()).toHaveLength(1)
    for (const [oid, object] of expected) {
      const read = await intact.readOffThread(oid)
      expect(read.type).toBe(object.type)
      expect(read.content.equals(object.content)).toBe(true)
    }
    const entries = [...intact.packs()[0]!.index.entries()]
    intact.close()

    // Every packed object's data damaged (as in the test above), the spare loose copies back.
    const file = path.join(gitdir, 'objects', 'pack', packFiles()[0]!)
    const bytes = readFileSync(file)
    const sorted = entries.map((entry) => entry.offset).sort((a, b) => a - b)
    for (let i = 0; i < sorted.length; i++) {
      const end = sorted[i + 1] ?? bytes.length - 20
      const middle = sorted[i]! + Math.floor((end - sorted[i]!) * 0.7)
      bytes[middle] = (bytes[middle] as number) ^ 0x55
    }
    chmodSync(file, 0o644)
    writeFileSync(file, bytes)
    const db = new ObjectDatabase(gitdir)
    for (const [oid, stored] of spare) {
      mkdirSync(path.dirname(db.loosePath(oid)), { recursive: true })
      writeFileSync(db.loosePath(oid), stored)
    }
    for (const oid of packedLater) {
      if (spare.has(oid)) {
        const read = await db.readOffThread(oid)
        expect(read.content.equals(expected.get(oid)!.content)).toBe(true)
        // Noted, as `read` notes it: maintenance then packs the loose copy and mends the pack.
        expect(db.packedCopyDamaged(oid)).toBe(true)
      } else {
        await expect(db.readOffThread(oid)).rejects.toBeInstanceOf(DamagedObjectError)
      }
    }
    expect(db.packedDamage()).toHaveLength(packedLater.length)
    db.close()
  })
})

function rmSync(...files: string[]): void {
  for (const file of files) {
    try {
      chmodSync(file, 0o644)
    } catch {
      // already gone
    }
    execFileSync('rm', ['-f', file])
  }
}

describe('reading off the thread pool: anything but a plain file at a loose name (rdisk29)', () => {
  /**
   * Reads `oid` by `readOffThread` in a child process: what it printed. Not a timing assert:
   * the guard only ends a child that would otherwise never end (a fifo with no writer holds
   * a pool thread at its open; a link to /dev/zero is read without end).
   */
  async function readOffThreadInChild(oid: string): Promise<string> {
    const script = `
      const { ObjectDatabase, DamagedObjectError } = await import(${JSON.stringify(path.resolve('src/main/history/objects/object-database.ts'))})
      const db = new ObjectDatabase(${JSON.stringify(gitdir)})
      try {
        await db.readOffThread(${JSON.stringify(oid)})
        process.stdout.write('READ\\n')
      } catch (error) {
        process.stdout.write(error instanceof DamagedObjectError ? 'DAMAGED\\n' : 'OTHER ' + error.code + '\\n')
      }
      db.close()
    `
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    await new Promise((resolve) => child.once('exit', resolve))
    clearTimeout(guard)
    return out
  }

  function looseOidReplaced(by: (file: string) => void): string {
    makeHistory(1)
    const db = new ObjectDatabase(gitdir)
    const oid = git('rev-parse', 'HEAD:notes.md').trim()
    const file = db.loosePath(oid)
    db.close()
    unlinkSync(file)
    by(file)
    return oid
  }

  it('a fifo: damaged, no pool thread held on its open', async () => {
    const oid = looseOidReplaced((file) => execFileSync('mkfifo', [file]))
    expect(await readOffThreadInChild(oid)).toBe('DAMAGED\n')
    // Kept where it was: the read moves nothing.
    expect(lstatSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))).isFIFO()).toBe(
      true,
    )
  }, 90_000)

  it('a link to /dev/zero: damaged, never read without end', async () => {
    const oid = looseOidReplaced((file) => symlinkSync('/dev/zero', file))
    expect(await readOffThreadInChild(oid)).toBe('DAMAGED\n')
  }, 90_000)
})
