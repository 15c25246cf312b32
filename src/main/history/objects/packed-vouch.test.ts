import { execFileSync } from 'node:child_process'
import { chmodSync, closeSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitIn } from '../test-helpers'
import { flipByte, listPack, type ListedRecord } from './test-support'
import { DamagedObjectError, ObjectDatabase } from './object-database'

// Packed objects taken by their records' CRC-32s once hashing what a pack gave has cost more
// than sorting its record starts (object-database.ts, `recordStarts`): what a first blame of
// a long file pays. Git's own `cat-file` and `verify-pack` are the second opinion.

let work: string
let gitdir: string
const opened: ObjectDatabase[] = []

const git = (...args: string[]): string => gitIn(work, ...args)

/** The file's blob at each commit, newest first (git's own answer). */
function versions(): string[] {
  return git('rev-list', 'main')
    .trim()
    .split('\n')
    .map((commit) => git('rev-parse', `${commit}:long.md`).trim())
}

const gitBytes = (oid: string): Buffer =>
  execFileSync('git', ['--git-dir', gitdir, 'cat-file', 'blob', oid], {
    maxBuffer: 64 * 1024 * 1024,
  })

function open(): ObjectDatabase {
  const db = new ObjectDatabase(gitdir)
  opened.push(db)
  return db
}

/**
 * Gives each name in `from` the index offset that the name it maps to had (version 2's offset
 * table: after the header, the fanout, the names and the CRC-32s); each record stays as stored.
 */
function moveOffsets(from: ReadonlyMap<string, string>): void {
  const sorted = listPack(work, gitdir)
    .records.map((r) => r.oid)
    .sort()
  const idx = listPack(work, gitdir).pack.replace(/\.pack$/, '.idx')
  const table = 8 + 1024 + sorted.length * 24
  const at = (oid: string) => table + sorted.indexOf(oid) * 4
  chmodSync(idx, 0o644)
  const fd = openSync(idx, 'r+')
  try {
    const offsets = new Map([...from.values()].map((oid) => [oid, Buffer.alloc(4)]))
    for (const [oid, offset] of offsets) readSync(fd, offset, 0, 4, at(oid))
    for (const [name, oid] of from) writeSync(fd, offsets.get(oid)!, 0, 4, at(name))
  } finally {
    closeSync(fd)
  }
}

/** A database over the damaged pack, its record starts sorted by reading the other file. */
function sortedByOther(otherBytes: Buffer, other: string): ObjectDatabase {
  const db = open()
  // The first read's hashing pays for the sort; read again (a whole object is not kept), it
  // is checked by its record, which sorts the starts.
  expect(db.read(other).content.equals(otherBytes)).toBe(true)
  expect(db.read(other).content.equals(otherBytes)).toBe(true)
  expect(db.packs()[0]!.index.hasRecordStarts()).toBe(true)
  return db
}

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'cairn-vouch-'))
  gitdir = path.join(work, '.git')
  git('init', '-q', '-b', 'main')
  // A 24 KB file one line of which changes per commit: git gc keeps the newest version whole
  // and stores the older ones as deltas, chains several deep.
  const lines = Array.from(
    { length: 300 },
    (_, i) => `- line ${i}: something worth keeping, ${i * 7919}`,
  )
  // And a file written once (about 25 KB) whose reading alone pays for the sort.
  const other = Array.from(
    { length: 1200 },
    (_, i) => `${i}: ${(i * 2_654_435_761) % 4_294_967_296}`,
  )
  writeFileSync(path.join(work, 'other.md'), `${other.join(' and ')}\n`)
  for (let n = 0; n < 30; n++) {
    lines[(n * 37) % lines.length] = `- line changed in commit ${n}, ${n * 104_729}`
    writeFileSync(path.join(work, 'long.md'), `${lines.join('\n')}\n`)
    git('add', '-A')
    git('commit', '-q', '-m', `change ${n}`)
  }
  git('gc', '-q')
})
afterEach(async () => {
  for (const db of opened.splice(0)) db.close()
  await rm(work, { recursive: true, force: true, maxRetries: 10 })
})

