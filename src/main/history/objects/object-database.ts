/**
 * Finds and reads objects of one git directory: loose files (`objects/xx/yyyy…`) and every
 * pack with an index (`objects/pack/pack-*.idx` + `.pack`), whichever wrote them — Cairn's
 * own maintenance or `git gc`. Nothing is loaded whole: packs are read by index lookup and
 * positioned reads (see pack-index.ts and pack-file.ts). Every object read is checked against
 * its name, so damage shows up as an error instead of wrong content.
 */
import { createHash, hash } from 'node:crypto'
import {
  closeQuietly,
  disk,
  exists,
  isCode,
  isMissing,
  isNotPlainFile,
  listNames,
  OPEN,
  readPlainFile,
} from '../../lib/disk'
import { OWN_FILE_CAP } from '../../lib/own-file-caps'
import path from 'node:path'
import { inflateSync, constants as zlibConstants } from 'node:zlib'
import { DeltaError } from './delta'
import {
  ObjectCache,
  PackError,
  PackFile,
  TYPE_CODES,
  type ObjectKind,
  type RawObject,
  type RecordStarts,
} from './pack-file'
import { PackIndex, PackIndexError, positionsIn, type PackedPositions } from './pack-index'
import { packedRecordsSound, recordsSoundAt, type Extents } from './packed-crc'
import { inflateStored } from './stored-zlib'

export type { ObjectKind, RawObject } from './pack-file'

/** Thrown when no loose file and no pack holds an object. */
export class MissingObjectError extends Error {
  readonly code = 'missing-object'
  constructor(readonly oid: string) {
    super(`object ${oid} is missing`)
  }
}

/** Thrown when an object's bytes are not what its name promises. */
export class DamagedObjectError extends Error {
  readonly code = 'damaged-object'
  constructor(
    readonly oid: string,
    reason: string,
  ) {
    super(`object ${oid} is damaged: ${reason}`)
  }
}

export type { PackedPositions } from './pack-index'

/**
 * The positions in `index` of each of `oids` from `looked`, or null when `looked` did not
 * cover them all (an index opened since, an id not looked up): then they are looked up again.
 */
function positionsFrom(
  looked: PackedPositions,
  index: PackIndex,
  oids: ReadonlyArray<string>,
): Int32Array | null {
  const all = looked.byIndex.get(index)
  if (!all) return null
  const positions = new Int32Array(oids.length)
  for (let i = 0; i < oids.length; i++) {
    const at = looked.at.get(oids[i]!)
    if (at === undefined) return null
    positions[i] = all[at]!
  }
  return positions
}

/** One pack of the repository: its index and its data. */
export interface OpenPack {
  /** `pack-<checksum>` (without extension). */
  readonly name: string
  readonly index: PackIndex
  readonly pack: PackFile
  /** Size in bytes of the .pack file. */
  readonly bytes: number
}

const OID = /^[0-9a-f]{40}$/

/** The header git puts in front of an object's content before hashing it. */
export function objectHeader(type: ObjectKind, size: number): Buffer {
  return Buffer.from(`${type} ${size}\0`)
}

// Up to this size an object is hashed in one call over a copy of its header and content (a
// few hundred bytes copied cost less than a hash object with two updates); larger, without
// the copy, which from about 1.5 KB costs more than the second update saves (2-16 KB: 0.5-6 µs
// more an object in one process, calls alternating, load 0.7).
const ONE_SHOT_HASH_MAX = 1024

/**
 * Bytes hashed per object a pack holds before its records' starts are sorted so that objects
 * can be checked by their records' CRC-32s instead (`recordStarts`): sorting costs about 100
 * ns an object, hashing about 1 ns a byte, so checking this way never costs more than about
 * what hashing has cost already.
 */
const HASHED_PER_OBJECT = 128

/** The object id of `content` stored as `type`. */
export function hashObject(type: ObjectKind, content: Uint8Array): string {
  const header = objectHeader(type, content.byteLength)
  if (content.byteLength <= ONE_SHOT_HASH_MAX) {
    return hash('sha1', Buffer.concat([header, content]), 'hex')
  }
  return createHash('sha1').update(header).update(content).digest('hex')
}

