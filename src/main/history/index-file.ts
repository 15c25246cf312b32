/**
 * The side index on disk: one entry per commit, oldest first, in four append-only files that
 * open without parsing their content (`<gitdir>/cairn-index/`):
 *
 *   commits   fixed 64-byte records, the newest 1,024 read at open, older ones when first
 *             asked for (6.4 MB at 100,000 commits):
 *               0 oid (20)            20 first parent's position (u32, ffffffff = none)
 *              24 time, seconds (f64) 32 details offset (f64)    40 details length (u32)
 *              44 first file (u32)    48 file count (u32)
 *              52 conversation name id (u32, ffffffff = none)
 *              56 actor (u8) 57 command (u8) 58 flags (u8) 59 reserved
 *              60 crc32 of bytes 0..59 + the entry's details + its file ids
 *   files     the changed files of every entry, as u32 name ids
 *   names     every distinct path and conversation id, each as u32 length + u32 crc32 (of
 *             length and bytes, started from its id) + UTF-8: a record's checksum covers only the ids, so
 *             each name checks itself, when it is first decoded and all in the idle check
 *   details   per entry, JSON {s?: subject (unless the usual one), p?: paths (when not the
 *             files), t?: tool use, r?: restored from, o?: further parents (a merge),
 *             m?: machine, f?: review flags, v?: review mark, a?: the author of a commit
 *             made outside Cairn}; read only for the entries a query returns
 *
 * Entries are oldest first with every parent before its child: a sync's merge commit comes
 * after the commits it joined, so a parent is named by its position, not assumed to be the
 * entry before. A record is written last, so a crash mid-append leaves data past the last
 * record, which the next open cuts off. Structure (parents earlier, contiguous extents, ids in
 * range) is checked at open for the newest record, for every record in the background
 * (`checkStructure`); a record's checksum when its entry is read.
 */
import {
  closeQuietly,
  disk,
  errorCode,
  isCode,
  isDenied,
  isMissing,
  listNames,
  makeFolders,
  NOT_A_FILE,
  OPEN,
  readPlainFile,
  removePath,
} from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { isDiskProblem } from '../lib/disk-errors'
import path from 'node:path'
import type { Actor, CommitCommand, CommitSummary, ReviewMark, WriteFlag } from '../../shared/types'
import { crc32, crc32Range } from './objects/crc32'

/** One commit in the side index: its summary plus every file (virtual path) it changed. */
export interface IndexEntry extends CommitSummary {
  readonly files: ReadonlyArray<string>
}

const RECORD = 64
/**
 * Records read at open: the newest ones, all that open and a first page of the timeline use.
 * Older records are read when something first asks for one (`loadOlder`), this many at a time
 * at least: at 10,000 commits open read 640 KB it did not use, at 100,000 ten times that.
 */
const RECORDS_AT_OPEN = 1024
const NONE = 0xffffffff
// Version 1 (never released) named the parent by its first bytes and assumed it was the entry
// before; version 2 had no checksum over the names, so a damaged or zeroed name was read as
// true, and is migrated at open (only `names` changes: see `migrateFrom2`); version 3 read a
// commit made outside Cairn (with git) as Cairn's `recovery`, or as whatever its name and
// trailers claimed: its entries are the same, but each commit's people must be looked at
// again (side-index.ts, `settleOutsideCommits`), so it opens with `readsOutsideAsCairn` set.
// An index in another format is rebuilt from the commits.
const FORMAT = 'cairn-index 4\n'
const FORMAT_3 = 'cairn-index 3\n'
const FORMAT_2 = 'cairn-index 2\n'
/** Bytes before each name's UTF-8: its length and its checksum. */
const NAME_HEAD = 8
/**
 * The newest bytes of `names` whose checksums open checks: what a crash or power cut may have
 * left torn or zeroed (the file's last blocks). Older names are checked when decoded.
 */
const NAMES_TAIL_CHECKED = 16384
// The byte each actor and command is stored as. These numbers are the file format: never
// change one; a new command takes the next free number. (A Record, so a new member of either
// union is a compile error here until it has its number.)
const ACTOR_CODES: Readonly<Record<Actor, number>> = { claude: 0, user: 1, system: 2, outside: 3 }
const COMMAND_CODES: Readonly<Record<CommitCommand, number>> = {
  create: 0,
  str_replace: 1,
  insert: 2,
  delete: 3,
  rename: 4,
  write: 5,
  'restore-file': 6,
  'restore-deleted': 7,
  revert: 8,
  'restore-all': 9,
  recovery: 10,
  outside: 11,
  init: 12,
  merge: 13,
  resolve: 14,
  import: 15,
}
const ACTORS = decoding(ACTOR_CODES)
const COMMANDS = decoding(COMMAND_CODES)

/** Code -> name, from a name -> code table. */
function decoding<T extends string>(codes: Readonly<Record<T, number>>): ReadonlyArray<T> {
  const names: T[] = []
  for (const [name, code] of Object.entries(codes) as Array<[T, number]>) names[code] = name
  return names
}
const FLAG_OVERWRITE = 1
const FLAG_PARENT = 2
const FLAG_PATHS_ARE_FILES = 4
/** The subject is `<command> <first path>`, as most are: not stored. */
const FLAG_USUAL_SUBJECT = 8
/** A merge commit: its further parents are in the details (`o`). */
const FLAG_MERGE = 16

// The hot loops read records through typed views, which use the platform's byte order: the
// format is little-endian, as is every platform Electron and Node ship for.
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  throw new Error('the side index needs a little-endian platform')
}

/** A zeroed buffer of its own (offset 0), so typed views over it are aligned. */
function alignedBuffer(bytes: number): Buffer {
  return Buffer.from(new ArrayBuffer(bytes))
}

/** Why an index could not be used as it is (the caller rebuilds it from the commits). */
export class IndexDamagedError extends Error {}

/**
 * The system refused to open a part of the index for reading and writing (EACCES, EPERM: a
 * file made read-only, or another account's), or to read one (`access` 'read': the `format`
 * at open, or format 2's names to migrate, in a folder or file of another account). A disk
 * problem, not damage: its `code` is the refusal's, so it is passed on as one and nothing is
 * rebuilt; `file` names the part, for the words people see (open-repo.ts), which name it
 * inside the data folder, never by host path.
 */
export class IndexPartRefusedError extends Error {
  readonly code: string
  constructor(
    readonly file: string,
    cause: unknown,
    readonly access: 'read' | 'write' = 'write',
  ) {
    super(
      `the index part ${path.basename(file)} could not be opened for ${access === 'read' ? 'reading' : 'writing'}`,
      { cause },
    )
    this.name = 'IndexPartRefusedError'
    this.code = errorCode(cause) ?? 'EACCES'
  }
}

/** `IndexPartRefusedError` (reading `file`) for a refusal of the system, else `error`. */
function refusedReading(file: string, error: unknown): unknown {
  return isDenied(error) ? new IndexPartRefusedError(file, error, 'read') : error
}