describe('packed objects checked by their records', () => {
  it('reads every version as git has it, by CRC-32 once hashing has cost more than the sort', () => {
    const { records } = listPack(work, gitdir)
    const blobs = versions()
    // The fixture is what the check is for: most versions are deltas.
    expect(records.filter((r) => blobs.includes(r.oid) && r.delta).length).toBeGreaterThan(20)
    const db = open()
    const pack = db.packs()[0]!
    const index = pack.index
    expect(index.hasRecordStarts()).toBe(false)
    // other.md (25 KB) is hashed: more than 128 bytes per object of this pack (90), so the
    // record starts are sorted at the next read that builds an object.
    const other = git('rev-parse', 'main:other.md').trim()
    expect(db.read(other).content.equals(gitBytes(other))).toBe(true)
    expect(index.hasRecordStarts()).toBe(false)
    const hashed = db.hashedFrom(pack)
    expect(hashed).toBe(gitBytes(other).length)
    // Newest to oldest as blame reads them, then again, oldest first.
    for (const oid of [...blobs, ...[...blobs].reverse()]) {
      const object = db.read(oid)
      expect(object.type).toBe('blob')
      expect(object.content.equals(gitBytes(oid))).toBe(true)
    }
    expect(index.hasRecordStarts()).toBe(true)
    // Each version was taken by its records' CRC-32s: not one more byte was hashed.
    expect(db.hashedFrom(pack)).toBe(hashed)
    // Commits and trees too.
    for (const { oid, type } of records.filter((r) => r.type !== 'blob')) {
      const object = db.read(oid)
      expect(object.type).toBe(type)
      const theirs = execFileSync('git', ['--git-dir', gitdir, 'cat-file', type, oid])
      expect(object.content.equals(theirs)).toBe(true)
    }
  })

  it('a small pack read little sorts nothing: every object is hashed as before', () => {
    const db = open()
    const { records } = listPack(work, gitdir)
    const commit = records.find((r) => r.type === 'commit')!
    db.read(commit.oid)
    expect(db.packs()[0]!.index.hasRecordStarts()).toBe(false)
  })

  it('an index damaged to send one name to another sound record is caught after the sort', () => {
    const blobs = versions()
    const theirs = new Map(blobs.map((oid) => [oid, gitBytes(oid)]))
    // Two versions' offsets swapped in the index's offset table (version 2: after the
    // header, the fanout, the names and the CRC-32s); each record stays sound as stored.
    const [a, b] = [blobs[3]!, blobs[4]!]
    const other = git('rev-parse', 'main:other.md').trim()
    const otherBytes = gitBytes(other)
    moveOffsets(
      new Map([
        [a, b],
        [b, a],
      ]),
    )
    const db = sortedByOther(otherBytes, other)
    // Each swapped name leads to a record that matches its CRC-32, but not the one listed
    // for that name: read and hashed, so found damaged, never taken as the other version.
    expect(() => db.read(a)).toThrow(DamagedObjectError)
    expect(() => db.read(b)).toThrow(DamagedObjectError)
    for (const oid of blobs.filter((oid) => oid !== a && oid !== b)) {
      expect(db.read(oid).content.equals(theirs.get(oid)!)).toBe(true)
    }
  })

  it('an index damaged to list one record under two names is caught after the sort', () => {
    const blobs = versions()
    const theirs = new Map(blobs.map((oid) => [oid, gitBytes(oid)]))
    const other = git('rev-parse', 'main:other.md').trim()
    const otherBytes = gitBytes(other)
    // Version a's offset overwritten with version b's: both names now lead to b's record,
    // which matches the CRC-32 listed for b, not the one listed for a.
    const [a, b] = [blobs[3]!, blobs[4]!]
    moveOffsets(new Map([[a, b]]))
    const db = sortedByOther(otherBytes, other)
    expect(() => db.read(a)).toThrow(DamagedObjectError)
    expect(db.read(b).content.equals(theirs.get(b)!)).toBe(true)
  })

  // Each place a byte of a delta's record can be damaged: its header (the size), its base's
  // distance, its zlib stream. The record then fails its CRC-32 and the version is read and
  // hashed as before, which reports it damaged (or, were the bytes still to build it, git's).
  for (const [where, at] of [
    ['its header', (r: ListedRecord) => r.offset],
    ['the distance to its base', (r: ListedRecord) => r.offset + 2],
    ['its zlib stream', (r: ListedRecord) => r.offset + r.inPack - 6],
  ] as const) {
    it(`a delta damaged in ${where} is reported damaged after the sort, never read as sound`, () => {
      const { pack, records } = listPack(work, gitdir)
      const blobs = versions()
      const victim = records.find((r) => r.delta && r.type === 'blob')!
      // The other file (stored whole, nothing it is built from damaged) read first so that
      // its hashing pays for the sort, then again: checked by its record, which sorts.
      const other = git('rev-parse', 'main:other.md').trim()
      const otherBytes = gitBytes(other)
      // Git's answers before the damage (git cannot read them after it either).
      const theirs = new Map(blobs.map((oid) => [oid, gitBytes(oid)]))
      flipByte(pack, at(victim))
      const db = open()
      expect(db.read(other).content.equals(otherBytes)).toBe(true)
      expect(db.read(other).content.equals(otherBytes)).toBe(true)
      expect(db.packs()[0]!.index.hasRecordStarts()).toBe(true)
      expect(() => db.read(victim.oid)).toThrow(DamagedObjectError)
      // Anything built on it is damaged too, or exactly what git had.
      for (const oid of blobs) {
        let read: Buffer | null = null
        try {
          read = db.read(oid).content
        } catch (error) {
          expect(error).toBeInstanceOf(DamagedObjectError)
        }
        if (read) expect(read.equals(theirs.get(oid)!)).toBe(true)
      }
    })
  }
})
