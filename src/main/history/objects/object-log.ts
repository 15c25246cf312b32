/**
 * The write-ahead log of a commit's loose objects (docs/durability.md, "Cost").
 *
 * A command's commit writes 3–6 loose objects. Making each durable before the ref moves took
 * an `fsync` per object file and per object folder (and `objects/` for a new folder): most of
 * a command's cost. Instead, a small batch is appended to one log file in the git directory
 * and only that file is `fsync`ed; the loose files are still written as before (temp file,
 * rename), so every reader, maintenance and the git CLI see them at once, but they reach the
 * disk later, at a checkpoint: off the command path, their files, their folders and `objects/`
 * are `fsync`ed, and only then are their records dropped (the log emptied).
 *
 * A record holds an object's loose (deflated) bytes under its id, so it checks itself: open
 * inflates it, parses the header and accepts it only if it hashes to that id. A torn or stale
 * tail (a power cut in the middle of an append, old bytes past a truncation) stops the reading
 * there, and nothing after it is used: every record a command was acknowledged for lies before
 * it, since each append is `fsync`ed before the command goes on.
 *
 * A commit's batch ends with a record of `main`'s new value (a ref record): the ref file is
 * still written (temp file, rename) but not `fsync`ed, nor is `refs/heads/`; after a power cut
 * open moves `main` forward to the newest value logged (see `logged-main.ts`). A
 * checkpoint that empties a file holding ref records first makes the ref file durable.
 *
 * Two log files are used in turn, both made (and their names made durable) when the history
 * opens, never on a command's path: a checkpoint switches new records to the other file, so
 * records appended while it runs are never dropped with the ones it made durable. At open,
 * whatever either file holds is replayed (see `ObjectStore.openLog`) and then checkpointed.
 */
import { createHash, hash } from 'node:crypto'
import path from 'node:path'
import {
  closeQuietly,
  disk,
  isCode,
  isMissing,
  isNotPlainFile,
  OPEN,
  syncFolder,
} from '../../lib/disk'
import type { Logger } from '../../lib/logger'
import { moveIntoDamaged } from './damaged-folder'
import { parseLoose } from './object-database'
import type { ObjectKind, RawObject } from './pack-file'
import { appendAll } from '../../lib/arrays'

/** The log files, in the git directory (git ignores files it does not know there). */
export const LOG_FILES = ['cairn-wal-0', 'cairn-wal-1'] as const

/** A batch of at most this many objects is logged; a larger one is `fsync`ed object by object. */
export const MAX_LOGGED_OBJECTS = 32
/** ... and at most this many loose bytes. */
export const MAX_LOGGED_BYTES = 1024 * 1024

/** A checkpoint starts once the active file holds this many records ... */
export const CHECKPOINT_RECORDS = 256
/** ... or this many bytes, ... */
export const CHECKPOINT_BYTES = 1024 * 1024
/** ... or this long after the last append (an idle moment). */
export const CHECKPOINT_IDLE_MS = 1500

/**
 * A checkpoint that failed (a covered file's `fsync` with EIO) is tried again after an idle
 * wait, doubled after each failure up to this: a failing disk is not hammered meanwhile.
 */
export const CHECKPOINT_RETRY_MAX_MS = 30_000

/**
 * Past this many records (or bytes) not yet checkpointed, because checkpoints keep failing or
 * cannot keep up, the log takes none: batches are flushed file by file until a checkpoint
 * succeeds, so it never grows without bound (nor does the replay at the next open). Sixteen
 * times the checkpoint bound: a checkpoint's emptying waits for the disk's discard of the
 * file's blocks, which took 0.5 s on the bench machine while other programs used the disk,
 * and commands sent back to back (about 1,200 records a second) met a cap of four times the
 * bound within it, each then paying the file-by-file flush it is there to spare.
 */
export const LOG_CAP_RECORDS = 16 * CHECKPOINT_RECORDS
export const LOG_CAP_BYTES = 16 * CHECKPOINT_BYTES

/** Checkpoint `fsync`s in flight at once: the thread pool (4 threads) stays free for commands. */
const CHECKPOINT_PARALLEL = 2
/**
 * ... and in the checkpoint after open's replay, when no command waits for the pool: all four
 * of its threads, with as many more opened and queued behind them so none waits for the next.
 */
const REPLAY_PARALLEL = 8

/**
 * How a checkpoint's `fsync`s go out: at most `width` at once, and, with `yields`, each only
 * at a quiet moment (see `ObjectLog.yieldTo`; never while a caller waits for the checkpoint).
 */
interface SyncPolicy {
  readonly width: number
  readonly yields: boolean
}
/** Beside commands: two at a time, each yielding to them. */
const BESIDE_COMMANDS: SyncPolicy = { width: CHECKPOINT_PARALLEL, yields: true }
/** After open's replay, before any command can run: all at once (see `checkpoint`). */
const AFTER_REPLAY: SyncPolicy = { width: REPLAY_PARALLEL, yields: false }

/**
 * A checkpoint in the background yields to commands (see `ObjectLog.yieldTo`) until the log
 * holds this many records, a quarter of its cap, or `YIELD_BYTES`: with commands back to back
 * and no moment between them, it then goes on beside them, as it did before, rather than let
 * the log reach its cap (where every command would `fsync` its objects file by file).
 */
export const YIELD_RECORDS = LOG_CAP_RECORDS / 4
/**
 * ... or this many bytes, a quarter of its byte cap: a batch may log up to a megabyte (one
 * large memory file), so commands writing large files back to back reach the byte cap within
 * some twenty records, long before the record bound.
 */
export const YIELD_BYTES = LOG_CAP_BYTES / 4

