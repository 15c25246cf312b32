/**
 * Git's delta format (the body of an OFS_DELTA / REF_DELTA pack entry): how to rebuild a
 * target from a base by copying ranges of the base and inserting literal bytes.
 *
 *   varint(base size) varint(target size) op...
 *   op = 1xxxxxxx [offset bytes] [size bytes]   copy: the low 4 bits say which offset bytes
 *                                               follow, the next 3 which size bytes (0 = 0x10000)
 *      | 0nnnnnnn <n literal bytes>            insert (n = 1..127)
 */

/** Thrown for a delta that does not fit its base or runs past its end: the pack is damaged. */
export class DeltaError extends Error {}

/** Where the size `readSize` read last ended in its delta. */
let sizeEnd = 0

/**
 * The size at `at` in a delta's header (a varint); where it ends goes to `sizeEnd`. A function
 * of the module, not a closure made at each `applyDelta`: a walk down delta chains applies
 * hundreds of deltas, and the closure, made and (under tsx, which the bench runs on) named at
 * every call, showed in the profile of a first blame at 100,000 commits (stop 16).
 */
function readSize(delta: Uint8Array, at: number): number {
  let value = 0
  let shift = 0
  for (;;) {
    if (at >= delta.length) throw new DeltaError('delta header is cut short')
    const byte = delta[at++] as number
    value += (byte & 0x7f) * 2 ** shift
    shift += 7
    if (!(byte & 0x80)) {
      sizeEnd = at
      return value
    }
    if (shift > 49) throw new DeltaError('delta header is too long')
  }
}

/** Rebuilds the target of `delta` from `base`. Throws `DeltaError` on malformed input. */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Buffer {
  const baseSize = readSize(delta, 0)
  if (baseSize !== base.length) throw new DeltaError('delta does not fit its base')
  const size = readSize(delta, sizeEnd)
  let at = sizeEnd
  const out = Buffer.allocUnsafe(size)
  let written = 0
  while (at < delta.length) {
    const op = delta[at++] as number
    if (op & 0x80) {
      let offset = 0
      let length = 0
      for (let bit = 0; bit < 4; bit++) {
        if (op & (1 << bit)) {
          if (at >= delta.length) throw new DeltaError('copy op is cut short')
          offset += (delta[at++] as number) * 2 ** (8 * bit)
        }
      }
      for (let bit = 0; bit < 3; bit++) {
        if (op & (0x10 << bit)) {
          if (at >= delta.length) throw new DeltaError('copy op is cut short')
          length |= (delta[at++] as number) << (8 * bit)
        }
      }
      if (length === 0) length = 0x10000
      if (offset + length > base.length || written + length > size) {
        throw new DeltaError('copy op reaches outside its base or target')
      }
      out.set(base.subarray(offset, offset + length), written)
      written += length
    } else if (op !== 0) {
      if (at + op > delta.length || written + op > size) {
        throw new DeltaError('insert op reaches outside the delta or target')
      }
      out.set(delta.subarray(at, at + op), written)
      at += op
      written += op
    } else {
      throw new DeltaError('reserved delta op 0')
    }
  }
  if (written !== size) throw new DeltaError('delta made fewer bytes than it announced')
  return out
}

/** Bytes the matcher compares at once; git's own delta index uses the same window. */
const BLOCK = 16
/** Longest copy one op may say (git's encoder never writes more). */
const MAX_COPY = 0x10000
/** Beyond this many differing bytes, only the common head and tail are reused. */
const MAX_MATCHED_REGION = 256 * 1024

/**
 * A delta that turns `base` into `target`, or null when it would not save at least half of
 * `target`. Work is linear in the sizes: the common head and tail are found with native
 * compares, and only the differing middle is searched for blocks of the base.
 */
