/**
 * Writes one standard git pack (version 2) and its version 2 index, as `git verify-pack` and
 * `git fsck --strict` expect them, with OFS_DELTA entries where a delta against an earlier
 * entry saves space.
 *
 * Durable and crash-safe: both files are written under temp names (`tmp_pack_*`, `tmp_idx_*`),
 * fsynced, then renamed — the pack first, then its index, since git and Cairn only look at
 * packs that have an index — and the folder is fsynced. A crash leaves either nothing visible
 * or a complete pack; leftovers are temp files and, at worst, a `.pack` without its `.idx`,
 * which `removePackLeftovers` clears.
 */
import { createHash, randomBytes } from 'node:crypto'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import {
  disk,
  exists,
  isMissing,
  listNames,
  makeFolders,
  OPEN,
  removeFile,
  syncFolder,
} from '../../lib/disk'
import { crc32 } from './crc32'
import { createDelta } from './delta'
import { OFS_DELTA, TYPE_CODES, type ObjectKind } from './pack-file'

const deflateAsync = promisify(zlib.deflate)

/** Objects this large are compressed on the thread pool, so the event loop never waits on one. */
const ASYNC_DEFLATE_BYTES = 64 * 1024
/** A small window for small objects: same output size, half the set-up cost per call. */
const SMALL_DEFLATE: zlib.ZlibOptions = { windowBits: 12, memLevel: 4 }
const BUFFER_BYTES = 1024 * 1024
const LARGE_OFFSET = 0x80000000

/** A written entry: where it sits and how deep in a delta chain. */
export interface PackedEntry {
  readonly offset: number
  readonly depth: number
}

/** What a base for a delta needs: its content and where the writer put it. */
export interface DeltaBase extends PackedEntry {
  readonly content: Buffer
}

/** A finished pack's name (`pack-<checksum>`) and its object count. */
export interface WrittenPack {
  readonly name: string
  readonly objects: number
  readonly bytes: number
}

