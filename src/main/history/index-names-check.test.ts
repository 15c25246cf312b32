import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { IndexFile, writeIndex, type IndexEntry } from './index-file'
import { crc32Range } from './objects/crc32'
import type { ObjectStore } from './object-store'
import { checkIndex } from './side-index'

// The idle check of the side index's names: in slices with a pause between them, as the
// records are, so a memory with many thousands of names never stalls a command for the
// whole check (review12-hist R3).

let root: string
let dir: string
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'cairn-names-check-'))
  dir = path.join(root, 'cairn-index')
})
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 10 }))

const oid = (i: number) => i.toString(16).padStart(40, 'a')

/** Two commits that between them add `count` distinct files. */
function manyNames(count: number): IndexEntry[] {
  const files = Array.from(
    { length: count },
    (_, i) => `/memories/f${String(i).padStart(6, '0')}.md`,
  )
  const half = Math.floor(count / 2)
  return [0, 1].map((i) => ({
    oid: oid(i),
    parent: i === 0 ? null : oid(0),
    time: (1_700_000_000 + i) * 1000,
    actor: 'user',
    command: 'create',
    subject: 'outside edits',
    paths: [],
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    files: i === 0 ? files.slice(0, half) : files.slice(half),
  }))
}

describe('the idle check of the index names', () => {
  it('checks the names in slices, pausing between them, and still finds a damaged one', async () => {
    writeIndex(dir, manyNames(9000))
    // A byte of name 5000 (past the first slice, before the newest bytes open checks).
    const names = readFileSync(path.join(dir, 'names'))
    const at = names.indexOf(Buffer.from('/memories/f005000.md'))
    expect(names.length - at).toBeGreaterThan(16384)
    names[at + 12] = 'X'.charCodeAt(0)
    writeFileSync(path.join(dir, 'names'), names)

    const index = IndexFile.open(dir)
    let pauses = 0
    const store = {} as ObjectStore // never reached: the names fail first
    expect(await checkIndex(store, index, async () => void pauses++)).toBe(false)
    expect(pauses).toBeGreaterThanOrEqual(1)
    index.close()
  })

  it('passes an index closed under it that is no longer in use, and fails one still in use', async () => {
    // 3,000 entries: open read the newest 1,024 records, the check reads the older ones.
    const [first] = manyNames(10)
    writeIndex(
      dir,
      Array.from({ length: 3000 }, (_, i) => ({
        ...first!,
        oid: oid(i),
        parent: i === 0 ? null : oid(i - 1),
        files: [`/memories/f${i % 7}.md`],
      })),
    )
    const store = {} as ObjectStore // never reached: the index is closed before the spot checks
    const closedUnder = async (inUse: boolean): Promise<boolean> => {
      const index = IndexFile.open(dir)
      let pauses = 0
      const sound = await checkIndex(
        store,
        index,
        async () => {
          if (++pauses === 1) index.close()
        },
        () => inUse,
      )
      expect(pauses).toBeGreaterThanOrEqual(1)
      expect(index.isClosed).toBe(true)
      return sound
    }
    // Swapped out by a rebuild or a switch: another index is in use, nothing left to check.
    expect(await closedUnder(false)).toBe(true)
    // Closed but still the one in use (a swap that failed after closing it): rebuilt.
    expect(await closedUnder(true)).toBe(false)
    // Closed before the check, still in use (by default): rebuilt too.
    const index = IndexFile.open(dir)
    index.close()
    expect(await checkIndex(store, index)).toBe(false)
  })

  it('checks the records in slices and finds a damaged one in any slice', async () => {
    // 3,000 entries: open read the newest 1,024 records, the check reads the older ones as it
    // reaches them. Its slices end at 3,000, 2,488, 1,976, 1,464, 952 and 440.
    const [first] = manyNames(10)
    const entries = Array.from({ length: 3000 }, (_, i) => ({
      ...first!,
      oid: oid(i),
      parent: i === 0 ? null : oid(i - 1),
      files: [`/memories/f${i % 7}.md`],
    }))
    writeIndex(dir, entries)
    const sound = readFileSync(path.join(dir, 'commits'))
    const store = {} as ObjectStore // never reached: each damage fails the check first
    // The oldest, either side of a slice's border, the newest record open left unread: a
    // checksum (the time); and the structure (the details' offset, which the record after it
    // is checked against too: one inside a slice).
    for (const [entry, at] of [
      [0, 24],
      [439, 24],
      [440, 24],
      [1463, 24],
      [1464, 24],
      [1975, 24],
      [1200, 32],
    ] as const) {
      const commits = Buffer.from(sound)
      commits[64 * entry + at] ^= 0x01
      writeFileSync(path.join(dir, 'commits'), commits)
      const index = IndexFile.open(dir)
      let pauses = 0
      expect(await checkIndex(store, index, async () => void pauses++), `entry ${entry}`).toBe(
        false,
      )
      // It paused after the names and between the slices of records before the damaged one:
      // no slice longer than 1,024 records (512 today), whatever their size.
      expect(pauses, `entry ${entry}`).toBeGreaterThanOrEqual(
        1 + Math.floor((3000 - 1 - entry) / 1024),
      )
      index.close()
    }
  })

  it("stores each name's sum as zlib's CRC-32 of its length word from its id, then its bytes", () => {
    // The sum open checks the newest names by, worked out here by zlib: a reader and writer
    // that agreed on another sum would read every index written before as damaged.
    writeIndex(dir, manyNames(40))
    const names = readFileSync(path.join(dir, 'names'))
    let at = 0
    let id = 0
    for (; at < names.length; id++) {
      const length = names.readUInt32LE(at)
      const lengthWord = names.subarray(at, at + 4)
      const sum = zlib.crc32(names.subarray(at + 8, at + 8 + length), zlib.crc32(lengthWord, id))
      expect(names.readUInt32LE(at + 4)).toBe(sum >>> 0)
      at += 8 + length
    }
    expect(id).toBe(40)
    expect(IndexFile.open(dir).size).toBe(2)
  })

  it('finds a changed byte in one of the newest names at open, and drops what names it', () => {
    writeIndex(dir, manyNames(40))
    const names = readFileSync(path.join(dir, 'names'))
    // A byte of the newest name (the length word and the sum left as they were).
    const at = names.lastIndexOf(Buffer.from('/memories/f000039.md'))
    names[at + 12] = 'X'.charCodeAt(0)
    writeFileSync(path.join(dir, 'names'), names)
    const index = IndexFile.open(dir)
    // The second commit names it: it goes, the first stays.
    expect(index.size).toBe(1)
    expect(index.head()).toBe(oid(0))
    // The name cut is not kept either: not counted, and not checked again by the idle check
    // (whose stale start would read as damage and rebuild the index for nothing).
    expect(index.namesRead).toBe(39)
    expect(() => index.checkNames()).not.toThrow()
    index.close()
  })

  it('sums a range in place as zlib sums the same bytes', () => {
    const bytes = Buffer.from('/memories/ü notes/plan.md and more')
    for (const seed of [0, 1, 4095, 0xfffffffe]) {
      for (const [start, end] of [
        [0, bytes.length],
        [3, 17],
        [5, 5],
      ] as const) {
        expect(crc32Range(bytes, start, end, seed)).toBe(
          zlib.crc32(bytes.subarray(start, end), seed) >>> 0,
        )
      }
    }
  })
})
