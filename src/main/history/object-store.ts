import { hash as oneShotHash, randomBytes } from 'node:crypto'
import type { Stats } from 'node:fs'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import {
  closeQuietly,
  disk,
  exists,
  isCode,
  makeFolders,
  OPEN,
  readPlainFile,
  syncFolder,
  unlinkQuietly,
} from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { isDiskProblem } from '../lib/disk-errors'
import type { Logger } from '../lib/logger'
import type { Person } from './commit-message'
import { DamagedHistoryError, entryNameProblem, wrongKindDetail } from './damage'
import {
  DamagedObjectError,
  hashObject,
  isFormatError,
  MissingObjectError,
  ObjectDatabase,
} from './objects/object-database'
import { readMainRef } from './main-ref'
import { ancestorsThroughLog, mainAfterReplay } from './objects/logged-main'
import {
  MAX_LOGGED_BYTES,
  MAX_LOGGED_OBJECTS,
  ObjectLog,
  type Commands,
  type LoggedRef,
  type LoggedRename,
  type RenameIntent,
  type StoredRecord,
} from './objects/object-log'
import { moveIntoDamaged } from './objects/damaged-folder'
import { adler32 } from './objects/stored-zlib'
import { entryNameAt, treeModeAt } from './objects/tree-entry'

/** One entry of a git tree as Cairn stores it: regular files and directories only. */
export interface RawTreeEntry {
  readonly name: string
  readonly kind: 'blob' | 'tree'
  readonly oid: string
  /**
   * `100644` / `100755` for files, `40000` for directories (`120000` for a link and `160000`
   * for a submodule only from `readForeignTree`).
   */
  readonly mode: string
}

export interface RawCommit {
  readonly oid: string
  readonly tree: string
  /** The first parent (the history this commit continued); null for a root commit. */
  readonly parent: string | null
  /** Every parent in order: more than one for a merge commit. */
  readonly parents: ReadonlyArray<string>
  /** Who wrote it and who committed it, as git records them (Cairn writes one identity twice). */
  readonly author: Person
  readonly committer: Person
  /** Seconds since the epoch, as git stores it. */
  readonly timestamp: number
  readonly message: string
}

export type ObjectType = 'blob' | 'tree' | 'commit'

/**
 * Reads and writes the objects of one bare repository, through the disk seam.
 *
 * Reads go through the object database (loose files and packs, read by index lookup and
 * positioned reads, never whole; every object checked against its id). Anything that is
 * missing, does not inflate, does not hash to its id or does not parse is reported as a
 * `DamagedHistoryError` (never as an internal error); an I/O error (full disk, EIO, EACCES,
 * EMFILE) is passed on as it is, never taken for damage.
 *
 * Writes produce git's loose object format directly: hash, deflate, temp file, rename — so a
 * crash never leaves a half-written object under its final name, and no tree is rebuilt that
 * did not change. Writing an object again renames the same bytes over a damaged loose copy.
 * Written objects are made durable by `flush`, which the caller runs before the ref that makes
 * them reachable moves: a commit's few objects by one record each in the write-ahead log (see
 * objects/object-log.ts; their files and folders are `fsync`ed later, at a checkpoint), a
 * larger batch file by file with their folders. Background maintenance later moves loose
 * objects into packs.
 */
export interface ObjectStore {
  readonly gitdir: string
  readonly db: ObjectDatabase
  hash(type: ObjectType, content: Uint8Array): string
  /**
   * Writes an object as a loose file. `stored`, when given, is that file's bytes as
   * `storedObject(type, content)` makes them (the caller kept and patched them: a tree's next
   * version, see tree-state.ts), taken as they are; without `knownOid` its id is hashed from
   * `stored`, which must hold exactly `type` and `content`.
   */
  write(type: ObjectType, content: Uint8Array, knownOid?: string, stored?: Buffer): Promise<string>
  /**
   * Makes every object written since the last flush durable: a small batch by appending it to
   * the write-ahead log (once `openLog` has run), a larger one by `fsync`ing each file and
   * their folders. With `main` (a commit's flush), `main`'s next value is appended to the log
   * with the batch, and its handle returned: the ref file then needs no `fsync` (the caller
   * renames it and calls `moved`, or `abandoned`). Null when it was not logged: the caller
   * makes the ref durable itself.
   */
  flush(main?: string, rename?: RenameIntent): Promise<LoggedRef | null>
  /**
   * Whether a flush now would log `main` with the objects written so far (see `flush`): the
   * caller then does not `fsync` the ref's temp file alongside. A guess the flush may belie
   * (it returns null then, and the caller flushes the ref after it).
   */
  logsMain(): boolean
  /**
   * Opens the write-ahead log (making its files on first use) and replays what it holds:
   * objects whose loose file a power cut lost or damaged are written again, `main` is moved
   * forward to the newest value logged (never back nor aside: see `logged-main.ts`), then
   * every object it names and the ref are made durable and the log emptied. Runs at open,
   * before anything reads objects or refs.
   */
  openLog(options?: {
    readonly owns?: () => boolean
    readonly logger?: Logger
    /**
     * Called after `main` moved forward, before the log is emptied, with the logged renames
     * of the commits `main` now reaches (oldest first): it redoes the ones a power cut lost
     * and makes their folders durable (see `redo-renames.ts`).
     */
    readonly redo?: (renames: ReadonlyArray<LoggedRename>) => Promise<void>
  }): Promise<void>
  /**
   * Makes every logged object durable and empties the log (before maintenance, at close);
   * `yields`: yielding to commands meanwhile, as a background checkpoint does (see
   * `yieldCheckpointsTo`). False when the log was given up (closed) before it was emptied:
   * another instance took the data folder over (`ObjectLog.checkpoint`); true otherwise.
   */
  checkpoint(options?: { readonly durable?: boolean; readonly yields?: boolean }): Promise<boolean>
  /**
   * The log's checkpoints in the background yield to `commands` from now on (the history's
   * serial queue): no checkpoint `fsync` starts while a command runs (`ObjectLog.yieldTo`).
   */
  yieldCheckpointsTo(commands: Commands): void
  /** True when the object `oid` can be read and holds what its id says. */
  isIntact(oid: string): Promise<boolean>
  /**
   * `oid`'s loose file as one `lstat` sees it (its size, inode and times: a stamp to compare
   * with the one recorded when it was last read whole), or null when it has none.
   */
  looseStat(oid: string): Stats | null
  /** A tree of this history: an entry Cairn would never write is damage. */
  readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
  /** A tree's entries with its bytes, and where each id sits when it is in canonical form. */
  readTreeEncoded(oid: string): Promise<EncodedTree>
  /**
   * A tree as it is stored, for content from elsewhere (sync) that its reader judges itself:
   * links and submodules come as `blob` entries with their own mode (`120000`, `160000`),
   * and names are not checked (only that they are UTF-8).
   */
  readForeignTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
  readBlob(oid: string): Promise<Uint8Array>
  /**
   * A blob's size from its stored header, without reading its content (see
   * `ObjectDatabase.sizeOf`): for listings of sizes. Missing: a `DamagedHistoryError`.
   */
  blobSize(oid: string): number
  /**
   * Sizes of the blobs `oids`, each checked (see `ObjectDatabase.checkedBlobSizes`): null for
   * one missing, damaged or not a blob. For "Memory at this reply", which marks those.
   */
  checkedBlobSizes(oids: ReadonlyArray<string>): Map<string, number | null>
  readCommit(oid: string): Promise<RawCommit>
  /** An object's stored content (what its id hashes, without the header), checked for `type`. */
  readRaw(oid: string, type: ObjectType): Promise<Uint8Array>
  /** Loose objects written through this store since it opened (maintenance's trigger). */
  looseWritten(): number
  /** Releases the open pack files and the log's files (its records stay for the next open). */
  close(): void
}

