/**
 * Reads a pack's `.idx` (version 2, and the older version 1) by positioned reads: only the
 * 1 KiB fanout table is read at open; a lookup reads the object names that share the first
 * byte, with those of the neighbouring first bytes up to about 16 KiB (one slice of the name
 * table, kept in a bounded cache), binary-searches them, then reads its offset (version 2:
 * with the 1,023 next to it, kept in the same cache).
 *
 * Version 2 layout (all integers big-endian):
 *
 *   ff 74 4f 63 | 00 00 00 02 | fanout: 256 x u32 (objects whose first byte <= i)
 *   names: N x 20 bytes (sorted) | crc32: N x u32 | offsets: N x u32 (top bit set: index into
 *   the 64-bit table) | large offsets: M x u64 | pack checksum (20) | idx checksum (20)
 *
 * Version 1 has no header: fanout, then N x (u32 offset, 20-byte name), then the checksums.
 */
import { createHash } from 'node:crypto'
import { closeQuietly, disk, OPEN } from '../../lib/disk'
import { ByteLru } from './byte-lru'

const V2_MAGIC = 0xff744f63
const FANOUT_BYTES = 256 * 4
/** Offset entries read together (4 bytes each). */
const OFFSET_CHUNK = 1024
/**
 * About how many bytes of the name table one lookup reads and keeps: the names of as many
 * consecutive first bytes as fit (a power of two of them), so that lookups all over the index
 * cost a few reads instead of one per first byte. Kept small: each slice kept is memory the
 * process touches for the first time, a page fault per 4 KiB (some 20 µs each on a virtual
 * machine), and open's few single lookups (the newest commit's trees) used a fraction of the
 * 64 KiB read before. Lookups of many ids at once read `BATCH_READ_BYTES` into reused memory.
 */
const NAME_READ_BYTES = 16 * 1024
/** The same for `positionsEach`, whose slices are read into one buffer reused, never kept. */
const BATCH_READ_BYTES = 64 * 1024
/** Larger indexes are not read whole by `crcAndOffsets` (8 bytes an object). */
const MAX_WHOLE_TABLES = 1 << 22
/** `recordAt`'s keys: a record's start times this, plus its sorted position. */
const POSITIONS = MAX_WHOLE_TABLES

/** Thrown for an index that is not one git could have written. */
export class PackIndexError extends Error {}

/** Object-name slices kept across all open indexes, in bytes; least recently used go first. */
const slices = new ByteLru<Buffer>(24 * 1024 * 1024, (slice) => slice.length)

/**
 * Where `positionsEach` reads a slice of names, reused from one slice to the next and one call to
 * the next: memory a process touches for the first time costs a page fault per 4 KiB (some
 * 20 µs each on a virtual machine), more than reading the slice. It only grows, to the
 * largest slice read: about 64 KiB (a slice's first bytes are chosen by the average), more
 * past some 840,000 objects in one pack (a single first byte's names, 153 KiB at 2 million).
 */
let scratch = Buffer.alloc(0)

/** Where each of some packs' indexes lists each of some ids (see `positionsIn`). */
export interface PackedPositions {
  /** Each id (a valid one) -> its place in the ids looked up. */
  readonly at: ReadonlyMap<string, number>
  /** Each index -> the sorted position in it of each id looked up, -1 where it has none. */
  readonly byIndex: ReadonlyMap<PackIndex, Int32Array>
}

/**
 * Where each of `indexes` lists each of `oids` (hex): one `PackIndex.positionsEach` per
 * index, each slice of its name table read once. An entry that is not an id (40 hex digits)
 * is in no index: it is left out of `at` and is -1 in every index's positions, whatever its
 * zeroed place in the lookup found. The one lookup of many ids, for one index (`packed-crc.ts`)
 * or every pack (`ObjectDatabase.packedPositions`).
 */
