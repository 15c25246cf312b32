import { randomBytes } from 'node:crypto'
import { deflateSync, inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { storedZlib } from '../object-store'

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
