/**
 * What each file of the memory folder looked like (size, times, inode) when its content was
 * last hashed, and that hash — so a scan can tell an unchanged file by one `lstat`, as git's
 * index does, and read and hash only the files that changed. It also keeps the folder's
 * totals (files, bytes) current from the scans themselves, for the Memory tool's limits.
 *
 * An entry is trusted only when the file's mtime is clearly older than the moment it was
 * hashed: a file written in the same clock tick as its hash could change again unseen
 * ("racily clean" in git's words), so it is hashed again next time.
 *
 * Saved as `<gitdir>/cairn-stat` (rewritten whole, atomically): a header line, a u32 count of
 * tree records, each 20-byte oid | loose stamp (4 x f64), then a u32 count of folder records,
 * each 20-byte tree id | u32 path length | u32 key length | path | key, then a u32 count of
 * packed extents, each 20-byte oid | 20-byte pack checksum | start, end (2 x f64), then per file
 *   20-byte oid | size, mtimeMs, ctimeMs, ino, checkedAt (5 x f64) | loose stamp (4 x f64) |
 *   u32 path length | path
 * and last a CRC-32 of everything before it. A file that does not match it reads as no cache:
 * a record whose oid was changed to another stored blob's would otherwise be trusted, and a
 * file edited outside Cairn committed with another file's content (hunt12-hist D3).
 * A missing or unreadable file is no harm: every file is then hashed once. Formats 2 to 4
 * (without the CRC) read as no cache too: every file is hashed, and every stored copy of
 * HEAD read whole, once. Format 5 (no folder records) is read with no folder trees kept: open
 * makes and hashes every folder's tree once, as before. Format 6 (no packed extents) is read
 * with none kept: open finds where HEAD's packed trees end from the pack's offsets once.
 *
 * A folder record is the git tree id a folder made when open last made it (git's
 * "cache-tree", `keptTree`), under the key it was made from: the folder's entries as open
 * listed them, each name with its mode and id (a file's blob id, a folder's tree id). Open
 * takes the id only for a folder whose entries give the same key: equal keys are equal trees.
 *
 * A packed extent is where one of HEAD's trees lies in a pack, as open's check of its CRC-32
 * found it (`packed-crc.ts`): the pack's checksum, the record's start and the first byte past
 * it. Open takes the end only for the same pack and a record that starts where the pack's
 * index says now; the bytes and the CRC-32 checked are the index's as before.
 *
 * A loose stamp is what the blob's (or tree's) loose object file looked like when it was
 * last read and hashed whole: size, inode, ctime, mtime (NaN: none, or packed). The check at
 * open (`verify`, `head-match.ts`) then costs the one `lstat` it makes anyway, unless the
 * stamp changed: a file cut short, written in place (a flipped byte, a zeroed tail), copied
 * or renamed over changes its ctime or inode, and is read and hashed whole again. A power
 * cut's damage is not the stamp's to find: the write-ahead log rewrites those files at open.
 */
