import { randomBytes } from 'node:crypto'
import { deflateSync, inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { patchStored, STORED_DATA_AT, storedId, storedObject, storedZlib } from '../object-store'
import { inflateStored } from './stored-zlib'

// Small loose objects are framed as zlib stored blocks by hand (no zlib set-up per object):
// the bytes must be exactly what zlib itself writes at level 0, so git and every reader take
// them as before.

describe('storedZlib', () => {
  for (const size of [0, 1, 27, 400, 3800, 3801, 7600, 8192, 40_000, 65_000, 65_269]) {
    it(`frames ${size} bytes exactly as deflateSync at level 0`, () => {
      const head = Buffer.from(`blob ${size}\0`)
      const body = randomBytes(size)
      // Bytes of 0xff test the Adler-32 sums at their largest.
      const full = Buffer.alloc(size, 0xff)
      for (const content of [body, full]) {
        const whole = Buffer.concat([head, content])
        const framed = storedZlib(head, content)
        expect(framed.equals(deflateSync(whole, { level: 0 }))).toBe(true)
        expect(inflateSync(framed).equals(whole)).toBe(true)
      }
    })
  }

  it('refuses more than one stored block holds', () => {
    expect(() => storedZlib(Buffer.from('blob 65535\0'), Buffer.alloc(65_535))).toThrow()
  })
})

// An object framed by Cairn is named from its frame's data (the header and content git hashes),
// up to a header and content of 0xff00 bytes (a blob of 65,269); one byte more is not framed here.
describe('storedId', () => {
  const cases = [
    ...[0, 400, 40_000, 65_000, 65_269, 65_270].map((size) => ['blob', size] as const),
    ['tree', 40_000] as const,
    ['commit', 400] as const,
  ]
  for (const [type, size] of cases) {
    it(`names a ${size}-byte ${type} as git hash-object does`, () => {
      const content = randomBytes(size)
      const stored = storedObject(type, content)
      if (Buffer.byteLength(`${type} ${size}\0`) + size > 0xff00) {
        expect(stored).toBeNull()
        return
      }
      const git = spawnSync('git', ['hash-object', '--literally', '-t', type, '--stdin'], {
        input: content,
        encoding: 'utf8',
      })
      expect(git.status).toBe(0)
      expect(storedId(stored!)).toBe(git.stdout.trim())
    })
  }
})

// A tree's next version is its loose file patched where ids changed, its Adler-32 updated from
// the changed bytes alone (stop 15): the result must be what framing the new bytes gives.
describe('patchStored', () => {
  for (const size of [20, 400, 3801, 40_000, 65_000]) {
    it(`keeps a ${size}-byte block what storedZlib makes of the patched bytes`, () => {
      const head = Buffer.from(`tree ${size}\0`)
      for (const fill of ['random', 0x00, 0xff] as const) {
        const body = fill === 'random' ? randomBytes(size) : Buffer.alloc(size, fill)
        const stored = storedZlib(head, body)
        // Several patches in a row, at the start, the end and in between, some changing
        // nothing, of bytes at their smallest and largest.
        for (let round = 0; round < 12; round++) {
          const length = Math.min(20, size)
          const at =
            round === 0
              ? 0
              : round === 1
                ? size - length
                : Math.floor(Math.random() * (size - length))
          const fresh =
            round % 4 === 2
              ? Buffer.from(body.subarray(at, at + length))
              : round % 4 === 3
                ? Buffer.alloc(length, round % 8 === 3 ? 0xff : 0x00)
                : randomBytes(length)
          fresh.copy(body, at)
          patchStored(stored, head.byteLength + at, fresh)
          expect(stored.equals(storedZlib(head, body))).toBe(true)
          expect(inflateSync(stored).equals(Buffer.concat([head, body]))).toBe(true)
        }
      }
    })
  }

  it('refuses a patch outside the block, changing nothing', () => {
    const head = Buffer.from('tree 40\0')
    const stored = storedZlib(head, randomBytes(40))
    const before = Buffer.from(stored)
    expect(() => patchStored(stored, head.byteLength + 30, randomBytes(20))).toThrow()
    expect(() => patchStored(stored, -1, randomBytes(1))).toThrow()
    expect(stored.equals(before)).toBe(true)
    expect(STORED_DATA_AT).toBe(7)
  })
})

// Loose objects Cairn framed as stored blocks are read back without zlib (`inflateStored`,
// stop 18): for every stream it takes, the bytes zlib's inflate gives; anything else (damage
// included) it leaves to zlib, which inflates or refuses it as before.
describe('inflateStored', () => {
  for (const size of [0, 1, 400, 3800, 8192, 65_000, 65_531, 65_535, 200_000]) {
    it(`reads ${size} bytes framed by storedZlib or by zlib at level 0 as zlib does`, () => {
      const content = randomBytes(size)
      const streams: Buffer[] = [deflateSync(content, { level: 0 })]
      if (size + 11 <= 0xffff) {
        const head = Buffer.from(`blob ${size}\0`)
        streams.push(storedZlib(head, content))
      }
      for (const stream of streams) {
        const read = inflateStored(stream)
        expect(read).not.toBeNull()
        expect(read!.equals(inflateSync(stream))).toBe(true)
        // A buffer of its own, its exact size (kept as a delta base, it holds nothing more).
        expect(read!.buffer.byteLength).toBe(read!.length)
      }
    })
  }

  it('leaves compressed streams to zlib', () => {
    const text = Buffer.from('notes '.repeat(100))
    for (const level of [1, 6, 9]) expect(inflateStored(deflateSync(text, { level }))).toBeNull()
  })

  it('takes no damaged stream, wherever the damage is', () => {
    const content = randomBytes(300)
    const sound = storedZlib(Buffer.from('blob 300\0'), content)
    const damaged: Buffer[] = []
    // Every byte changed in turn: the header, the block's flag and lengths, data, checksum.
    for (let at = 0; at < sound.length; at++) {
      const copy = Buffer.from(sound)
      copy[at] = copy[at]! ^ (at % 2 === 0 ? 0x01 : 0x80)
      damaged.push(copy)
    }
    damaged.push(sound.subarray(0, sound.length - 1), sound.subarray(0, 9), Buffer.alloc(0))
    for (const bytes of damaged) {
      const read = inflateStored(bytes)
      if (read === null) continue
      // Only a change zlib does not see either (the header's unused bits) may pass, and then
      // with zlib's own result.
      expect(read.equals(inflateSync(bytes))).toBe(true)
    }
    // The checksum is what catches changed data.
    const flipped = Buffer.from(sound)
    flipped[20] = flipped[20]! ^ 0x01
    expect(inflateStored(flipped)).toBeNull()
    expect(() => inflateSync(flipped)).toThrow(/incorrect data check/)
    // Bytes after the stream: zlib's to judge (it ignores them).
    expect(inflateStored(Buffer.concat([sound, Buffer.from('zz')]))).toBeNull()
  })
})