/**
 * Most parsed commits kept in memory; past it the cache starts over (a commit costs a few
 * hundred bytes, so this bounds it to a few MB while a timeline page stays warm).
 */
export const COMMIT_CACHE_SIZE = 10_000

/**
 * How long after the history's queue exists a packed history's missing object folders start
 * being made (see `makeMissingFolders`): past open's own work and its first questions.
 */
export const FOLDERS_AFTER_OPEN_MS = 200

/**
 * Spare files kept ready for objects' writes (see `makeSpares`): a nested commit writes 5, and
 * commands queued back to back (several in one message of Claude's) leave no moment between
 * them to make more, so there are enough for three such commits (stop 33).
 */
export const SPARE_FILES = 16
/** The names of spare files in objects/ (a `tmp_` name, which git leaves alone). */
export const SPARE_PREFIX = 'tmp_spare_'
const SPARE_RETRY_MS = 5

// More written objects than this are flushed at once, so a large restore never holds
// thousands of descriptors open.
const MAX_UNFLUSHED = 64

/**
 * Objects up to this size (with their header; one stored block, as zlib writes them up to
 * 65,531 bytes, so the bytes stay exactly zlib's) are framed as zlib's stored
 * blocks here (`storedZlib`); larger ones by zlib itself at level 0 (its Adler-32 is faster on
 * long inputs: 120 KB took 0.08 ms in zlib against 0.13 by hand, load 22). Up to 64 KB the set-up
 * of zlib's stream costs more: a 40 KB tree (a flat folder of 1,000 files, rewritten by every
 * commit there) took 0.18 ms at level 0 against 0.05 ms framed here (stop 14).
 */
const STORED_BY_HAND = 0xff00

/**
 * `head` then `body` as a zlib stream of one stored (uncompressed) deflate block, as
 * `deflateSync(…, { level: 0 })` makes it: the 2-byte header, the block (final bit, its length
 * and that length's complement), the bytes, and their Adler-32. At most 65,535 bytes.
 */
export function storedZlib(head: Uint8Array, body: Uint8Array): Buffer {
  const length = head.byteLength + body.byteLength
  if (length > 0xffff) throw new Error('too long for one stored block')
  const out = Buffer.allocUnsafe(2 + 5 + length + 4)
  out[0] = 0x78
  out[1] = 0x01
  out[2] = 1
  out.writeUInt16LE(length, 3)
  out.writeUInt16LE(~length & 0xffff, 5)
  out.set(head, 7)
  out.set(body, 7 + head.byteLength)
  out.writeUInt32BE(adler32(out.subarray(7, 7 + length)), 7 + length)
  return out
}

/**
 * The bytes of the loose file of an object of `type` holding `content`, framed here as one
 * stored block (`storedZlib`), or null when it is too large for that (`write` compresses it
 * with zlib at level 0). The header and `content` start at `STORED_DATA_AT`.
 */
export function storedObject(type: ObjectType, content: Uint8Array): Buffer | null {
  const header = Buffer.from(`${type} ${content.byteLength}\0`)
  if (header.byteLength + content.byteLength > STORED_BY_HAND) return null
  return storedZlib(header, content)
}

/** Where a stored block's data (the object's header, then its content) starts in it. */
export const STORED_DATA_AT = 7

/** The id of the object a `storedZlib` block holds: the SHA-1 of its data, in one call. */
export function storedId(stored: Buffer): string {
  return oneShotHash('sha1', stored.subarray(STORED_DATA_AT, stored.byteLength - 4), 'hex')
}

const ADLER_BASE = 65521

function modAdler(n: number): number {
  const r = n % ADLER_BASE
  return r < 0 ? r + ADLER_BASE : r
}

/**
 * `stored` (a `storedZlib` block) with `fresh` written over its data at `at` (an offset in the
 * data, as `STORED_DATA_AT` counts it), its Adler-32 brought up to date from the bytes that
 * changed alone: each data byte counts once in the checksum's first sum and, in its second,
 * as many times as there are bytes from it to the end. A 40 KB tree whose one id changed is
 * not summed again whole (stop 15).
 */
export function patchStored(stored: Buffer, at: number, fresh: Uint8Array): void {
  const length = stored.byteLength - STORED_DATA_AT - 4
  if (at < 0 || at + fresh.byteLength > length) throw new Error('patch outside the block')
  let da = 0
  let db = 0
  for (let k = 0; k < fresh.byteLength; k++) {
    const offset = STORED_DATA_AT + at + k
    const change = fresh[k]! - stored[offset]!
    if (change === 0) continue
    stored[offset] = fresh[k]!
    da += change
    db += change * (length - at - k)
  }
  if (da === 0 && db === 0) return
  const end = STORED_DATA_AT + length
  const sums = stored.readUInt32BE(end)
  const a = modAdler((sums & 0xffff) + da)
  const b = modAdler((sums >>> 16) + (db % ADLER_BASE))
  stored.writeUInt32BE(((b << 16) | a) >>> 0, end)
}