export function createDelta(base: Uint8Array, target: Uint8Array): Buffer | null {
  const limit = Math.floor(target.length / 2)
  if (target.length < 32) return null
  const out = new DeltaWriter(base.length, target.length, limit)
  const head = commonPrefix(base, target)
  const tail = commonSuffix(base, target, head)
  out.copy(0, head)
  const middleEnd = target.length - tail
  if (middleEnd > head) {
    const baseStart = head
    const baseEnd = base.length - tail
    if (
      baseEnd - baseStart >= BLOCK &&
      middleEnd - head >= BLOCK &&
      middleEnd - head <= MAX_MATCHED_REGION &&
      baseEnd - baseStart <= MAX_MATCHED_REGION
    ) {
      matchBlocks(base, baseStart, baseEnd, target, head, middleEnd, out)
    } else {
      out.insert(target, head, middleEnd)
    }
  }
  out.copy(base.length - tail, tail)
  return out.finish()
}

// `bytes` as a Buffer (for its native compare): itself when it is one, as maintenance's are.
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
}

function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const max = Math.min(a.length, b.length)
  const bufA = asBuffer(a)
  const bufB = asBuffer(b)
  let at = 0
  // Native compares of growing chunks, then byte by byte inside the first unequal one.
  let step = 64
  while (at + step <= max && bufA.compare(bufB, at, at + step, at, at + step) === 0) {
    at += step
    if (step < 4096) step *= 2
  }
  while (at < max && a[at] === b[at]) at++
  return at
}

function commonSuffix(a: Uint8Array, b: Uint8Array, prefix: number): number {
  const max = Math.min(a.length, b.length) - prefix
  const bufA = asBuffer(a)
  const bufB = asBuffer(b)
  let n = 0
  let step = 64
  while (
    n + step <= max &&
    bufA.compare(bufB, b.length - n - step, b.length - n, a.length - n - step, a.length - n) === 0
  ) {
    n += step
    if (step < 4096) step *= 2
  }
  while (n < max && a[a.length - 1 - n] === b[b.length - 1 - n]) n++
  return n
}

// Polynomial hash of BLOCK bytes, rolled one byte at a time (Math.imul keeps it in 32 bits).
const MULT = 0x01000193
let OUT_FACTOR = 1
for (let i = 0; i < BLOCK - 1; i++) OUT_FACTOR = Math.imul(OUT_FACTOR, MULT)

function hashAt(bytes: Uint8Array, at: number): number {
  let h = 0
  for (let i = 0; i < BLOCK; i++) h = (Math.imul(h, MULT) + (bytes[at + i] as number)) | 0
  return h
}

// `matchBlocks`'s hash tables, grown to the largest base seen (256 KiB of middle: 2 x 128 KiB).
let slotTable = new Int32Array(1024)
let slotHashes = new Int32Array(1024)

/**
 * Indexes the base middle in BLOCK-sized blocks, then walks the target middle with a rolling
 * hash; each hit is checked byte by byte and extended both ways before it becomes a copy.
 */