export class ObjectDatabase {
  readonly objectsDir: string
  readonly packDir: string
  private readonly cache = new ObjectCache()
  private packList: OpenPack[] = []
  private packListing = ''
  private closed = false
  // Objects whose packed copy failed its check (bit rot inside a pack, its index intact):
  // writing one again then makes a loose copy, which reads take instead (see `read`).
  private readonly damagedInPack = new Set<string>()
  // Packs left out because their index or their data is not what git writes (see `openPack`).
  private readonly leftOut = new Set<string>()
  /** Bytes of objects each pack gave that were hashed to check them (see `recordStarts`). */
  private readonly hashedBytes = new WeakMap<OpenPack, number>()
  /**
   * True while object folders maintenance made may not be durable yet (`objects/` not fsynced
   * since): a commit writing into one then fsyncs `objects/` as well, as it does for a folder
   * it made itself.
   */
  foldersUnsynced = false

  constructor(readonly gitdir: string) {
    this.objectsDir = path.join(gitdir, 'objects')
    this.packDir = path.join(this.objectsDir, 'pack')
    this.refresh()
  }

  /** The packs currently open, newest first. */
  packs(): ReadonlyArray<OpenPack> {
    return this.packList
  }

  /** Bytes of objects `open` gave that were hashed to check them (see `recordStarts`). */
  hashedFrom(open: OpenPack): number {
    return this.hashedBytes.get(open) ?? 0
  }

  /**
   * Re-reads the pack folder: opens packs that appeared, closes those that went. Returns true
   * when the set changed. A pack whose index or data cannot be read is left out (its objects
   * then read as missing, which the caller reports).
   */
  refresh(): boolean {
    // A missing folder is no packs; a disk that fails says so (never "no packs").
    const names = listNames(this.packDir)
    const idx = names.filter((name) => /^pack-[0-9a-f]{40,64}\.idx$/.test(name)).sort()
    const listing = idx.join('\n')
    if (listing === this.packListing) return false
    const present = new Set(names)
    this.leftOut.clear()
    const kept = new Map(this.packList.map((open) => [open.name, open]))
    const next: Array<OpenPack & { mtime: number }> = []
    const opened: OpenPack[] = []
    try {
      for (const file of idx) {
        const name = file.slice(0, -4)
        if (!present.has(`${name}.pack`)) continue
        const mtime = mtimeOf(path.join(this.packDir, `${name}.pack`))
        const known = kept.get(name)
        if (known) {
          kept.delete(name)
          next.push({ ...known, mtime })
          continue
        }
        const open = this.openPack(name)
        if (open) {
          opened.push(open)
          next.push({ ...open, mtime })
        }
      }
    } catch (error) {
      // An I/O error while opening a pack: nothing changes, and the listing is not taken as
      // seen, so the next refresh tries again (a pack left unopened would read as missing
      // objects, "damaged", until a restart).
      for (const open of opened) closePack(open)
      throw error
    }
    // Taken as seen only once every pack in it was opened (or found not to be one).
    this.packListing = listing
    for (const gone of kept.values()) closePack(gone)
    next.sort((a, b) => b.mtime - a.mtime)
    this.packList = next.map(({ mtime: _mtime, ...open }) => open)
    return true
  }

  /**
   * The packs (`pack-<checksum>`) the last look at the pack folder left out because their
   * index or their data is not what git writes: a zeroed or cut index, or an index of another
   * pack. Open builds such an index again from its pack (`reindexPack`), then `reopen`s.
   */
  packsLeftOut(): ReadonlyArray<string> {
    return [...this.leftOut]
  }

  /** Reads the pack folder again whole, packs left out included (after their repair). */
  reopen(): void {
    this.packListing = ''
    this.leftOut.clear()
    for (const open of this.packList) closePack(open)
    this.packList = []
    this.refresh()
  }

  /** Closes and forgets the packs named (before they are deleted: Windows refuses otherwise). */
  retire(names: ReadonlyArray<string>): void {
    const drop = new Set(names)
    for (const open of this.packList) if (drop.has(open.name)) closePack(open)
    this.packList = this.packList.filter((open) => !drop.has(open.name))
    this.packListing = ''
  }

  /** True when a pack or a loose file holds `oid`. */
  has(oid: string): boolean {
    const raw = Buffer.from(oid, 'hex')
    for (const open of this.packList) if (open.index.has(raw)) return true
    return exists(this.loosePath(oid))
  }