/** Opens the object store of `gitdir` (which must exist). */
export function createObjectStore(gitdir: string): ObjectStore {
  const db = new ObjectDatabase(gitdir)
  // Joined once: an object's folder and file names are made from it by concatenation (as
  // `path.join` would make them: it is normalized, and the rest are plain names).
  const objectsDir = path.join(gitdir, 'objects')
  const commits = new Map<string, RawCommit>()
  let written = 0
  // Written objects not yet fsynced (nor their folders). Their fsyncs all start in `flush`,
  // after the commit's last object is written: an fsync started while the next objects are
  // still being created commits the journal for itself alone, makes those creations wait for
  // it, and leaves them to another journal commit (measured: a round of 5 ms instead of 1).
  let unflushed: Array<{
    readonly fd: number
    readonly oid: string
    readonly file: string
    readonly dir: string
    readonly stored: Buffer
  }> = []
  let log: ObjectLog | null = null
  // What the log's background checkpoints yield to, once the history's queue exists.
  let commands: Commands | null = null
  // Object folders made since the last flush: objects/ itself must be synced for them.
  let newDirs = false
  // Object folders known to be there: listed at the first write (one `readdir` of objects/),
  // then each one this store makes. Not asked for one by one: a `mkdir` answering EEXIST, with
  // the error node makes of it, cost more than the listing of all 256 (stop 15). One removed
  // since is made again when its file cannot be created.
  let knownDirs: Set<string> | null = null
  function listedDirs(): Set<string> {
    if (!knownDirs) {
      knownDirs = new Set()
      try {
        // Real folders only: a link in a folder's place (to a folder outside, say) is never
        // written through; its first write moves it aside (`makeObjectDir`, probe32b). Another
        // instance's spare files (see `makeSpares`), which a kill or a power cut left, are
        // removed: this store has made none yet (it makes them after its first write).
        for (const dirent of disk.readdirSync(objectsDir)) {
          if (dirent.name.startsWith(SPARE_PREFIX))
            unlinkQuietly(path.join(objectsDir, dirent.name))
          else if (dirent.isDirectory()) knownDirs.add(path.join(objectsDir, dirent.name))
        }
      } catch {
        // Each folder is then asked for by its `mkdir`, as before any listing.
      }
    }
    return knownDirs
  }
  function knowsDir(dir: string): boolean {
    return listedDirs().has(dir)
  }

  // The object folders missing from a packed history (`git gc` and a clone remove the ones
  // they empty; Cairn's own passes keep theirs): made once, between commands, so that the
  // commands after do not make them one by one on their path (a `mkdir` in most of the first
  // few hundred commands; stop 30). One synchronous `mkdir` a step, each its own turn of the
  // event loop, none while a command runs or waits: a command that arrives meanwhile waits for
  // one `mkdir` at most, and none is in flight when the store closes (a step after the close
  // makes nothing), so the close has nothing to wait for. A folder made here is as durable as
  // one a command makes: `objects/` is fsynced by the next flush file by file or checkpoint,
  // and until then an object written into it is in the log, which open writes again, folder
  // and all. A history without a pack fills its folders as it grows: nothing made for it.
  let closed = false
  let makingFolders = false
  function makeMissingFolders(queue: Commands): void {
    if (makingFolders || db.packs().length === 0) return
    makingFolders = true
    // Listed in the first step, not at open: the listing of objects/ is open's no more.
    let missing: string[] | null = null
    const step = (): void => {
      if (closed) return
      if (queue.busy()) {
        queue.idle().then(later, later)
        return
      }
      const known = listedDirs()
      if (missing === null) {
        missing = []
        for (let i = 0; i < 256; i++) {
          const dir = `${objectsDir}${path.sep}${i.toString(16).padStart(2, '0')}`
          if (!known.has(dir)) missing.push(dir)
        }
      }
      const dir = missing.pop()
      if (dir === undefined) return
      if (!known.has(dir)) {
        try {
          disk.mkdirSync(dir, 0o755)
          newDirs = true
        } catch (error) {
          // Made meanwhile (maintenance's renewal, a command): known once it is a real folder
          // (anything else there, a link, is its writer's to move aside). Anything else (objects/
          // gone, a full disk, a refusal) ends the making quietly: a writer makes its folder
          // when it needs it, and says why when it cannot.
          if (!isCode(error, 'EEXIST')) return
          if (!disk.lstatIfThere(dir)?.isDirectory()) return later()
        }
        known.add(dir)
      }
      later()
    }
    function later(): void {
      // Referenced: Node runs an unreferenced immediate only when something else wakes the
      // loop (it then blocks in its poll for I/O), so an idle app made one folder per timer
      // or file event, not one a turn. At most 256 turns of a few microseconds each, the
      // last one after the close making nothing.
      setImmediate(step)
    }
    // Not in open's own stretch: the first step once the history has been idle a moment.
    setTimeout(step, FOLDERS_AFTER_OPEN_MS).unref()
  }

  function hash(type: ObjectType, content: Uint8Array): string {
    return hashObject(type, content)
  }

  // Synchronous writes on purpose: a handful of small writes per commit, and going through
  // the thread pool for each costs more than the writes themselves. Only the fsyncs are not.
  async function write(
    type: ObjectType,
    content: Uint8Array,
    knownOid?: string,
    stored?: Buffer,
  ): Promise<string> {
    // Framed first when it is to be framed here: the id is then hashed from the frame's data
    // (the object's header and content, once, with no header buffer of its own), and the same
    // bytes go to the loose file and the log batch.
    let data = stored ?? (knownOid === undefined ? storedObject(type, content) : null)
    const oid = knownOid ?? (data ? storedId(data) : hash(type, content))
    const dir = `${objectsDir}${path.sep}${oid.slice(0, 2)}`
    const file = `${dir}${path.sep}${oid.slice(2)}`
    // No read of a loose copy: a commit's trees and commit are always new, and writing an
    // object again only renames the same bytes over it (mending a damaged copy as it goes).
    // A packed one is whole (its pack is checked), unless a damaged loose copy sits beside it
    // or reading the packed copy failed its check (then the loose copy is what reads take).
    if (db.inPack(oid) && !db.packedCopyDamaged(oid) && !exists(file)) return oid
    // Loose objects are short-lived (maintenance packs them, compressing properly), so they
    // are stored rather than compressed: a 40 KB tree costs 60 µs instead of 500. One up to 64 KB
    // is framed here, without zlib, whose set-up per call cost more than the framing.
    // (Without `knownOid` the object was framed above if it could be: not again.)
    data ??=
      (knownOid === undefined ? null : storedObject(type, content)) ??
      deflateSync(Buffer.concat([Buffer.from(`${type} ${content.byteLength}\0`), content]), {
        level: 0,
      })
    if (!knowsDir(dir)) {
      makeObjectDir(dir)
      knownDirs!.add(dir)
    }
    const fd = writeThroughSpare(data, file) ?? writeThroughTemp(data, oid, dir, file)
    written++
    unflushed.push({ fd, oid, file, dir, stored: data })
    if (unflushed.length >= MAX_UNFLUSHED) await flush()
    return oid
  }

  // An object's bytes in a spare file, renamed to `file`: its descriptor, or null when there
  // is no spare or it failed (its folder gone, the spare's name removed by `git prune`, a
  // write refused, its name no longer that file), the spare then dropped and the write left
  // to `writeThroughTemp`, which says what is wrong if anything still is.
  function writeThroughSpare(data: Buffer, file: string): number | null {
    const spare = spares.pop()
    makeSpares()
    if (!spare) return null
    try {
      disk.writeFileSync(spare.fd, data)
      // The bytes went through the descriptor, the rename takes the name: a spare waits in
      // objects/ for minutes (a temp file for one call), long enough for another process to
      // put a link or another file under its name, or to write through it. Only the file
      // written, holding exactly the object, is renamed into place.
      // (The spare's inode was taken when it was made, off the command's path: one `lstat`
      // here tells both whether the name is still that file and whether it holds exactly the
      // object's bytes.)
      const named = disk.lstatSync(spare.file)
      if (named.ino !== spare.ino || named.dev !== spare.dev || named.size !== data.length) {
        throw new Error('spare file replaced')
      }
      // Renamed over a damaged file of the same name, if there is one.
      disk.renameSync(spare.file, file)
      return spare.fd
    } catch {
      closeQuietly(spare.fd)
      unlinkQuietly(spare.file)
      // The others are dropped too, made again between commands: what failed this one most
      // often took them all (`git prune` removes every `tmp_` file in objects/), and one kept
      // whose name is gone would fail its write in turn, and keep a spare from being made.
      dropSpares()
      return null
    }
  }

  function writeThroughTemp(data: Buffer, oid: string, dir: string, file: string): number {
    const temp = `${dir}${path.sep}tmp_obj_${tempSuffix()}`
    let fd: number | null = null
    try {
      try {
        fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o444)
      } catch (error) {
        // Gone: maintenance replaced it (killed between its rmdir and mkdir), or someone
        // removed it. Make it again.
        if (!isCode(error, 'ENOENT')) throw error
        makeObjectDir(dir)
        fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o444)
      }
      disk.writeFileSync(fd, data)
      // Renamed over a damaged file of the same name, if there is one.
      try {
        disk.renameSync(temp, file)
      } catch (error) {
        // A folder in its place, which no rename replaces: kept aside in cairn-damaged/, then
        // the object put there, or every open failed on it as "unexpected" (probe32b).
        if (!isCode(error, 'EISDIR') && !isCode(error, 'ENOTEMPTY')) throw error
        moveIntoDamaged(gitdir, file, `object-${oid}-${Date.now()}`)
        disk.renameSync(temp, file)
      }
      return fd
    } catch (error) {
      if (fd !== null) closeQuietly(fd)
      unlinkQuietly(temp)
      throw error
    }
  }

  // Spare files: empty files in objects/, made between commands, each kept open, that an
  // object's write fills and renames into its folder instead of creating its temp file on the
  // command's path. Creating a file is the costly step of an object's write on this disk (ext4
  // walks the inodes freed in the last minute for each new one, stop 28): 0.7 ms of CPU a
  // command at 1,000 flat files at load 16 (stop 32). Made only once the store has written
  // (a history that is only read makes none), one a turn of the event loop and none while a
  // command runs or waits, as `makeMissingFolders` does, and removed at close. One a kill left
  // is an empty `tmp_spare_` file in objects/, which git ignores (and `git prune` removes two
  // weeks on, as any `tmp_` file there) and this store removes at its first write, when it
  // lists objects/ (`listedDirs`).
  const spares: Array<{
    readonly fd: number
    readonly file: string
    readonly ino: number
    readonly dev: number
  }> = []
  let makingSpares = false
  function makeSpares(): void {
    if (makingSpares || closed || spares.length >= SPARE_FILES) return
    makingSpares = true
    const step = (): void => {
      if (closed || spares.length >= SPARE_FILES) {
        makingSpares = false
        return
      }
      // Looked at again a moment later, not on the queue's `idle()`: a command's write is
      // what starts the making, so the queue is nearly always busy at the first step.
      if (commands?.busy()) {
        setTimeout(step, SPARE_RETRY_MS).unref()
        return
      }
      const file = `${objectsDir}${path.sep}${SPARE_PREFIX}${tempSuffix()}`
      let fd: number | null = null
      try {
        fd = disk.openSync(file, OPEN.WRITE_NEW, 0o444)
        const { ino, dev } = disk.fstatSync(fd)
        spares.push({ fd, file, ino, dev })
      } catch {
        // A full disk, objects/ gone or refused: writes create their temp files as before,
        // and the next write tries again.
        if (fd !== null) {
          closeQuietly(fd)
          unlinkQuietly(file)
        }
        makingSpares = false
        return
      }
      later()
    }
    function later(): void {
      setImmediate(step)
    }
    later()
  }

  function dropSpares(): void {
    for (const spare of spares.splice(0)) {
      closeQuietly(spare.fd)
      unlinkQuietly(spare.file)
    }
  }

  function makeObjectDir(dir: string): void {
    try {
      disk.mkdirSync(dir, 0o755)
      newDirs = true
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
      // Something Cairn never makes in a folder's place (a link to a folder outside, a file):
      // kept aside in cairn-damaged/, never written through, and the folder made (probe32b).
      if (disk.lstatIfThere(dir)?.isDirectory() ?? true) return
      moveIntoDamaged(gitdir, dir, `objects-${path.basename(dir)}-${Date.now()}`)
      disk.mkdirSync(dir, 0o755)
      newDirs = true
    }
  }

  function fitsLog(pending: ReadonlyArray<{ readonly stored: Buffer }>): boolean {
    let bytes = 0
    for (const { stored } of pending) bytes += stored.byteLength
    return pending.length <= MAX_LOGGED_OBJECTS && bytes <= MAX_LOGGED_BYTES
  }

  function logsMain(): boolean {
    return (
      log !== null &&
      unflushed.length > 0 &&
      !log.appendFailed() &&
      log.usable() &&
      fitsLog(unflushed)
    )
  }

  async function flush(main?: string, rename?: RenameIntent): Promise<LoggedRef | null> {
    const pending = unflushed
    unflushed = []
    if (pending.length === 0) return null
    // An append failed since the last checkpoint: its batch's objects (of a commit acknowledged
    // or owed) are made durable first, since this batch may not write them again (a blob the
    // stat cache knows is not), and its ref may name them. Failing, this flush fails too.
    if (log?.appendFailed()) {
      try {
        await log.checkpoint()
      } catch (error) {
        for (const { fd } of pending) closeQuietly(fd)
        throw error
      }
    }
    if (log?.usable() && fitsLog(pending)) {
      // Their files are closed unsynced: the checkpoint opens them again by name.
      for (const { fd } of pending) closeQuietly(fd)
      return await log.append(pending, main, rename)
    }
    await flushFiles(pending)
    return null
  }

  // Files and folders are fsynced all at once: the order among them does not matter, only
  // that all are done before the ref moves.
  async function flushFiles(pending: ReadonlyArray<{ fd: number; dir: string }>): Promise<void> {
    const dirs = new Set(pending.map(({ dir }) => dir))
    if (newDirs || db.foldersUnsynced) dirs.add(path.join(gitdir, 'objects'))
    newDirs = false
    try {
      const [failures] = await Promise.all([
        Promise.all(
          pending.map(({ fd }) =>
            disk.fsync(fd).then(
              () => null,
              (error: unknown) => error ?? new Error('fsync failed'),
            ),
          ),
        ),
        Promise.all([...dirs].map((dir) => syncDir(dir))),
      ])
      const failure = failures.find((result) => result !== null)
      if (failure) throw failure
    } finally {
      for (const { fd } of pending) closeQuietly(fd)
    }
  }

  async function openLog(
    options: {
      readonly owns?: () => boolean
      readonly logger?: Logger
      readonly redo?: (renames: ReadonlyArray<LoggedRename>) => Promise<void>
    } = {},
  ): Promise<void> {
    // Windows cannot fsync a read-only file through a new descriptor: every batch is
    // flushed file by file there.
    if (log || process.platform === 'win32') return
    const opened = await ObjectLog.open(gitdir, options.owns, options.logger)
    const { records, mains, renames } = opened
    try {
      // Written again, where the loose file is missing, cut short or not what its id says;
      // then made durable one by one (the log is not in use yet).
      for (const record of records) {
        if (record.type === 'tag') continue
        if (needsReplay(record)) await write(record.type, record.content, record.oid)
      }
      await flush()
      // Every commit `main` names is now whole and durable: `main` can move to the newest
      // logged value, should the power cut have lost (or undone) its ref file's rename.
      // A ref naming no intact object (its in-place write torn by the power cut: part of each
      // id) is no value: moved forward like an empty or garbage one, never left to the search.
      const read = readMainFile(gitdir)
      const current = read !== null && (await isIntact(read)) ? read : null
      const next = mainAfterReplay(current, records, mains)
      const moves = next !== null && (await isIntact(next))
      if (moves) await writeMainRef(gitdir, next)
      // The memory files' renames of the commits `main` reaches now: a lost one is redone,
      // and each one's folder made durable, before the log (their only record) is emptied.
      if (renames.length > 0 && options.redo) {
        const head = moves ? next : current
        const reached = head === null ? new Set<string>() : ancestorsThroughLog(head, records)
        const due = renames.filter(({ commit }) => reached.has(commit))
        if (due.length > 0) await options.redo(due)
      }
      // Every object of the log, also those found intact (after a kill they may be in the
      // page cache only), and the ref file are made durable before the log is emptied.
      if (records.length > 0 || opened.log.pending() > 0) {
        await opened.log.checkpoint({ durable: true, replayed: true })
      }
    } catch (error) {
      opened.log.close()
      throw error
    }
    log = opened.log
    log.yieldTo(commands)
  }

  // A logged object whose loose file is missing (and that no pack holds), cut short or not
  // what its id says. A loose file is checked even beside a pack: a power cut after
  // maintenance packed the object can leave the file's name without its data (its unlink lost),
  // which git fsck reports until the next pass; written again, the file is whole.
  // A loose file holding the record's very bytes is whole (the record hashed to its id).
  function needsReplay({ oid, stored }: StoredRecord): boolean {
    if (db.looseHolds(oid, stored)) return false
    try {
      // No loose file (null): only a pack can hold it.
      return db.readLoose(oid) === null && !db.inPack(oid)
    } catch (error) {
      if (error instanceof DamagedObjectError) return true
      throw error
    }
  }

  // A packed object is checked only for being listed in a pack index (a pack carries
  // checksums of its own, and reading every packed blob at open would cost what a pack is
  // there to save), unless a read of it failed its check; a loose one whole (inflated,
  // length, hash).
  async function isIntact(oid: string): Promise<boolean> {
    if (db.inPack(oid) && !db.packedCopyDamaged(oid)) return true
    try {
      return db.readLoose(oid) !== null
    } catch (error) {
      if (error instanceof DamagedObjectError) return false
      throw error
    }
  }

  function looseStat(oid: string): Stats | null {
    try {
      return disk.lstatIfThere(db.loosePath(oid)) ?? null
    } catch (error) {
      // A file where its folder belongs: no loose copy (as `readLoose` reads it), which the
      // write that mends it moves aside; not an open that fails on it every time (probe32b).
      if (isCode(error, 'ENOTDIR')) return null
      throw error
    }
  }

  // The reader's damage becomes the history's; the disk's own errors pass on as they are.
  function historyError(oid: string, error: unknown): unknown {
    if (error instanceof MissingObjectError) return new DamagedHistoryError(oid, 'missing')
    if (isFormatError(error) && !isDiskProblem(error)) {
      return new DamagedHistoryError(oid, 'corrupt')
    }
    return error
  }

  function readTyped(oid: string, type: ObjectType): Buffer {
    let object
    try {
      object = db.read(oid)
    } catch (error) {
      throw historyError(oid, error)
    }
    if (object.type !== type) throw new DamagedHistoryError(oid, wrongKindDetail(type))
    return object.content
  }

  async function readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    return parseTree(oid, readTyped(oid, 'tree'))
  }

  async function readTreeEncoded(oid: string): Promise<EncodedTree> {
    return parseTreeEncoded(oid, readTyped(oid, 'tree'))
  }

  async function readForeignTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    return parseTree(oid, readTyped(oid, 'tree'), { foreign: true })
  }

  async function readBlob(oid: string): Promise<Uint8Array> {
    return readTyped(oid, 'blob')
  }

  function blobSize(oid: string): number {
    try {
      return db.sizeOf(oid)
    } catch (error) {
      throw historyError(oid, error)
    }
  }

  function checkedBlobSizes(oids: ReadonlyArray<string>): Map<string, number | null> {
    return db.checkedBlobSizes(oids)
  }

  async function readRaw(oid: string, type: ObjectType): Promise<Uint8Array> {
    return readTyped(oid, type)
  }

  async function readCommit(oid: string): Promise<RawCommit> {
    const known = commits.get(oid)
    if (known) return known
    const raw = parseCommit(oid, readTyped(oid, 'commit'))
    if (commits.size > COMMIT_CACHE_SIZE) commits.clear()
    commits.set(oid, raw)
    return raw
  }

  return {
    gitdir,
    db,
    hash,
    write,
    flush,
    logsMain,
    isIntact,
    looseStat,
    readTree,
    readTreeEncoded,
    readForeignTree,
    readBlob,
    blobSize,
    checkedBlobSizes,
    readCommit,
    readRaw,
    openLog,
    checkpoint: async (options) => (log ? await log.checkpoint(options) : true),
    yieldCheckpointsTo: (next) => {
      commands = next
      log?.yieldTo(next)
      makeMissingFolders(next)
    },
    looseWritten: () => written,
    close: () => {
      closed = true
      dropSpares()
      log?.close()
      db.close()
    },
  }
}