/**
 * A read of an index that is closed: most often one a reader held while a rebuild or a
 * switched history swapped another in, which is not damage (the index in use answers the read
 * again). Its descriptors may name other files now, so nothing more is read from them. An
 * `IndexDamagedError`, for callers that do not tell the two apart; the read's caller tells
 * (`readIndexed`): closed and still the index in use (a swap that failed after closing it),
 * it can serve nothing and is rebuilt.
 */
export class IndexReplacedError extends IndexDamagedError {
  constructor() {
    super('index closed (replaced)')
  }
}

type Part = 'commits' | 'files' | 'names' | 'details'
const PARTS: ReadonlyArray<Part> = ['commits', 'files', 'names', 'details']

interface Details {
  readonly s?: string
  readonly p?: ReadonlyArray<string>
  readonly t?: string
  readonly r?: string
  /** Parents after the first (a merge commit), and the machine that made the commit. */
  readonly o?: ReadonlyArray<string>
  readonly m?: string
  /** Review flags and mark, when the change has them. */
  readonly f?: ReadonlyArray<WriteFlag>
  readonly v?: ReviewMark
  /** The author of a commit made outside Cairn (format 4). */
  readonly a?: string
  /**
   * Parents beyond the index: commits that could not be read when it was built (damage), so
   * the history the index holds starts after them. `c` is the first parent; `x` those of `o`.
   */
  readonly c?: string
  readonly x?: ReadonlyArray<string>
}

export class IndexFile {
  private records: Buffer
  /** The records as 32-bit words (16 a record) and as 64-bit floats (8 a record). */
  private words: Uint32Array
  private floats: Float64Array
  private count = 0
  /**
   * Records before this one are not read yet (zeroes in `records`): everything that reads a
   * record goes through `record`, which calls `loadOlder` first when it lies below. Records
   * appended are always read.
   */
  private loadedFrom = 0
  private fileIds: Uint32Array
  private fileCount = 0
  /**
   * Names by id. Those read at open are decoded from `namesRaw` when first asked for: an open
   * that changes nothing needs a handful of the thousands there (2,000 at 10k commits).
   */
  private readonly names: Array<string | undefined> = []
  private namesRaw: Buffer = Buffer.alloc(0)
  /** Where each name read at open starts in `namesRaw` (its length and checksum before it). */
  private nameStarts = new Uint32Array(0)
  /** Name -> id: built on first use (a name appended, a conversation looked up). */
  private nameIdMap: Map<string, number> | null = null
  /** Name ids in name order, for path filters: built on first use, see `sortedNameIds`. */
  private sortedIds: number[] | null = null
  private namesBytes = 0
  private detailsEnd = 0
  /** Commit id lookup (open addressing, position + 1 per slot), built on first use. */
  private table: Int32Array | null = null
  private readonly cache = new Map<number, IndexEntry>()
  // Further parents beyond the index, of the entries read so far that have any.
  private readonly beyond = new Map<number, ReadonlyArray<string>>()
  private closed = false
  /**
   * True for an index of an earlier format (3, or 2 migrated to 3), which may read a commit
   * made outside Cairn as Cairn's: its opener looks at each commit's people again and brings
   * it to this format (`settleFormat`) before using it.
   */
  private olderFormat = false
  /** Pending bytes per part while a batch runs (see `batch`). */
  private pending: Record<Part, Buffer[]> | null = null
  private batchStarts: Record<Part, number> = { commits: 0, files: 0, names: 0, details: 0 }

  private constructor(
    readonly dir: string,
    private readonly fds: Record<Part, number>,
    records: Buffer,
    fileIds: Uint32Array,
  ) {
    this.records = records
    this.words = new Uint32Array(records.buffer, records.byteOffset, records.length / 4)
    this.floats = new Float64Array(records.buffer, records.byteOffset, records.length / 8)
    this.fileIds = fileIds
  }

  /** Number of entries. */
  get size(): number {
    return this.count
  }

  /** Creates an empty index in `dir` (which must not hold one). */
  static create(dir: string): IndexFile {
    makeFolders(dir, 0o700)
    const fds = {} as Record<Part, number>
    for (const part of PARTS) {
      fds[part] = disk.openSync(path.join(dir, part), OPEN.READ_WRITE_TRUNC, 0o600)
    }
    disk.writeFileSync(path.join(dir, 'format'), FORMAT, { mode: 0o600 })
    const index = new IndexFile(dir, fds, alignedBuffer(RECORD * 1024), new Uint32Array(1024))
    return index
  }