  /**
   * Where each pack's index lists each of `oids`: one `PackIndex.positionsEach` per pack, each
   * slice of its name table read once. For `inPackEach` and `packedRecordsSound`, so that open
   * reads the names once for its files' blobs and HEAD's trees together.
   */
  packedPositions(oids: ReadonlyArray<string>): PackedPositions {
    return positionsIn(
      this.packList.map((open) => open.index),
      oids,
    )
  }

  /**
   * For each of `oids`, true when a pack (not counting loose files) holds it: `inPack` for
   * many ids at once, from `looked` (`packedPositions`, of these ids or more).
   */
  inPackEach(
    oids: ReadonlyArray<string>,
    looked: PackedPositions = this.packedPositions(oids),
  ): boolean[] {
    const found = oids.map(() => false)
    const tables = [...looked.byIndex.values()]
    for (let i = 0; i < oids.length; i++) {
      const at = looked.at.get(oids[i]!)
      if (at === undefined) continue
      for (let t = 0; t < tables.length; t++) {
        if (tables[t]![at]! >= 0) {
          found[i] = true
          break
        }
      }
    }
    return found
  }

  /** True when a pack (not counting loose files) holds `oid`. */
  inPack(oid: string): boolean {
    // Asked for every memory file at open: a loose history has no id to convert.
    if (this.packList.length === 0) return false
    const raw = Buffer.from(oid, 'hex')
    for (const open of this.packList) if (open.index.has(raw)) return true
    return false
  }

  /**
   * True when a read of `oid`'s packed copy failed its check since this database opened: the
   * pack's copy cannot be relied on, so a write of it makes a loose copy.
   */
  packedCopyDamaged(oid: string): boolean {
    return this.damagedInPack.size > 0 && this.damagedInPack.has(oid)
  }

  /**
   * Reads `oid`'s packed copy and checks it, noting it as damaged when it fails; false then.
   * For the rare object a pack and a loose file both hold, before the loose file is removed.
   */
  checkPackedCopy(oid: string): boolean {
    try {
      this.readPacked(oid)
      return true
    } catch (error) {
      if (!(error instanceof DamagedObjectError || error instanceof MissingObjectError)) throw error
      this.damagedInPack.add(oid)
      return false
    }
  }

  /**
   * The cheap check of packed copies (open's, for HEAD's trees; see `packed-crc.ts`): each
   * of `oids` a pack holds maps to true when its record is as written (its CRC-32), false when
   * it is not (then noted as damaged, see `packedCopyDamaged`), null when this cannot tell (a
   * delta, an index without CRC-32s): `checkPackedCopy` then. Objects no pack holds are left
   * out. `extents`: where records were found to lie by an earlier check, and where to put
   * those found now (see `packedRecordsSound` in packed-crc.ts). `looked`: where the packs'
   * indexes list these ids, when already looked up (`packedPositions`).
   */
  packedRecordsSound(
    oids: ReadonlyArray<string>,
    extents?: Extents,
    looked?: PackedPositions,
  ): Map<string, boolean | null> {
    const result = new Map<string, boolean | null>()
    let left = oids
    for (const open of this.packList) {
      if (left.length === 0) break
      let found: Map<string, boolean | null>
      try {
        const positions = looked && positionsFrom(looked, open.index, left)
        found = packedRecordsSound(open.index, open.pack, left, extents, positions ?? undefined)
      } catch (error) {
        // An index or record that cannot even be located: the full read says how.
        if (!isFormatError(error)) throw error
        for (const oid of left) result.set(oid, null)
        break
      }
      for (const [oid, sound] of found) {
        result.set(oid, sound)
        if (sound === false) this.damagedInPack.add(oid)
      }
      // Reads take the first pack that holds an object: so does this check.
      if (found.size > 0) left = left.filter((oid) => !found.has(oid))
    }
    return result
  }

  /** Every object whose packed copy failed its check (see `packedCopyDamaged`). */
  packedDamage(): ReadonlyArray<string> {
    return [...this.damagedInPack]
  }