/** A parsed tree, its bytes, and where each entry's id starts — null unless canonical. */
export interface EncodedTree {
  readonly entries: RawTreeEntry[]
  readonly bytes: Buffer
  readonly idAt: ReadonlyMap<string, number> | null
}

/**
 * Parses a tree object: entries of `<octal mode> <name>\0<20-byte id>`. A tree of this
 * history holds only files and folders with names Cairn would write (no `..`, `.git`, control
 * characters, temp names, twice the same name, links or submodules): anything else is damage
 * (`DamagedHistoryError`), never passed on to be used as a path. `foreign` reads a tree made
 * elsewhere, for its reader to judge: links and submodules come as blobs with their mode, and
 * names are only checked to be UTF-8.
 */
export function parseTree(
  oid: string,
  content: Buffer,
  options: { readonly foreign?: boolean } = {},
): RawTreeEntry[] {
  return parseTreeEncoded(oid, content, options).entries
}

/** `parseTree`, also locating each id when the tree is written as Cairn would write it. */
export function parseTreeEncoded(
  oid: string,
  content: Buffer,
  options: { readonly foreign?: boolean } = {},
): EncodedTree {
  const foreign = options.foreign === true
  const entries: RawTreeEntry[] = []
  const names = new Set<string>()
  let idAt: Map<string, number> | null = new Map()
  let at = 0
  const end = content.length
  while (at < end) {
    // Found byte by byte, the mode told by its bytes and an ASCII name read as it is
    // (objects/tree-entry.ts): Buffer's indexOf and toString cost a call into C++ each, three
    // per entry (thousands at open), while a tree entry's mode and name are a few bytes.
    let space = at
    while (space < end && content[space] !== 0x20) space++
    let nul = space + 1
    while (nul < end && content[nul] !== 0) nul++
    if (space >= end || nul >= end || nul + 21 > end) {
      throw new DamagedHistoryError(oid, 'a folder listing that cannot be read')
    }
    const mode = treeModeAt(content, at, space)
    const name = entryNameAt(content, space + 1, nul)
    if (name === null) throw new DamagedHistoryError(oid, 'a file name that is not UTF-8')
    const problem = foreign ? null : entryNameProblem(name)
    if (problem) throw new DamagedHistoryError(oid, problem)
    if (names.has(name)) throw new DamagedHistoryError(oid, `the name "${name}" twice`)
    names.add(name)
    const entryOid = content.toString('hex', nul + 1, nul + 21)
    if (mode === null || !mode.canonical) idAt = null
    idAt?.set(name, nul + 1)
    at = nul + 21
    if (mode === null || (mode.foreignOnly && !foreign)) {
      throw new DamagedHistoryError(oid, 'a link or submodule, which Cairn never writes')
    }
    entries.push({ name, kind: mode.folder ? 'tree' : 'blob', oid: entryOid, mode: mode.mode })
  }
  return { entries, bytes: content, idAt }
}