/**
 * Between commands, a checkpoint in the background starts its `fsync`s (and its emptying) only
 * this long after a command returned, ...
 */
export const AFTER_COMMAND_MS = 10
/**
 * ... or once none has run for this long (commands stopped, or come further apart). In a gap
 * between the two it waits: a command arriving then finds no checkpoint `fsync` in flight
 * at the disk before its own (docs/durability.md, "Cost"). Commands come after a model's turn
 * or a person's action, rarely sooner than a few tens of milliseconds after the one before:
 * the moment right after one is the checkpoint's, the rest of the gap the next command's.
 */
export const COMMANDS_PAUSED_MS = 500

/**
 * A checkpoint in the background waits in the gaps between commands (see
 * `COMMANDS_PAUSED_MS`) only while the log holds less than twice what starts one: past that,
 * commands have logged a whole checkpoint's worth since it started, so it is falling behind
 * (commands spaced tens of milliseconds apart, each adding more `fsync`s than fit in
 * `AFTER_COMMAND_MS`, on a slow disk or with large batches), and it takes the gaps again as
 * it did before stop 20. It still waits while a command runs, up to `YIELD_RECORDS`. This
 * keeps a replay after a crash near the usual checkpoint's size (two, not four, of them), at
 * the cost of the gap's `fsync`s in those stretches (docs/durability.md, "Cost").
 */
export const GAP_RECORDS = 2 * CHECKPOINT_RECORDS
/** The same as `GAP_RECORDS` in bytes: twice what starts a checkpoint. */
export const GAP_BYTES = 2 * CHECKPOINT_BYTES

/**
 * The work a checkpoint in the background yields to (the history's serial queue): `busy`
 * while a command runs or waits, `idle` once everything queued so far has finished,
 * `lastActive` when (`performance.now()`) one last ran (the present while one does).
 */
export interface Commands {
  busy(): boolean
  idle(): Promise<void>
  lastActive(): number
}

// A record: [u32 big-endian length of the loose bytes][20-byte object id][the loose bytes].
// A ref record: [u32 REF_FLAG | length of the payload][SHA-1 of the payload][the payload], the
// payload being `refs/heads/main <id, or 40 zeros for none> <sequence number>\n`. Code that
// predates ref records reads its length as past the end of the file and stops there cleanly.
const RECORD_HEAD = 24
const REF_FLAG = 0x8000_0000
const REF_PAYLOAD = /^refs\/heads\/main ([0-9a-f]{40}) (\d{1,15})\n$/
const NO_VALUE = '0'.repeat(40)
// A rename record: [u32 RENAME_FLAG | length of the payload][SHA-1 of the payload][the payload],
// the payload being the JSON of a `LoggedRename`. It follows its commit's ref record, the last
// of the batch: code that predates it reads its length as past the end of the file (bit 30 set:
// at least 1 GiB) and stops there cleanly, after the batch's objects and ref.
const RENAME_FLAG = 0x4000_0000
const FLAGS = (REF_FLAG | RENAME_FLAG) >>> 0

/**
 * Past this many memory folders kept open for a file's checkpoint, a commit's rename is not
 * logged: its folder is `fsync`ed on the command's path, as before (see `RenameIntent`).
 */
export const MAX_KEPT_FOLDERS = 64

/**
 * The rename that publishes a command's staged write (docs/durability.md, "Cost"): its temp
 * file (`temp`, already `fsync`ed with the batch) renamed over `name` in the memory folder's
 * `dir` (posix, relative to the memory folder, '' for the memory folder itself). Logged with
 * its commit's batch, so the folder need not be `fsync`ed on the command's path: a checkpoint
 * `fsync`s it before it empties the file, and open redoes a rename a power cut lost (only when
 * `temp` still holds exactly `blob`, and `name` holds `previous`, the version of `commit`'s
 * parent, or nothing where it had none).
 */
export interface LoggedRename {
  readonly commit: string
  readonly blob: string
  readonly previous: string | null
  readonly dir: string
  readonly temp: string
  readonly name: string
  /** The sequence number of its commit's ref record (orders renames across both files). */
  readonly seq: number
}

/**
 * The folder of a logged rename, for the checkpoint to `fsync`: `key` names it (its device
 * and inode: one descriptor per folder and file), `open` gives a descriptor of its own (the
 * command's handle closes first), or null when it cannot.
 */
export interface KeptFolder {
  readonly key: string
  open(): number | null
}

/** One object whose record is (or is about to be) in the log. */
export interface LoggedObject {
  readonly oid: string
  /** Its loose file and that file's folder. */
  readonly file: string
  readonly dir: string
}

/** An object read back from the log, checked against its id. */
export interface LogRecord {
  readonly oid: string
  readonly type: ObjectKind
  readonly content: Buffer
}

/**
 * A value of `main` read back from the log: `oid` null records that `main` had none. `seq`
 * orders them across both files (it grows for as long as the history is open, and from the
 * largest found at open), so the newest is known even when an emptying was lost and stale
 * records came back in the other file.
 */
export interface LoggedMain {
  readonly oid: string | null
  readonly seq: number
}

/** The bytes of one record for `oid`, whose loose file holds `stored`. */
export function encodeRecord(oid: string, stored: Uint8Array): Buffer {
  const bytes = Buffer.allocUnsafe(RECORD_HEAD + stored.byteLength)
  putObjectRecord(bytes, 0, oid, stored)
  return bytes
}

// An object's record written into `into` at `at` (its head, the loose file's length and the
// object's id, then the loose file's bytes); returns where it ends.
function putObjectRecord(into: Buffer, at: number, oid: string, stored: Uint8Array): number {
  into.writeUInt32BE(stored.byteLength, at)
  // Fewer than 20 bytes would leave unwritten (allocUnsafe) bytes in the log's record.
  if (into.write(oid, at + 4, 20, 'hex') !== 20) throw new Error('not an object id')
  into.set(stored, at + RECORD_HEAD)
  return at + RECORD_HEAD + stored.byteLength
}

