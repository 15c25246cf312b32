import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { gitIn } from '../test-helpers'
import { flipByte, listPack } from './test-support'
import { ObjectDatabase } from './object-database'
import type { PackedExtent } from './packed-crc'
import { PackIndex } from './pack-index'

// Open's check of HEAD's packed trees (packed-crc.ts): each record's bytes against the CRC-32
// the pack index holds, with git's own `verify-pack` as the second opinion on where each
// record lies and which are deltas.

let work: string
let gitdir: string

const git = (...args: string[]): string => gitIn(work, ...args)

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'cairn-crc-'))
  gitdir = path.join(work, '.git')
  git('init', '-q')
  // Folders whose trees change a little each round: git gc then stores older trees as deltas.
  for (let round = 0; round < 6; round++) {
    for (let n = 0; n < 30; n++) {
      const folder = path.join(work, `d${n % 4}`)
      mkdirSync(folder, { recursive: true })
      writeFileSync(path.join(folder, `f${n}.md`), `file ${n}, round ${n % 3 === 0 ? round : 0}\n`)
    }
    git('add', '-A')
    git('commit', '-q', '-m', `round ${round}`)
  }
  git('gc', '-q')
})
afterEach(() => rm(work, { recursive: true, force: true, maxRetries: 10 }))

describe('packed records checked by their CRC-32', () => {
  it('vouches for each whole record, leaves each delta to a full read, and skips what no pack holds', () => {
    const { records: all } = listPack(work, gitdir)
    expect(all.some((record) => record.delta)).toBe(true)
    const db = new ObjectDatabase(gitdir)
    const missing = '0'.repeat(40)
    const sound = db.packedRecordsSound([...all.map((record) => record.oid), missing])
    expect(sound.has(missing)).toBe(false)
    for (const record of all)
      expect(sound.get(record.oid), record.oid).toBe(record.delta ? null : true)
    expect(db.packedDamage()).toEqual([])
    db.close()
  })

  it('finds one flipped byte in a whole tree record, and in the last record before the trailer', () => {
    const { pack, records: all } = listPack(work, gitdir)
    const trees = all.filter((record) => record.type === 'tree' && !record.delta)
    const last = all.reduce((a, b) => (b.offset > a.offset ? b : a))
    expect(last.delta).toBe(false)
    const damaged = [trees[0]!, last]
    for (const record of damaged) flipByte(pack, record.offset + Math.floor(record.inPack / 2))
    const db = new ObjectDatabase(gitdir)
    const sound = db.packedRecordsSound(all.map((record) => record.oid))
    for (const record of all) {
      const want = damaged.includes(record) ? false : record.delta ? null : true
      expect(sound.get(record.oid), record.oid).toBe(want)
    }
    // Noted as damaged, as a failed read would be: a write of it then makes a loose copy.
    expect(new Set(db.packedDamage())).toEqual(new Set(damaged.map((record) => record.oid)))
    // git agrees the records are damaged.
    expect(() => git('fsck', '--strict')).toThrow()
    db.close()
  })

  it('takes where records end from an earlier check of the same pack, with the same answers', () => {
    const { pack, records: all } = listPack(work, gitdir)
    const oids = all.map((record) => record.oid)
    // The first check works out where each record ends; git says where each lies.
    const first = new ObjectDatabase(gitdir)
    const found = new Map<string, PackedExtent>()
    const sound = first.packedRecordsSound(oids, { known: new Map(), found })
    first.close()
    expect(found.size).toBe(all.length)
    for (const record of all) {
      const extent = found.get(record.oid)!
      expect([extent.start, extent.end - extent.start], record.oid).toEqual([
        record.offset,
        record.inPack,
      ])
    }
    const pass = vi.spyOn(PackIndex.prototype, 'crcAndOffsets')
    try {
      // With them known: the same answers, and the offset tables never read.
      const again = new ObjectDatabase(gitdir)
      const next = new Map<string, PackedExtent>()
      expect(again.packedRecordsSound(oids, { known: found, found: next })).toEqual(sound)
      expect(next).toEqual(found)
      expect(pass).not.toHaveBeenCalled()
      again.close()
      // An extent of another pack, or of a record starting elsewhere, is not taken (each made
      // to end one byte early: taken, the record would fail its check); one that ends early
      // (or past the pack's objects) is judged by the full pass: no damage either.
      const tree = all.find((record) => record.type === 'tree' && !record.delta)!
      const short = (extent: PackedExtent) => ({ ...extent, end: extent.end - 1 })
      const original = found.get(tree.oid)!
      for (const wrong of [
        { ...short(original), pack: 'f'.repeat(40) },
        { ...short(original), start: original.start + 1 },
        short(original),
        { ...original, end: 2 ** 40 },
      ]) {
        const db = new ObjectDatabase(gitdir)
        const known = new Map(found).set(tree.oid, wrong)
        expect(db.packedRecordsSound(oids, { known, found: new Map() })).toEqual(sound)
        expect(db.packedDamage()).toEqual([])
        db.close()
      }
      expect(pass).toHaveBeenCalledTimes(4)
      // A record damaged since is found with its extent known, as without (the full pass
      // confirms it: a kept end that fails the check may be the end that is wrong).
      flipByte(pack, tree.offset + Math.floor(tree.inPack / 2))
      const damaged = new ObjectDatabase(gitdir)
      const after = damaged.packedRecordsSound(oids, { known: found, found: new Map() })
      expect(pass).toHaveBeenCalledTimes(5)
      expect(after.get(tree.oid)).toBe(false)
      expect(damaged.packedDamage()).toEqual([tree.oid])
      damaged.close()
    } finally {
      pass.mockRestore()
    }
  })
})
