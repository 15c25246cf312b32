/**
 * zlib streams of stored (uncompressed) deflate blocks, which Cairn writes its loose objects
 * as (`storedZlib` in object-store.ts): read back here without zlib. zlib's sync inflate
 * builds a stream object for every call (about 1.4 KB of JavaScript heap, plus its output
 * chunk), and a maintenance pass inflates every loose object it packs: tens of thousands a
 * pass, garbage that set the pace of its collections (docs/performance.md, stop 18).
 *
 *   stream = 78 01 block* adler32(4, big-endian)
 *   block  = (00 | 01 final) LEN(2, little-endian) ~LEN(2) <LEN bytes>
 */

const ADLER_BASE = 65521

/** Adler-32 (RFC 1950): sums taken modulo 65521 every 3,800 bytes, before they can overflow. */
export function adler32(bytes: Uint8Array): number {
  let a = 1
  let b = 0
  let at = 0
  while (at < bytes.length) {
    const end = Math.min(at + 3800, bytes.length)
    for (; at < end; at++) {
      a += bytes[at]!
      b += a
    }
    a %= ADLER_BASE
    b %= ADLER_BASE
  }
  return ((b << 16) | a) >>> 0
}

/**
 * What `stored` inflates to, when it is a zlib stream of stored blocks exactly as Cairn and
 * zlib at level 0 write one (the header `78 01`, blocks whose header byte is 0 or 1 and whose
 * lengths check, the last one final, then an Adler-32 that matches, and nothing after it);
 * null for anything else — compressed blocks, another header, damage of any kind — which
 * zlib is then given, to inflate or refuse as it always did. For every stream it accepts,
 * zlib's inflate gives the same bytes. The result is a buffer of its own, its exact size.
 */
export function inflateStored(stored: Uint8Array): Buffer | null {
  const end = stored.length
  if (end < 11 || stored[0] !== 0x78 || stored[1] !== 0x01) return null
  // The blocks' lengths first: the output is allocated once, at its size.
  let at = 2
  let total = 0
  let blocks = 0
  for (;;) {
    if (at + 5 > end) return null
    const flag = stored[at]!
    if (flag > 1) return null
    const length = stored[at + 1]! | (stored[at + 2]! << 8)
    if ((stored[at + 3]! | (stored[at + 4]! << 8)) !== (length ^ 0xffff)) return null
    at += 5 + length
    total += length
    blocks++
    if (at + 4 > end) return null
    if (flag === 1) break
  }
  if (at + 4 !== end) return null
  const out = Buffer.allocUnsafeSlow(total)
  let from = 2
  let to = 0
  for (let k = 0; k < blocks; k++) {
    const length = stored[from + 1]! | (stored[from + 2]! << 8)
    out.set(stored.subarray(from + 5, from + 5 + length), to)
    to += length
    from += 5 + length
  }
  const sums =
    ((stored[at]! << 24) | (stored[at + 1]! << 16) | (stored[at + 2]! << 8) | stored[at + 3]!) >>> 0
  return adler32(out) === sums ? out : null
}
