/**
 * Reads objects out of a `.pack` by positioned reads: the entry header, then just enough
 * compressed bytes to inflate it. Deltas (OFS_DELTA against an earlier entry of the same
 * pack, REF_DELTA against any object by name) are resolved base first, through a byte-bounded
 * cache of recently built objects, so walking a delta chain again is cheap.
 *
 *   entry = type+size varint (type in bits 4-6 of the first byte, size in 4 + 7n bits)
 *           [OFS_DELTA: base distance, big-endian 7-bit groups, each continuation adding 1]
 *           [REF_DELTA: 20-byte base name]
 *           zlib stream (the object, or its delta)
 */
import { closeQuietly, disk, OPEN } from '../../lib/disk'
import { createHash } from 'node:crypto'
import { inflateSync, constants as zlibConstants } from 'node:zlib'
import { ByteLru } from './byte-lru'
import { crc32 } from './crc32'
import { applyDelta } from './delta'
import type { IndexedPack } from './pack-index'

export type ObjectKind = 'commit' | 'tree' | 'blob' | 'tag'

export interface RawObject {
  readonly type: ObjectKind
  readonly content: Buffer
}

export const TYPE_CODES: Readonly<Record<ObjectKind, number>> = {
  commit: 1,
  tree: 2,
  blob: 3,
  tag: 4,
}
const KINDS: Readonly<Record<number, ObjectKind>> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' }
export const OFS_DELTA = 6
export const REF_DELTA = 7

/** Thrown for a pack entry that cannot be read as git would write it. */
export class PackError extends Error {}

/** Longest delta chain followed before the pack is declared damaged (git's is far shorter). */
const MAX_CHAIN = 10_000

/** Built objects kept for delta bases, across all packs, in bytes of content. */
const CACHE_BUDGET = 32 * 1024 * 1024
/** Bytes read at once for small reads (see `readExactly`). */
const WINDOW = 16 * 1024

/**
 * Bytes a window placed for a read going down a chain keeps past that read (an entry's header,
 * at most 32 bytes): the entry's own data, read next from just after the header, is in it too
 * whenever it is small enough for the window at all (`WINDOW / 8`).
 */
const BACK_SLACK = WINDOW / 8

/** Larger objects are never cached: one would push out everything else. */
const CACHE_MAX_OBJECT = 4 * 1024 * 1024

interface Header {
  readonly code: number
  readonly size: number
  /** Where the zlib stream starts. */
  readonly dataAt: number
  /** OFS_DELTA: the base's offset; REF_DELTA: the base's name. */
  readonly baseOffset?: number
  readonly baseOid?: Buffer
}

let nextPackId = 0

/** Objects stored whole below this size are not checked by CRC-32 (`readChecked`). */
const CHECK_FROM = 1024

/** Most offsets `PackFile` remembers as vouched for (past it, it starts again). */
const MAX_VOUCHED = 1 << 16

/**
 * Where the record starting at a pack offset ends and the CRC-32 its index holds for it
 * (`PackIndex.recordAt`); null when the index lists no object starting there.
 */
export type RecordStarts = (offset: number) => { readonly crc: number; readonly end: number } | null

export class PackFile {
  readonly id = nextPackId++
  private closed = false
  /**
   * The part of the pack read last (`windowLength` bytes from `windowAt`), for small reads:
   * one buffer for the pack's life, read into again at each miss. Nothing keeps a view of it
   * (`readExactly` copies out). A new 16 KB buffer a miss cost more than the read itself: a
   * walk down delta chains misses on most links (the sparse blame at 100,000 commits: 723
   * misses, 11 MB of fresh buffers, each one's pages faulted in by the read; stop 16).
   */
  private window: Buffer | null = null
  private windowAt = 0
  private windowLength = 0
  /** Where `header` reads an entry's header (its bytes are parsed, never kept). */
  private readonly head = Buffer.alloc(32)
  /**
   * Offsets whose object in the cache was built from records each checked against its
   * CRC-32 (`readChecked`); what the cache holds from a build that was not checked is not.
   */
  private readonly vouched = new Set<number>()
  /** Where `recordSound` reads a small record. */
  private small: Buffer | null = null