export function positionsIn(
  indexes: ReadonlyArray<PackIndex>,
  oids: ReadonlyArray<string>,
): PackedPositions {
  const raw = Buffer.alloc(oids.length * 20)
  const at = new Map<string, number>()
  const invalid: number[] = []
  // Indexed loops, here and in `ObjectDatabase.inPackEach`: open runs them once, in code not
  // yet optimized, where each step of an iterator makes an object (and `entries()` an array):
  // some 600 KB of the 5.5 MB an open allocates at 1,024 files.
  for (let i = 0; i < oids.length; i++) {
    const oid = oids[i]!
    if (oid.length === 40 && raw.write(oid, i * 20, 20, 'hex') === 20) at.set(oid, i)
    else {
      // Hex up to a bad digit is written: zeroed, it asks for no slice of its own.
      raw.fill(0, i * 20, i * 20 + 20)
      invalid.push(i)
    }
  }
  const byIndex = new Map<PackIndex, Int32Array>()
  for (let n = 0; n < indexes.length; n++) {
    const index = indexes[n]!
    const positions = new Int32Array(oids.length).fill(-1)
    if (at.size > 0) {
      index.positionsEach(raw, positions)
      for (let k = 0; k < invalid.length; k++) positions[invalid[k]!] = -1
    }
    byIndex.set(index, positions)
  }
  return { at, byIndex }
}

let nextId = 0

