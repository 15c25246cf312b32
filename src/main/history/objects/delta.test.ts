import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { applyDelta, createDelta, DeltaError } from './delta'

const text = (lines: number, seed: number) =>
  Buffer.from(
    Array.from(
      { length: lines },
      (_, i) => `line ${i}: the user prefers ${(i * seed) % 97} units`,
    ).join('\n'),
  )

describe('deltas', () => {
  it('rebuilds the target from the base for edits anywhere', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 3000 }),
        fc.array(
          fc.record({
            at: fc.nat(),
            remove: fc.nat({ max: 200 }),
            insert: fc.uint8Array({ maxLength: 200 }),
          }),
          { maxLength: 6 },
        ),
        (baseBytes, edits) => {
          const base = Buffer.from(baseBytes)
          let target = Buffer.from(base)
          for (const edit of edits) {
            const at = target.length ? edit.at % target.length : 0
            target = Buffer.concat([
              target.subarray(0, at),
              Buffer.from(edit.insert),
              target.subarray(at + edit.remove),
            ])
          }
          const delta = createDelta(base, target)
          if (delta) expect(applyDelta(base, delta).equals(target)).toBe(true)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('is small for a small edit of a large text, and finds moved blocks', () => {
    const base = text(2000, 7)
    const edited = Buffer.concat([
      base.subarray(0, 30_000),
      Buffer.from('NEW'),
      base.subarray(30_010),
    ])
    const small = createDelta(base, edited)
    expect(small).not.toBeNull()
    expect(small!.length).toBeLessThan(40)
    expect(applyDelta(base, small!).equals(edited)).toBe(true)

    // Swap two halves: everything is still a copy.
    const swapped = Buffer.concat([base.subarray(20_000), base.subarray(0, 20_000)])
    const moved = createDelta(base, swapped)
    expect(moved).not.toBeNull()
    expect(moved!.length).toBeLessThan(200)
    expect(applyDelta(base, moved!).equals(swapped)).toBe(true)
  })

  it('declines when the delta would not save half', () => {
    const random = (n: number, seed: number) => {
      let state = seed
      return Buffer.from(
        Array.from(
          { length: n },
          () => (state = (Math.imul(state, 1_103_515_245) + 12_345) | 0) >>> 24,
        ),
      )
    }
    expect(createDelta(random(4000, 1), random(4000, 2))).toBeNull()
    expect(createDelta(Buffer.alloc(0), Buffer.from('short'))).toBeNull()
  })

  it('rejects deltas that do not fit their base or overrun', () => {
    const base = text(50, 3)
    const target = Buffer.concat([base, Buffer.from('tail')])
    const delta = createDelta(base, target)!
    expect(() => applyDelta(base.subarray(1), delta)).toThrow(DeltaError)
    expect(() => applyDelta(base, delta.subarray(0, delta.length - 2))).toThrow(DeltaError)
    // Copy 10 bytes from offset 0x7fffffff: far outside the base.
    const copyPastEnd = Buffer.from([
      (base.length & 0x7f) | 0x80,
      base.length >> 7,
      10,
      0x9f,
      0xff,
      0xff,
      0xff,
      0x7f,
      10,
    ])
    expect(() => applyDelta(base, copyPastEnd)).toThrow(DeltaError)
  })
})

// The matcher's hash tables are the module's, emptied for each delta (stop 18): a delta must
// not depend on what was indexed before it, or the same pass could write different packs.
// Without the emptying, entries of earlier deltas pile up until a probe for a hash finds no
// empty slot and loops forever: the tests below, hundreds of deltas, would hang instead of
// failing. So this file first makes two deltas that cannot fill a table (21 entries in 32
// slots) and fails, with a message, before any other test runs, when the second depends on
// the first.
const BLOCK = Buffer.from('0123456789abcdef')
// A base whose middle (after a 5-byte common head, before a 3,000-byte common tail) is 171
// bytes: its blocks are indexed at 5, 21, … 149 (a table of 32 slots), so the block at 160 is
// not one of them, and a fresh index finds no copy of it for the target.
const base = Buffer.concat([Buffer.from('HEAD!'), randomFill(155, 1), BLOCK, randomFill(3000, 2)])
const target = Buffer.concat([
  Buffer.from('HEAD!'),
  randomFill(700, 3),
  BLOCK,
  randomFill(700, 4),
  randomFill(3000, 2),
])
// Another base with a middle of the same table size, from 0, with that block at 160: indexed
// there. An entry of it left in the table would point the target's block at the base's 160.
const other = Buffer.concat([randomFill(160, 5), BLOCK])
const otherTarget = Buffer.concat([randomFill(900, 7), randomFill(900, 8)])

// The delta of `base` and `target` on fresh tables, then after `other`'s.
let alone: Buffer | null = null
let after: Buffer | null = null
beforeAll(() => {
  alone = createDelta(base, target)
  createDelta(other, otherTarget)
  after = createDelta(base, target)
  if (!alone || !after || !after.equals(alone)) {
    throw new Error(
      "a delta changed with the delta made before it: the matcher's hash tables are not emptied " +
        'between deltas (the tests of this file, left to run, would hang on a full table)',
    )
  }
})

describe('the matcher between deltas', () => {
  it('makes the same delta whatever delta came before it', () => {
    // The block was sent as it is (no copy found): a copy from an earlier delta's entry would
    // have made the delta 16 bytes shorter or more.
    expect(alone).not.toBeNull()
    expect(alone!.length).toBeGreaterThan(1416)
    expect(after!.equals(alone!)).toBe(true)
    expect(applyDelta(base, after!).equals(target)).toBe(true)
  })
})

// Bytes that look random but are the same at every run (`seed`).
function randomFill(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length)
  let x = seed * 2654435761
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0
    out[i] = (x >>> 16) & 0xff
  }
  return out
}
