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
  closeQuietly,
  disk,
  exists,
  isMissing,
  listNames,
  listOwnFolderNames,
  makeFolders,
  OPEN,
  readPlainFileOrNull,
  removeFile,
  syncFolder,
} from '../../lib/disk'
import { crc32, crc32Range } from './crc32'
import { moveIntoDamaged } from './damaged-folder'
import { createDelta } from './delta'
import {
  ObjectCache,
  OFS_DELTA,
  PackError,
  PackFile,
  TYPE_CODES,
  type ObjectKind,
} from './pack-file'
import { wholeIndex, type IndexedPack } from './pack-index'

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

/**
 * Writes a pack index's bytes to a new `tmp_idx_*` file in `dir`, read-only, in chunks (`pause`
 * awaited between them), fsynced; returns its path, for the caller to rename into place. On a
 * failure the temp file is removed (on the thread pool; a refused close or unlink leaves a temp
 * file alone, which the next pass removes) and the write's error is the one thrown.
 */
export async function writeDurableIndex(
  dir: string,
  bytes: Buffer,
  pause: () => Promise<void> | undefined = () => undefined,
): Promise<string> {
  const temp = path.join(dir, `tmp_idx_${randomBytes(8).toString('hex')}`)
  const fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o444)
  try {
    for (let at = 0; at < bytes.length; at += BUFFER_BYTES) {
      const end = Math.min(bytes.length, at + BUFFER_BYTES)
      let done = at
      while (done < end) done += await disk.write(fd, bytes.subarray(done, end), done)
      await pause()
    }
    await disk.fsync(fd)
  } catch (error) {
    closeQuietly(fd)
    await unlinkIfThere(temp).catch(() => undefined)
    throw error
  }
  closeQuietly(fd)
  return temp
}

/** A finished pack's name (`pack-<checksum>`) and its object count. */
export interface WrittenPack {
  readonly name: string
  readonly objects: number
  readonly bytes: number
}

/** Entries per chunk of the writer's list: a chunk is never copied to grow it. */
const LOG_CHUNK = 4096

/**
 * What the index needs of each written entry (id, offset, crc), in typed-array chunks: a
 * pack of half a million objects as small JavaScript objects would sit on the traced heap and
 * lengthen every garbage collection while the pack is written.
 */
export class EntryLog {
  private readonly ids: Buffer[] = []
  private readonly offsets: Float64Array[] = []
  private readonly crcs: Uint32Array[] = []
  length = 0

  push(oid: string, offset: number, crc: number): void {
    const chunk = Math.floor(this.length / LOG_CHUNK)
    const at = this.length % LOG_CHUNK
    if (at === 0) {
      this.ids.push(Buffer.allocUnsafe(LOG_CHUNK * 20))
      this.offsets.push(new Float64Array(LOG_CHUNK))
      this.crcs.push(new Uint32Array(LOG_CHUNK))
    }
    if (oid.length !== 40 || this.ids[chunk]!.write(oid, at * 20, 20, 'hex') !== 20) {
      throw new TypeError(`not an object id: ${oid}`)
    }
    this.offsets[chunk]![at] = offset
    this.crcs[chunk]![at] = crc
    this.length++
  }

  firstByte(n: number): number {
    return this.ids[Math.floor(n / LOG_CHUNK)]![(n % LOG_CHUNK) * 20]!
  }

  offset(n: number): number {
    return this.offsets[Math.floor(n / LOG_CHUNK)]![n % LOG_CHUNK]!
  }

  crc(n: number): number {
    return this.crcs[Math.floor(n / LOG_CHUNK)]![n % LOG_CHUNK]!
  }

  copyId(n: number, target: Buffer, at: number): void {
    const from = (n % LOG_CHUNK) * 20
    this.ids[Math.floor(n / LOG_CHUNK)]!.copy(target, at, from, from + 20)
  }

  /** Orders entries `a` and `b` by id, bytewise (0: the same id). */
  compare(a: number, b: number): number {
    const left = this.ids[Math.floor(a / LOG_CHUNK)]!
    const right = this.ids[Math.floor(b / LOG_CHUNK)]!
    const at = (a % LOG_CHUNK) * 20
    const bt = (b % LOG_CHUNK) * 20
    for (let k = 0; k < 20; k++) {
      const diff = left[at + k]! - right[bt + k]!
      if (diff !== 0) return diff
    }
    return 0
  }
}