/**
 * Parses a commit object: its tree, every parent in order (two or more for a merge), its
 * author (name, email and time) and committer (name and email), and the message.
 *
 * Sample: `tree <id>\nparent <id>\nauthor Claude <claude@cairn.invalid> 1700000000 +0000\n…\n\nsubject`
 */
export function parseCommit(oid: string, buffer: Buffer): RawCommit {
  const text = buffer.toString('utf8')
  const split = text.indexOf('\n\n')
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n')
  const message = split < 0 ? '' : text.slice(split + 2)
  let tree: string | null = null
  const parents: string[] = []
  let author: RegExpExecArray | null = null
  let committer: RegExpExecArray | null = null
  for (const line of headers) {
    if (line.startsWith('tree ') && tree === null) tree = line.slice(5)
    else if (line.startsWith('parent ')) parents.push(line.slice(7))
    else if (line.startsWith('author ') && author === null) {
      author = /^author (.*) <([^>]*)> (-?\d+) [+-]\d{4}$/.exec(line)
    } else if (line.startsWith('committer ') && committer === null) {
      committer = /^committer (.*) <([^>]*)> -?\d+ [+-]\d{4}$/.exec(line)
    }
  }
  const isId = (value: string | null) => value !== null && /^[0-9a-f]{40}$/.test(value)
  if (!isId(tree) || !parents.every(isId) || !author) {
    throw new DamagedHistoryError(oid, 'a version record that cannot be read')
  }
  return {
    oid,
    tree: tree!,
    parent: parents[0] ?? null,
    parents,
    author: { name: author[1]!, email: author[2]! },
    // None that reads (git always writes one): nobody's, so not Cairn's.
    committer: committer ? { name: committer[1]!, email: committer[2]! } : { name: '', email: '' },
    timestamp: datable(Number(author[3])),
    message,
  }
}