export class PackWriter {
  private readonly entries: Array<{ oid: string; offset: number; crc: number }> = []
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES)
  private buffered = 0
  private offset = 0
  private done = false

  private constructor(
    readonly dir: string,
    private readonly tempPack: string,
    private fd: number | null,
  ) {}

  /** Starts a pack in `dir` (the repository's `objects/pack`). */
  static create(dir: string): PackWriter {
    makeFolders(dir, 0o755)
    const temp = path.join(dir, `tmp_pack_${randomBytes(8).toString('hex')}`)
    const fd = disk.openSync(temp, OPEN.READ_WRITE_NEW, 0o444)
    const writer = new PackWriter(dir, temp, fd)
    // The object count is patched in at the end, before the checksum is computed.
    const head = Buffer.alloc(12)
    head.write('PACK', 0, 'latin1')
    head.writeUInt32BE(2, 4)
    writer.push(head)
    return writer
  }

  /** Objects written so far. */
  get count(): number {
    return this.entries.length
  }

  /** Bytes written so far. */
  get size(): number {
    return this.offset
  }

  /**
   * Appends `content` as `type`, as a delta against `base` when that is clearly smaller
   * (and `maxDepth` allows). Returns where the entry went and its chain depth.
   */
  async add(
    oid: string,
    type: ObjectKind,
    content: Buffer,
    base?: DeltaBase | null,
    maxDepth = 50,
  ): Promise<PackedEntry> {
    let code = TYPE_CODES[type]
    let body = content
    let depth = 0
    let baseOffset = 0
    if (base && base.depth < maxDepth) {
      const delta = createDelta(base.content, content)
      if (delta) {
        code = OFS_DELTA
        body = delta
        depth = base.depth + 1
        baseOffset = base.offset
      }
    }
    const compressed =
      body.length >= ASYNC_DEFLATE_BYTES
        ? await deflateAsync(body)
        : zlib.deflateSync(body, body.length <= 4096 ? SMALL_DEFLATE : undefined)
    const header = entryHeader(code, body.length, code === OFS_DELTA ? this.offset - baseOffset : 0)
    const offset = this.offset
    let crc = crc32(header)
    crc = crc32(compressed, crc)
    await this.push(header)
    await this.push(compressed)
    this.entries.push({ oid, offset, crc })
    return { offset, depth }
  }

  /**
   * Finishes the pack: count, checksum, index, fsyncs, renames. `pause` is awaited between
   * chunks of work so a caller can keep the event loop responsive; `onStep` marks the points
   * between the durable writes and the renames (crash tests stop there).
   */
  async finish(
    pause: () => Promise<void> = async () => undefined,
    onStep: (step: 'index-durable' | 'pack-renamed') => void = () => undefined,
  ): Promise<WrittenPack> {
    if (this.done || this.fd === null) throw new Error('pack already finished')
    const fd = this.fd
    await this.flush()
    const count = Buffer.alloc(4)
    count.writeUInt32BE(this.entries.length)
    disk.writeSync(fd, count, 8)

    // Checksum the file as written (read back in chunks).
    const hash = createHash('sha1')
    const chunk = Buffer.allocUnsafe(BUFFER_BYTES)
    for (let at = 0; at < this.offset;) {
      const got = disk.readSync(fd, chunk, 0, Math.min(chunk.length, this.offset - at), at)
      if (got <= 0) throw new Error('pack file shrank while being written')
      hash.update(chunk.subarray(0, got))
      at += got
      await pause()
    }
    const checksum = hash.digest()
    disk.writeSync(fd, checksum, this.offset)
    await disk.fsync(fd)
    this.fd = null
    disk.closeSync(fd)

    const name = `pack-${checksum.toString('hex')}`
    const finalPack = path.join(this.dir, `${name}.pack`)
    const finalIdx = path.join(this.dir, `${name}.idx`)
    if (exists(finalPack) && exists(finalIdx)) {
      // The same objects packed the same way again: the pack named by this checksum is it.
      removeFile(this.tempPack)
      this.done = true
      return { name, objects: this.entries.length, bytes: this.offset + 20 }
    }
    const idx = await this.buildIndex(checksum, pause)
    const tempIdx = path.join(this.dir, `tmp_idx_${randomBytes(8).toString('hex')}`)
    const idxFd = disk.openSync(tempIdx, OPEN.WRITE_NEW, 0o444)
    try {
      for (let at = 0; at < idx.length; at += BUFFER_BYTES) {
        const end = Math.min(idx.length, at + BUFFER_BYTES)
        let done = at
        while (done < end) done += await disk.write(idxFd, idx.subarray(done, end), done)
        await pause()
      }
      await disk.fsync(idxFd)
    } catch (error) {
      disk.closeSync(idxFd)
      removeFile(tempIdx)
      throw error
    }
    disk.closeSync(idxFd)
    onStep('index-durable')
    disk.renameSync(this.tempPack, finalPack)
    onStep('pack-renamed')
    disk.renameSync(tempIdx, finalIdx)
    // Some file systems refuse a folder fsync; the renames stand regardless.
    await syncFolder(this.dir).catch(() => undefined)
    this.done = true
    return { name, objects: this.entries.length, bytes: this.offset + 20 }
  }

  /** Drops the unfinished pack. Safe to call at any point, and more than once. */
  abort(): void {
    if (this.done) return
    this.done = true
    if (this.fd !== null) {
      try {
        disk.closeSync(this.fd)
      } catch {
        // already closed
      }
      this.fd = null
    }
    try {
      removeFile(this.tempPack)
    } catch {
      // Left for the next open, which removes temp files.
    }
  }

  private async push(bytes: Buffer): Promise<void> {
    if (this.buffered + bytes.length > this.buffer.length) await this.flush()
    if (bytes.length > this.buffer.length) {
      await this.writeAll(bytes, this.offset)
    } else {
      bytes.copy(this.buffer, this.buffered)
      this.buffered += bytes.length
    }
    this.offset += bytes.length
  }

  // On the thread pool: a write the kernel throttles (many dirty pages) must not hold up the
  // event loop, and with it the commands.
  private async flush(): Promise<void> {
    if (this.buffered === 0) return
    await this.writeAll(this.buffer.subarray(0, this.buffered), this.offset - this.buffered)
    this.buffered = 0
  }

  private async writeAll(bytes: Buffer, position: number): Promise<void> {
    if (this.fd === null) throw new Error('pack already finished')
    let done = 0
    while (done < bytes.length) {
      done += await disk.write(this.fd, bytes.subarray(done), position + done)
    }
  }

  /** The version 2 index: header, fanout, names, crc32s, offsets, large offsets, checksums. */
  private async buildIndex(packChecksum: Buffer, pause: () => Promise<void>): Promise<Buffer> {
    const n = this.entries.length
    // Sorting hex names by first byte first keeps each sort small enough to pause between.
    const buckets: Array<Array<{ oid: string; offset: number; crc: number }>> = Array.from(
      { length: 256 },
      () => [],
    )
    for (let i = 0; i < n; i++) {
      const entry = this.entries[i]!
      buckets[parseInt(entry.oid.slice(0, 2), 16)]!.push(entry)
      if (i % 1024 === 1023) await pause()
    }
    const sorted: Array<{ oid: string; offset: number; crc: number }> = []
    let large = 0
    for (const bucket of buckets) {
      bucket.sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0))
      for (let i = 0; i < bucket.length; i++) {
        if (i > 0 && bucket[i]!.oid === bucket[i - 1]!.oid) throw new Error('object packed twice')
        sorted.push(bucket[i]!)
        if (bucket[i]!.offset >= LARGE_OFFSET) large++
      }
      await pause()
    }
    const out = Buffer.alloc(8 + 1024 + n * 28 + large * 8 + 40)
    out.writeUInt32BE(0xff744f63, 0)
    out.writeUInt32BE(2, 4)
    let running = 0
    for (let b = 0; b < 256; b++) {
      running += buckets[b]!.length
      out.writeUInt32BE(running, 8 + b * 4)
    }
    const namesAt = 8 + 1024
    const crcAt = namesAt + n * 20
    const offsetsAt = crcAt + n * 4
    const largeAt = offsetsAt + n * 4
    let nextLarge = 0
    for (let i = 0; i < sorted.length; i++) {
      const entry = sorted[i]!
      if (i % 1024 === 1023) await pause()
      out.write(entry.oid, namesAt + i * 20, 20, 'hex')
      out.writeUInt32BE(entry.crc >>> 0, crcAt + i * 4)
      if (entry.offset < LARGE_OFFSET) {
        out.writeUInt32BE(entry.offset, offsetsAt + i * 4)
      } else {
        out.writeUInt32BE((LARGE_OFFSET | nextLarge) >>> 0, offsetsAt + i * 4)
        out.writeUInt32BE(Math.floor(entry.offset / 2 ** 32), largeAt + nextLarge * 8)
        out.writeUInt32BE(entry.offset >>> 0, largeAt + nextLarge * 8 + 4)
        nextLarge++
      }
    }
    const tail = largeAt + large * 8
    packChecksum.copy(out, tail)
    const hash = createHash('sha1')
    for (let at = 0; at < tail + 20; at += BUFFER_BYTES) {
      hash.update(out.subarray(at, Math.min(tail + 20, at + BUFFER_BYTES)))
      await pause()
    }
    hash.digest().copy(out, tail + 20)
    return out
  }
}