  /**
   * The object `oid`; throws `MissingObjectError` or `DamagedObjectError`. A packed copy that
   * fails its check gives way to a loose copy that passes (written since, as git reads too).
   */
  read(oid: string): RawObject {
    if (!OID.test(oid)) throw new MissingObjectError(oid)
    let found: RawObject | null
    try {
      found = this.readPacked(oid)
    } catch (error) {
      // (Missing: a delta base of it is gone from the pack.)
      if (!(error instanceof DamagedObjectError || error instanceof MissingObjectError)) throw error
      this.damagedInPack.add(oid)
      let loose: RawObject | null = null
      try {
        loose = this.readLoose(oid)
      } catch (looseError) {
        if (!(looseError instanceof DamagedObjectError)) throw looseError
      }
      if (loose) return loose
      throw error
    }
    found ??= this.readLoose(oid)
    if (found) return found
    // Maintenance (or git gc) may just have packed it and removed the loose file.
    if (this.refresh()) {
      const again = this.readPacked(oid)
      if (again) return again
    }
    throw new MissingObjectError(oid)
  }

  /**
   * `read`, with a loose file read on the thread pool: for maintenance, which reads every loose
   * object while commands run, on a disk it keeps busy (a read that waits for it there would
   * hold up the event loop, and every command with it). Packed objects are read as by `read`,
   * and so is one whose packed copy fails its check: `read` notes the damage and gives way to
   * a sound loose copy, which maintenance then packs (rare: read on the main thread).
   */
  async readOffThread(oid: string): Promise<RawObject> {
    if (!OID.test(oid)) throw new MissingObjectError(oid)
    let packed: RawObject | null
    try {
      packed = this.readPacked(oid)
    } catch (error) {
      if (error instanceof DamagedObjectError || error instanceof MissingObjectError) {
        return this.read(oid)
      }
      throw error
    }
    if (packed) return packed
    let stored: Buffer | null = null
    const file = this.loosePath(oid)
    try {
      // Only a plain file is read by name: a fifo there would hold a pool thread at its open
      // for good, and a link to /dev/zero would be read without end (rdisk29). Cairn writes
      // its loose objects itself, so nothing swaps one in between the look and the read.
      if (!(await disk.promises.lstat(file)).isFile()) {
        throw new DamagedObjectError(oid, 'not a file')
      }
      stored = await disk.promises.readFile(file)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
    }
    // Gone meanwhile (packed by someone else, say): `read` looks again, packs refreshed.
    return stored ? parseLoose(oid, stored) : this.read(oid)
  }

  /**
   * The size of `oid`'s content without reading it whole: a pack entry's header (a delta's
   * start), or a loose file's first bytes inflated as far as its `<type> <size>` header. Not a
   * check of the object (its content is not hashed): what lists sizes reads nothing else.
   * Whatever the header-only read cannot vouch for (a packed copy found damaged before, a
   * header that does not parse) is read whole, so damage is reported as `read` reports it.
   */
  sizeOf(oid: string): number {
    if (!OID.test(oid)) throw new MissingObjectError(oid)
    if (!this.damagedInPack.has(oid)) {
      const raw = Buffer.from(oid, 'hex')
      for (const open of this.packList) {
        const offset = open.index.find(raw)
        if (offset < 0) continue
        let size: number | null = null
        try {
          size = open.pack.objectSize(offset)
        } catch (error) {
          if (!isFormatError(error)) throw error
        }
        return size ?? this.read(oid).content.length
      }
    }
    const size = this.looseSize(oid)
    return size ?? this.read(oid).content.length
  }