// A ref or rename record of `text`: its head (flag and length, then the SHA-1 of the payload)
// and the payload, in one buffer.
function textRecord(flag: number, text: string): Buffer {
  const length = Buffer.byteLength(text)
  const bytes = Buffer.allocUnsafe(RECORD_HEAD + length)
  bytes.writeUInt32BE((flag | length) >>> 0, 0)
  bytes.write(text, RECORD_HEAD, length, 'utf8')
  hash('sha1', bytes.subarray(RECORD_HEAD), 'buffer').copy(bytes, 4)
  return bytes
}

/** The bytes of a ref record: `main` is `oid` (null: none), the `seq`th value logged. */
export function encodeRefRecord(oid: string | null, seq: number): Buffer {
  return textRecord(REF_FLAG, `refs/heads/main ${oid ?? NO_VALUE} ${seq}\n`)
}

/** The bytes of a rename record (see `LoggedRename`). */
export function encodeRenameRecord(rename: LoggedRename): Buffer {
  const { commit, blob, previous, dir, temp, name, seq } = rename
  return textRecord(RENAME_FLAG, JSON.stringify({ commit, blob, previous, dir, temp, name, seq }))
}

/** An object's record as the log holds it: with its loose bytes, as checked against its id. */
export interface StoredRecord extends LogRecord {
  readonly stored: Buffer
}

/** One entry of the log, in the order of the file. */
export type LogEntry =
  | ({ readonly kind: 'object' } & StoredRecord)
  | ({ readonly kind: 'main' } & LoggedMain)
  | ({ readonly kind: 'rename' } & LoggedRename)

/**
 * Every entry of `bytes` up to the first that does not check (torn, stale, garbage): an
 * object's record inflates, has a git object header whose length is right, and hashes to the
 * id it is under; a ref record's payload hashes to the id it is under and reads as one.
 */
export function decodeLog(bytes: Buffer): LogEntry[] {
  const entries: LogEntry[] = []
  let at = 0
  while (at + RECORD_HEAD <= bytes.length) {
    const word = bytes.readUInt32BE(at)
    const flag = (word & FLAGS) >>> 0
    const length = flag === 0 ? word : (word & ~FLAGS) >>> 0
    const start = at + RECORD_HEAD
    if (flag === FLAGS || length === 0 || start + length > bytes.length) break
    const id = bytes.subarray(at + 4, at + RECORD_HEAD)
    const body = bytes.subarray(start, start + length)
    if (flag === REF_FLAG) {
      const main = decodeRef(id, body)
      if (!main) break
      entries.push({ kind: 'main', ...main })
    } else if (flag === RENAME_FLAG) {
      const rename = decodeRename(id, body)
      if (!rename) break
      entries.push({ kind: 'rename', ...rename })
    } else {
      const oid = id.toString('hex')
      let object: RawObject
      try {
        object = parseLoose(oid, body)
      } catch {
        break
      }
      entries.push({ kind: 'object', oid, ...object, stored: body })
    }
    at = start + length
  }
  return entries
}

/** The objects' records of `bytes` (see `decodeLog`). */
export function decodeRecords(bytes: Buffer): LogRecord[] {
  const records: LogRecord[] = []
  for (const entry of decodeLog(bytes)) {
    if (entry.kind === 'object')
      records.push({ oid: entry.oid, type: entry.type, content: entry.content })
  }
  return records
}

/** The values of `main` recorded in `bytes`, in order (see `decodeLog`). */
export function decodeMains(bytes: Buffer): LoggedMain[] {
  const mains: LoggedMain[] = []
  for (const entry of decodeLog(bytes)) {
    if (entry.kind === 'main') mains.push({ oid: entry.oid, seq: entry.seq })
  }
  return mains
}

/** The renames recorded in `bytes`, in order (see `decodeLog`). */
export function decodeRenames(bytes: Buffer): LoggedRename[] {
  const renames: LoggedRename[] = []
  for (const entry of decodeLog(bytes)) {
    if (entry.kind === 'rename') {
      const { kind: _kind, ...rename } = entry
      renames.push(rename)
    }
  }
  return renames
}

const OID = /^[0-9a-f]{40}$/

function decodeRename(id: Buffer, payload: Buffer): LoggedRename | null {
  if (!createHash('sha1').update(payload).digest().equals(id)) return null
  let value: unknown
  try {
    value = JSON.parse(payload.toString('utf8'))
  } catch {
    return null
  }
  if (typeof value !== 'object' || value === null) return null
  const { commit, blob, previous, dir, temp, name, seq } = value as Record<string, unknown>
  const oid = (item: unknown): item is string => typeof item === 'string' && OID.test(item)
  const text = (item: unknown): item is string => typeof item === 'string'
  if (!oid(commit) || !oid(blob) || !(previous === null || oid(previous))) return null
  if (!text(dir) || !text(temp) || !text(name) || typeof seq !== 'number') return null
  return { commit, blob, previous, dir, temp, name, seq }
}

function decodeRef(id: Buffer, payload: Buffer): LoggedMain | null {
  if (!createHash('sha1').update(payload).digest().equals(id)) return null
  const match = REF_PAYLOAD.exec(payload.toString('latin1'))
  if (!match) return null
  return { oid: match[1] === NO_VALUE ? null : match[1]!, seq: Number(match[2]) }
}