  /**
   * Opens the index in `dir`: reads the newest records (older ones when first asked for), the
   * file ids and names (not the details), checks the newest ones and cuts off a torn tail.
   * Throws `IndexDamagedError` when it cannot be trusted (missing, another format, broken in
   * the middle); a disk that fails to open, read or trim it (EIO, EMFILE, EACCES...) throws its
   * own error, so the caller fails clearly instead of rebuilding a sound index.
   */
  static open(dir: string): IndexFile {
    let format: string
    try {
      // The folder itself a link (to a folder outside, say): damage, rebuilt in its place, never
      // opened through, or every append would land outside the data folder (probe32b).
      if (disk.lstatSync(dir).isSymbolicLink()) {
        throw Object.assign(new Error('index folder is a link'), { code: 'ELOOP' })
      }
      // Never through a link nor from a fifo or a device (read by name, a fifo with no
      // writer held every open forever: rprobe28n).
      format = readPlainFile(path.join(dir, 'format'), OWN_FILE_CAP.SMALL).toString('utf8')
    } catch (error) {
      // Missing, or something Cairn never puts there (a folder, a link, a fifo): rebuilt from
      // the commits. A disk that fails is not a missing index; one that refuses says which part.
      if (isDiskProblem(error)) throw refusedReading(path.join(dir, 'format'), error)
      throw new IndexDamagedError('no index')
    }
    if (format === FORMAT_2) migrateFrom2(dir)
    else if (format !== FORMAT && format !== FORMAT_3) {
      throw new IndexDamagedError('another index format')
    }
    const fds = {} as Record<Part, number>
    let opening = ''
    try {
      for (const part of PARTS) {
        opening = path.join(dir, part)
        // Never through a link (ELOOP: damage, rebuilt below): appends would land in the
        // file it points to, outside the data folder too (probe28n).
        fds[part] = disk.openSync(opening, OPEN.READ_WRITE | OPEN.NOFOLLOW | OPEN.NONBLOCK)
        // A fifo, a socket or a device opens too (O_NONBLOCK: the open never waits), but no
        // part is ever one: damage, rebuilt, not an open refused at every start (rprobe28n).
        if (!disk.fstatSync(fds[part]).isFile()) {
          throw Object.assign(new Error('not a plain file'), { code: NOT_A_FILE })
        }
      }
    } catch (error) {
      for (const fd of Object.values(fds)) closeQuietly(fd)
      // One part made read-only (or another account's): which, for the words people see.
      if (isDenied(error)) {
        throw new IndexPartRefusedError(opening, error)
      }
      // A disk that fails is passed on; a part missing, or a folder or link in its place
      // (EISDIR, ELOOP: Cairn never writes one there), is damage, and the index is rebuilt,
      // never an open that fails the same way at every start.
      if (isDiskProblem(error)) throw error
      throw new IndexDamagedError(`index part missing or not a file (${errorCode(error)})`)
    }
    try {
      // Each part read straight into where it is kept: the records and file ids into buffers
      // with room to grow (typed views need them aligned), not read whole and then copied.
      // A fresh buffer's pages cost a fault each when first written: at 10,000 commits the
      // copy touched 1.4 MB of them at every open, this 0.7 MB.
      const readIntoAt = (part: Part, into: Uint8Array, at: number, size: number): number => {
        let done = 0
        while (done < size) {
          const got = disk.readSync(fds[part], into, at + done, size - done, at + done)
          if (got === 0) break
          done += got
        }
        return done
      }
      const readInto = (part: Part, into: Uint8Array, size: number) =>
        readIntoAt(part, into, 0, size)
      const size = (part: Part) => disk.fstatSync(fds[part]).size
      const recordsSize = size('commits')
      const filesSize = size('files')
      const detailsSize = size('details')

      const whole = Math.floor(recordsSize / RECORD)
      const records = alignedBuffer((whole + Math.max(1024, whole >> 2)) * RECORD)
      // Only the newest records: the buffer's pages below them stay untouched (zero) until
      // `loadOlder` reads what is asked for. A tail the read comes short of counts as torn.
      const tailFrom = Math.max(0, whole - RECORDS_AT_OPEN)
      const tailBytes = (whole - tailFrom) * RECORD
      const tailRead = readIntoAt('commits', records, tailFrom * RECORD, tailBytes)
      const count = tailFrom + Math.floor(tailRead / RECORD)
      const filesWhole = Math.floor(filesSize / 4)
      const fileIds = new Uint32Array(filesWhole + Math.max(1024, filesWhole >> 2))
      const filesAvailable = Math.floor(
        readInto('files', new Uint8Array(fileIds.buffer, 0, filesWhole * 4), filesWhole * 4) / 4,
      )
      const rawNames = Buffer.allocUnsafe(size('names'))
      const namesRead = rawNames.subarray(0, readInto('names', rawNames, rawNames.length))

      const index = new IndexFile(dir, fds, records, fileIds)
      index.olderFormat = format !== FORMAT
      index.loadedFrom = tailFrom
      const namesCut = index.loadNames(namesRead)
      index.count = count
      index.count = index.keepComplete(
        namesCut ? index.firstNamingLost(count, filesAvailable) : count,
        filesAvailable,
        detailsSize,
      )
      index.trimTails()
      return index
    } catch (error) {
      for (const fd of Object.values(fds)) closeQuietly(fd)
      if (error instanceof IndexDamagedError) throw error
      // A disk that fails (EIO, EMFILE, EACCES...) is not a damaged index: rebuilt, it would be
      // written again over a sound one, or fail the same way half-way.
      if (isDiskProblem(error)) throw error
      throw new IndexDamagedError((error as Error).message)
    }
  }

  /** See `olderFormat`. */
  get readsOutsideAsCairn(): boolean {
    return this.olderFormat
  }

  /** The newest entry's commit, or null when empty. */
  head(): string | null {
    return this.count === 0 ? null : this.oidAt(this.count - 1)
  }

  /** The commit id of entry `i` (0 = oldest). */
  oidAt(i: number): string {
    const at = this.record(i)
    return this.records.toString('hex', at, at + 20)
  }

  /**
   * Where record `i` starts in `records` (the byte offsets of the format above from there; its
   * words at `(at + offset) >> 2` in `words`, its floats at `>> 3` in `floats`). Every read of
   * a record goes through here: a record older than those in memory is read from the file
   * first (`loadOlder`), so none is ever read as the zeroes of a buffer not filled yet.
   */
  private record(i: number): number {
    if (i < this.loadedFrom) this.loadOlder(i)
    return i * RECORD
  }

  /**
   * Reads the records from `i` up to those read already (at least `RECORDS_AT_OPEN` of them,
   * fewer only at the oldest), so that every record from `i` on is in memory. Throws
   * `IndexReplacedError` when the index is closed, `IndexDamagedError` when the file comes
   * short of records open counted (it was cut since): the caller's read fails as a damaged
   * entry's does, and the index is rebuilt. A disk that fails passes its error on.
   */
  private loadOlder(i: number): void {
    // A reader that held this index across its swap (a rebuild, a switched history): its
    // descriptor may name another file now.
    if (this.closed) throw new IndexReplacedError()
    // No record there: the reader says so as it did before (nothing to read).
    if (i < 0) return
    const from = Math.max(0, Math.min(i, this.loadedFrom - RECORDS_AT_OPEN))
    const start = from * RECORD
    const end = this.loadedFrom * RECORD
    for (let done = start; done < end;) {
      const got = disk.readSync(this.fds.commits, this.records, done, end - done, done)
      if (got === 0) throw new IndexDamagedError('index records cut short')
      done += got
    }
    // A file cut short and then appended to reads its hole as zeroes, with no short read: a
    // record with no id, or a first parent that is not before it, is not one Cairn wrote.
    const words = this.words
    for (let r = from; r < this.loadedFrom; r++) {
      let id = 0
      for (let k = r * 16; k < r * 16 + 5; k++) id |= words[k] as number
      const parent = words[r * 16 + 5] as number
      if (id === 0 || (parent !== NONE && parent >= r)) {
        throw new IndexDamagedError('index records cut short')
      }
    }
    this.loadedFrom = from
  }