  /**
   * The sizes of the blobs `oids` for a listing, each checked as cheaply as it can be; null
   * for one missing, damaged or not a blob ("Memory at this reply" marks it Damaged). A packed
   * object's type comes from its records' headers (a delta's from the whole entry at the end
   * of its chain) and every record of its chain is checked against the CRC-32 its pack's index
   * holds, without inflating any: building deltas is what made reading versions whole slow
   * (review13-story R5). A loose object, and a packed one this cannot vouch for (an index
   * without CRC-32s, a REF_DELTA, a record that fails its CRC), is read whole, as `read` reads
   * it (inflated, its header and hash checked; a sound loose copy beside a damaged packed one
   * is used).
   */
  checkedBlobSizes(oids: ReadonlyArray<string>): Map<string, number | null> {
    const result = new Map<string, number | null>()
    const readWhole = (oid: string): void => {
      try {
        const object = this.read(oid)
        result.set(oid, object.type === 'blob' ? object.content.length : null)
      } catch (error) {
        if (!(error instanceof DamagedObjectError || error instanceof MissingObjectError)) {
          throw error
        }
        result.set(oid, null)
      }
    }
    const byPack = new Map<
      OpenPack,
      Array<{
        readonly oid: string
        readonly offsets: ReadonlyArray<number>
        readonly size: number
      }>
    >()
    for (const oid of oids) {
      if (result.has(oid)) continue
      const open = this.damagedInPack.has(oid) ? undefined : this.packHolding(oid)
      if (!open) {
        readWhole(oid)
        continue
      }
      let chain: ReturnType<PackFile['chainOf']>
      let size: number | null
      try {
        chain = open.pack.chainOf(open.offset)
        size = chain.code === TYPE_CODES.blob ? open.pack.objectSize(open.offset) : null
      } catch (error) {
        if (!isFormatError(error)) throw error
        readWhole(oid)
        continue
      }
      if (chain.code !== null && chain.code !== TYPE_CODES.blob) {
        // A tree, commit or tag where a file's version should be (or no type at all).
        result.set(oid, null)
        continue
      }
      if (size === null) {
        readWhole(oid)
        continue
      }
      const list = byPack.get(open.open) ?? []
      list.push({ oid, offsets: chain.offsets, size })
      byPack.set(open.open, list)
    }
    for (const [open, items] of byPack) {
      let sound: Map<number, boolean> | null
      try {
        sound = recordsSoundAt(
          open.index,
          open.pack,
          items.flatMap((item) => item.offsets),
        )
      } catch (error) {
        if (!isFormatError(error)) throw error
        sound = null
      }
      for (const { oid, offsets, size } of items) {
        if (sound && offsets.every((offset) => sound.get(offset) === true)) result.set(oid, size)
        else readWhole(oid)
      }
    }
    return result
  }

  // The first pack holding `oid` (as reads take it) and its offset there, or undefined.
  private packHolding(
    oid: string,
  ): { readonly open: OpenPack; readonly pack: PackFile; readonly offset: number } | undefined {
    if (!OID.test(oid) || this.packList.length === 0) return undefined
    const raw = Buffer.from(oid, 'hex')
    for (const open of this.packList) {
      const offset = open.index.find(raw)
      if (offset >= 0) return { open, pack: open.pack, offset }
    }
    return undefined
  }

  // A loose object's size from its header, or null when the first bytes do not say it (or
  // there is no loose file: `read` then looks in the packs, refreshed).
  private looseSize(oid: string): number | null {
    let fd: number
    try {
      fd = disk.openSync(this.loosePath(oid), OPEN.READ)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return null
      throw error
    }
    const start = Buffer.allocUnsafe(512)
    let got: number
    try {
      got = readUpTo(fd, start)
    } finally {
      closeQuietly(fd)
    }
    let head: Buffer
    try {
      head = inflateSync(start.subarray(0, got), { finishFlush: zlibConstants.Z_SYNC_FLUSH })
    } catch {
      return null
    }
    const nul = head.indexOf(0)
    const match =
      nul > 0 ? /^(?:commit|tree|blob|tag) (\d+)$/.exec(head.toString('latin1', 0, nul)) : null
    return match ? Number(match[1]) : null
  }

  /** Path of the loose file `oid` has (or would have). */
  loosePath(oid: string): string {
    // An id joined as it is (`objectsDir` is normalized already; once per file at open);
    // anything else is normalized as before.
    if (!OID.test(oid)) return path.join(this.objectsDir, oid.slice(0, 2), oid.slice(2))
    return `${this.objectsDir}${path.sep}${oid.slice(0, 2)}${path.sep}${oid.slice(2)}`
  }

  /** Reads a loose object, or null when there is no loose file for it. */
  readLoose(oid: string): RawObject | null {
    const file = this.loosePath(oid)
    let fd: number
    try {
      // Never through a link, never waiting on a fifo (which then reads as empty: damaged).
      fd = disk.openSync(file, OPEN.READ | OPEN.NOFOLLOW | OPEN.NONBLOCK)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return null
      if (code === 'ELOOP') throw new DamagedObjectError(oid, 'not a file')
      throw error
    }
    let stored: Buffer
    try {
      // Most loose objects (trees, commits, notes) fit the scratch buffer: read and inflated
      // from there, without an `fstat` and a buffer of their own (81 objects at open). A file
      // that fills it is read again whole, by `readPlainFile` (a device such as /dev/zero in
      // its place would never end).
      let got: number
      try {
        got = readUpTo(fd, scratch)
      } catch (error) {
        // A folder in its place opens (read-only) and fails its read: damage, not a disk that
        // fails, or every open of the history failed on it as "unexpected" (probe32b).
        if (isCode(error, 'EISDIR')) throw new DamagedObjectError(oid, 'not a file')
        throw error
      }
      if (got < scratch.length) stored = scratch.subarray(0, got)
      else {
        try {
          stored = readPlainFile(file, OWN_FILE_CAP.OBJECTS)
        } catch (error) {
          if (isNotPlainFile(error)) throw new DamagedObjectError(oid, 'not a file')
          throw error
        }
      }
    } finally {
      closeQuietly(fd)
    }
    // Inflated into a buffer of its own: nothing returned refers to the scratch buffer.
    return parseLoose(oid, stored)
  }