export class PackIndex {
  readonly count: number
  private readonly fanout: Uint32Array
  private readonly id = `${nextId++}:`
  /** First bytes whose names are read together (a power of two; see NAME_READ_BYTES). */
  private readonly span: number
  /** The same for `positionsEach` (see BATCH_READ_BYTES). */
  private readonly batchSpan: number
  private closed = false
  /** The pack's checksum as this index names it (hex), read when first asked for. */
  private packIdHex: string | null = null
  /** Where `crcAndOffsetAt` reads an entry. */
  private readonly word = Buffer.alloc(4)
  /** Record starts in pack order with their CRC-32s, and the CRC-32s by position (`recordAt`). */
  private reverse: {
    readonly starts: Uint32Array
    readonly crcs: Uint32Array
    readonly byPosition: Uint32Array
  } | null = null

  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly version: 1 | 2,
    fanout: Uint32Array,
    private readonly size: number,
  ) {
    this.fanout = fanout
    this.count = fanout[255] as number
    const perFirstByte = (this.count * (version === 2 ? 20 : 24)) / 256
    this.span = spanFor(perFirstByte, NAME_READ_BYTES)
    this.batchSpan = spanFor(perFirstByte, BATCH_READ_BYTES)
  }

  /** Opens `file`, checking its header, fanout and size against each other (`readHead`). */
  static open(file: string): PackIndex {
    const fd = disk.openSync(file, OPEN.READ)
    try {
      const size = disk.fstatSync(fd).size
      const head = Buffer.alloc(8 + FANOUT_BYTES)
      const got = disk.readSync(fd, head, 0, head.length, 0)
      const { version, fanout } = readHead(head.subarray(0, got), size)
      return new PackIndex(file, fd, version, fanout, size)
    } catch (error) {
      closeQuietly(fd)
      throw error
    }
  }

  /** The pack offset of `oid` (20 raw bytes), or -1 when this pack does not hold it. */
  find(oid: Uint8Array): number {
    const position = this.position(oid)
    return position < 0 ? -1 : this.offsetAt(position)
  }

  /** True when this pack holds `oid`. */
  has(oid: Uint8Array): boolean {
    return this.position(oid) >= 0
  }

  /**
   * `position` for many ids at once (open's check of every memory file, and of HEAD's packed
   * trees): sets `positions[i]` to the sorted position of each of `oids` (20 raw bytes each,
   * one after another; `positions` one entry each) this pack holds, leaving the others as they
   * are. Each slice of the name table that `position` would read is read once into a buffer
   * reused for the next, and none is kept (the slices lookups keep would be a megabyte of
   * fresh memory at 50,000 objects).
   */
  positionsEach(oids: Uint8Array, positions: Int32Array): void {
    const count = positions.length
    // The ids (their indexes) by first byte, then each slice holding any of them read once.
    const byFirst: number[][] = []
    for (let i = 0; i < count; i++) (byFirst[oids[i * 20] as number] ??= []).push(i)
    const stride = this.version === 2 ? 20 : 24
    const skip = this.version === 2 ? 0 : 4
    const span = this.batchSpan
    for (let group = 0; group < 256; group += span) {
      let wanted = false
      for (let first = group; first < group + span; first++) wanted ||= !!byFirst[first]
      if (!wanted) continue
      const groupLo = group === 0 ? 0 : (this.fanout[group - 1] as number)
      const groupHi = this.fanout[group + span - 1] as number
      const bytes = (groupHi - groupLo) * stride
      if (scratch.length < bytes) scratch = Buffer.allocUnsafe(Math.max(bytes, BATCH_READ_BYTES))
      this.readNames(groupLo, groupHi, scratch)
      for (let first = group; first < group + span; first++) {
        const ids = byFirst[first]
        if (!ids) continue
        const lo = first === 0 ? 0 : (this.fanout[first - 1] as number)
        const hi = this.fanout[first] as number
        // No iterator and no view of each id (see `positionsIn`): the id is compared
        // where it lies in `oids`.
        for (let k = 0; k < ids.length; k++) {
          const i = ids[k]!
          const at = search(scratch, lo - groupLo, hi - groupLo - 1, stride, skip, oids, i * 20)
          if (at >= 0) positions[i] = groupLo + at
        }
      }
    }
  }

  /** The sorted position of `oid` in this index, or -1. */
  position(oid: Uint8Array): number {
    const first = oid[0] as number
    const lo = first === 0 ? 0 : (this.fanout[first - 1] as number)
    const hi = this.fanout[first] as number
    if (hi === lo) return -1
    // The names of the first bytes `group` .. `group + span - 1`, read and kept together.
    const group = first - (first % this.span)
    const groupLo = group === 0 ? 0 : (this.fanout[group - 1] as number)
    const key = this.id + group
    let names = slices.get(key)
    if (!names) {
      names = this.readNames(groupLo, this.fanout[group + this.span - 1] as number)
      slices.set(key, names)
    }
    const stride = this.version === 2 ? 20 : 24
    const skip = this.version === 2 ? 0 : 4
    const at = search(names, lo - groupLo, hi - groupLo - 1, stride, skip, oid)
    return at < 0 ? -1 : groupLo + at
  }

  /** The pack offset of the object at sorted `position`. */
  offsetAt(position: number): number {
    const buf = Buffer.alloc(8)
    if (this.version === 1) {
      this.read(buf, 4, FANOUT_BYTES + position * 24)
      return buf.readUInt32BE(0)
    }
    const small = this.smallOffset(position)
    if (!(small & 0x80000000)) return small
    const large = small & 0x7fffffff
    const at = 8 + FANOUT_BYTES + this.count * 28 + large * 8
    if (at + 8 > this.size - 40) throw new PackIndexError('.idx large offset out of range')
    this.read(buf, 8, at)
    const offset = buf.readUInt32BE(0) * 2 ** 32 + buf.readUInt32BE(4)
    if (offset > Number.MAX_SAFE_INTEGER) throw new PackIndexError('.idx offset too large')
    return offset
  }

  /**
   * Every object of the pack as (name, offset), in name order. Reads the tables in chunks, so
   * a pack of millions of objects never sits in memory whole.
   */
  *entries(chunk = 4096): Generator<{ oid: Buffer; offset: number }> {
    for (let start = 0; start < this.count; start += chunk) {
      const end = Math.min(this.count, start + chunk)
      const names = this.readNames(start, end)
      const stride = this.version === 2 ? 20 : 24
      const skip = this.version === 2 ? 0 : 4
      for (let i = start; i < end; i++) {
        const at = (i - start) * stride + skip
        yield { oid: Buffer.from(names.subarray(at, at + 20)), offset: this.offsetAt(i) }
      }
    }
  }

  /**
   * The CRC-32 and offset tables whole, in one read (version 2 lists them one after the
   * other): for checking many packed records at once (`packed-crc.ts`). Null for an index
   * without CRC-32s (version 1), with 64-bit offsets (a pack past 2 GiB) or too large.
   */
  crcAndOffsets(): { readonly crcs: Uint32Array; readonly offsets: Uint32Array } | null {
    if (!this.hasCrcTables()) return null
    const both = new Uint32Array(this.count * 2)
    const bytes = Buffer.from(both.buffer)
    this.read(bytes, bytes.length, 8 + FANOUT_BYTES + this.count * 20)
    // Big-endian on disk, swapped in place (natively).
    if (bytes.length > 0) bytes.swap32()
    return { crcs: both.subarray(0, this.count), offsets: both.subarray(this.count) }
  }

  /**
   * True when `crcAndOffsets` can give this index's tables: version 2 (CRC-32s), no 64-bit
   * offsets (a pack past 2 GiB), not too large. `crcAndOffsetAt` answers exactly then.
   */
  hasCrcTables(): boolean {
    return (
      this.version === 2 &&
      this.count <= MAX_WHOLE_TABLES &&
      this.size === 8 + FANOUT_BYTES + this.count * 28 + 40
    )
  }

  /**
   * The CRC-32 and offset this index holds for the object at sorted `position` (a 4-byte read
   * each, nothing cached), as `crcAndOffsets` would give them; null where that gives none
   * (`hasCrcTables`).
   */
  crcAndOffsetAt(position: number): { readonly crc: number; readonly offset: number } | null {
    if (!this.hasCrcTables() || position < 0 || position >= this.count) return null
    const tables = 8 + FANOUT_BYTES + this.count * 20
    this.read(this.word, 4, tables + position * 4)
    const crc = this.word.readUInt32BE(0)
    this.read(this.word, 4, tables + this.count * 4 + position * 4)
    return { crc, offset: this.word.readUInt32BE(0) }
  }

  /**
   * The record starting at pack offset `offset`: its sorted position's CRC-32 and where it
   * ends (the next record's start, or `entriesEnd`). Null when no object starts there or the
   * index has no CRC-32s (`hasCrcTables`). The first call reads both tables and sorts the
   * starts (a reverse index, as git's `.rev`): count x 16 bytes held, about 1 ms per 10,000
   * objects, so it is asked for only once reading whole has cost more (object-database.ts).
   */
  recordAt(
    offset: number,
    entriesEnd: number,
  ): { readonly crc: number; readonly end: number } | null {
    if (!this.reverse) {
      const tables = this.crcAndOffsets()
      if (!tables) return null
      // offset x 2^22 + position: offsets are below 2^31 (no 64-bit ones), positions below
      // 2^22 (MAX_WHOLE_TABLES), so each key is exact and sorts by offset.
      const keys = new Float64Array(this.count)
      for (let i = 0; i < this.count; i++) {
        const start = tables.offsets[i] as number
        // A high bit set names a 64-bit offset, which an index with CRC tables has none of.
        if (start >= 0x80000000) return null
        keys[i] = start * POSITIONS + i
      }
      keys.sort()
      const starts = new Uint32Array(this.count)
      const crcs = new Uint32Array(this.count)
      for (let i = 0; i < this.count; i++) {
        const start = Math.floor((keys[i] as number) / POSITIONS)
        starts[i] = start
        crcs[i] = tables.crcs[(keys[i] as number) - start * POSITIONS] as number
      }
      this.reverse = { starts, crcs, byPosition: tables.crcs }
    }
    const { starts, crcs } = this.reverse
    // The first record starting at or past `offset`. Two names listing one start (a damaged
    // index) leave the first with no bytes of its own (its end is its start): never sound.
    let low = 0
    let high = starts.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((starts[mid] as number) < offset) low = mid + 1
      else high = mid
    }
    if (low < starts.length && starts[low] === offset) {
      const end = low + 1 < starts.length ? (starts[low + 1] as number) : entriesEnd
      return { crc: crcs[low] as number, end }
    }
    return null
  }

  /** The CRC-32 this index holds for sorted `position`, once `recordAt` has read them; else null. */
  crcAt(position: number): number | null {
    return this.reverse?.byPosition[position] ?? null
  }

  /** True once `recordAt` has built its reverse index (what it costs is then paid). */
  hasRecordStarts(): boolean {
    return this.reverse !== null
  }

  /**
   * The pack's checksum this index was written for, in hex: what names the pack's content
   * (its SHA-1 over every byte), checked against the pack's own when the two were opened.
   */
  packId(): string {
    this.packIdHex ??= this.packChecksum().toString('hex')
    return this.packIdHex
  }

  /** The pack checksum this index was written for (20 bytes). */
  packChecksum(): Buffer {
    const buf = Buffer.alloc(20)
    this.read(buf, 20, this.size - 40)
    return buf
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.reverse = null
    slices.deletePrefix(this.id)
    // Only ever read: see `PackFile.close`.
    closeQuietly(this.fd)
  }

  /**
   * The 4-byte offset entry at `position` (version 2), read with its neighbours: a walk over
   * many objects looks up many entries, one read each would be a system call each.
   */
  private smallOffset(position: number): number {
    const chunk = Math.floor(position / OFFSET_CHUNK)
    const key = `${this.id}o${chunk}`
    let offsets = slices.get(key)
    if (!offsets) {
      const from = chunk * OFFSET_CHUNK
      offsets = Buffer.allocUnsafe(Math.min(OFFSET_CHUNK, this.count - from) * 4)
      this.read(offsets, offsets.length, 8 + FANOUT_BYTES + this.count * 24 + from * 4)
      slices.set(key, offsets)
    }
    return offsets.readUInt32BE((position - chunk * OFFSET_CHUNK) * 4)
  }

  /** The names (each with its offset, version 1) at sorted positions `from` to `to`, into `into`. */
  private readNames(from: number, to: number, into?: Buffer): Buffer {
    const stride = this.version === 2 ? 20 : 24
    const base = this.version === 2 ? 8 + FANOUT_BYTES : FANOUT_BYTES
    const length = (to - from) * stride
    const buf = into ?? Buffer.allocUnsafe(length)
    this.read(buf, length, base + from * stride)
    return buf
  }

  private read(buf: Buffer, length: number, position: number): void {
    let done = 0
    while (done < length) {
      const got = disk.readSync(this.fd, buf, done, length - done, position + done)
      if (got === 0) throw new PackIndexError('.idx is cut short')
      done += got
    }
  }
}