  /** The position of `oid`, or -1. */
  positionOf(oid: string): number {
    if (!/^[0-9a-f]{40}$/.test(oid)) return -1
    // The first four bytes as the word view reads them (little-endian).
    const key = Buffer.from(oid.slice(0, 8), 'hex').readUInt32LE(0)
    const table = this.table ?? this.rehash(this.count * 2)
    const mask = table.length - 1
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const value = table[slot] as number
      if (value === 0) return -1
      const i = value - 1
      if (this.words[this.record(i) >> 2] === key && this.oidAt(i) === oid) return i
    }
  }

  /** The entry of `oid`, or undefined when it is not in this history. */
  find(oid: string): IndexEntry | undefined {
    const i = this.positionOf(oid)
    return i < 0 ? undefined : this.at(i)
  }

  /** Entry `i` (0 = oldest), read from disk once and then cached. Throws when it is damaged. */
  /** The further parents of entry `i` that are beyond the index (see `Details.x`). */
  otherParentsBeyond(i: number): ReadonlyArray<string> {
    this.at(i)
    return this.beyond.get(i) ?? []
  }

  at(i: number): IndexEntry {
    if (i < 0 || i >= this.count) throw new RangeError(`no index entry ${i}`)
    const hit = this.cache.get(i)
    if (hit) return hit
    const at = this.record(i)
    const rec = this.records
    const detailsAt = rec.readDoubleLE(at + 32)
    const detailsLength = rec.readUInt32LE(at + 40)
    const first = rec.readUInt32LE(at + 44)
    const files = rec.readUInt32LE(at + 48)
    const raw = Buffer.allocUnsafe(detailsLength)
    if (this.readDetails(raw, detailsAt) < detailsLength) {
      throw new IndexDamagedError('index details cut short')
    }
    const ids = this.fileIds.subarray(first, first + files)
    const sum = crc32(
      Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength),
      crc32(raw, crc32(rec.subarray(at, at + 60))),
    )
    if (sum >>> 0 !== rec.readUInt32LE(at + 60))
      throw new IndexDamagedError(`index entry ${i} is damaged`)
    const details = JSON.parse(raw.toString('utf8')) as Details
    if (details.x && details.x.length > 0) this.beyond.set(i, details.x)
    const flags = rec[at + 58] as number
    const fileNames = Array.from(ids, (id) => this.nameAt(id))
    const conversation = rec.readUInt32LE(at + 52)
    const command = COMMANDS[rec[at + 57] as number] as CommitCommand
    const paths = flags & FLAG_PATHS_ARE_FILES ? fileNames : (details.p ?? [])
    const parentAt = rec.readUInt32LE(at + 20)
    const entry: IndexEntry = {
      oid: this.oidAt(i),
      parent: parentAt === NONE ? (details.c ?? null) : this.oidAt(parentAt),
      ...(details.o && details.o.length > 0 ? { otherParents: details.o } : {}),
      time: rec.readDoubleLE(at + 24) * 1000,
      actor: ACTORS[rec[at + 56] as number] as Actor,
      ...(details.a !== undefined ? { author: details.a } : {}),
      command,
      subject: flags & FLAG_USUAL_SUBJECT ? `${command} ${paths[0]}` : (details.s ?? ''),
      paths,
      conversationId: conversation === NONE ? null : this.nameAt(conversation),
      toolUseId: details.t ?? null,
      overwrite: (flags & FLAG_OVERWRITE) !== 0,
      restoredFrom: details.r ?? null,
      ...(details.m ? { machine: details.m } : {}),
      // Absent rather than empty, as a commit without them reads back.
      ...(details.f && details.f.length > 0 ? { flags: details.f } : {}),
      ...(details.v ? { review: details.v } : {}),
      files: fileNames,
    }
    if (this.cache.size >= 4096) this.cache.delete(this.cache.keys().next().value as number)
    this.cache.set(i, entry)
    return entry
  }

  /**
   * Checks the checksums of entries `from` to `to` (exclusive) with one read of their
   * details; returns the first damaged position, or -1.
   */
  firstDamaged(from: number, to: number): number {
    to = Math.min(to, this.count)
    if (from >= to) return -1
    // Every record from `from` on: reading one reads those after it too.
    this.record(from)
    const rec = this.records
    const start = rec.readDoubleLE(from * RECORD + 32)
    const end = rec.readDoubleLE((to - 1) * RECORD + 32) + rec.readUInt32LE((to - 1) * RECORD + 40)
    const raw = Buffer.allocUnsafe(end - start)
    if (this.readDetails(raw, start) < raw.length) return from
    for (let i = from; i < to; i++) {
      const at = i * RECORD
      const detailsAt = rec.readDoubleLE(at + 32) - start
      const details = raw.subarray(detailsAt, detailsAt + rec.readUInt32LE(at + 40))
      const first = rec.readUInt32LE(at + 44)
      const ids = this.fileIds.subarray(first, first + rec.readUInt32LE(at + 48))
      const sum = crc32(
        Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength),
        crc32(details, crc32(rec.subarray(at, at + 60))),
      )
      if (sum >>> 0 !== rec.readUInt32LE(at + 60)) return i
    }
    return -1
  }

  /**
   * Reads `details` from `position` into all of `into`; how much there was (less when the file
   * comes short). Closed, the index reads nothing (`IndexReplacedError`), as for records.
   */
  private readDetails(into: Buffer, position: number): number {
    if (this.closed) throw new IndexReplacedError()
    let done = 0
    while (done < into.length) {
      const got = disk.readSync(this.fds.details, into, done, into.length - done, position + done)
      if (got === 0) break
      done += got
    }
    return done
  }

  /** Every entry, oldest first (tests and rebuild checks; large histories page instead). */
  all(): IndexEntry[] {
    return Array.from({ length: this.count }, (_, i) => this.at(i))
  }

  /** The time of entry `i` (milliseconds), without reading its details. */
  timeAt(i: number): number {
    return (this.floats[(this.record(i) + 24) >> 3] as number) * 1000
  }

  /** The actor of entry `i`, without reading its details. */
  actorAt(i: number): Actor {
    return ACTORS[this.records[this.record(i) + 56] as number] as Actor
  }

  /**
   * The files entry `i` changed, from its file ids alone (no details read, no checksum: the
   * ids' range was checked at open). For walks over many entries; `at` for one entry.
   */
  filesAt(i: number): string[] {
    const at = this.record(i)
    const first = this.words[(at + 44) >> 2] as number
    const end = first + (this.words[(at + 48) >> 2] as number)
    const files: string[] = []
    for (let f = first; f < end; f++) files.push(this.nameAt(this.fileIds[f] as number))
    return files
  }

  /** The position of entry `i`'s first parent (-1 for a root commit), without its details. */
  parentAt(i: number): number {
    const parent = this.words[(this.record(i) + 20) >> 2] as number
    return parent === NONE ? -1 : parent
  }

  /** True when entry `i` is a merge commit (its further parents are in its details). */
  isMergeAt(i: number): boolean {
    return ((this.records[this.record(i) + 58] as number) & FLAG_MERGE) !== 0
  }

  /** The command of entry `i`, without reading its details. */
  commandAt(i: number): CommitCommand {
    return COMMANDS[this.records[this.record(i) + 57] as number] as CommitCommand
  }

  /** The name id of a conversation, or -1 when no entry mentions it. */
  conversationKey(conversationId: string): number {
    return this.nameIds.get(conversationId) ?? -1
  }

  conversationKeyAt(i: number): number {
    return this.words[(this.record(i) + 52) >> 2] as number
  }

  /**
   * A matcher for "entry changed `path` (a file) or something under it (a folder)": finds the
   * name ids that match in the names sorted once (a binary search for the name and for the
   * `path/` range), then tests entries by their file ids alone. Following a note through its
   * renames asks for one matcher per rename: walking every name each time cost renames × names
   * per timeline page (review12-story R4).
   */
  pathMatcher(virtual: string): (i: number) => boolean {
    const matching: number[] = []
    const sorted = this.sortedNameIds
    const prefix = `${virtual}/`
    for (let k = this.firstSortedAtLeast(virtual); k < sorted.length; k++) {
      const id = sorted[k] as number
      if (this.nameAt(id) !== virtual) break
      matching.push(id)
    }
    for (let k = this.firstSortedAtLeast(prefix); k < sorted.length; k++) {
      const id = sorted[k] as number
      if (!this.nameAt(id).startsWith(prefix)) break
      matching.push(id)
    }
    if (matching.length === 0) return () => false
    const fileIds = this.fileIds
    if (matching.length === 1) {
      const only = matching[0] as number
      return (i) => {
        const at = this.record(i)
        const words = this.words
        const first = words[(at + 44) >> 2] as number
        const end = first + (words[(at + 48) >> 2] as number)
        for (let f = first; f < end; f++) if (fileIds[f] === only) return true
        return false
      }
    }
    const marks = new Set(matching)
    return (i) => {
      const at = this.record(i)
      const words = this.words
      const first = words[(at + 44) >> 2] as number
      const end = first + (words[(at + 48) >> 2] as number)
      for (let f = first; f < end; f++) if (marks.has(fileIds[f] as number)) return true
      return false
    }
  }

  /**
   * Name ids ordered by name (code units, as `<` compares): built on the first path filter and
   * kept up to date by `append` (an insertion per new name), so a path's ids are a range.
   */
  private get sortedNameIds(): number[] {
    if (!this.sortedIds) {
      const ids = Array.from({ length: this.names.length }, (_, id) => id)
      const names = ids.map((id) => this.nameAt(id))
      ids.sort((a, b) => {
        const x = names[a] as string
        const y = names[b] as string
        return x < y ? -1 : x > y ? 1 : a - b
      })
      this.sortedIds = ids
    }
    return this.sortedIds
  }

  /** The first position in `sortedNameIds` whose name is not below `name`. */
  private firstSortedAtLeast(name: string): number {
    const sorted = this.sortedNameIds
    let low = 0
    let high = sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.nameAt(sorted[middle] as number) < name) low = middle + 1
      else high = middle
    }
    return low
  }

  /** The first position in `sortedNameIds` whose name is above `name`. */
  private firstSortedAbove(name: string): number {
    const sorted = this.sortedNameIds
    let low = 0
    let high = sorted.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.nameAt(sorted[middle] as number) <= name) low = middle + 1
      else high = middle
    }
    return low
  }

  /**
   * Appends `entry`, whose parents must all be in the index already (and it not). A commit
   * continuing the newest entry, the usual case, needs no lookup.
   */
  append(entry: IndexEntry, unreadable?: ReadonlySet<string>): void {
    if (this.closed) throw new Error('index closed')
    const others = entry.otherParents ?? []
    // A parent that could not be read (a rebuild around damage) is named, not positioned.
    const beyond = (oid: string) => unreadable?.has(oid) === true && this.positionOf(oid) < 0
    const cut = entry.parent !== null && beyond(entry.parent) ? entry.parent : null
    const cutOthers = others.filter(beyond)
    let parentAt = NONE
    if (cut !== null) {
      if (this.positionOf(entry.oid) >= 0)
        throw new Error('index entry does not follow its parents')
    } else if (entry.parent === null ? this.count > 0 : entry.parent !== this.head()) {
      parentAt = entry.parent === null ? NONE : this.positionOf(entry.parent)
      if (parentAt < 0 || this.positionOf(entry.oid) >= 0) {
        throw new Error('index entry does not follow its parents')
      }
    } else if (entry.parent !== null) {
      parentAt = this.count - 1
    }
    if (
      (entry.parent === null && others.length > 0) ||
      others.some((other) => this.positionOf(other) < 0 && !cutOthers.includes(other))
    ) {
      throw new Error('index entry does not follow its parents')
    }
    const newNames: Buffer[] = []
    const idOf = (name: string): number => {
      let id = this.nameIds.get(name)
      if (id === undefined) {
        id = this.names.length
        this.names.push(name)
        this.nameIds.set(name, id)
        // Kept in name order; among equal names (an index read at open may hold some) ids grow.
        if (this.sortedIds) this.sortedIds.splice(this.firstSortedAbove(name), 0, id)
        newNames.push(nameRecord(id, name))
      }
      return id
    }
    const conversation = entry.conversationId === null ? NONE : idOf(entry.conversationId)
    const ids = entry.files.map(idOf)
    const pathsAreFiles =
      entry.paths.length === entry.files.length && entry.paths.every((p, i) => p === entry.files[i])
    const usualSubject =
      entry.paths.length > 0 && entry.subject === `${entry.command} ${entry.paths[0]}`
    const details: Details = {
      ...(usualSubject ? {} : { s: entry.subject }),
      ...(pathsAreFiles ? {} : { p: entry.paths }),
      ...(entry.toolUseId !== null ? { t: entry.toolUseId } : {}),
      ...(entry.restoredFrom !== null ? { r: entry.restoredFrom } : {}),
      ...(others.length > 0 ? { o: others } : {}),
      ...(entry.machine ? { m: entry.machine } : {}),
      ...(entry.flags && entry.flags.length > 0 ? { f: entry.flags } : {}),
      ...(entry.review ? { v: entry.review } : {}),
      ...(entry.author !== undefined ? { a: entry.author } : {}),
      ...(cut !== null ? { c: cut } : {}),
      ...(cutOthers.length > 0 ? { x: cutOthers } : {}),
    }
    const detailBytes = Buffer.from(JSON.stringify(details), 'utf8')
    const idBytes = Buffer.alloc(ids.length * 4)
    ids.forEach((id, k) => idBytes.writeUInt32LE(id, k * 4))

    const rec = Buffer.alloc(RECORD)
    rec.write(entry.oid, 0, 20, 'hex')
    rec.writeUInt32LE(parentAt, 20)
    rec.writeDoubleLE(Math.floor(entry.time / 1000), 24)
    rec.writeDoubleLE(this.detailsEnd, 32)
    rec.writeUInt32LE(detailBytes.length, 40)
    rec.writeUInt32LE(this.fileCount, 44)
    rec.writeUInt32LE(ids.length, 48)
    rec.writeUInt32LE(conversation, 52)
    rec[56] = ACTOR_CODES[entry.actor] ?? 255
    rec[57] = COMMAND_CODES[entry.command] ?? 255
    rec[58] =
      (entry.overwrite ? FLAG_OVERWRITE : 0) |
      (parentAt !== NONE ? FLAG_PARENT : 0) |
      (pathsAreFiles ? FLAG_PATHS_ARE_FILES : 0) |
      (usualSubject ? FLAG_USUAL_SUBJECT : 0) |
      (others.length > 0 ? FLAG_MERGE : 0)
    rec.writeUInt32LE(crc32(idBytes, crc32(detailBytes, crc32(rec.subarray(0, 60)))) >>> 0, 60)
    if (rec[56] === 255 || rec[57] === 255) throw new Error('unknown actor or command')

    // Data first, the record last: the record is what makes the entry count.
    const namesBytes = Buffer.concat(newNames)
    this.write('names', namesBytes, this.namesBytes)
    this.write('files', idBytes, this.fileCount * 4)
    this.write('details', detailBytes, this.detailsEnd)
    this.write('commits', rec, this.count * RECORD)
    this.namesBytes += namesBytes.length
    this.detailsEnd += detailBytes.length

    if ((this.count + 1) * RECORD > this.records.length) {
      const grown = alignedBuffer(this.records.length * 2)
      this.records.copy(grown)
      this.records = grown
      this.words = new Uint32Array(grown.buffer, 0, grown.length / 4)
      this.floats = new Float64Array(grown.buffer, 0, grown.length / 8)
    }
    rec.copy(this.records, this.count * RECORD)
    if (this.fileCount + ids.length > this.fileIds.length) {
      const grown = new Uint32Array(Math.max(this.fileIds.length * 2, this.fileCount + ids.length))
      grown.set(this.fileIds.subarray(0, this.fileCount))
      this.fileIds = grown
    }
    this.fileIds.set(ids, this.fileCount)
    this.fileCount += ids.length
    this.count++
    if (this.table) {
      if (this.count * 2 > this.table.length) this.rehash(this.table.length * 2)
      else this.insertKey(this.table, this.count - 1)
    }
  }

  /**
   * Gathers writes in memory until `endBatch` writes them at once (bulk appends: rebuilds,
   * fixtures). Entries appended meanwhile count at once; on disk they appear at `endBatch`.
   */
  beginBatch(): void {
    if (this.pending) return
    this.pending = { commits: [], files: [], names: [], details: [] }
    this.batchStarts = {
      commits: this.count * RECORD,
      files: this.fileCount * 4,
      names: this.namesBytes,
      details: this.detailsEnd,
    }
  }

  endBatch(): void {
    const pending = this.pending
    if (!pending) return
    this.pending = null
    // The records last, as with single appends.
    for (const part of ['names', 'files', 'details', 'commits'] as const) {
      const bytes = Buffer.concat(pending[part])
      if (bytes.length) this.writeAt(part, bytes, this.batchStarts[part])
    }
  }

  /** Forces the index to disk (after a rebuild, before it replaces the old one). */
  sync(): void {
    for (const part of PARTS) disk.fsyncSync(this.fds[part])
  }

  /** True once closed (replaced by a rebuild or a switched history, or the memory closed). */
  get isClosed(): boolean {
    return this.closed
  }

  close(): void {
    if (this.closed) return
    this.endBatch()
    this.closed = true
    // Each part's close, whatever the one before it reported: the index is never fsynced but
    // for a rebuild, before its close (`sync`), and is checked and caught up at open, so no
    // close reports anything it relies on. One that threw stopped a rebuild's swap, or a
    // replace, with the index closed and still in use.
    for (const fd of Object.values(this.fds)) closeQuietly(fd)
  }

  private write(part: Part, bytes: Buffer, position: number): void {
    if (bytes.length === 0) return
    if (this.pending) this.pending[part].push(bytes)
    else this.writeAt(part, bytes, position)
  }

  private writeAt(part: Part, bytes: Buffer, position: number): void {
    let done = 0
    while (done < bytes.length) {
      done += disk.writeSync(this.fds[part], bytes.subarray(done), position + done)
    }
  }

  /**
   * Finds where each name starts, without decoding any. Names end at the first that runs past
   * the file (a crash mid-append), is empty (no path or conversation is: zeroes a power cut
   * left) or, in the newest bytes, does not match its checksum. True when names were cut
   * there, so the records naming the lost ones go too (`keepComplete`).
   */
  private loadNames(raw: Buffer): boolean {
    // Counted first, then their starts put straight into the table kept: open runs this once,
    // cold, where an array grown name by name (then copied twice) and `readUInt32LE` (an
    // array of its arguments each call on Node 20) were some 250 KB of fresh memory.
    let count = 0
    let at = 0
    for (let length; at + NAME_HEAD <= raw.length; at += NAME_HEAD + length, count++) {
      length = u32le(raw, at)
      if (length === 0 || at + NAME_HEAD + length > raw.length) break
    }
    const starts = new Uint32Array(count)
    at = 0
    for (let id = 0; id < count; id++) {
      starts[id] = at + NAME_HEAD
      at += NAME_HEAD + u32le(raw, at)
    }
    let kept = count
    const tail = raw.length - NAMES_TAIL_CHECKED
    for (let id = kept - 1; id >= 0 && (starts[id] as number) >= tail; id--) {
      if (!nameChecks(raw, id, starts[id] as number)) kept = id
    }
    if (kept < count) at = (starts[kept] as number) - NAME_HEAD
    this.namesRaw = raw
    this.nameStarts = kept < count ? starts.slice(0, kept) : starts
    this.names.length = kept
    this.sortedIds = null
    this.namesBytes = at
    return at < raw.length
  }

  /** How many names open read (those `checkNames` checks). */
  get namesRead(): number {
    return this.nameStarts.length
  }

  /**
   * Checks the checksums of names `from` to `to` (the idle check, in slices), without decoding
   * them; throws at the first damaged one.
   */
  checkNames(from = 0, to = this.nameStarts.length): void {
    const end = Math.min(to, this.nameStarts.length)
    for (let id = from; id < end; id++) {
      if (!nameChecks(this.namesRaw, id, this.nameStarts[id] as number)) {
        throw new IndexDamagedError(`index name ${id} is damaged`)
      }
    }
  }

  private nameAt(id: number): string {
    const known = this.names[id]
    if (known !== undefined) return known
    const start = this.nameStarts[id]
    if (start === undefined || !nameChecks(this.namesRaw, id, start)) {
      throw new IndexDamagedError(`index name ${id} is damaged`)
    }
    // Read as `nameChecks` read it: its length word lies inside the names.
    const name = this.namesRaw.toString(
      'utf8',
      start,
      start + u32le(this.namesRaw, start - NAME_HEAD),
    )
    this.names[id] = name
    return name
  }

  // The last id of a name wins, as it did when every name was read at open.
  private get nameIds(): Map<string, number> {
    if (!this.nameIdMap) {
      const ids = new Map<string, number>()
      for (let id = 0; id < this.names.length; id++) ids.set(this.nameAt(id), id)
      this.nameIdMap = ids
    }
    return this.nameIdMap
  }

  /**
   * The first of `count` records that names a name past those kept (or its file ids are cut
   * short): a name is given its id by the entry that first uses it, so every entry from there
   * on may use lost ones and is cut, to be caught up from the commits. Reads every record's
   * ids, so only after names were cut.
   */
  private firstNamingLost(count: number, filesAvailable: number): number {
    this.record(0)
    const words = this.words
    const names = this.names.length
    for (let i = 0; i < count; i++) {
      const w = i * 16
      const first = words[w + 11] as number
      const end = first + (words[w + 12] as number)
      const conversation = words[w + 13] as number
      if (end > filesAvailable || (conversation !== NONE && conversation >= names)) return i
      for (let f = first; f < end; f++) if ((this.fileIds[f] as number) >= names) return i
    }
    return count
  }

  /**
   * How many of `count` records to keep: a tail of records whose data never fully reached
   * the disk (a crash mid-append) is dropped. Only the tail is read here; the rest is checked
   * in the background (`checkStructure`, and the checksums).
   */
  private keepComplete(count: number, filesAvailable: number, detailsSize: number): number {
    const words = this.words
    const floats = this.floats
    const names = this.names.length
    let keep = count
    while (keep > 0) {
      const i = keep - 1
      const w = this.record(i) >> 2
      const first = words[w + 11] as number
      const fileCount = words[w + 12] as number
      const conversation = words[w + 13] as number
      let complete =
        (floats[i * 8 + 4] as number) + (words[w + 10] as number) <= detailsSize &&
        first + fileCount <= filesAvailable &&
        (conversation === NONE || conversation < names)
      for (let f = first; complete && f < first + fileCount; f++) {
        if ((this.fileIds[f] as number) >= names) complete = false
      }
      if (complete) break
      keep--
    }
    if (keep > 0) this.checkStructure(keep - 1, keep)
    const last = (keep - 1) * 16
    this.detailsEnd =
      keep === 0 ? 0 : (floats[(keep - 1) * 8 + 4] as number) + (words[last + 10] as number)
    this.fileCount = keep === 0 ? 0 : (words[last + 11] as number) + (words[last + 12] as number)
    // What lies past the kept records (a torn or cut tail) is cleared; the rest of the buffer
    // is fresh and zero already.
    this.records.fill(0, keep * RECORD, this.count * RECORD)
    return keep
  }

  /**
   * Checks records `from` to `to` (exclusive) against each other and the other parts: each
   * follows its parent, its data starts where the previous entry's ends, its ids are in range.
   * Throws `IndexDamagedError` at the first that does not.
   */
  checkStructure(from: number, to: number): void {
    const words = this.words
    const floats = this.floats
    const names = this.names.length
    // Each record is checked against the one before it.
    this.record(Math.max(0, from - 1))
    for (let i = from; i < Math.min(to, this.count || to); i++) {
      const w = i * 16
      const detailsAt = floats[i * 8 + 4] as number
      const first = words[w + 11] as number
      const fileCount = words[w + 12] as number
      const expectedDetails =
        i === 0 ? 0 : (floats[(i - 1) * 8 + 4] as number) + (words[w - 16 + 10] as number)
      const expectedFiles =
        i === 0 ? 0 : (words[w - 16 + 11] as number) + (words[w - 16 + 12] as number)
      if (detailsAt !== expectedDetails || first !== expectedFiles) {
        throw new IndexDamagedError(`index entry ${i} does not follow the one before`)
      }
      const flags = this.records[i * RECORD + 58] as number
      const parentAt = words[w + 5] as number
      if (((flags & FLAG_PARENT) !== 0) !== (parentAt !== NONE)) {
        throw new IndexDamagedError(`index entry ${i} has a wrong parent`)
      }
      // A parent comes before its child (further parents are checked with the entry).
      if (parentAt !== NONE && parentAt >= i) {
        throw new IndexDamagedError(`index entry ${i} does not follow its parent`)
      }
      const conversation = words[w + 13] as number
      const kinds = words[w + 14] as number
      if (
        (conversation !== NONE && conversation >= names) ||
        (kinds & 0xff) >= ACTORS.length ||
        ((kinds >> 8) & 0xff) >= COMMANDS.length
      ) {
        throw new IndexDamagedError(`index entry ${i} names something unknown`)
      }
      for (let f = first; f < first + fileCount; f++) {
        if ((this.fileIds[f] as number) >= names) {
          throw new IndexDamagedError(`index entry ${i} names an unknown file`)
        }
      }
    }
  }

  /** Cuts each part to what the kept records use (what a crash left past them goes). */
  private trimTails(): void {
    const lengths: Record<Part, number> = {
      commits: this.count * RECORD,
      files: this.fileCount * 4,
      names: this.namesBytes,
      details: this.detailsEnd,
    }
    for (const part of PARTS) {
      if (disk.fstatSync(this.fds[part]).size !== lengths[part])
        disk.ftruncateSync(this.fds[part], lengths[part])
    }
  }

  private rehash(size: number): Int32Array {
    this.record(0)
    let slots = 1024
    while (slots < size) slots *= 2
    const table = new Int32Array(slots)
    for (let i = 0; i < this.count; i++) this.insertKey(table, i)
    this.table = table
    return table
  }

  private insertKey(table: Int32Array, i: number): void {
    const mask = table.length - 1
    let slot = (this.words[i * 16] as number) & mask
    while (table[slot] !== 0) slot = (slot + 1) & mask
    table[slot] = i + 1
  }
}