/** The furthest seconds from 1970 a JavaScript date holds (±8.64e15 ms). */
const DATE_RANGE_SECONDS = 8_640_000_000_000

/**
 * A commit's time, brought into the range of a date: git takes any number there (a crafted
 * history, or another machine's commit brought by sync), and one past the range made every
 * date shown from it invalid (review hunt12-story D6). Only the time read is clamped: the
 * commit, and its id, stay as they are.
 */
function datable(seconds: number): number {
  return Math.max(-DATE_RANGE_SECONDS, Math.min(DATE_RANGE_SECONDS, seconds))
}

/** Serializes tree entries in git's canonical form (byte order, directories as `name/`). */
export function serializeTree(entries: ReadonlyArray<RawTreeEntry>): Buffer {
  return serializeTreeEncoded(entries).bytes
}

/**
 * `serializeTree`, also giving the offset of each entry's id, as `parseTreeEncoded` would find
 * it: a tree just written need not be parsed again (a UTF-8 decode and a name check per entry)
 * to patch its next version.
 */
export function serializeTreeEncoded(entries: ReadonlyArray<RawTreeEntry>): {
  readonly bytes: Buffer
  readonly idAt: Map<string, number>
} {
  // Sorted by key with the built-in string order where it is git's (no character from a
  // surrogate up, see `compareTreeKeys`): at open a folder of 1,024 files is ordered in half
  // the time a comparator in JavaScript takes, run cold.
  const byKey = new Map<string, RawTreeEntry>()
  let plain = true
  for (const entry of entries) {
    const key = entry.kind === 'tree' ? `${entry.name}/` : entry.name
    byKey.set(key, entry)
    if (plain && BEYOND_PLAIN_ORDER.test(key)) plain = false
  }
  // Two entries of one key (never in a tree Cairn makes) are both kept, as git would see them.
  if (byKey.size !== entries.length) return serializeKeyed(entries)
  const keys = [...byKey.keys()]
  if (plain) keys.sort()
  else keys.sort(compareTreeKeys)
  const ordered = keys.map((key) => byKey.get(key)!)
  let total = 0
  for (const entry of ordered) total += Buffer.byteLength(entry.name) + entry.mode.length + 22
  const out = Buffer.allocUnsafe(total)
  const idAt = new Map<string, number>()
  let at = 0
  for (const entry of ordered) {
    at += out.write(`${entry.mode} ${entry.name}\0`, at, 'utf8')
    out.write(entry.oid, at, 20, 'hex')
    idAt.set(entry.name, at)
    at += 20
  }
  return { bytes: out, idAt }
}