interface LogFile {
  readonly file: string
  readonly fd: number
  /**
   * The bytes appended since it was last emptied: what the checkpoint's bound counts (the file
   * is opened for appending, so this is not where a record goes).
   */
  end: number
  records: number
  /** The objects its records cover, not yet made durable by a checkpoint. */
  covered: LoggedObject[]
  /** Its ref records: the ref file must be durable before it is emptied. */
  refs: number
  /**
   * The memory folders its rename records name (descriptors of their own, by `KeptFolder.key`):
   * `fsync`ed by the checkpoint, with the ref, before it empties the file; closed after.
   */
  folders: Map<string, number>
  /**
   * How many times a checkpoint began making the ref durable for it: a ref renamed after that
   * may have been missed, so its commit makes it durable itself (`LoggedRef.moved`).
   */
  sealed: number
  /**
   * Set when an append or its `fsync` failed: the file may then hold, before any later record,
   * bytes that never reach the disk (Linux may drop dirty pages after a failed `fsync`), so it
   * takes no record until a checkpoint has emptied it (batches are made durable object by
   * object meanwhile).
   */
  failed: boolean
  /** How many times a checkpoint emptied it. */
  emptied: number
}

/**
 * A value of `main` appended with its commit's objects, whose ref file is renamed next (see
 * `ObjectLog.append`).
 */
export interface LoggedRef {
  /**
   * Whether the batch's rename was logged (its folder kept for the checkpoint): the caller
   * then does not `fsync` the folder (unless `moved` asks it to).
   */
  readonly renameLogged: boolean
  /**
   * Called right after the ref's rename: resolves at once, unless a checkpoint began making
   * the ref durable for the file holding the record before the rename (and may empty it
   * next); then once the ref file and `refs/heads/` are `fsync`ed here, and `alsoSync` (the
   * logged rename's folder, which that checkpoint may have `fsync`ed before the rename).
   */
  moved(alsoSync?: () => Promise<void>): Promise<void>
  /**
   * The rename will not happen (the commit failed): `previous`, the value `main` keeps, is
   * logged after it, so open never moves `main` to the abandoned value. Rejects if that
   * append fails (the file then waits for a checkpoint, which makes the ref durable first).
   */
  abandoned(previous: string | null): Promise<void>
}

/** The two log files of one history, and the checkpoints that empty them. */
/**
 * The log file `file` opened to append (never through a link, never waiting on a fifo), or
 * why not: `missing`, or `not-a-file` for a link (ELOOP) or a folder (EISDIR) in its place,
 * which the caller moves aside. I/O errors are thrown.
 */
function openLogFile(file: string): number | 'missing' | 'not-a-file' {
  try {
    return disk.openSync(file, OPEN.READ_WRITE | OPEN.APPEND | OPEN.NOFOLLOW | OPEN.NONBLOCK)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 'missing'
    if (isNotPlainFile(error)) return 'not-a-file'
    throw error
  }
}

export class ObjectLog {
  private active = 0
  // The sequence number of the next ref record.
  private seq = 0
  private running: Promise<void> | null = null
  private idleTimer: NodeJS.Timeout | null = null
  private closed = false
  // Calls on the thread pool using the log's descriptors (a checkpoint's emptying, an fsync):
  // `close` leaves the descriptors open until they are done, since a number closed under one
  // may be reused by another file before the pool thread gets to it.
  private inFlight = 0
  // Set once the descriptors are closed: `close` may run twice (a checkpoint that found the
  // data folder taken over, then the store's close), and closing a number again would close
  // whatever unrelated file was given it meanwhile.
  private filesClosed = false
  // A background round is queued and not started yet: triggers meanwhile add none.
  private queued = false
  // After a failed checkpoint, the wait before the next background one (0: the last succeeded).
  private retryMs = 0
  // A failure was reported to the logger since the last checkpoint that succeeded.
  private warned = false
  // The files that read empty at open, until an `fsync` has made that durable (see `open`),
  // and that `fsync` while it runs.
  private unsyncedEmpty: number[] = []
  private emptySync: Promise<void> | null = null
  // What a background checkpoint yields to (null: nothing, as in tests of the log alone).
  private commands: Commands | null = null
  // Checkpoints a caller waits for (a command's flush, close, open, maintenance): while any
  // does, no checkpoint yields (the caller may be the very command it would wait for).
  private awaited = 0
  // Wakes the checkpoints that yield, when one is awaited or the log closes.
  private wakers = new Set<() => void>()

  private constructor(
    private readonly gitdir: string,
    private readonly files: [LogFile, LogFile],
    private readonly owns: () => boolean,
    private readonly logger: Logger | undefined,
  ) {}