export class PackWriter {
  private readonly entries = new EntryLog()
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES)
  private buffered = 0
  private offset = 0
  private done = false
  /** An entry's write is under way (`add` returned a promise that has not settled). */
  private pending = false
  /** Where `add` writes an entry's header (at most 21 bytes: size and distance varints). */
  private readonly head = Buffer.alloc(32)

  private constructor(
    readonly dir: string,
    private readonly tempPack: string,
    private fd: number | null,
  ) {}

  /** Starts a pack in `dir` (the repository's `objects/pack`). */
  static create(dir: string): PackWriter {
    makeFolders(dir, 0o755)
    // Never written through a link (to a folder outside the data folder, say): the pass, and
    // the removals of the packs it folds, would land there (probe32b). Read, never written.
    if (!disk.lstatSync(dir).isDirectory()) {
      throw new Error('objects/pack is not a folder (a link?): no pack is written through it')
    }
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
   * (and `maxDepth` allows). Returns where the entry went and its chain depth: at once when
   * nothing had to wait (most entries: compressed here and copied into the write buffer), or
   * a promise when something did (a large object compressed on the thread pool, a full buffer
   * written out), which must settle before the next call. A pass adds tens of thousands of
   * entries: a promise for each, waiting for nothing, was a fifth of the garbage it made.
   */
  add(
    oid: string,
    type: ObjectKind,
    content: Buffer,
    base?: DeltaBase | null,
    maxDepth = 50,
  ): PackedEntry | Promise<PackedEntry> {
    if (this.pending) throw new Error('the previous entry is still being written')
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
    if (body.length >= ASYNC_DEFLATE_BYTES) {
      const size = body.length
      return this.waitFor(
        deflateAsync(body).then((compressed) =>
          this.place(oid, code, size, baseOffset, depth, compressed),
        ),
      )
    }
    // Output room for the whole result: zlib's default 16 KB chunk, allocated per call, was
    // most of the memory maintenance churned through (and what set the pace of collections).
    const compressed = zlib.deflateSync(body, {
      ...(body.length <= 4096 ? SMALL_DEFLATE : {}),
      chunkSize: Math.max(64, body.length + 64),
    })
    return this.place(oid, code, body.length, baseOffset, depth, compressed)
  }

  /** Writes an entry's header and compressed body after what is written, and logs it. */
  private place(
    oid: string,
    code: number,
    size: number,
    baseOffset: number,
    depth: number,
    compressed: Buffer,
  ): PackedEntry | Promise<PackedEntry> {
    const distance = code === OFS_DELTA ? this.offset - baseOffset : 0
    const head = this.head
    const headLength = writeEntryHeader(head, code, size, distance)
    const offset = this.offset
    let crc = crc32Range(head, 0, headLength)
    crc = crc32(compressed, crc)
    const length = headLength + compressed.length
    if (this.buffered + length <= this.buffer.length) {
      // Most entries: copied into the write buffer here, without an await for each part.
      head.copy(this.buffer, this.buffered, 0, headLength)
      compressed.copy(this.buffer, this.buffered + headLength)
      this.buffered += length
      this.offset += length
      this.entries.push(oid, offset, crc)
      return { offset, depth }
    }
    const header = Buffer.from(head.subarray(0, headLength))
    return this.waitFor(
      (async () => {
        await this.push(header)
        await this.push(compressed)
        this.entries.push(oid, offset, crc)
        return { offset, depth }
      })(),
    )
  }

  /** `work`, during which `add` and `finish` refuse to start (they would write in between). */
  private waitFor<T>(work: Promise<T>): Promise<T> {
    this.pending = true
    return work.finally(() => {
      this.pending = false
    })
  }

  /**
   * Finishes the pack: count, checksum, index, fsyncs, renames. `pause` is awaited between
   * chunks of work so a caller can keep the event loop responsive; `onStep` marks the points
   * between the durable writes and the renames (crash tests stop there).
   */
  async finish(
    pause: () => Promise<void> | undefined = () => undefined,
    onStep: (step: 'index-durable' | 'pack-renamed') => void = () => undefined,
  ): Promise<WrittenPack> {
    if (this.done || this.fd === null) throw new Error('pack already finished')
    if (this.pending) throw new Error('the last entry is still being written')
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
    // After its fsync: the close reports nothing the pack relies on (a throw here failed a pass
    // whose pack was whole and durable).
    closeQuietly(fd)

    const name = `pack-${checksum.toString('hex')}`
    const finalPack = path.join(this.dir, `${name}.pack`)
    const finalIdx = path.join(this.dir, `${name}.idx`)
    if (exists(finalPack) && exists(finalIdx)) {
      // The same objects packed the same way again: the pack named by this checksum is it.
      await unlinkIfThere(this.tempPack)
      this.done = true
      return { name, objects: this.entries.length, bytes: this.offset + 20 }
    }
    const idx = await buildIndex(this.entries, checksum, pause)
    // Both files are still temp files until the index is durable (the pack is renamed only
    // then): a failed write leaves temp files alone, which the next pass removes.
    const tempIdx = await writeDurableIndex(this.dir, idx, pause)
    onStep('index-durable')
    // On the thread pool, awaited one after the other (the order stays: the pack, then its
    // index): a rename or unlink the disk holds up (freeing blocks on a mount with `discard`)
    // must not hold up the event loop, and with it the commands.
    try {
      await disk.promises.rename(this.tempPack, finalPack)
      onStep('pack-renamed')
      await disk.promises.rename(tempIdx, finalIdx)
    } catch (error) {
      await this.undoInstall(tempIdx, finalPack, finalIdx)
      throw error
    }
    // Some file systems refuse a folder fsync; the renames stand regardless.
    await syncFolder(this.dir).catch(() => undefined)
    this.done = true
    return { name, objects: this.entries.length, bytes: this.offset + 20 }
  }

  /**
   * After a rename of `finish` failed: the pack's files go (the pack under its temp name or,
   * renamed, without its index; then its temp index), so that the pass leaves no `tmp_idx_*` nor
   * a `.pack` without `.idx` for the next one to clear. Nothing reads a pack without its index,
   * and every object it holds is still where it was (loose, or in the packs it was to replace):
   * none is the only copy. A pack whose index did arrive (a rename that failed after it
   * happened) is whole, and stays. The order matters: the temp index goes only once the pack it
   * names is gone, so a second failure (an unlink refused) or a kill part way leaves either a
   * `.pack` with its durable `tmp_idx_*`, which the next pass finishes installing as after a
   * kill between the renames (`finishInstalls`), or temp files alone, which it removes; never a
   * `.pack` with neither, which it would have to file as damage.
   */
  private async undoInstall(tempIdx: string, finalPack: string, finalIdx: string): Promise<void> {
    const gone = (file: string) =>
      unlinkIfThere(file).then(
        () => true,
        () => false,
      )
    // Left, with its temp index, when it cannot be removed: both are temp files then.
    if (!(await gone(this.tempPack))) return
    // Whether the index arrived, asked on the thread pool; a disk that cannot say keeps all.
    const indexArrived = await disk.promises.lstat(finalIdx).then(
      () => true,
      (error: unknown) => !isMissing(error),
    )
    if (indexArrived || !(await gone(finalPack))) return
    await gone(tempIdx)
  }

  /**
   * Drops the unfinished pack. Safe to call at any point, and more than once; never rejects.
   * Its temp file is unlinked on the thread pool (a pass stopped part way may leave hundreds
   * of megabytes to free).
   */
  async abort(): Promise<void> {
    if (this.done) return
    this.done = true
    if (this.fd !== null) {
      closeQuietly(this.fd)
      this.fd = null
    }
    try {
      await unlinkIfThere(this.tempPack)
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
}

/**
 * The version 2 index of the pack whose entries are `entries` (in any order) and whose checksum
 * is `packChecksum`: header, fanout, names, crc32s, offsets, large offsets, checksums. A pack
 * writer's own, and a lost index built again from its pack (`index-pack.ts`). `pause` lets
 * commands run between steps.
 */
export async function buildIndex(
  entries: EntryLog,
  packChecksum: Buffer,
  pause: () => Promise<void> | undefined,
): Promise<Buffer> {
  const n = entries.length
  // Entries by first byte (counting sort), then each of those 256 runs sorted by id, with a
  // pause between runs: no step is proportional to the whole pack.
  const starts = new Int32Array(257)
  let large = 0
  for (let i = 0; i < n; i++) {
    starts[entries.firstByte(i) + 1]!++
    if (entries.offset(i) >= LARGE_OFFSET) large++
    if (i % 1024 === 1023) await pause()
  }
  for (let b = 0; b < 256; b++) starts[b + 1]! += starts[b]!
  const order = new Int32Array(n)
  const next = starts.slice(0, 256)
  for (let i = 0; i < n; i++) {
    order[next[entries.firstByte(i)]!++] = i
    if (i % 1024 === 1023) await pause()
  }
  const byId = (a: number, b: number) => entries.compare(a, b)
  for (let b = 0; b < 256; b++) {
    const run = order.subarray(starts[b]!, starts[b + 1]!).sort(byId)
    for (let k = 1; k < run.length; k++) {
      if (byId(run[k - 1]!, run[k]!) === 0) throw new Error('object packed twice')
    }
    await pause()
  }
  const out = Buffer.alloc(8 + 1024 + n * 28 + large * 8 + 40)
  out.writeUInt32BE(0xff744f63, 0)
  out.writeUInt32BE(2, 4)
  for (let b = 0; b < 256; b++) out.writeUInt32BE(starts[b + 1]!, 8 + b * 4)
  const namesAt = 8 + 1024
  const crcAt = namesAt + n * 20
  const offsetsAt = crcAt + n * 4
  const largeAt = offsetsAt + n * 4
  let nextLarge = 0
  for (let k = 0; k < n; k++) {
    const i = order[k]!
    if (k % 1024 === 1023) await pause()
    entries.copyId(i, out, namesAt + k * 20)
    out.writeUInt32BE(entries.crc(i) >>> 0, crcAt + k * 4)
    const offset = entries.offset(i)
    if (offset < LARGE_OFFSET) {
      out.writeUInt32BE(offset, offsetsAt + k * 4)
    } else {
      out.writeUInt32BE((LARGE_OFFSET | nextLarge) >>> 0, offsetsAt + k * 4)
      out.writeUInt32BE(Math.floor(offset / 2 ** 32), largeAt + nextLarge * 8)
      out.writeUInt32BE(offset >>> 0, largeAt + nextLarge * 8 + 4)
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

/** The header of an entry stored whole, not as a delta: its kind and size (a bundle's pack). */
export function wholeEntryHeader(kind: ObjectKind, size: number): Buffer {
  return entryHeader(TYPE_CODES[kind], size, 0)
}

/** The entry header: type and size, then for OFS_DELTA the distance back to the base. */
export function entryHeader(code: number, size: number, distance: number): Buffer {
  const out = Buffer.alloc(32)
  return out.subarray(0, writeEntryHeader(out, code, size, distance))
}

/** `entryHeader` written at the start of `out` (32 bytes hold any); returns its length. */
function writeEntryHeader(out: Buffer, code: number, size: number, distance: number): number {
  let at = 0
  let byte = (code << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    out[at++] = byte | 0x80
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  out[at++] = byte
  if (code === OFS_DELTA) {
    // Big-endian groups of 7 bits; every group but the last adds one (git's encoding):
    // counted first, then written from the last group back.
    let groups = 1
    for (let value = Math.floor(distance / 128); value > 0; value = Math.floor((value - 1) / 128)) {
      groups++
    }
    let end = at + groups - 1
    out[end] = distance & 0x7f
    let value = Math.floor(distance / 128)
    while (value > 0) {
      value -= 1
      out[--end] = (value & 0x7f) | 0x80
      value = Math.floor(value / 128)
    }
    at += groups
  }
  return at
}

/** Unlinks `file` on the thread pool, fine if it is not there (an I/O error is thrown). */
async function unlinkIfThere(file: string): Promise<void> {
  try {
    await disk.promises.unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

/**
 * Finishes the pack writes a kill stopped between the pack's rename and its index's: each
 * `pack-X.pack` without `pack-X.idx` beside a `tmp_idx_*` that is a whole index of that pack
 * (`wholeIndex`: its own checksum holds; `PackFile.indexedBy`: it names the pack's checksum X,
 * which the pack's own last 20 bytes repeat, and its object count) gets that index renamed into
 * place. Both files were `fsync`ed before the first rename, so the pack is exactly what the pass
 * wrote; without this the pack was taken for damage and kept in `cairn-damaged/` for good (its
 * objects are still loose: nothing was lost, but the disk was). Returns true when it renamed any.
 */
function finishInstalls(dir: string, names: readonly string[]): boolean {
  const present = new Set(names)
  const waiting = new Map<string, string>()
  for (const name of names) {
    const match = /^pack-([0-9a-f]{40})\.pack$/.exec(name)
    if (match && !present.has(`pack-${match[1]}.idx`)) waiting.set(match[1] as string, name)
  }
  if (waiting.size === 0) return false
  let finished = false
  for (const name of names) {
    if (!name.startsWith('tmp_idx_')) continue
    try {
      const index = wholeIndex(disk.readFileSync(path.join(dir, name)))
      if (index === null) continue
      const checksum = index.packChecksum.toString('hex')
      const pack = waiting.get(checksum)
      if (pack === undefined || !indexes(path.join(dir, pack), index)) continue
      disk.renameSync(path.join(dir, name), path.join(dir, `pack-${checksum}.idx`))
      waiting.delete(checksum)
      finished = true
    } catch (error) {
      // Gone already (another open cleared it). A disk that fails is said.
      if (!isMissing(error)) throw error
    }
  }
  return finished
}

/** True when `index` is the index of the pack `file` (a file that is no pack has none). */
function indexes(file: string, index: IndexedPack): boolean {
  let pack: PackFile | null = null
  try {
    pack = PackFile.open(file, new ObjectCache(0))
    return pack.indexedBy(index)
  } catch (error) {
    if (error instanceof PackError) return false
    throw error
  } finally {
    pack?.close()
  }
}

/**
 * The mark maintenance puts beside a pack it folded into another (`pack-X.folded`) before it
 * removes the pack's files: every object of it is in a durable pack by then.
 */
export const FOLDED = '.folded'

/**
 * The mark a refused fetch's removal puts beside a pack before it removes the pack's files
 * (`pack-X.dropped`): nothing kept reaches what only it holds, so the pack goes whole, index and
 * all, even when a kill came before its index was removed (a `.folded` pack whose index is still
 * there is kept whole instead: its fold had not begun).
 */
export const DROPPED = '.dropped'

/**
 * What a `DROPPED` mark says. Only a mark that says it removes a pack whole: a file of that name
 * with anything else (a person's, git knows no such mark) is not Cairn's and changes nothing,
 * and one a power cut left empty keeps the pack whole, as a `.folded` mark would.
 */
const DROPPED_BY = 'cairn: a refused fetch brought this pack; nothing kept reaches it\n'

/**
 * Whether the file `name` in `dir` is a `DROPPED` mark Cairn wrote. One that cannot be read
 * (EACCES, EIO) is not known to be: its pack is kept, and the open goes on.
 */
function droppedByCairn(dir: string, name: string): boolean {
  if (!/^pack-[0-9a-f]+\.dropped$/.test(name)) return false
  try {
    const text = readPlainFileOrNull(path.join(dir, name), DROPPED_BY.length + 1)
    return text?.toString('utf8') === DROPPED_BY
  } catch {
    return false
  }
}

/**
 * Removes the pack `name` (`pack-<checksum>`) from `db.packDir`, closed first (`retire`):
 * marked (`mark`: as folded, or as dropped), durably, so a kill between the unlinks leaves a
 * pack without its index that open removes as a leftover rather than keeping it whole in
 * cairn-damaged/ (and, marked as dropped, a pack with its index too); then the index (a pack
 * without one is invisible: `onUnindexed` is told), the pack and its other files, and the mark.
 * The folder is not synced after the unlinks (a caller that needs them durable does, once for
 * all it removed).
 */
export async function removePack(
  db: { readonly packDir: string; retire(names: ReadonlyArray<string>): void },
  name: string,
  onUnindexed?: () => void,
  mark: typeof FOLDED | typeof DROPPED = FOLDED,
): Promise<void> {
  // Never through a link at objects/pack (to a folder outside the data folder, say): its
  // marker and unlinks would land there, as a pass's writes would (`PackWriter.create`).
  if (!disk.lstatSync(db.packDir).isDirectory()) {
    throw new Error('objects/pack is not a folder (a link?): no pack is removed through it')
  }
  db.retire([name])
  const marker = path.join(db.packDir, `${name}${mark}`)
  await disk.promises.writeFile(marker, mark === DROPPED ? DROPPED_BY : '', { mode: 0o600 })
  await syncFolder(db.packDir)
  for (const ext of ['idx', 'pack', 'rev', 'bitmap']) {
    // Once the index is gone the pack is invisible: its other files go regardless.
    try {
      await disk.promises.unlink(path.join(db.packDir, `${name}.${ext}`))
    } catch (error) {
      if (!isMissing(error)) throw error
    }
    if (ext === 'idx') onUnindexed?.()
  }
  await disk.promises.unlink(marker)
}

/**
 * Clears what an interrupted pack write leaves in `dir`: a `.pack` whose write was killed
 * between its two renames (its `.idx` still under its temp name, durable, naming that pack) gets
 * its index renamed into place, finishing the write; other temp files are removed, and a `.pack`
 * whose `.idx` never arrived (or the reverse) is moved aside, into `cairn-damaged/` in the git
 * directory — never deleted: a pack whose index was lost by damage rather than by a crash
 * may hold the only copy of its objects (`git index-pack` can index it again). A pack marked
 * as folded (`FOLDED`) is the exception: a kill between the unlinks of its files left it, and
 * its files are removed; when its index is still there the fold had not begun, so only the
 * mark goes (the pack is whole, and the next full pass folds it again). A pack marked as
 * dropped (`DROPPED`: a refused fetch's, which nothing kept reaches) goes whole, its index
 * too, wherever the kill came. `olderThanMs` spares
 * files another writer may still be busy with. Given `unindexed`, a `.pack` without its `.idx`
 * stays where it is and its name (`pack-<checksum>`) is put there instead: open builds its
 * index again from it (`reindexPack`), and keeps it aside only when that cannot be done.
 * Returns the names cleared.
 */
export function removePackLeftovers(
  dir: string,
  olderThanMs = 0,
  now = Date.now(),
  unindexed?: string[],
): string[] {
  // Never through a link at objects/pack: what looks left over there may be another
  // repository's gc under way (rhist33: its temp and unindexed packs were deleted).
  let names = listOwnFolderNames(dir)
  // Listed again only when an index was renamed into place: the rest is judged as it is now.
  if (finishInstalls(dir, names)) {
    syncFolder(dir).catch(() => undefined)
    names = listNames(dir)
  }
  const present = new Set(names)
  const removed: string[] = []
  // Only Cairn's own: a person's `pack-X.dropped` beside a pack still needed took it, index and
  // all, and every object only it held.
  const dropped = new Set(names.filter((name) => droppedByCairn(dir, name)))
  const folded = (pack: string) =>
    dropped.has(`${pack}${DROPPED}`) ||
    (present.has(`${pack}${FOLDED}`) && !present.has(`${pack}.idx`))
  const isMark = (name: string) => name.endsWith(FOLDED) || dropped.has(name)
  for (const name of names) {
    if (name.endsWith(DROPPED) && !dropped.has(name)) continue
    const marked = /^(pack-[0-9a-f]+)\.(pack|idx|rev|bitmap|folded|dropped)$/.exec(name)
    const match = /^(pack-[0-9a-f]+)\.(pack|idx)$/.exec(name)
    const orphan =
      match !== null && !present.has(`${match[1]}.${match[2] === 'pack' ? 'idx' : 'pack'}`)
    const leftOfFold =
      marked !== null &&
      (marked[2] === 'folded' || marked[2] === 'dropped' || folded(marked[1] as string))
    if (!leftOfFold && !orphan && !name.startsWith('tmp_pack_') && !name.startsWith('tmp_idx_')) {
      continue
    }
    const file = path.join(dir, name)
    try {
      if (olderThanMs > 0 && now - disk.statSync(file).mtimeMs < olderThanMs) continue
      // The mark goes last, after the files it speaks for (names are listed in no set order).
      if (leftOfFold && isMark(name)) continue
      if (orphan && !leftOfFold && unindexed && match[2] === 'pack') {
        unindexed.push(match[1] as string)
        continue
      } else if (orphan && !leftOfFold) {
        moveIntoDamaged(path.join(dir, '..', '..'), file, name)
      } else {
        removeFile(file)
      }
      removed.push(name)
    } catch (error) {
      // Gone already. A disk that fails is said, never taken for "nothing there".
      if (!isMissing(error)) throw error
    }
  }
  for (const name of names) {
    if (!isMark(name) || !/^pack-[0-9a-f]+\.(folded|dropped)$/.test(name)) continue
    const file = path.join(dir, name)
    if (olderThanMs > 0) {
      try {
        if (now - disk.statSync(file).mtimeMs < olderThanMs) continue
      } catch (error) {
        if (!isMissing(error)) throw error
        continue
      }
    }
    try {
      removeFile(file)
      removed.push(name)
    } catch (error) {
      if (!isMissing(error)) throw error
    }
  }
  return removed
}