/**
 * The version and fanout of an index of `size` bytes whose first bytes are `head` (at least the
 * header and fanout, or all there is): throws a `PackIndexError` unless the header is one git
 * writes, the fanout is sorted and the size is what its object count makes.
 */
function readHead(head: Buffer, size: number): { version: 1 | 2; fanout: Uint32Array } {
  const v2 = head.length >= 8 && head.readUInt32BE(0) === V2_MAGIC
  if (v2 && head.readUInt32BE(4) !== 2) throw new PackIndexError('unsupported .idx version')
  const start = v2 ? 8 : 0
  if (head.length < start + FANOUT_BYTES) throw new PackIndexError('.idx is cut short')
  const fanout = new Uint32Array(256)
  let previous = 0
  for (let i = 0; i < 256; i++) {
    const value = head.readUInt32BE(start + i * 4)
    if (value < previous) throw new PackIndexError('.idx fanout is not sorted')
    fanout[i] = previous = value
  }
  const count = fanout[255] as number
  const minimum = v2 ? 8 + FANOUT_BYTES + count * 28 + 40 : FANOUT_BYTES + count * 24 + 40
  if (size < minimum || (!v2 && size !== minimum)) {
    throw new PackIndexError('.idx size does not match its object count')
  }
  if (v2 && (size - minimum) % 8 !== 0)
    throw new PackIndexError('.idx has a torn large-offset table')
  return { version: v2 ? 2 : 1, fanout }
}

