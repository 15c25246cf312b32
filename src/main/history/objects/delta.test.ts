import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
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
describe('the matcher between deltas', () => {
  it('makes the same delta whatever delta came before it', () => {
    const block = Buffer.from('0123456789abcdef')
    // A base whose middle starts after a 5-byte common head: its blocks are indexed at 5, 21,
    // … so the block placed at 160 is not one of them, and a fresh index finds no copy there.
    const base = Buffer.concat([
      Buffer.from('HEAD!'),
      randomFill(155, 1),
      block,
      randomFill(3000, 2),
    ])
    const target = Buffer.concat([
      Buffer.from('HEAD!'),
      randomFill(700, 3),
      block,
      randomFill(700, 4),
    ])
    const alone = createDelta(base, target)
    // Another base of the same size, its middle from 0, with that block at 160: indexed there.
    const other = Buffer.concat([randomFill(160, 5), block, randomFill(base.length - 176, 6)])
    createDelta(other, Buffer.concat([randomFill(900, 7), block, randomFill(900, 8)]))
    const after = createDelta(base, target)
    expect(after?.equals(alone!) ?? after === alone).toBe(true)
    if (after) expect(applyDelta(base, after).equals(target)).toBe(true)
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
