import { describe, expect, it } from 'vitest'
import { OFS_DELTA, TYPE_CODES } from './pack-file'
import { entryHeader } from './pack-writer'

// The pack writer writes each entry's header into one buffer of its own (stop 18) instead of
// building an array of bytes per entry: the bytes must be what git's format (and the writer
// before) made, for every size and every distance back to a delta's base.

// The header as the writer built it before: type and size, then an OFS_DELTA's distance in
// big-endian groups of 7 bits, each but the last adding one.
function reference(code: number, size: number, distance: number): Buffer {
  const bytes: number[] = []
  let byte = (code << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    bytes.push(byte | 0x80)
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  bytes.push(byte)
  if (code === OFS_DELTA) {
    const groups = [distance & 0x7f]
    let value = Math.floor(distance / 128)
    while (value > 0) {
      value -= 1
      groups.unshift((value & 0x7f) | 0x80)
      value = Math.floor(value / 128)
    }
    bytes.push(...groups)
  }
  return Buffer.from(bytes)
}

describe('entryHeader', () => {
  // Each side of every boundary where a varint grows by a group.
  const edges = [0, 1, 15, 16, 127, 128, 2047, 2048, 16_383, 16_384, 16_511, 16_512, 2_113_663]
    .concat([2_113_664, 2 ** 28, 2 ** 31 + 5, 2 ** 35 + 12_345, 2 ** 40 - 1])
    .flatMap((n) => [n - 1, n, n + 1])
    .filter((n) => n >= 0)

  it('writes whole entries of every kind and size as before', () => {
    for (const code of Object.values(TYPE_CODES)) {
      for (const size of edges) expect(entryHeader(code, size, 0)).toEqual(reference(code, size, 0))
    }
  })

  it('writes a delta at every distance from its base as before', () => {
    for (const size of [0, 100, 70_000]) {
      for (const distance of edges.filter((n) => n > 0)) {
        expect(entryHeader(OFS_DELTA, size, distance)).toEqual(reference(OFS_DELTA, size, distance))
      }
    }
  })
})