/** What an index's trailer says of its pack: the pack's checksum, and how many objects. */
export interface IndexedPack {
  readonly packChecksum: Buffer
  readonly count: number
}

/**
 * What `bytes` say of their pack when they are a whole index: the header, fanout and size as
 * `PackIndex.open` checks them, and the index's own SHA-1 (its last 20 bytes) holding. Null
 * otherwise (torn, damaged, not an index). `PackIndex.open` does not hash the file: it reads
 * only the fanout, and hashing every index at each open would cost what reading by offsets
 * saves; this is for an index about to be installed (`finishInstalls` in pack-writer.ts).
 */
export function wholeIndex(bytes: Buffer): IndexedPack | null {
  let count: number
  try {
    count = readHead(bytes.subarray(0, 8 + FANOUT_BYTES), bytes.length).fanout[255] as number
  } catch (error) {
    if (error instanceof PackIndexError) return null
    throw error
  }
  const own = createHash('sha1')
    .update(bytes.subarray(0, bytes.length - 20))
    .digest()
  if (!own.equals(bytes.subarray(bytes.length - 20))) return null
  return { packChecksum: Buffer.from(bytes.subarray(bytes.length - 40, bytes.length - 20)), count }
}

/** How many consecutive first bytes to read together so that a read is about `bytes` or less. */
function spanFor(perFirstByte: number, bytes: number): number {
  let span = 1
  while (span < 256 && span * 2 * perFirstByte <= bytes) span *= 2
  return span
}

/**
 * Where `oid` is among the names of `names` from entry `low` to `high` (inclusive; each
 * `stride` bytes, the name `skip` bytes in), or -1.
 */
function search(
  names: Buffer,
  low: number,
  high: number,
  stride: number,
  skip: number,
  oid: Uint8Array,
  oidAt = 0,
): number {
  while (low <= high) {
    const mid = (low + high) >>> 1
    const cmp = compareName(names, mid * stride + skip, oid, oidAt)
    if (cmp === 0) return mid
    if (cmp < 0) low = mid + 1
    else high = mid - 1
  }
  return -1
}

/** `names` at `at` against the 20-byte id at `oidAt` in `oid`. */
function compareName(names: Buffer, at: number, oid: Uint8Array, oidAt: number): number {
  for (let i = 0; i < 20; i++) {
    const diff = (names[at + i] as number) - (oid[oidAt + i] as number)
    if (diff !== 0) return diff
  }
  return 0
}