/** A name as `names` holds it: its length, its checksum (`nameSumAt`), its UTF-8. */
function nameRecord(id: number, name: string): Buffer {
  const length = Buffer.byteLength(name, 'utf8')
  const record = Buffer.alloc(NAME_HEAD + length)
  record.writeUInt32LE(length, 0)
  record.write(name, NAME_HEAD, 'utf8')
  record.writeUInt32LE(nameSumAt(record, id, NAME_HEAD, length), 4)
  return record
}

/**
 * The checksum of name `id`, whose `length` bytes of UTF-8 start at `start` in `raw` with its
 * length word `NAME_HEAD` bytes before them: that word and the bytes, the sum started from the
 * id, so a name moved to another place, or cut to zero, does not match. Summed where the bytes
 * lie, without a view per name (the idle check runs this for every name). The one sum every
 * writer and reader of `names` uses: appending, checking and the format-2 migration.
 */
function nameSumAt(raw: Buffer, id: number, start: number, length: number): number {
  return crc32Range(raw, start, start + length, crc32Range(raw, start - NAME_HEAD, start - 4, id))
}

/** True when the name `id` starting at `start` in `raw` matches its checksum. */
function nameChecks(raw: Buffer, id: number, start: number): boolean {
  const length = u32le(raw, start - NAME_HEAD)
  if (length === 0 || start + length > raw.length) return false
  return nameSumAt(raw, id, start, length) === u32le(raw, start - 4)
}

