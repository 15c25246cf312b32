import zlib from 'node:zlib'

const zlibCrc32 = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number })
  .crc32

let table: Int32Array | null = null

function crcTable(): Int32Array {
  if (!table) {
    table = new Int32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c
    }
  }
  return table
}

/** CRC-32 (the one zlib and the pack index use); node's own where it has one. */
export function crc32(data: Uint8Array, value = 0): number {
  if (zlibCrc32) return zlibCrc32(data, value)
  return crc32Range(data, 0, data.length, value)
}

/**
 * The same over `data[start..end)`, in place: for many short ranges (names of a few dozen
 * bytes), where the view node's own call needs would cost more than the bytes.
 */
export function crc32Range(data: Uint8Array, start: number, end: number, value = 0): number {
  const t = crcTable()
  let crc = ~value
  for (let i = start; i < end; i++) {
    crc = (t[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8)
  }
  return ~crc >>> 0
}