import type { Stats } from 'node:fs'
import path from 'node:path'
import { disk, readPlainFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { crc32 } from './objects/crc32'
import type { PackedExtent } from './objects/packed-crc'

/** A loose file's stamp, within a record (`tree.stamp`, `file.object`): four doubles. */
const STAMP_FIELDS = { size: 0, ino: 8, ctimeMs: 16, mtimeMs: 24, bytes: 32 } as const

/**
 * The file's layout (format 7), for the code here and for tests that take a saved file apart:
 * the header line; the tree records (a count, then each `tree`); the folder records (a count,
 * then each `folder`'s fixed part, its path and its key); the packed extents (a count, then
 * each `extent`); the file records (each `file`'s fixed part, then its path) to the end; the
 * CRC-32 of all that (`sum` bytes). Counts and lengths are 32-bit, numbers doubles, all
 * little-endian; each record's fields are at these offsets within it.
 */
export const STAT_CACHE_LAYOUT = {
  header: 'cairn-stat 7\n',
  count: 4,
  /** A loose stamp's fields, from where a record keeps it (NaN size: none kept). */
  stamp: STAMP_FIELDS,
  /** A tree of HEAD checked whole: its id, its loose file's stamp then. */
  tree: { oid: 0, stamp: 20, bytes: 20 + STAMP_FIELDS.bytes },
  /** A folder's kept tree id (`keptTree`): the id, the lengths of the path and key after it. */
  folder: { oid: 0, pathLength: 20, keyLength: 24, bytes: 28 },
  /** Where a packed tree's record ends (`packedExtents`): tree id, pack checksum, start, end. */
  extent: { oid: 0, pack: 20, start: 40, end: 48, bytes: 56 },
  /**
   * A file: its blob id, its stat when hashed (size, mtime, ctime, inode), when it was hashed,
   * its blob's loose file's stamp when last checked whole, and its path's length.
   */
  file: {
    oid: 0,
    size: 20,
    mtimeMs: 28,
    ctimeMs: 36,
    ino: 44,
    checkedAt: 52,
    object: 60,
    pathLength: 60 + STAMP_FIELDS.bytes,
    bytes: 60 + STAMP_FIELDS.bytes + 4,
  },
  sum: 4,
} as const

const { tree: TREE, folder: FOLDER, extent: EXTENT, file: FILE, sum: SUM } = STAT_CACHE_LAYOUT
const HEADER = Buffer.from(STAT_CACHE_LAYOUT.header)
/** Format 6: the same without the packed extents (read; never written). */
const HEADER_6 = Buffer.from('cairn-stat 6\n')
/** Format 5: without the folder records either (read; never written). */
const HEADER_5 = Buffer.from('cairn-stat 5\n')
/** A file modified this close to its hash is hashed again (covers 2 s FAT timestamps). */
const RACY_MS = 3000

interface Entry {
  readonly oid: string
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
  readonly checkedAt: number
  /** See the file's comment; null when unknown. */
  object: LooseStamp | null
}

/**
 * What identifies a loose object file as the one read whole (see the file's comment). An
 * `lstat`'s `Stats` is one.
 */
export interface LooseStamp {
  readonly size: number
  readonly ino: number
  readonly ctimeMs: number
  readonly mtimeMs: number
}

/** True when `now` is the file `then` described (never for an unknown one). */
export function sameLoose(now: LooseStamp, then: LooseStamp | null | undefined): boolean {
  return (
    !!then &&
    now.size === then.size &&
    now.ino === then.ino &&
    now.ctimeMs === then.ctimeMs &&
    now.mtimeMs === then.mtimeMs
  )
}

/**
 * The tree a folder made when open last made it (see `StatCache.keptTree`): its id, and the
 * key it was made from (its entries as open listed them: `treeKeyOf` in head-match.ts).
 */
export interface KeptTree {
  readonly oid: string
  readonly key: string
}

/** Files and bytes of the folder (regular files; hidden ones not counted, as the Memory tool's limits). */
export interface FolderTotals {
  readonly files: number
  readonly bytes: number
}

export class StatCache {
  /**
   * Path -> its entry: a record of the loaded file by where it starts in `loaded` (no object
   * is made of it, its numbers are read where they lie when the file is looked up), or an
   * `Entry` once the entry is recorded or changed since.
   */
  private readonly entries = new Map<string, Entry | number>()
  /**
   * The loaded file's bytes (its records' numbers read through `view`), kept as long as the
   * cache, even once every record was replaced by an `Entry` (some 100 bytes a file).
   */
  private loaded: Buffer = Buffer.alloc(0)
  private view = new DataView(this.loaded.buffer, 0, 0)
  /** Tree id -> its loose file's stamp when it was last checked whole (HEAD's trees only). */
  private trees: ReadonlyMap<string, LooseStamp> = new Map()
  /** Folder ('' for the root) -> the tree it made when open last made it (see `keptTree`). */
  private folderTrees: ReadonlyMap<string, KeptTree> = new Map()
  /** Tree id -> where its packed record lies (HEAD's packed trees only, see `packedExtents`). */
  private extents: ReadonlyMap<string, PackedExtent> = new Map()
  /**
   * Folder -> how many entries lie under it (so forgetting a folder nothing is under is
   * free), and the folder's totals: worked out from the entries when first needed, then kept
   * current. Not at load: an open that changes nothing needs neither.
   */
  private counts: Counts | null = null
  private dirty = false
  /** Files read and hashed, and files taken as unchanged by their stat, since load. */
  hashed = 0
  trusted = 0

  constructor(
    private readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Loads the saved cache (nothing happens when it is missing or unreadable). */
  static load(file: string, now: () => number = Date.now): StatCache {
    const cache = new StatCache(file, now)
    let raw: Buffer
    try {
      // Never through a link nor from a fifo or a device (read by name, a fifo with no writer
      // held every open forever, and /dev/zero never ended: rprobe28n).
      raw = readPlainFile(file, OWN_FILE_CAP.RECORDS)
    } catch {
      // Missing or unreadable (a failing disk too): a cache only saves work, so every file is
      // read and hashed again instead. Nothing is taken as unchanged that was not seen so.
      return cache
    }
    if (raw.length < HEADER.length + 4 + SUM) return cache
    const head = raw.subarray(0, HEADER.length)
    const withExtents = head.equals(HEADER)
    const withFolders = withExtents || head.equals(HEADER_6)
    if (!withFolders && !head.equals(HEADER_5)) return cache
    const sum = raw.readUInt32LE(raw.length - SUM)
    raw = raw.subarray(0, raw.length - SUM)
    if (crc32(raw) >>> 0 !== sum) return cache
    // Numbers through a DataView: at open (one entry per file) its reads cost a fraction of
    // Buffer's readDoubleLE, which runs as plain JavaScript before it is optimized.
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
    let at = HEADER.length
    const count = view.getUint32(at, true)
    at += 4
    if (at + count * TREE.bytes > raw.length) return cache
    const trees = new Map<string, LooseStamp>()
    for (let n = 0; n < count; n++, at += TREE.bytes) {
      const stamp = stampAt(view, at + TREE.stamp)
      if (stamp) trees.set(raw.toString('hex', at + TREE.oid, at + TREE.oid + 20), stamp)
    }
    const folderTrees = new Map<string, KeptTree>()
    if (withFolders) {
      if (at + 4 > raw.length) return cache
      const folders = view.getUint32(at, true)
      at += 4
      for (let n = 0; n < folders; n++) {
        if (at + FOLDER.bytes > raw.length) return cache
        const pathEnd = at + FOLDER.bytes + view.getUint32(at + FOLDER.pathLength, true)
        const keyEnd = pathEnd + view.getUint32(at + FOLDER.keyLength, true)
        if (keyEnd > raw.length) return cache
        folderTrees.set(raw.toString('utf8', at + FOLDER.bytes, pathEnd), {
          oid: raw.toString('hex', at + FOLDER.oid, at + FOLDER.oid + 20),
          key: raw.toString('utf8', pathEnd, keyEnd),
        })
        at = keyEnd
      }
    }
    const extents = new Map<string, PackedExtent>()
    if (withExtents) {
      if (at + 4 > raw.length) return cache
      const count = view.getUint32(at, true)
      at += 4
      if (at + count * EXTENT.bytes > raw.length) return cache
      for (let n = 0; n < count; n++, at += EXTENT.bytes) {
        const start = view.getFloat64(at + EXTENT.start, true)
        const end = view.getFloat64(at + EXTENT.end, true)
        // Only an extent that can be one is kept (the sum is right, the numbers may not be).
        if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) continue
        if (start < 0 || end <= start) continue
        extents.set(raw.toString('hex', at + EXTENT.oid, at + EXTENT.oid + 20), {
          pack: raw.toString('hex', at + EXTENT.pack, at + EXTENT.pack + 20),
          start,
          end,
        })
      }
    }
    cache.trees = trees
    cache.folderTrees = folderTrees
    cache.extents = extents
    cache.loaded = raw
    cache.view = view
    // Each record by where it starts (its numbers and id read when it is looked up): open
    // looks up every one, but making 1,024 objects of them first cost more than the reads.
    const fixed = FILE.bytes
    while (at + fixed <= raw.length) {
      const length = view.getUint32(at + FILE.pathLength, true)
      if (at + fixed + length > raw.length) break
      // The last entry of a path wins, as `set` would have it.
      cache.entries.set(raw.toString('utf8', at + fixed, at + fixed + length), at)
      at += fixed + length
    }
    cache.dirty = false
    return cache
  }

  /**
   * The content hash of the file at `relative` when `stats` match what was recorded and the
   * record is not racy; otherwise undefined (read and hash it).
   */
  lookup(relative: string, stats: Stats): string | undefined {
    const entry = this.entries.get(relative)
    if (entry === undefined) return undefined
    if (typeof entry !== 'number') {
      if (
        entry.size !== stats.size ||
        entry.mtimeMs !== stats.mtimeMs ||
        entry.ctimeMs !== stats.ctimeMs ||
        entry.ino !== stats.ino ||
        stats.mtimeMs + RACY_MS >= entry.checkedAt
      ) {
        return undefined
      }
      this.trusted++
      return entry.oid
    }
    const { view } = this
    if (
      view.getFloat64(entry + FILE.size, true) !== stats.size ||
      view.getFloat64(entry + FILE.mtimeMs, true) !== stats.mtimeMs ||
      view.getFloat64(entry + FILE.ctimeMs, true) !== stats.ctimeMs ||
      view.getFloat64(entry + FILE.ino, true) !== stats.ino ||
      stats.mtimeMs + RACY_MS >= view.getFloat64(entry + FILE.checkedAt, true)
    ) {
      return undefined
    }
    this.trusted++
    return this.loaded.toString('hex', entry + FILE.oid, entry + FILE.oid + 20)
  }

  /** Records that the file at `relative`, as `stats` describe it, hashed to `oid` just now. */
  record(relative: string, stats: Stats, oid: string): void {
    this.hashed++
    this.set(relative, {
      oid,
      size: stats.size,
      mtimeMs: stats.mtimeMs,
      ctimeMs: stats.ctimeMs,
      ino: stats.ino,
      checkedAt: this.now(),
      object: null,
    })
  }

  /**
   * Records that the file at `relative` was just written with `size` bytes hashing to `oid`,
   * by Cairn itself: it counts in the totals, but is never taken as unchanged (its times are
   * unknown), so the next scan of it reads and hashes it and records what it finds.
   */
  recordWritten(relative: string, size: number, oid: string): void {
    this.hashed++
    this.set(relative, {
      oid,
      size,
      mtimeMs: Number.NaN,
      ctimeMs: Number.NaN,
      ino: Number.NaN,
      checkedAt: this.now(),
      object: null,
    })
  }

  /**
   * The loose file's stamp recorded when `relative`'s blob was last checked whole. Open asks
   * `objectCheckedAs` instead; this stays as the tests' reference for it, which must answer
   * as `sameLoose(now, checkedObject(relative))` for any `now`.
   */
  checkedObject(relative: string): LooseStamp | null {
    const entry = this.entries.get(relative)
    if (entry === undefined) return null
    return typeof entry === 'number' ? stampAt(this.view, entry + FILE.object) : entry.object
  }

  /**
   * `sameLoose(now, this.checkedObject(relative))` without making the stamp of a loaded record
   * (open asks this of every file of a loose history: some 190 KB of objects at 1,024 files).
   */
  objectCheckedAs(relative: string, now: LooseStamp): boolean {
    const entry = this.entries.get(relative)
    if (entry === undefined) return false
    if (typeof entry !== 'number') return sameLoose(now, entry.object)
    const { view } = this
    const at = entry + FILE.object
    // A size of 0 or NaN: no stamp was kept (as `stampAt`).
    const size = view.getFloat64(at + STAMP_FIELDS.size, true)
    return (
      size > 0 &&
      now.size === size &&
      now.ino === view.getFloat64(at + STAMP_FIELDS.ino, true) &&
      now.ctimeMs === view.getFloat64(at + STAMP_FIELDS.ctimeMs, true) &&
      now.mtimeMs === view.getFloat64(at + STAMP_FIELDS.mtimeMs, true)
    )
  }

  /**
   * True when `relative`'s record keeps the stamp of its blob's loose file as last checked
   * whole (`checkedObject` not null), read where the record lies: open's shortcut leaves such
   * a blob's check by stamp for later (`storedCopiesUnsound`, `defer`).
   */
  hasObjectStamp(relative: string): boolean {
    const entry = this.entries.get(relative)
    if (entry === undefined) return false
    if (typeof entry !== 'number') return (entry.object?.size ?? 0) > 0
    return this.view.getFloat64(entry + FILE.object + STAMP_FIELDS.size, true) > 0
  }

  /** Records that `relative`'s blob was checked whole, its loose file as `stamp` describes. */
  noteObjectChecked(relative: string, stamp: LooseStamp): void {
    const found = this.entries.get(relative)
    if (found === undefined) return
    const entry = this.entryOf(found)
    if (sameLoose(stamp, entry.object)) return
    entry.object = stampOf(stamp)
    if (entry !== found) this.entries.set(relative, entry)
    this.dirty = true
  }

  /** The loose file's stamp recorded when the tree `oid` was last checked whole. */
  checkedTree(oid: string): LooseStamp | null {
    return this.trees.get(oid) ?? null
  }

  /**
   * Keeps `checked` (tree id -> loose stamp, as checked now) as the only tree records: those of
   * HEAD's trees, so the records never outgrow one version of the folder.
   */
  keepTreesChecked(checked: ReadonlyMap<string, LooseStamp>): void {
    if (sameRecords(this.trees, checked)) return
    this.trees = new Map([...checked].map(([oid, stamp]) => [oid, stampOf(stamp)]))
    this.dirty = true
  }

  /**
   * The tree the folder `relative` ('' for the root) made when open last made it, with the key
   * it was made from: its id holds for the folder only while its entries give that same key.
   */
  keptTree(relative: string): KeptTree | undefined {
    return this.folderTrees.get(relative)
  }

  /** Keeps `folders` (folder -> the tree it made, just now) as the only folder records. */
  keepTrees(folders: ReadonlyMap<string, KeptTree>): void {
    if (sameKept(this.folderTrees, folders)) return
    this.folderTrees = folders
    this.dirty = true
  }

  /**
   * Where HEAD's packed trees lay when open last checked them (tree id -> pack, start, end):
   * see `packedRecordsSound` in packed-crc.ts.
   */
  packedExtents(): ReadonlyMap<string, PackedExtent> {
    return this.extents
  }

  /** Keeps `found` (tree id -> its packed extent, as checked now) as the only extents. */
  keepPackedExtents(found: ReadonlyMap<string, PackedExtent>): void {
    if (sameExtents(this.extents, found)) return
    this.extents = new Map(found)
    this.dirty = true
  }

  /** Forgets `relative` and everything under it (a file or folder that is gone). */
  forget(relative: string): void {
    if (this.remove(relative)) return
    if (relative !== '' && !this.tally().folders.has(relative)) return
    const prefix = relative === '' ? '' : `${relative}/`
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.remove(key)
  }

  /** Keeps only the entries of `files` (after a scan of the whole folder saw exactly those). */
  retainOnly(files: ReadonlySet<string>): void {
    // Every file a scan visits has an entry afterwards: equal counts mean nothing to drop.
    if (files.size === this.entries.size) return
    for (const key of [...this.entries.keys()]) if (!files.has(key)) this.remove(key)
  }

  /** The folder's totals as the last scans saw it. */
  totals(): FolderTotals {
    const { files, bytes } = this.tally()
    return { files, bytes }
  }

  /**
   * Writes the cache out when it changed (temp file + rename; not fsynced: a cache lost to a
   * power cut costs one full read of the folder, and a torn one is cut at its last whole
   * entry). A failure (a full disk) leaves the old file and is not reported: the next save
   * tries again.
   */
  save(): void {
    if (!this.dirty) return
    const trees = Buffer.allocUnsafe(4 + this.trees.size * TREE.bytes)
    trees.writeUInt32LE(this.trees.size, 0)
    let at = 4
    for (const [oid, stamp] of this.trees) {
      trees.write(oid, at + TREE.oid, 20, 'hex')
      writeStamp(trees, at + TREE.stamp, stamp)
      at += TREE.bytes
    }
    const parts: Buffer[] = [HEADER, trees, this.folderRecords(), this.extentRecords()]
    for (const [relative, entry] of this.entries) {
      if (typeof entry === 'number') {
        // As loaded: its bytes as they were (the path's length word ends the fixed part).
        parts.push(
          this.loaded.subarray(
            entry,
            entry + FILE.bytes + this.view.getUint32(entry + FILE.pathLength, true),
          ),
        )
        continue
      }
      const name = Buffer.from(relative, 'utf8')
      const fixed = Buffer.allocUnsafe(FILE.bytes)
      fixed.write(entry.oid, FILE.oid, 20, 'hex')
      fixed.writeDoubleLE(entry.size, FILE.size)
      fixed.writeDoubleLE(entry.mtimeMs, FILE.mtimeMs)
      fixed.writeDoubleLE(entry.ctimeMs, FILE.ctimeMs)
      fixed.writeDoubleLE(entry.ino, FILE.ino)
      fixed.writeDoubleLE(entry.checkedAt, FILE.checkedAt)
      writeStamp(fixed, FILE.object, entry.object)
      fixed.writeUInt32LE(name.length, FILE.pathLength)
      parts.push(fixed, name)
    }
    const body = Buffer.concat(parts)
    const sum = Buffer.allocUnsafe(SUM)
    sum.writeUInt32LE(crc32(body) >>> 0, 0)
    const temp = `${this.file}.tmp`
    try {
      disk.writeFileSync(temp, Buffer.concat([body, sum]), { mode: 0o600 })
      disk.renameSync(temp, this.file)
    } catch {
      try {
        disk.unlinkSync(temp)
      } catch {
        // Never made.
      }
      return
    }
    this.dirty = false
  }

  private folderRecords(): Buffer {
    const count = Buffer.allocUnsafe(4)
    count.writeUInt32LE(this.folderTrees.size, 0)
    const parts: Buffer[] = [count]
    for (const [folder, { oid, key }] of this.folderTrees) {
      const name = Buffer.from(folder, 'utf8')
      const keyBytes = Buffer.from(key, 'utf8')
      const fixed = Buffer.allocUnsafe(FOLDER.bytes)
      fixed.write(oid, FOLDER.oid, 20, 'hex')
      fixed.writeUInt32LE(name.length, FOLDER.pathLength)
      fixed.writeUInt32LE(keyBytes.length, FOLDER.keyLength)
      parts.push(fixed, name, keyBytes)
    }
    return Buffer.concat(parts)
  }

  private extentRecords(): Buffer {
    const out = Buffer.allocUnsafe(4 + this.extents.size * EXTENT.bytes)
    out.writeUInt32LE(this.extents.size, 0)
    let at = 4
    for (const [oid, { pack, start, end }] of this.extents) {
      out.write(oid, at + EXTENT.oid, 20, 'hex')
      out.write(pack, at + EXTENT.pack, 20, 'hex')
      out.writeDoubleLE(start, at + EXTENT.start)
      out.writeDoubleLE(end, at + EXTENT.end)
      at += EXTENT.bytes
    }
    return out
  }

  /** The entry a value of `entries` stands for (a loaded record made an object of). */
  private entryOf(entry: Entry | number): Entry {
    if (typeof entry !== 'number') return entry
    const { view } = this
    return {
      oid: this.loaded.toString('hex', entry + FILE.oid, entry + FILE.oid + 20),
      size: view.getFloat64(entry + FILE.size, true),
      mtimeMs: view.getFloat64(entry + FILE.mtimeMs, true),
      ctimeMs: view.getFloat64(entry + FILE.ctimeMs, true),
      ino: view.getFloat64(entry + FILE.ino, true),
      checkedAt: view.getFloat64(entry + FILE.checkedAt, true),
      object: stampAt(view, entry + FILE.object),
    }
  }

  /** The size a value of `entries` records. */
  private sizeOf(entry: Entry | number): number {
    return typeof entry === 'number' ? this.view.getFloat64(entry + FILE.size, true) : entry.size
  }

  private set(relative: string, entry: Entry): void {
    this.remove(relative)
    this.entries.set(relative, entry)
    if (this.counts) count(this.counts, relative, entry.size, 1)
    this.dirty = true
  }

  private remove(relative: string): boolean {
    const old = this.entries.get(relative)
    if (old === undefined) return false
    this.entries.delete(relative)
    if (this.counts) count(this.counts, relative, this.sizeOf(old), -1)
    this.dirty = true
    return true
  }

  private tally(): Counts {
    if (!this.counts) {
      const counts: Counts = { folders: new Map(), files: 0, bytes: 0 }
      for (const [relative, entry] of this.entries) count(counts, relative, this.sizeOf(entry), 1)
      this.counts = counts
    }
    return this.counts
  }
}

interface Counts {
  readonly folders: Map<string, number>
  files: number
  bytes: number
}

// Adds (`sign` 1) or takes away (-1) one entry's share of the folder counts and the totals.
function count(counts: Counts, relative: string, size: number, sign: 1 | -1): void {
  const { folders } = counts
  for (let at = relative.indexOf('/'); at > 0; at = relative.indexOf('/', at + 1)) {
    const folder = relative.slice(0, at)
    const left = (folders.get(folder) ?? (sign > 0 ? 0 : 1)) + sign
    if (left === 0) folders.delete(folder)
    else folders.set(folder, left)
  }
  if (counted(relative)) {
    counts.files += sign
    counts.bytes += sign * size
  }
}

function sameRecords(
  a: ReadonlyMap<string, LooseStamp>,
  b: ReadonlyMap<string, LooseStamp>,
): boolean {
  if (a.size !== b.size) return false
  for (const [oid, stamp] of b) if (!sameLoose(stamp, a.get(oid))) return false
  return true
}

function sameExtents(
  a: ReadonlyMap<string, PackedExtent>,
  b: ReadonlyMap<string, PackedExtent>,
): boolean {
  if (a.size !== b.size) return false
  for (const [oid, extent] of b) {
    const other = a.get(oid)
    if (other?.pack !== extent.pack || other.start !== extent.start || other.end !== extent.end)
      return false
  }
  return true
}

function sameKept(a: ReadonlyMap<string, KeptTree>, b: ReadonlyMap<string, KeptTree>): boolean {
  if (a.size !== b.size) return false
  for (const [folder, kept] of b) {
    const other = a.get(folder)
    if (other?.oid !== kept.oid || other.key !== kept.key) return false
  }
  return true
}

// Only the four numbers (a `Stats` given would keep all of its own alive).
function stampOf({ size, ino, ctimeMs, mtimeMs }: LooseStamp): LooseStamp {
  return { size, ino, ctimeMs, mtimeMs }
}

function writeStamp(out: Buffer, at: number, stamp: LooseStamp | null): void {
  out.writeDoubleLE(stamp ? stamp.size : Number.NaN, at + STAMP_FIELDS.size)
  out.writeDoubleLE(stamp ? stamp.ino : Number.NaN, at + STAMP_FIELDS.ino)
  out.writeDoubleLE(stamp ? stamp.ctimeMs : Number.NaN, at + STAMP_FIELDS.ctimeMs)
  out.writeDoubleLE(stamp ? stamp.mtimeMs : Number.NaN, at + STAMP_FIELDS.mtimeMs)
}

// NaN (or a size below 1: no loose object is empty) reads as no stamp, so never as checked.
function stampAt(view: DataView, at: number): LooseStamp | null {
  const size = view.getFloat64(at + STAMP_FIELDS.size, true)
  if (!(size > 0)) return null
  return {
    size,
    ino: view.getFloat64(at + STAMP_FIELDS.ino, true),
    ctimeMs: view.getFloat64(at + STAMP_FIELDS.ctimeMs, true),
    mtimeMs: view.getFloat64(at + STAMP_FIELDS.mtimeMs, true),
  }
}

/** Where the stat cache lives: in the git directory, beside the side index. */
export function statCacheOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-stat')
}

// The Memory tool's limits count regular files whose path has no hidden segment.
function counted(relative: string): boolean {
  return !relative.startsWith('.') && !relative.includes('/.')
}