/**
 * `raw.readUInt32LE(at)` for an `at` inside `raw`, without the array of arguments Node 20's
 * own makes each call in code not yet optimized (see `loadNames`).
 */
function u32le(raw: Uint8Array, at: number): number {
  return (
    ((raw[at] as number) | ((raw[at + 1] as number) << 8) | ((raw[at + 2] as number) << 16)) +
    (raw[at + 3] as number) * 0x1000000
  )
}

/** Where the side index lives: inside the git directory, never inside the memory folder. */
export function indexDirOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-index')
}

/**
 * Writes a complete index for `entries` (oldest first) into `dir`, replacing what is there:
 * built beside it, fsynced, then swapped in with renames.
 */
export function writeIndex(dir: string, entries: Iterable<IndexEntry>): void {
  replaceIndexDir(writeIndexBeside(dir, entries), dir)
}

/**
 * As `writeIndex`, for `entries` read by an earlier version's rules (the JSON-lines index): it
 * is swapped in as format 3, so that until its opener has looked at each commit's people again
 * (`settleFormat`), a stop on the way leaves an index that is looked at again, never one of
 * this format trusted as it is.
 */
export function writeOlderIndex(dir: string, entries: Iterable<IndexEntry>): void {
  const temp = writeIndexBeside(dir, entries)
  try {
    writeSynced(path.join(temp, 'format'), Buffer.from(FORMAT_3, 'utf8'))
  } catch (error) {
    removePath(temp)
    throw error
  }
  replaceIndexDir(temp, dir)
}