  /**
   * Opens both log files of `gitdir`, making any that is missing and then `fsync`ing the git
   * directory (a record counts only once its file's name is durable). Returns the log and the
   * records found (a clean close leaves none: one `fstat` per file). `owns` says whether this
   * instance still holds the data folder: a checkpoint empties a file only while it does (it
   * throws when it cannot tell, failing that checkpoint).
   */
  static async open(
    gitdir: string,
    owns: () => boolean = () => true,
    logger?: Logger,
  ): Promise<{
    log: ObjectLog
    records: StoredRecord[]
    mains: LoggedMain[]
    renames: LoggedRename[]
  }> {
    const opened: LogFile[] = []
    let made = false
    try {
      for (const name of LOG_FILES) {
        const file = path.join(gitdir, name)
        let fd: number
        // Appending: a record always lands past every byte already there, so an instance
        // whose lock was taken over (the second one emptied and refilled the file) cannot
        // write over the second's acknowledged records. Reads are positioned, so unaffected.
        let found = openLogFile(file)
        if (typeof found === 'number' && !disk.fstatSync(found).isFile()) {
          // A fifo, a socket or a device in the log's place (a link or a folder fails the
          // open itself): every commit's fsync of it failed (EINVAL), for good, and a read of
          // it may never end. Damage: kept aside, never read, and a fresh log started.
          closeQuietly(found)
          found = 'not-a-file'
        }
        if (found === 'not-a-file') {
          const kept = moveIntoDamaged(gitdir, file, `${name}-${Date.now()}`)
          logger?.warn(`The object log ${name} was not a file: kept aside as ${kept}`)
          found = 'missing'
        }
        if (found === 'missing') {
          fd = disk.openSync(file, OPEN.READ_WRITE_NEW | OPEN.APPEND | OPEN.NOFOLLOW, 0o600)
          made = true
        } else fd = found
        opened.push({
          file,
          fd,
          end: 0,
          records: 0,
          covered: [],
          refs: 0,
          folders: new Map(),
          sealed: 0,
          failed: false,
          emptied: 0,
        })
      }
      if (made) await syncFolder(gitdir)
      const records: StoredRecord[] = []
      const mains: LoggedMain[] = []
      const renames: LoggedRename[] = []
      const empty: LogFile[] = []
      for (const log of opened) {
        if (disk.fstatSync(log.fd).size === 0) {
          empty.push(log)
          continue
        }
        // Just opened, the descriptor reads from the start (appending moves only writes).
        const found = decodeLog(disk.readFileSync(log.fd))
        const objects = found.filter((entry) => entry.kind === 'object')
        appendAll(records, objects)
        for (const entry of found) {
          if (entry.kind === 'main') mains.push(entry)
          else if (entry.kind === 'rename') {
            const { kind: _kind, ...rename } = entry
            renames.push(rename)
          }
        }
        // Replayed, the whole file is checkpointed (every record found, whatever is after).
        log.records = Math.max(1, found.length)
        log.covered = objects.map(({ oid }) => loggedObject(gitdir, oid))
        log.refs = found.filter((entry) => entry.kind === 'main').length
      }
      // A file that reads empty may have been emptied by a checkpoint (or a close) whose
      // truncation never reached the disk: a power cut could bring its records back, their
      // sequence numbers above this run's (which start at 0 when nothing is found) and their
      // values then taken over this run's acknowledged ones. Its emptiness is made durable
      // before any record is appended: the `fsync` starts here and the first append waits for
      // it, open does not (with nothing dirty it still flushes the disk's write cache, which
      // can take tens of milliseconds while other programs write). A file that holds records
      // is emptied durably by the checkpoint that follows the replay, and this run's numbers
      // start past every value found in it.
      const log = new ObjectLog(gitdir, opened as [LogFile, LogFile], owns, logger)
      // Past every value found: a record of this run always sorts after them.
      log.seq = mains.reduce((next, { seq }) => Math.max(next, seq + 1), 0)
      log.unsyncedEmpty = empty.map(({ fd }) => fd)
      void log.emptinessDurable().catch(() => undefined)
      renames.sort((a, b) => a.seq - b.seq)
      return { log, records, mains, renames }
    } catch (error) {
      for (const { fd } of opened) closeQuietly(fd)
      throw error
    }
  }

  /**
   * True from a failed append until a checkpoint has emptied its file: the objects of that
   * batch are durable only then. (A background checkpoint may already have switched new
   * records to the other file, so the log can be usable meanwhile.)
   */
  appendFailed(): boolean {
    return !this.closed && this.files.some(({ failed }) => failed)
  }

  /**
   * False while an earlier append failed and no checkpoint has emptied its file since, or
   * while the log holds more than its cap (checkpoints failing).
   */
  usable(): boolean {
    if (this.closed || this.files[this.active].failed) return false
    const [a, b] = this.files
    return a.records + b.records < LOG_CAP_RECORDS && a.end + b.end < LOG_CAP_BYTES
  }

  /**
   * Appends one record per object (and, with `main`, a ref record of `main`'s next value last)
   * and `fsync`s the file: once this resolves, the objects survive a power cut (replayed at
   * open if their loose files did not), and so does `main`'s value (open moves `main` forward
   * to it, should the rename of the ref file, not `fsync`ed, be lost). The covered objects are
   * noted before the `fsync`, so a checkpoint starting meanwhile makes them durable before it
   * empties this file. Returns the ref record's handle, for the caller to say when the ref
   * file was renamed (or will not be).
   */
  async append(
    batch: ReadonlyArray<LoggedObject & { readonly stored: Uint8Array }>,
    main?: string | null,
    rename?: RenameIntent,
  ): Promise<LoggedRef | null> {
    // Before anything is counted or written: a failure leaves the log as it was (and the next
    // append tries again), and no checkpoint can run between choosing the file and writing.
    if (this.unsyncedEmpty.length > 0) await this.emptinessDurable()
    const log = this.files[this.active]
    let records = batch.length
    const seq = this.seq
    const refRecord = main !== undefined ? encodeRefRecord(main, this.seq++) : null
    // The rename's folder is kept for the checkpoint before the record is written (a
    // checkpoint starting during the `fsync` below then makes it durable before emptying).
    const renameLogged =
      main !== undefined && main !== null && rename !== undefined && keepFolder(log, rename.folder)
    const renameRecord = renameLogged
      ? encodeRenameRecord({ ...rename.record, commit: main, seq })
      : null
    // Each object's head and its loose file's bytes written once, straight into the batch's
    // bytes (not into a record of their own first: a flat folder's tree is 40 KB).
    let length = (refRecord?.byteLength ?? 0) + (renameRecord?.byteLength ?? 0)
    for (const { stored } of batch) length += RECORD_HEAD + stored.byteLength
    const bytes = Buffer.allocUnsafe(length)
    let at = 0
    for (const { oid, stored } of batch) at = putObjectRecord(bytes, at, oid, stored)
    for (const record of [refRecord, renameRecord]) {
      if (!record) continue
      bytes.set(record, at)
      at += record.byteLength
      records++
    }
    // Counted before anything is written: a failed append leaves its file to be checkpointed
    // (emptied) before it takes records again.
    appendAll(
      log.covered,
      batch.map(({ oid, file, dir }) => ({ oid, file, dir })),
    )
    log.records += records
    if (main !== undefined) log.refs++
    // A checkpoint yielding to commands looks again: it goes on from here at the yield bound
    // (see `YIELD_RECORDS`), once this append's bytes are counted below (no await before
    // that); one waiting in a gap between commands now waits for this one to return.
    this.wakeAll()
    const emptied = log.emptied
    const sealed = log.sealed
    try {
      let written = 0
      while (written < bytes.length) {
        written += disk.writeSync(log.fd, bytes.subarray(written))
      }
      log.end += bytes.length
      await this.onPool(() => disk.fsync(log.fd))
    } catch (error) {
      // Unless a checkpoint emptied the file meanwhile (having flushed these objects' files).
      if (log.emptied === emptied) {
        log.failed = true
        this.soon()
      }
      throw error
    }
    if (log.records >= CHECKPOINT_RECORDS || log.end >= CHECKPOINT_BYTES) this.soon()
    else this.armIdle()
    if (main === undefined) return null
    return {
      renameLogged,
      moved: async (alsoSync) => {
        if (log.sealed !== sealed) {
          await Promise.all([syncMainRef(this.gitdir), alsoSync?.()])
        }
      },
      abandoned: async (previous) => {
        // A file that failed takes no record: its checkpoint makes the ref durable (at the
        // value it keeps) before emptying it, abandoned record and all.
        if (this.closed || this.files[this.active].failed) return
        await this.append([], previous)
      },
    }
  }