  /**
   * True when `oid`'s loose file holds exactly `stored`, bytes already checked against that id
   * (a write-ahead log record's): compared, not inflated and hashed again. False when it holds
   * anything else (perhaps the same object compressed otherwise) or is missing.
   */
  looseHolds(oid: string, stored: Uint8Array): boolean {
    let fd: number
    try {
      fd = disk.openSync(this.loosePath(oid), OPEN.READ)
    } catch (error) {
      if (isMissing(error)) return false
      throw error
    }
    try {
      // One byte more than `stored`: a file that is longer does not hold it.
      const room = stored.byteLength + 1
      const into = room <= scratch.length ? scratch.subarray(0, room) : Buffer.allocUnsafe(room)
      const got = readUpTo(fd, into)
      return got === stored.byteLength && into.subarray(0, got).equals(stored)
    } finally {
      closeQuietly(fd)
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const open of this.packList) closePack(open)
    this.packList = []
  }

  private readPacked(oid: string): RawObject | null {
    const raw = Buffer.from(oid, 'hex')
    for (const open of this.packList) {
      let object: RawObject
      let vouched: boolean
      try {
        const position = open.index.position(raw)
        if (position < 0) continue
        const offset = open.index.offsetAt(position)
        const records = this.recordStarts(open)
        const read = open.pack.readChecked(offset, (base) => this.resolveBase(base), records)
        object = read.object
        // The record checked first is the one at the name's offset, by the CRC-32 listed for
        // the offset; it must be the one listed for the name too (an offset table damaged to
        // send one name to another's sound record is caught so).
        const listed = read.vouched && records ? records(offset) : null
        vouched = listed !== null && open.index.crcAt(position) === listed.crc
      } catch (error) {
        // An I/O error (a full or failing disk, too many open files) is not damage: it is
        // passed on as it is, so no one mistakes a bad moment for a broken history.
        if (!isFormatError(error) || error instanceof DamagedObjectError) throw error
        if (error instanceof MissingObjectError) throw error
        throw new DamagedObjectError(oid, (error as Error).message)
      }
      // The record found under this name, and every record it is built from, matches the
      // CRC-32 the index holds for it: what was written under the name (see `recordStarts`).
      if (vouched) return object
      if (hashObject(object.type, object.content) !== oid) {
        throw new DamagedObjectError(oid, 'content does not hash to its name')
      }
      this.hashedBytes.set(open, (this.hashedBytes.get(open) ?? 0) + object.content.length)
      return object
    }
    return null
  }

  /**
   * The pack index's record starts (`PackIndex.recordAt`), once hashing what this pack gave
   * has cost more than building them: `HASHED_PER_OBJECT` bytes hashed per object the pack
   * holds (a first blame of a long file reads and hashed every version, 32 MB for a 500-line
   * file over 1,000 commits, where a pack of 4,000 objects sorts its starts in under a
   * millisecond). Until then, and for an index without CRC-32s, null: every object is hashed.
   *
   * A packed object whose records all match their CRC-32s is taken without hashing it, as
   * "Memory at this reply" and open's check of HEAD's trees take one (`packed-crc.ts`): bit
   * rot, a torn write or a wrong offset in a record, its header or its base's distance fails
   * its CRC-32 and the object is then read and hashed as before, damage reported as it was.
   * What the CRC-32s cannot see is an index whose names and checksums were both written
   * wrong for the same record; git reads packed objects on the same terms.
   */
  private recordStarts(open: OpenPack): RecordStarts | null {
    const index = open.index
    if (!index.hasRecordStarts()) {
      const hashed = this.hashedBytes.get(open) ?? 0
      if (hashed < index.count * HASHED_PER_OBJECT || !index.hasCrcTables()) return null
    }
    const end = open.pack.entriesEnd()
    return (offset) => index.recordAt(offset, end)
  }