/** The entry header: type and size, then for OFS_DELTA the distance back to the base. */
export function entryHeader(code: number, size: number, distance: number): Buffer {
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
    // Big-endian groups of 7 bits; every group but the last adds one (git's encoding).
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

/**
 * Clears what an interrupted pack write leaves in `dir`: temp files are removed, and a `.pack`
 * whose `.idx` never arrived (or the reverse) is moved aside, into `cairn-damaged/` in the git
 * directory — never deleted: a pack whose index was lost by damage rather than by a crash
 * may hold the only copy of its objects (`git index-pack` can index it again). `olderThanMs`
 * spares files another writer may still be busy with. Returns the names cleared.
 */
export function removePackLeftovers(dir: string, olderThanMs = 0, now = Date.now()): string[] {
  const names = listNames(dir)
  const present = new Set(names)
  const removed: string[] = []
  for (const name of names) {
    const match = /^(pack-[0-9a-f]+)\.(pack|idx)$/.exec(name)
    const orphan =
      match !== null && !present.has(`${match[1]}.${match[2] === 'pack' ? 'idx' : 'pack'}`)
    if (!orphan && !name.startsWith('tmp_pack_') && !name.startsWith('tmp_idx_')) continue
    const file = path.join(dir, name)
    try {
      if (olderThanMs > 0 && now - disk.statSync(file).mtimeMs < olderThanMs) continue
      if (orphan) {
        const aside = path.join(dir, '..', '..', 'cairn-damaged')
        makeFolders(aside, 0o700)
        disk.renameSync(file, path.join(aside, name))
      } else {
        removeFile(file)
      }
      removed.push(name)
    } catch (error) {
      // Gone already. A disk that fails is said, never taken for "nothing there".
      if (!isMissing(error)) throw error
    }
  }
  return removed
}