  /**
   * The `fsync` of the files that read empty at open (started by open, tried again after a
   * failure by the next call): no record may be appended before it has succeeded.
   */
  private emptinessDurable(): Promise<void> {
    if (this.unsyncedEmpty.length === 0) return Promise.resolve()
    if (!this.emptySync) {
      const fds = this.unsyncedEmpty
      // Settled all before the descriptors may close (`onPool`); the first failure is thrown.
      const both = async () => {
        const failed = (await Promise.allSettled(fds.map((fd) => disk.fsync(fd)))).find(
          (outcome) => outcome.status === 'rejected',
        )
        if (failed) throw failed.reason
      }
      const syncing = this.onPool(both).then(
        () => {
          this.unsyncedEmpty = []
          this.emptySync = null
        },
        (error: unknown) => {
          this.emptySync = null
          throw error
        },
      )
      this.emptySync = syncing
    }
    return this.emptySync
  }

  /**
   * From now on a checkpoint in the background (at the record bound, or idle) yields to
   * `commands`: while one runs or waits, it starts no `fsync` and does not empty its file,
   * and goes on once the command has returned, so a command's own `fsync`s do not queue
   * behind it at the disk (what it has in flight when a command starts, two `fsync`s at
   * most, still finishes); between commands it starts them only in the first
   * `AFTER_COMMAND_MS` after one returned, or once none has run for `COMMANDS_PAUSED_MS`. A
   * checkpoint a caller waits for never yields, nor any once the log holds `YIELD_RECORDS`
   * or `YIELD_BYTES`.
   */
  yieldTo(commands: Commands | null): void {
    this.commands = commands
  }

  // Resolves once a background checkpoint may start its next `fsync` (or its emptying): no
  // command running or waiting, and the last one returned at most `AFTER_COMMAND_MS` ago or
  // at least `COMMANDS_PAUSED_MS` ago. In the gap between, it waits for the pause, or for
  // the next command (its append wakes it) to return.
  private async quiet(): Promise<void> {
    for (let wait = this.yields(); wait !== false; wait = this.yields()) {
      const commands = this.commands as Commands
      const inGap = wait
      await new Promise<void>((resolve) => {
        let timer: ReturnType<typeof setTimeout> | null = null
        const wake = () => {
          this.wakers.delete(wake)
          if (timer) clearTimeout(timer)
          resolve()
        }
        this.wakers.add(wake)
        if (inGap === true) commands.idle().then(wake, wake)
        else {
          timer = setTimeout(wake, inGap)
          timer.unref()
        }
      })
    }
  }

  // Whether a checkpoint in the background must wait: true while a command runs or waits, the
  // milliseconds left to the pause while in a gap between commands, false when it may go on.
  // It waits only while the log is far from its caps: at a quarter of either, commands would
  // soon be flushed file by file, each then paying what the log spares them. It waits in gaps
  // only below `GAP_RECORDS` and `GAP_BYTES`. (After a failed append, the next flush waits for
  // a checkpoint itself: an awaited one, which never yields.)
  private yields(): boolean | number {
    if (this.commands === null || this.awaited > 0 || this.closed) return false
    if (this.pending() >= YIELD_RECORDS || this.bytes() >= YIELD_BYTES) return false
    if (this.commands.busy()) return true
    if (this.pending() >= GAP_RECORDS || this.bytes() >= GAP_BYTES) return false
    const since = performance.now() - this.commands.lastActive()
    if (since <= AFTER_COMMAND_MS || since >= COMMANDS_PAUSED_MS) return false
    return COMMANDS_PAUSED_MS - since
  }