// From here on UTF-16 order and UTF-8 byte order can disagree.
const BEYOND_PLAIN_ORDER = /[\ud800-\uffff]/

function serializeKeyed(entries: ReadonlyArray<RawTreeEntry>): {
  readonly bytes: Buffer
  readonly idAt: Map<string, number>
} {
  const keyed = entries.map((entry) => ({
    entry,
    key: entry.kind === 'tree' ? `${entry.name}/` : entry.name,
    head: `${entry.mode} ${entry.name}\0`,
  }))
  keyed.sort((a, b) => compareTreeKeys(a.key, b.key))
  let total = 0
  for (const item of keyed) total += Buffer.byteLength(item.head) + 20
  const out = Buffer.allocUnsafe(total)
  const idAt = new Map<string, number>()
  let at = 0
  for (const item of keyed) {
    at += out.write(item.head, at, 'utf8')
    out.write(item.entry.oid, at, 20, 'hex')
    idAt.set(item.entry.name, at)
    at += 20
  }
  return { bytes: out, idAt }
}

/**
 * Orders tree sort keys as git does: by their UTF-8 bytes. UTF-16 order agrees except from a
 * surrogate or U+E000 upwards, where the rest is compared as bytes.
 */
export function compareTreeKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 0xd800 && y < 0xd800) return x - y
    // Start at the whole character (a pair's high half may be the common unit before).
    const from = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i
    return Buffer.compare(Buffer.from(a.slice(from)), Buffer.from(b.slice(from)))
  }
  return a.length - b.length
}

export interface CommitFields {
  readonly tree: string
  readonly parent: string | null
  /** Further parents, for a merge commit (after `parent`). */
  readonly otherParents?: ReadonlyArray<string>
  readonly author: { readonly name: string; readonly email: string }
  readonly timestamp: number
  /**
   * Who committed it, when not its author (an imported commit rewritten keeps its own: an
   * amend of Cairn's commit made with git must not become Cairn's). Cairn's are its author.
   */
  readonly committer?: { readonly name: string; readonly email: string; readonly timestamp: number }
  readonly message: string
}

/** Serializes a commit object (UTC offset; the committer is the author unless given). */
export function serializeCommit(fields: CommitFields): Buffer {
  const person = `${fields.author.name} <${fields.author.email}> ${fields.timestamp} +0000`
  const by = fields.committer
  const committer = by ? `${by.name} <${by.email}> ${by.timestamp} +0000` : person
  const lines = [`tree ${fields.tree}`]
  if (fields.parent) lines.push(`parent ${fields.parent}`)
  for (const other of fields.otherParents ?? []) lines.push(`parent ${other}`)
  lines.push(`author ${person}`, `committer ${committer}`, '', fields.message)
  return Buffer.from(lines.join('\n'))
}

/** Creates an empty bare repository whose HEAD points at `main` (an existing one is kept). */
export async function initRepository(gitdir: string): Promise<void> {
  makeFolders(gitdir)
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) {
    makeFolders(path.join(gitdir, dir), 0o755)
  }
  const config = '[core]\n\trepositoryformatversion = 0\n\tfilemode = false\n\tbare = true\n'
  writeIfMissing(path.join(gitdir, 'config'), config)
  writeIfMissing(path.join(gitdir, 'HEAD'), `ref: ${MAIN_REF}\n`)
}

function writeIfMissing(file: string, content: string): void {
  let fd: number
  try {
    fd = disk.openSync(file, OPEN.WRITE_NEW, 0o644)
  } catch (error) {
    if (isCode(error, 'EEXIST')) return
    throw error
  }
  try {
    disk.writeFileSync(fd, content)
  } finally {
    closeQuietly(fd)
  }
}

export const MAIN_REF = 'refs/heads/main'