function matchBlocks(
  base: Uint8Array,
  baseStart: number,
  baseEnd: number,
  target: Uint8Array,
  start: number,
  end: number,
  out: DeltaWriter,
): void {
  const blocks = Math.floor((baseEnd - baseStart) / BLOCK)
  let bits = 4
  while (1 << bits < blocks * 2) bits++
  const mask = (1 << bits) - 1
  // Open addressing: slot -> base offset + 1 (0 = empty); a later block wins a taken slot.
  // The tables are the module's, emptied for each delta (`hashes` is read only where `table`
  // holds something): two fresh arrays a call were a pass's tens of MB of garbage.
  if (slotTable.length < 1 << bits) {
    slotTable = new Int32Array(1 << bits)
    slotHashes = new Int32Array(1 << bits)
  } else {
    slotTable.fill(0, 0, 1 << bits)
  }
  const table = slotTable
  const hashes = slotHashes
  for (let i = blocks - 1; i >= 0; i--) {
    const offset = baseStart + i * BLOCK
    const h = hashAt(base, offset)
    let slot = h & mask
    while (table[slot] !== 0 && hashes[slot] !== h) slot = (slot + 1) & mask
    table[slot] = offset + 1
    hashes[slot] = h
  }

  let pending = start // first target byte not yet emitted
  let at = start
  let h = end - start >= BLOCK ? hashAt(target, at) : 0
  while (at + BLOCK <= end) {
    let slot = h & mask
    let found = -1
    while (table[slot] !== 0) {
      if (hashes[slot] === h) {
        found = (table[slot] as number) - 1
        break
      }
      slot = (slot + 1) & mask
    }
    if (found >= 0 && sameBytes(base, found, target, at, BLOCK)) {
      let from = found
      let to = at
      // Extend backwards into bytes not yet emitted, then forwards.
      while (from > baseStart && to > pending && base[from - 1] === target[to - 1]) {
        from--
        to--
      }
      let length = at + BLOCK - to
      while (
        from + length < baseEnd &&
        to + length < end &&
        base[from + length] === target[to + length]
      ) {
        length++
      }
      out.insert(target, pending, to)
      out.copy(from, length)
      at = to + length
      pending = at
      if (at + BLOCK <= end) h = hashAt(target, at)
      continue
    }
    if (at + BLOCK < end) {
      h =
        (Math.imul(h - Math.imul(target[at] as number, OUT_FACTOR), MULT) +
          (target[at + BLOCK] as number)) |
        0
    }
    at++
  }
  out.insert(target, pending, end)
}

function sameBytes(
  a: Uint8Array,
  aAt: number,
  b: Uint8Array,
  bAt: number,
  length: number,
): boolean {
  for (let i = 0; i < length; i++) if (a[aAt + i] !== b[bAt + i]) return false
  return true
}

/** Accumulates delta ops; gives up (null) once the delta grows past `limit` bytes. */
class DeltaWriter {
  private buffer: Buffer
  private length = 0
  private over = false

  constructor(
    baseSize: number,
    targetSize: number,
    private readonly limit: number,
  ) {
    this.buffer = Buffer.allocUnsafe(Math.min(limit + 64, 4096))
    this.varint(baseSize)
    this.varint(targetSize)
  }

  copy(offset: number, size: number): void {
    while (size > 0 && !this.over) {
      const chunk = Math.min(size, MAX_COPY)
      this.room(8)
      const opAt = this.length++
      let op = 0x80
      for (let bit = 0; bit < 4; bit++) {
        const byte = Math.floor(offset / 2 ** (8 * bit)) & 0xff
        if (byte) {
          op |= 1 << bit
          this.buffer[this.length++] = byte
        }
      }
      const encoded = chunk === 0x10000 ? 0 : chunk
      for (let bit = 0; bit < 3; bit++) {
        const byte = (encoded >> (8 * bit)) & 0xff
        if (byte) {
          op |= 0x10 << bit
          this.buffer[this.length++] = byte
        }
      }
      this.buffer[opAt] = op
      offset += chunk
      size -= chunk
    }
  }

  insert(source: Uint8Array, from: number, to: number): void {
    while (from < to && !this.over) {
      const chunk = Math.min(to - from, 127)
      this.room(chunk + 1)
      this.buffer[this.length++] = chunk
      this.buffer.set(source.subarray(from, from + chunk), this.length)
      this.length += chunk
      from += chunk
    }
  }

  finish(): Buffer | null {
    if (this.over || this.length > this.limit) return null
    return Buffer.from(this.buffer.subarray(0, this.length))
  }

  private varint(value: number): void {
    this.room(10)
    do {
      let byte = value % 128
      value = Math.floor(value / 128)
      if (value > 0) byte |= 0x80
      this.buffer[this.length++] = byte
    } while (value > 0)
  }

  private room(extra: number): void {
    if (this.length + extra > this.limit + 32) {
      this.over = true
      // Keep writing harmlessly into a scratch area; finish() returns null.
      this.length = 0
    }
    if (this.length + extra > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + extra))
      this.buffer.copy(grown, 0, 0, this.length)
      this.buffer = grown
    }
  }
}