  // Bytes not yet checkpointed, in both files.
  private bytes(): number {
    return this.files[0].end + this.files[1].end
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers]) wake()
  }

  /** Records not yet checkpointed, in both files (tests, and the bound). */
  pending(): number {
    return this.files[0].records + this.files[1].records
  }

  /**
   * Makes every object logged so far durable and empties the log (waiting for a checkpoint in
   * progress first). Rejects if an `fsync` fails; the records then stay for the next one.
   * `durable` also `fsync`s the emptied files (at close: the next open then reads nothing).
   * `yields`: it yields to commands as a background one does (a caller that is no command).
   * `replayed`: the checkpoint after open's replay, before any command can run: every `fsync`
   * it needs goes out at once (`REPLAY_PARALLEL` in flight), not two at a time as beside
   * commands. The log is still emptied only once all are done.
   * Resolves true once each file that held records has been emptied, false when the log was
   * closed first (given up to another instance that took the data folder over: see
   * `checkpointOne`): the records of a file not emptied then had nothing made durable for them.
   */
  async checkpoint(
    options: {
      readonly durable?: boolean
      readonly yields?: boolean
      readonly replayed?: boolean
    } = {},
  ): Promise<boolean> {
    // `yields`: the caller is no command and may wait (maintenance before a pass).
    if (options.yields) return this.drain(options)
    this.awaited++
    this.wakeAll()
    try {
      return await this.drain(options)
    } finally {
      this.awaited--
    }
  }

  // Empties the files that hold records now (see `checkpoint`): awaited by a caller, or, at
  // an idle moment, in the background (then yielding to commands).
  private async drain(
    options: { readonly durable?: boolean; readonly replayed?: boolean } = {},
  ): Promise<boolean> {
    // Each file holding records now is emptied once (two rounds at most); records appended
    // meanwhile go to the other file and wait for the next checkpoint.
    const waiting = this.files
      .filter((file) => file.records > 0)
      .map((file) => ({ file, emptied: file.emptied }))
    for (let round = 0; round < 3 && !this.closed; round++) {
      if (waiting.every(({ file, emptied }) => file.emptied !== emptied)) break
      await this.round(undefined, options.replayed === true)
    }
    if (options.durable && !this.closed) {
      await Promise.all(this.files.map(({ fd }) => this.onPool(() => disk.fsync(fd))))
    }
    return waiting.every(({ file, emptied }) => file.emptied !== emptied)
  }

  /**
   * Stops the idle timer and closes the files (their records stay for the next open); with a
   * call on their descriptors in flight, once it is done.
   */
  close(): void {
    this.closed = true
    this.wakeAll()
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
    this.closeFiles()
  }

  private closeFiles(): void {
    if (this.inFlight > 0 || this.filesClosed) return
    this.filesClosed = true
    for (const file of this.files) {
      closeQuietly(file.fd)
      // Their records stay: the next open makes the folders durable (or redoes a rename).
      releaseFolders(file)
    }
  }

  // Runs `call` (which uses the log's descriptors off the main thread) with them kept open.
  private async onPool<T>(call: () => Promise<T>): Promise<T> {
    this.inFlight++
    try {
      return await call()
    } finally {
      this.inFlight--
      if (this.closed) this.closeFiles()
    }
  }

  // A checkpoint in the background: a failure leaves the records for the next trigger (and, at
  // worst, for open to replay). At most one waits to start; after a failure, none starts
  // before the retry timer.
  private soon(): void {
    if (this.retryMs > 0) return this.armIdle()
    if (this.queued) return
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
    this.queued = true
    this.round(() => (this.queued = false)).catch(() => undefined)
  }

  // The idle checkpoint, pushed back by each append; after a failure, the retry, which appends
  // do not push back (it would never come while commands keep arriving).
  private armIdle(): void {
    if (this.idleTimer) {
      if (this.retryMs > 0) return
      clearTimeout(this.idleTimer)
    }
    this.idleTimer = setTimeout(
      () => {
        this.idleTimer = null
        this.drain().catch(() => undefined)
      },
      this.retryMs > 0 ? this.retryMs : CHECKPOINT_IDLE_MS,
    )
    this.idleTimer.unref()
  }

  // A round's outcome: a success ends any back-off; a failure doubles it, is reported once
  // (the error, for the app's log: never shown in the window) and arms the retry.
  private settled(error: unknown): void {
    if (error === null) {
      this.retryMs = 0
      this.warned = false
      return
    }
    this.retryMs = Math.min(
      this.retryMs > 0 ? this.retryMs * 2 : CHECKPOINT_IDLE_MS,
      CHECKPOINT_RETRY_MAX_MS,
    )
    if (!this.warned) {
      this.warned = true
      this.logger?.warn('The history log could not be checkpointed; it is tried again later', error)
    }
    if (this.closed) return
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = null
    this.armIdle()
  }

  // One checkpoint at a time: after any in progress, one more (`started` once it begins).
  // `replayed`: open's, with nothing else on the thread pool (see `checkpoint`).
  private round(started?: () => void, replayed = false): Promise<void> {
    const previous = this.running ?? Promise.resolve()
    const next = previous
      .catch(() => undefined)
      .then(() => {
        started?.()
        return this.checkpointOne(replayed)
      })
      .then(
        () => this.settled(null),
        (error: unknown) => {
          this.settled(error ?? new Error('checkpoint failed'))
          throw error
        },
      )
    this.running = next
    const done = () => {
      if (this.running === next) this.running = null
    }
    void next.then(done, done)
    return next
  }

  // Empties one file: the inactive one if an earlier checkpoint failed on it, else the active
  // one, after switching new records to the other (empty: the last checkpoint emptied it).
  private async checkpointOne(replayed = false): Promise<void> {
    if (this.closed) return
    const inactive = 1 - this.active
    let target = this.files[inactive]
    if (target.records === 0) {
      if (this.files[this.active].records === 0) return
      target = this.files[this.active]
      this.active = inactive
    }
    // What its records need durable before they go, in this order: each object's loose file
    // and its folder; `objects/` (a folder made for one of them, or by maintenance, must be a
    // durable name too); with ref records, the ref file, renamed but never `fsync`ed (an
    // emptied log and a lost rename would lose an acknowledged commit), and the memory folders
    // of its logged renames (their commit's ref record is in this file too).
    const syncs: Array<() => Promise<void>> = [
      ...[...new Set(target.covered.map(({ file }) => file))].map(
        (file) => () => syncFileIfThere(file),
      ),
      ...[...new Set(target.covered.map(({ dir }) => dir))].map(
        (dir) => () => syncFolderIfThere(dir),
      ),
      () => syncFolder(path.join(this.gitdir, 'objects')),
    ]
    if (target.refs > 0) {
      // `syncMainRef`'s two, each an `fsync` of its own in the list.
      const heads = path.join(this.gitdir, 'refs', 'heads')
      syncs.push(
        // Sealed as the ref's first `fsync` starts (the list starts in order): a ref renamed
        // after this point is made durable by its commit (`LoggedRef.moved`), and so is a
        // rename's folder.
        () => {
          target.sealed++
          return syncFileIfThere(path.join(heads, 'main'))
        },
        () => syncFolderIfThere(heads),
        ...[...target.folders.values()].map((fd) => () => this.onPool(() => disk.fsync(fd))),
      )
    }
    await this.syncAll(syncs, replayed ? AFTER_REPLAY : BESIDE_COMMANDS)
    // Emptied at a quiet moment too: freeing the blocks makes the disk discard them.
    await this.quiet()
    // Closed meanwhile, its descriptor may already name another file: never touched then.
    if (this.closed) return
    // Another instance took the data folder over (its lock removed by hand): the files are its
    // now, holding records of its own commits, and this one leaves them alone for good. (When
    // the lock cannot be read, `owns` throws: the round fails and is tried again later.)
    if (!this.owns()) {
      this.close()
      return
    }
    // Not fsynced: should the emptying not reach the disk, its records name durable objects,
    // which a replay finds intact; appends after it are fsynced with the new length. On the
    // thread pool: freeing the blocks may wait for the disk's discard (docs/durability.md).
    // No append reaches this file meanwhile (new records go to the other one).
    await this.onPool(() => disk.ftruncate(target.fd, 0))
    target.end = 0
    target.records = 0
    target.covered = []
    target.refs = 0
    releaseFolders(target)
    target.failed = false
    target.emptied++
    // A failed append in the file that takes records now: emptied too (after switching).
    if (this.files[this.active].failed) await this.checkpointOne(replayed)
  }

  // Runs `syncs` (the `fsync`s a checkpoint needs before it empties its file) as `policy`
  // says; the first failure is thrown once all that started have settled. Closed meanwhile,
  // it starts no more: the file is not emptied then, and the kept folders' descriptors may
  // already be closed (their numbers given to other files).
  private async syncAll(
    syncs: ReadonlyArray<() => Promise<void>>,
    policy: SyncPolicy,
  ): Promise<void> {
    let next = 0
    let failure: unknown = null
    const worker = async () => {
      while (next < syncs.length) {
        if (policy.yields) await this.quiet()
        if (this.closed || next >= syncs.length) break
        const sync = syncs[next++]!
        try {
          await sync()
        } catch (error) {
          failure ??= error ?? new Error('fsync failed')
        }
      }
    }
    await Promise.all(Array.from({ length: policy.width }, worker))
    if (failure !== null) throw failure
  }
}

