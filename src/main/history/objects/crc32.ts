import zlib from 'node:zlib'

const zlibCrc32 = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number })
  .crc32

let table: Int32Array | null = null

/** CRC-32 (the one zlib and the pack index use); node's own where it has one. */
export function crc32(data: Uint8Array, value = 0): number {
  if (zlibCrc32) return zlibCrc32(data, value)
  if (!table) {
    table = new Int32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c
    }
  }
  let crc = ~value
  for (let i = 0; i < data.length; i++) {
    crc = (table[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8)
  }
  return ~crc >>> 0
}