/**
 * Writes a complete, fsynced index for `entries` (oldest first) beside `dir` and returns
 * where; the caller swaps it in with `replaceIndexDir` (after closing the index it replaces).
 */
export function writeIndexBeside(dir: string, entries: Iterable<IndexEntry>): string {
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`
  removePath(temp)
  const index = IndexFile.create(temp)
  try {
    index.beginBatch()
    for (const entry of entries) index.append(entry)
    index.endBatch()
    index.sync()
  } catch (error) {
    index.close()
    removePath(temp)
    throw error
  }
  index.close()
  return temp
}

/**
 * Brings an index of format 2 to format 3 in milliseconds instead of a rebuild from the
 * commits (10 s at 10,000 commits, minutes at 100,000): `commits`, `files` and `details` are
 * the same in both, so only `names` is rewritten, each name given the checksum of what it
 * reads as now. Those names get the trust format 2 gave them (the idle check's spot checks
 * compare entries with their commits, as before); names appended from here on are checked
 * against what was written. Built beside `dir` (the unchanged parts hard-linked) and swapped
 * in as a rebuild is, so a kill at any point leaves the old index or the new one, whole:
 * a half-built one beside it is removed at the next open, which migrates again.
 */
function migrateFrom2(dir: string): void {
  let raw: Buffer
  try {
    raw = readPlainFile(path.join(dir, 'names'), OWN_FILE_CAP.RECORDS)
  } catch (error) {
    // As at open: a disk that fails is passed on, a part missing or not a file is damage.
    if (isDiskProblem(error)) throw refusedReading(path.join(dir, 'names'), error)
    throw new IndexDamagedError(`index part missing or not a file (names: ${errorCode(error)})`)
  }
  // Format 2's names are u32 length + UTF-8; they end where one runs past the file (a torn
  // append, which format 2 ignored too). An empty one is kept as it is: format 3 reads it as
  // where names were cut, and the entries from the first naming it are caught up.
  let at = 0
  let count = 0
  while (at + 4 <= raw.length) {
    const length = raw.readUInt32LE(at)
    if (at + 4 + length > raw.length) break
    at += 4 + length
    count++
  }
  // One buffer, each name's checksum summed where its bytes lie.
  const names = Buffer.allocUnsafe(at + 4 * count)
  for (let id = 0, from = 0, to = 0; id < count; id++) {
    const length = raw.readUInt32LE(from)
    names.writeUInt32LE(length, to)
    raw.copy(names, to + NAME_HEAD, from + 4, from + 4 + length)
    names.writeUInt32LE(nameSumAt(names, id, to + NAME_HEAD, length), to + 4)
    from += 4 + length
    to += NAME_HEAD + length
  }
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`
  removePath(temp)
  makeFolders(temp, 0o700)
  try {
    for (const part of PARTS) {
      if (part !== 'names') linkOrCopy(path.join(dir, part), path.join(temp, part))
    }
    writeSynced(path.join(temp, 'names'), names)
    writeSynced(path.join(temp, 'format'), Buffer.from(FORMAT_3, 'utf8'))
  } catch (error) {
    removePath(temp)
    // A part missing, or a folder in its place (its link refused, its read EISDIR), is damage.
    if (isDiskProblem(error)) throw error
    throw new IndexDamagedError(`index part missing or not a file (${errorCode(error)})`)
  }
  replaceIndexDir(temp, dir)
}