/**
 * `fsync`s `refs/heads/main` (opened again by name, when there is one) and `refs/heads/`: the
 * last rename of the ref, and its content, are durable once this resolves.
 */
export async function syncMainRef(gitdir: string): Promise<void> {
  const dir = path.join(gitdir, 'refs', 'heads')
  await Promise.all([syncFileIfThere(path.join(dir, 'main')), syncFolderIfThere(dir)])
}

/** A rename to log with a commit's batch, and its folder (see `LoggedRename`). */
export interface RenameIntent {
  readonly record: Omit<LoggedRename, 'commit' | 'seq'>
  readonly folder: KeptFolder
}

// Keeps the rename's folder for `log`'s checkpoint (one descriptor per folder); false when it
// cannot (too many kept, or its descriptor would not open): the rename is then not logged.
function keepFolder(log: LogFile, folder: KeptFolder): boolean {
  if (log.folders.has(folder.key)) return true
  if (log.folders.size >= MAX_KEPT_FOLDERS) return false
  const fd = folder.open()
  if (fd === null) return false
  log.folders.set(folder.key, fd)
  return true
}

function releaseFolders(log: LogFile): void {
  for (const fd of log.folders.values()) closeQuietly(fd)
  log.folders = new Map()
}

/** Where the loose file of `oid` is, for a record read back. */
function loggedObject(gitdir: string, oid: string): LoggedObject {
  const dir = path.join(gitdir, 'objects', oid.slice(0, 2))
  return { oid, dir, file: path.join(dir, oid.slice(2)) }
}

// Opened again by name: a loose file's data is `fsync`ed through any descriptor. Gone means
// maintenance packed it (its pack was durable before it removed the file).
async function syncFileIfThere(file: string): Promise<void> {
  let fd: number
  try {
    fd = disk.openSync(file, OPEN.READ | OPEN.NOFOLLOW)
  } catch (error) {
    if (isMissing(error)) return
    throw error
  }
  try {
    await disk.fsync(fd)
  } finally {
    closeQuietly(fd)
  }
}

// An object folder maintenance emptied and removed holds nothing left to make durable.
async function syncFolderIfThere(dir: string): Promise<void> {
  try {
    await syncFolder(dir)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}