const tempPrefix = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`
let tempCounter = 0

/** A name part no other temp file of this process or another one has. */
function tempSuffix(): string {
  return `${tempPrefix}${(tempCounter++).toString(36)}`
}

/**
 * Every commit a ref of the repository names: `main` first, then the others (the remote's
 * `main` as sync last saw it, backups of switched-away histories under `refs/cairn/backups/`,
 * anything `git` made), from loose ref files and `packed-refs`. Maintenance walks from all of
 * them so their histories are packed with deltas; nothing unreachable is dropped either way.
 */
export function readRefTips(gitdir: string): string[] {
  const tips = new Map<string, string>()
  const walk = (dir: string, name: string): void => {
    let dirents
    try {
      dirents = disk.readdirSync(dir)
    } catch {
      // No such folder (no refs of that kind yet).
      return
    }
    for (const dirent of dirents) {
      const ref = `${name}/${dirent.name}`
      const file = path.join(dir, dirent.name)
      if (dirent.isDirectory()) walk(file, ref)
      else if (dirent.isFile()) {
        try {
          const value = readPlainFile(file, OWN_FILE_CAP.TINY).toString('utf8').trim()
          if (/^[0-9a-f]{40}$/.test(value)) tips.set(ref, value)
        } catch {
          // Removed meanwhile, or a temp file of a ref being written.
        }
      }
    }
  }
  try {
    for (const line of readPlainFile(path.join(gitdir, 'packed-refs'), OWN_FILE_CAP.RECORDS)
      .toString('utf8')
      .split('\n')) {
      const match = /^([0-9a-f]{40}) (refs\/.+)$/.exec(line.trim())
      if (match) tips.set(match[2] as string, match[1] as string)
    }
  } catch {
    // No packed refs: the usual case.
  }
  // Loose ref files win over packed ones, as in git.
  walk(path.join(gitdir, 'refs'), 'refs')
  const main = tips.get(MAIN_REF)
  tips.delete(MAIN_REF)
  return [...new Set([...(main ? [main] : []), ...tips.values()])]
}

/** A new value of `main`, written to a temp file, not yet in place. */
export interface PendingRef {
  /** fsyncs the temp file (may run while the objects it names are flushed). */
  flush(): Promise<void>
  /**
   * Renames it over `main`, then fsyncs the folder. Once the rename has happened the ref has
   * moved, so a failing folder fsync after it is not reported (the caller must not believe
   * the commit failed when it did not).
   */
  publish(): Promise<void>
  /** `publish` in two steps: the rename (the ref has moved) ... */
  move(): void
  /** ... and the folder's fsync (best effort, never rejects). */
  sync(): Promise<void>
  /** Drops it (the commit failed). */
  abandon(): void
}

/** Writes the next value of `main` to a temp file beside it (see `PendingRef`). */
export function prepareMainRef(gitdir: string, oid: string): PendingRef {
  const dir = path.join(gitdir, 'refs', 'heads')
  const file = path.join(dir, 'main')
  const temp = `${file}.${tempSuffix()}.lock`
  let fd: number | null = null
  // Once fsynced, the temp file's close reports nothing the ref relies on (`closeQuietly`);
  // before (a move whose value the log holds), it may be the one report of a failed write.
  let flushed = false
  const abandon = () => {
    if (fd !== null) closeQuietly(fd)
    fd = null
    unlinkQuietly(temp)
  }
  try {
    try {
      fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o644)
    } catch (error) {
      if (!isCode(error, 'ENOENT')) throw error
      // refs/heads went missing: make it again.
      makeFolders(dir, 0o755)
      fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o644)
    }
    disk.writeFileSync(fd, `${oid}\n`)
  } catch (error) {
    abandon()
    throw error
  }
  const move = () => {
    try {
      const closing = fd
      fd = null
      if (closing !== null) {
        if (flushed) closeQuietly(closing)
        else disk.closeSync(closing)
      }
      disk.renameSync(temp, file)
    } catch (error) {
      abandon()
      throw error
    }
  }
  const sync = () => syncDir(dir).catch(() => {})
  return {
    async flush() {
      if (fd === null) return
      await disk.fsync(fd)
      flushed = true
    },
    async publish() {
      move()
      await sync()
    },
    move,
    sync,
    abandon,
  }
}

/**
 * Moves `main` to `oid`, whose value the write-ahead log already holds durably (a commit's
 * logged ref, see `LoggedRef`): the ref's file is written over in place when it holds a value
 * of the usual form (41 bytes, a regular file), else replaced by a temp file's rename, neither
 * `fsync`ed (a checkpoint does that before the log is emptied). In place, no file is created
 * and none is freed: on the bench machine's disk (ext4 without a journal, mounted `discard`) a
 * rename over the ref waited for the discard of the old file's block on the main thread
 * (150-800 µs a commit), and each freed inode slowed later file creations in its block group
 * (docs/durability.md). One `write` of 41 bytes at offset 0 of one page: a killed process
 * leaves the old value or the new one; a power cut may leave either, or a damaged file, and
 * open then moves `main` forward to the logged value as for a lost rename.
 */
export function moveLoggedMain(gitdir: string, oid: string): void {
  const file = path.join(gitdir, 'refs', 'heads', 'main')
  const value = Buffer.from(`${oid}\n`)
  let fd: number | null = null
  try {
    fd = disk.openSync(file, OPEN.READ_WRITE | OPEN.NOFOLLOW)
    const stats = disk.fstatSync(fd)
    // A hard link shares its bytes with another name (a `cp -al` snapshot, a file outside the
    // data folder): written through, that name would change too, so it is replaced instead.
    if (stats.isFile() && stats.nlink === 1 && stats.size === value.byteLength) {
      if (disk.writeSync(fd, value, 0) === value.byteLength) return
    }
  } catch {
    // Missing (packed by `git pack-refs`), a link, unwritable or a failed write: replaced below.
  } finally {
    if (fd !== null) closeQuietly(fd)
  }
  prepareMainRef(gitdir, oid).move()
}

/**
 * The id `main` holds as git reads it: its own file, else (that file missing) its line in
 * `packed-refs`, where `git pack-refs` or `git gc` moves it; null when neither names one, or
 * when its own file is empty or garbage (what a power cut may leave of a rename not made
 * durable: a packed value beside it is then older). A packed value beside a lost file is never
 * older than the log's start: a checkpoint makes the file's name durable, so a file lost that
 * way was made after the last one, when `main` was the packed value or a logged commit.
 * I/O errors are thrown.
 */
export function readMainFile(gitdir: string): string | null {
  const reading = readMainRef(gitdir)
  return reading.kind === 'ok' ? reading.oid : null
}

/** Points `main` at `oid` durably: temp file, fsync, rename, fsync the folder. */
export async function writeMainRef(gitdir: string, oid: string): Promise<void> {
  const ref = prepareMainRef(gitdir, oid)
  try {
    await ref.flush()
  } catch (error) {
    ref.abandon()
    throw error
  }
  await ref.publish()
}

/** fsyncs a folder of the git directory (its entries: a rename is durable once it is). */
export async function syncDir(dir: string): Promise<void> {
  await syncFolder(dir)
}