/**
 * Brings the closed index in `dir`, of format 3, to this format keeping its first `keep`
 * entries: the records after them are cut (what they used past the kept ones goes at the next
 * open, as a crash's torn tail does), and only then is the format changed (written beside and
 * renamed over). A kill before the rename leaves format 3, which is checked again; after it,
 * an index that lags behind `main`, caught up from the commits at open.
 */
export function settleFormat(dir: string, keep: number): void {
  const commits = path.join(dir, 'commits')
  const fd = disk.openSync(commits, OPEN.READ_WRITE)
  try {
    if (disk.fstatSync(fd).size > keep * RECORD) {
      disk.ftruncateSync(fd, keep * RECORD)
      disk.fsyncSync(fd)
    }
  } finally {
    closeQuietly(fd)
  }
  // One name, so a kill before the rename leaves nothing the next try does not write over.
  const temp = path.join(dir, 'format.tmp')
  writeSynced(temp, Buffer.from(FORMAT, 'utf8'))
  disk.renameSync(temp, path.join(dir, 'format'))
}

/** A hard link (the parts a migration keeps), or a copy where the file system has none. */
function linkOrCopy(from: string, to: string): void {
  try {
    disk.linkSync(from, to)
  } catch (error) {
    if (
      isMissing(error) ||
      !['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK'].some((code) => isCode(error, code))
    )
      throw error
    writeSynced(to, disk.readFileSync(from))
  }
}

/** Writes `data` to a new `file` and fsyncs it. */
function writeSynced(file: string, data: Buffer): void {
  const fd = disk.openSync(file, OPEN.READ_WRITE_TRUNC, 0o600)
  try {
    for (let done = 0; done < data.length;) {
      done += disk.writeSync(fd, data.subarray(done), done)
    }
    disk.fsyncSync(fd)
  } finally {
    // After the fsync, or after the error that is passed on.
    closeQuietly(fd)
  }
}

/** Moves a finished index from `temp` into `dir`, the old one aside first and then removed. */
export function replaceIndexDir(temp: string, dir: string): void {
  const old = `${dir}.old-${process.pid}-${Date.now()}`
  let moved = false
  try {
    disk.renameSync(dir, old)
    moved = true
  } catch (error) {
    if (!isMissing(error)) throw error
  }
  disk.renameSync(temp, dir)
  if (moved) removePath(old)
}

/** Removes what an interrupted rebuild left beside `dir`. */
export function removeIndexLeftovers(dir: string): void {
  const parent = path.dirname(dir)
  const base = path.basename(dir)
  for (const name of listNames(parent)) {
    if (name.startsWith(`${base}.tmp-`) || name.startsWith(`${base}.old-`)) {
      removePath(path.join(parent, name))
    }
  }
}