  private constructor(
    readonly file: string,
    private readonly fd: number,
    /** Offset of the 20-byte trailer: no entry reaches past it. */
    private readonly end: number,
    readonly objectCount: number,
    private readonly cache: ObjectCache,
  ) {}

  static open(file: string, cache: ObjectCache): PackFile {
    // Never waiting on a fifo in its place (O_NONBLOCK: no effect on a plain file).
    const fd = disk.openSync(file, OPEN.READ | OPEN.NONBLOCK)
    try {
      const stats = disk.fstatSync(fd)
      // A folder (or a fifo, a device) where the pack belongs is no pack: left out as a damaged
      // one is, not an EISDIR that failed every open as "unexpected" (probe32b).
      if (!stats.isFile()) throw new PackError('not a pack file')
      const size = stats.size
      const head = Buffer.alloc(12)
      if (disk.readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 4) !== 'PACK') {
        throw new PackError('not a pack file')
      }
      const version = head.readUInt32BE(4)
      if (version !== 2 && version !== 3) throw new PackError(`unsupported pack version ${version}`)
      if (size < 32) throw new PackError('pack is cut short')
      return new PackFile(file, fd, size - 20, head.readUInt32BE(8), cache)
    } catch (error) {
      closeQuietly(fd)
      throw error
    }
  }

  /** The 20-byte checksum at the end of the pack (its `.idx` names the same one). */
  checksum(): Buffer {
    const buf = Buffer.alloc(20)
    this.readExactly(buf, 20, this.end)
    return buf
  }

  /**
   * True when `index` is this pack's: it names the pack's checksum and holds as many objects
   * as the pack's header counts (the one rule by which an index and a pack go together).
   */
  indexedBy(index: IndexedPack): boolean {
    return this.checksum().equals(index.packChecksum) && this.objectCount === index.count
  }

  /**
   * The object at `offset`, deltas resolved. `resolveRef` finds a REF_DELTA base by name
   * (in this pack, another pack or a loose object).
   */
  read(offset: number, resolveRef: (oid: Buffer) => RawObject): RawObject {
    return this.readChecked(offset, resolveRef, null).object
  }

  /**
   * `read`, and with `records` (the pack index's `recordAt`), whether every record the object
   * is built from was checked against the CRC-32 its index holds (`vouched`): each record
   * inflated now (the whole entry at the chain's foot and each delta above it, headers and
   * base offsets included) and, for a chain built on an object kept from an earlier read,
   * that object's own records then. Such an object is what git wrote under that name: a
   * record's bytes are what the index was written for, and building from them gives the same
   * object each time. A chain through a REF_DELTA, or a record whose start the index does not
   * list, is not vouched for (the caller hashes it).
   */
  readChecked(
    offset: number,
    resolveRef: (oid: Buffer) => RawObject,
    records: RecordStarts | null,
  ): { readonly object: RawObject; readonly vouched: boolean } {
    const cached = this.cache.get(this.id, offset)
    if (cached) return { object: cached, vouched: records !== null && this.vouched.has(offset) }
    // Walk down to an object that is whole (or cached), then build back up.
    const chain: Array<{ offset: number; header: Header }> = []
    let at = offset
    let base: RawObject
    let sound = records !== null
    for (;;) {
      const hit = chain.length > 0 ? this.cache.get(this.id, at) : undefined
      if (hit) {
        base = hit
        sound &&= this.vouched.has(at)
        break
      }
      const header = this.header(at)
      if (header.code === OFS_DELTA) {
        chain.push({ offset: at, header })
        sound &&= this.recordSound(at, records)
        at = header.baseOffset as number
      } else if (header.code === REF_DELTA) {
        chain.push({ offset: at, header })
        base = resolveRef(header.baseOid as Buffer)
        sound = false
        break
      } else {
        const type = KINDS[header.code]
        if (!type) throw new PackError(`unknown object type ${header.code}`)
        // An object stored whole and small is hashed as soon as checked (about a microsecond).
        if (chain.length === 0 && header.size < CHECK_FROM) sound = false
        sound &&= this.recordSound(at, records)
        base = { type, content: this.inflate(header) }
        if (chain.length > 0) this.keep(at, base, sound)
        break
      }
      if (chain.length > MAX_CHAIN) throw new PackError('delta chain too long (a cycle?)')
    }
    let current = base
    for (let i = chain.length - 1; i >= 0; i--) {
      const link = chain[i] as { offset: number; header: Header }
      const delta = this.inflate(link.header)
      current = { type: current.type, content: applyDelta(current.content, delta) }
      this.keep(link.offset, current, sound)
    }
    return { object: current, vouched: sound }
  }

  /** Where the entries end (the trailer's offset). */
  entriesEnd(): number {
    return this.end
  }

  /** `length` bytes of the pack from `position`, as stored (one positioned read). */
  readStored(position: number, length: number): Buffer {
    if (position < 12 || position + length > this.end) {
      throw new PackError('object offset outside the pack')
    }
    const out = Buffer.allocUnsafe(length)
    this.readFully(out, length, position)
    return out
  }

  /**
   * The size of the object at `offset` without building it: a whole entry's header says it; a
   * delta's is the second number at the start of its data, of which only the first bytes are
   * inflated. Null for a delta whose start does not inflate (the full read then says why).
   */
  objectSize(offset: number): number | null {
    const header = this.header(offset)
    if (header.code !== OFS_DELTA && header.code !== REF_DELTA) return header.size
    // Two varints of at most 10 bytes each; a deflate stream's first block header (a dynamic
    // block's code tables) comes before them, so a few hundred bytes are read.
    const want = Math.min(this.end - header.dataAt, 512)
    const input = Buffer.allocUnsafe(want)
    this.readExactly(input, want, header.dataAt)
    let start: Buffer
    try {
      start = inflateSync(input, { finishFlush: zlibConstants.Z_SYNC_FLUSH })
    } catch {
      return null
    }
    let at = 0
    const varint = (): number | null => {
      let value = 0
      let shift = 0
      for (;;) {
        if (at >= start.length || shift > 49) return null
        const byte = start[at++] as number
        value += (byte & 0x7f) * 2 ** shift
        shift += 7
        if (!(byte & 0x80)) return value
      }
    }
    if (varint() === null) return null
    return varint()
  }

  /**
   * The records the object at `offset` is built from, without inflating any: `offset`, then
   * each OFS_DELTA base down to a whole entry (`code`, its type) or to a REF_DELTA, whose
   * base is named (`refBase`; `code` null) and may lie in another pack.
   */
  chainOf(offset: number): {
    readonly offsets: ReadonlyArray<number>
    readonly code: number | null
    readonly refBase: Buffer | null
  } {
    const offsets: number[] = []
    let at = offset
    for (;;) {
      offsets.push(at)
      if (offsets.length > MAX_CHAIN) throw new PackError('delta chain too long (a cycle?)')
      const header = this.header(at)
      if (header.code === OFS_DELTA) at = header.baseOffset as number
      else if (header.code === REF_DELTA) {
        return { offsets, code: null, refBase: header.baseOid as Buffer }
      } else return { offsets, code: header.code, refBase: null }
    }
  }

  /**
   * The entry at `offset` walked as stored: its type code (a delta's own code, OFS_DELTA or
   * REF_DELTA) and where it ends (where its zlib stream stops, so where the next entry starts),
   * its stream inflated once to find that end and to check it gives the size its header
   * says. For building a lost index again from the pack (`index-pack.ts`), which walks every
   * entry from the first; nothing else needs an entry's end.
   */
  walkEntry(offset: number): { readonly code: number; readonly end: number } {
    const header = this.header(offset)
    const { used } = this.inflateCounted(header, true)
    return { code: header.code, end: header.dataAt + used }
  }

  /**
   * The SHA-1 of every byte before the trailer, read in chunks: the pack is whole when it
   * equals `checksum()` (a torn or damaged pack does not hash to its trailer).
   */
  contentHash(): Buffer {
    const hash = createHash('sha1')
    const chunk = Buffer.allocUnsafe(1024 * 1024)
    for (let at = 0; at < this.end;) {
      const length = Math.min(chunk.length, this.end - at)
      this.readFully(chunk, length, at)
      hash.update(chunk.subarray(0, length))
      at += length
    }
    return hash.digest()
  }

  /** The type and size of the entry at `offset` without inflating it (deltas: the delta's size). */
  peek(offset: number): { code: number; size: number } {
    const header = this.header(offset)
    return { code: header.code, size: header.size }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.cache.forget(this.id)
    this.vouched.clear()
    // Only ever read: a close that fails releases the descriptor all the same, and must not
    // stop a refresh or a retire half way (the pack list kept naming closed packs).
    closeQuietly(this.fd)
  }

  /** Puts a built object in the cache, noting whether its records were all checked. */
  private keep(offset: number, object: RawObject, vouched: boolean): void {
    this.cache.set(this.id, offset, object)
    if (!vouched) this.vouched.delete(offset)
    else {
      if (this.vouched.size >= MAX_VOUCHED) this.vouched.clear()
      this.vouched.add(offset)
    }
  }

  /** True when the record at `offset` is whole as stored: its bytes match its CRC-32. */
  private recordSound(offset: number, records: RecordStarts | null): boolean {
    const record = records?.(offset) ?? null
    if (!record || !(record.end > offset) || record.end > this.end) return false
    const length = record.end - offset
    const bytes = length <= WINDOW / 8 ? this.scratch(length) : Buffer.allocUnsafe(length)
    this.readExactly(bytes, length, offset)
    return crc32(bytes.subarray(0, length)) === record.crc
  }

  /** A buffer of at least `length` bytes for a small record's check, reused. */
  private scratch(length: number): Buffer {
    if (!this.small || this.small.length < length) this.small = Buffer.allocUnsafe(WINDOW / 8)
    return this.small
  }

  private header(offset: number): Header {
    if (offset < 12 || offset >= this.end) throw new PackError('object offset outside the pack')
    const buf = this.head.subarray(0, Math.min(32, this.end - offset))
    this.readExactly(buf, buf.length, offset)
    let at = 0
    let byte = buf[at++] as number
    const code = (byte >> 4) & 7
    let size = byte & 0x0f
    let shift = 4
    while (byte & 0x80) {
      if (at >= buf.length || shift > 49) throw new PackError('bad object header')
      byte = buf[at++] as number
      size += (byte & 0x7f) * 2 ** shift
      shift += 7
    }
    if (code === OFS_DELTA) {
      if (at >= buf.length) throw new PackError('bad delta offset')
      byte = buf[at++] as number
      let distance = byte & 0x7f
      while (byte & 0x80) {
        if (at >= buf.length || distance > 2 ** 45) throw new PackError('bad delta offset')
        byte = buf[at++] as number
        distance = (distance + 1) * 128 + (byte & 0x7f)
      }
      if (distance <= 0 || distance > offset - 12)
        throw new PackError('delta base outside the pack')
      return { code, size, dataAt: offset + at, baseOffset: offset - distance }
    }
    if (code === REF_DELTA) {
      if (at + 20 > buf.length) throw new PackError('bad delta base name')
      return {
        code,
        size,
        dataAt: offset + at + 20,
        baseOid: Buffer.from(buf.subarray(at, at + 20)),
      }
    }
    return { code, size, dataAt: offset + at }
  }

  /** Inflates the entry's zlib stream, which must produce exactly `size` bytes. */
  private inflate(header: Header): Buffer {
    return this.inflateCounted(header, false).out
  }

  /**
   * `inflate`; with `count`, also how many stored bytes the stream took (`used`, else -1).
   * Asked only by a walk (zlib's `info` makes an object more for each read).
   */
  private inflateCounted(
    header: Header,
    count: boolean,
  ): { readonly out: Buffer; readonly used: number } {
    const available = this.end - header.dataAt
    // Deflate never grows data by more than a few bytes per 16 KiB block (zlib's compressBound).
    let want = Math.min(available, header.size + (header.size >>> 10) + 64)
    for (;;) {
      const input = Buffer.allocUnsafe(want)
      this.readExactly(input, want, header.dataAt)
      try {
        // Output in one buffer of the size announced (plus one byte, so zlib stops there):
        // the default 16 KiB chunks would each stay held by a small object built in them.
        const chunkSize = Math.min(Math.max(64, header.size + 1), 1 << 20)
        let out: Buffer
        let used = -1
        if (count) {
          const told = inflateSync(input, { chunkSize, info: true }) as unknown as {
            readonly buffer: Buffer
            readonly engine: { readonly bytesWritten: number }
          }
          out = told.buffer
          used = told.engine.bytesWritten
        } else out = inflateSync(input, { chunkSize })
        if (out.length !== header.size) throw new PackError('object size does not match its header')
        return { out, used }
      } catch (error) {
        const cutShort = (error as { code?: string }).code === 'Z_BUF_ERROR'
        if (!cutShort || want >= available) {
          if (error instanceof PackError) throw error
          throw new PackError(`object data is damaged (${(error as Error).message})`)
        }
        want = Math.min(available, want * 2)
      }
    }
  }

  private readExactly(buf: Buffer, length: number, position: number): void {
    // Small reads (entry headers, deltas, trees, commits) come from a window of the pack:
    // a walk reads objects that lie close together, and each read is a system call.
    if (length <= WINDOW / 8) {
      if (
        this.windowLength === 0 ||
        position < this.windowAt ||
        position + length > this.windowAt + this.windowLength
      ) {
        // A read below the window goes down a delta chain (a base lies before its delta):
        // the new window ends a little past it, so the next bases down are in it too. Going
        // up (building the object back, or a walk forward) it starts at the read.
        const down = this.windowLength > 0 && position < this.windowAt
        const start = down ? Math.max(0, position + length + BACK_SLACK - WINDOW) : position
        const size = Math.min(WINDOW, this.end + 20 - start)
        if (start + size >= position + length) {
          this.window ??= Buffer.allocUnsafeSlow(WINDOW)
          // Emptied first: a read that fails leaves no window claiming bytes it does not hold.
          this.windowLength = 0
          this.readFully(this.window, size, start)
          this.windowAt = start
          this.windowLength = size
        }
      }
      const at = position - this.windowAt
      if (this.window && this.windowLength > 0 && at >= 0 && at + length <= this.windowLength) {
        this.window.copy(buf, 0, at, at + length)
        return
      }
    }
    this.readFully(buf, length, position)
  }

  private readFully(buf: Buffer, length: number, position: number): void {
    let done = 0
    while (done < length) {
      const got = disk.readSync(this.fd, buf, done, length - done, position + done)
      if (got === 0) throw new PackError('pack is cut short')
      done += got
    }
  }
}

/** Built pack objects by pack and offset, bounded by their total size. */
export class ObjectCache {
  private readonly lru: ByteLru<RawObject>

  constructor(budget = CACHE_BUDGET) {
    this.lru = new ByteLru(budget, (object) => object.content.length)
  }

  get(pack: number, offset: number): RawObject | undefined {
    return this.lru.get(`${pack}:${offset}`)
  }

  set(pack: number, offset: number, object: RawObject): void {
    if (object.content.length > CACHE_MAX_OBJECT) return
    this.lru.set(`${pack}:${offset}`, object)
  }

  forget(pack: number): void {
    this.lru.deletePrefix(`${pack}:`)
  }
}