  private resolveBase(oid: Buffer): RawObject {
    return this.read(oid.toString('hex'))
  }

  private openPack(name: string): OpenPack | null {
    let index: PackIndex | null = null
    try {
      index = PackIndex.open(path.join(this.packDir, `${name}.idx`))
      const file = path.join(this.packDir, `${name}.pack`)
      const pack = PackFile.open(file, this.cache)
      if (!pack.indexedBy({ packChecksum: index.packChecksum(), count: index.count })) {
        pack.close()
        throw new Error(MISMATCH)
      }
      return { name, index, pack, bytes: disk.statSync(file).size }
    } catch (error) {
      index?.close()
      // A pack that is not one (damaged, or not for this index) is left out; its objects then
      // read as missing. An I/O error is not the pack's fault and is passed on.
      if (isFormatError(error) || (error as Error).message === MISMATCH) {
        this.leftOut.add(name)
        return null
      }
      throw error
    }
  }
}

const MISMATCH = 'index and pack do not belong together'

/** True for errors that say the bytes are wrong, as opposed to the disk failing to give them. */
export function isFormatError(error: unknown): boolean {
  if (
    error instanceof PackError ||
    error instanceof PackIndexError ||
    error instanceof DeltaError ||
    error instanceof DamagedObjectError ||
    error instanceof MissingObjectError
  ) {
    return true
  }
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && code.startsWith('Z_')
}

function closePack(open: OpenPack): void {
  open.index.close()
  open.pack.close()
}

function mtimeOf(file: string): number {
  try {
    return disk.statSync(file).mtimeMs
  } catch {
    return 0
  }
}

/**
 * The output chunk for inflating a loose object of `storedBytes`: about its inflated size
 * (trees and commits barely compress; memory text some 2-3 times), never zlib's default
 * 16 KiB. Each chunk is a buffer outside the JavaScript heap that lives until a garbage
 * collection; with 16 KiB for every small object, a maintenance pass reading 50,000 loose
 * objects allocated some 800 MB of them, and V8 answered that external memory with a full
 * collection every few hundred objects (57-106 in one pass), each stopping any command
 * running beside it (docs/performance.md, stop 16). An object larger than one chunk comes
 * back in several, joined into one buffer of its size.
 */
export function looseChunk(storedBytes: number): number {
  return Math.min(16 * 1024, 64 + 3 * storedBytes)
}

// Where `readLoose` reads a loose file first (synchronously: one read at a time).
const scratch = Buffer.allocUnsafeSlow(64 * 1024)

// Reads from the start of `fd` until `buf` is full or the file ends; returns the bytes read.
function readUpTo(fd: number, buf: Buffer): number {
  let done = 0
  while (done < buf.length) {
    const got = disk.readSync(fd, buf, done, buf.length - done, done)
    if (got === 0) break
    done += got
  }
  return done
}

/**
 * A loose object's stored (deflated) bytes, checked to be `oid`: they inflate, the header's
 * length is right, and they hash to it. Anything else is a `DamagedObjectError`. Stored
 * blocks as Cairn writes them are read without zlib (`inflateStored`); whatever that does not
 * take, damage included, goes to zlib, as before.
 */
export function parseLoose(oid: string, stored: Uint8Array): RawObject {
  let raw = inflateStored(stored)
  try {
    raw ??= inflateSync(stored, { chunkSize: looseChunk(stored.length) })
  } catch (error) {
    throw new DamagedObjectError(oid, (error as Error).message)
  }
  const nul = raw.indexOf(0)
  const header = nul > 0 ? raw.toString('latin1', 0, nul) : ''
  const match = /^(commit|tree|blob|tag) (\d+)$/.exec(header)
  if (!match || Number(match[2]) !== raw.length - nul - 1) {
    throw new DamagedObjectError(oid, 'bad loose object header')
  }
  const object = { type: match[1] as ObjectKind, content: raw.subarray(nul + 1) }
  // One call, no hash object: one fewer allocation for each of a pass's loose objects.
  if (hash('sha1', raw, 'hex') !== oid) {
    throw new DamagedObjectError(oid, 'content does not hash to its name')
  }
  return object
}
