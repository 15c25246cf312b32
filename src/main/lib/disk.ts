/**
 * The one seam through which the memory handler and the history reach the file system.
 *
 * Every call they make goes through `disk`, so a test can put a wrapper in front of the real
 * file system (`setDisk`) that fails any chosen call with EIO, ENOSPC, EACCES or EMFILE, or
 * changes the folder between two calls. Nothing else in src/main/memory or src/main/history
 * imports `node:fs` (ESLint enforces it).
 *
 * Metadata calls are synchronous: each takes microseconds on a local disk, while an async hop
 * through libuv's thread pool costs more than the call itself. `fsync`, which takes
 * milliseconds, and the bulk reads of `promises` stay asynchronous.
 */

import fss, {
  type BigIntStats,
  type Dirent,
  type FSWatcher,
  type Stats,
  type WatchListener,
} from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'

/** The file-system calls Cairn's memory and history make, with the signatures they use. */
export interface Disk {
  openSync(path: string, flags: number, mode?: number): number
  closeSync(fd: number): void
  fstatSync(fd: number): Stats
  /** `lstat`; throws ENOENT like node's. */
  lstatSync(path: string): Stats
  /** `lstat`, or undefined when nothing has that name (no exception: those cost ~10 µs). */
  lstatIfThere(path: string): Stats | undefined
  /** `lstat` with nanosecond times (git's index keeps them); throws ENOENT like node's. */
  lstatExactSync(path: string): BigIntStats
  statSync(path: string): Stats
  readSync(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ): number
  /** At `position`, or at the file's offset when it is null or left out. */
  writeSync(fd: number, data: Uint8Array, position?: number | null): number
  /** The same, on the thread pool (bulk writes that must not hold up the event loop). */
  write(fd: number, data: Uint8Array, position: number): Promise<number>
  ftruncateSync(fd: number, length: number): void
  /**
   * The same, on the thread pool: freeing a file's blocks can wait for the disk (a discard on
   * a drive mounted `discard` took up to 1.45 s), which must never hold up the event loop.
   */
  ftruncate(fd: number, length: number): Promise<void>
  fsyncSync(fd: number): void
  /** Reads a whole file (by path or open descriptor). */
  readFileSync(file: string | number): Buffer
  writeFileSync(
    file: string | number,
    data: string | Uint8Array,
    options?: fss.WriteFileOptions,
  ): void
  appendFileSync(file: string, data: string, options?: fss.WriteFileOptions): void
  renameSync(from: string, to: string): void
  linkSync(existing: string, created: string): void
  unlinkSync(path: string): void
  /** Free and total space of the file system holding `path`. */
  statfsSync(path: string): fss.StatsFs
  mkdirSync(path: string, mode?: number): void
  rmdirSync(path: string): void
  /** Entries of a folder with their types (never recursive). */
  readdirSync(path: string): Dirent[]
  /** The path with every link resolved (Cairn's own folders only, never memory paths). */
  realpathSync(path: string): string
  /** What a symbolic link holds, as text (git's links in refs/heads only). */
  readlinkSync(path: string): string
  fchmodSync(fd: number, mode: number): void
  chmodSync(path: string, mode: number): void
  /** `access`: throws (EACCES) unless this process may do all of `mode` (`ACCESS`). */
  accessSync(path: string, mode: number): void
  fsync(fd: number): Promise<void>
  watch(
    path: string,
    options: { recursive?: boolean; persistent?: boolean },
    listener: WatchListener<string>,
  ): FSWatcher
  /** Async reads and writes for code that must not block (the usage walk, isomorphic-git). */
  readonly promises: {
    readFile(path: string): Promise<Buffer>
    writeFile(
      path: string,
      data: string | Uint8Array,
      options?: fss.WriteFileOptions,
    ): Promise<void>
    readdir(path: string): Promise<Dirent[]>
    lstat(path: string): Promise<Stats>
    stat(path: string): Promise<Stats>
    mkdir(path: string, mode?: number): Promise<void>
    rmdir(path: string): Promise<void>
    unlink(path: string): Promise<void>
    /** `rename(2)` on the thread pool (maintenance: the disk may hold it up, never the loop). */
    rename(from: string, to: string): Promise<void>
    readlink(path: string): Promise<string>
    symlink(target: string, path: string): Promise<void>
    chmod(path: string, mode: number): Promise<void>
    /** `open(2)` on the thread pool: a descriptor for `fstat`, `read` and `close` below. */
    open(path: string, flags: number, mode?: number): Promise<number>
    fstat(fd: number): Promise<Stats>
    /** Bytes read into `buffer` at `offset`, from `position` (the file's offset when null). */
    read(
      fd: number,
      buffer: Uint8Array,
      offset: number,
      length: number,
      position: number | null,
    ): Promise<number>
    close(fd: number): Promise<void>
  }
}

const fsyncAsync = promisify(fss.fsync)
const writeAsync = promisify(fss.write)
const ftruncateAsync = promisify(fss.ftruncate)
const openAsync = promisify(fss.open)
const fstatAsync = promisify(fss.fstat)
const readAsync = promisify(fss.read)
const closeAsync = promisify(fss.close)

/** The real file system. */
export const nodeDisk: Disk = {
  openSync: (path, flags, mode) => fss.openSync(path, flags, mode),
  closeSync: (fd) => fss.closeSync(fd),
  fstatSync: (fd) => fss.fstatSync(fd),
  lstatSync: (path) => fss.lstatSync(path),
  lstatIfThere: (path) => fss.lstatSync(path, { throwIfNoEntry: false }),
  lstatExactSync: (path) => fss.lstatSync(path, { bigint: true }),
  statSync: (path) => fss.statSync(path),
  readSync: (fd, buffer, offset, length, position) =>
    fss.readSync(fd, buffer, offset, length, position),
  writeSync: (fd, data, position) => fss.writeSync(fd, data, 0, data.byteLength, position ?? null),
  write: async (fd, data, position) =>
    (await writeAsync(fd, data, 0, data.byteLength, position)).bytesWritten,
  ftruncateSync: (fd, length) => fss.ftruncateSync(fd, length),
  ftruncate: (fd, length) => ftruncateAsync(fd, length),
  fsyncSync: (fd) => fss.fsyncSync(fd),
  readFileSync: (file) => fss.readFileSync(file),
  writeFileSync: (file, data, options) => fss.writeFileSync(file, data, options),
  appendFileSync: (file, data, options) => fss.appendFileSync(file, data, options),
  renameSync: (from, to) => fss.renameSync(from, to),
  linkSync: (existing, created) => fss.linkSync(existing, created),
  unlinkSync: (path) => fss.unlinkSync(path),
  statfsSync: (path) => fss.statfsSync(path),
  mkdirSync: (path, mode) => {
    fss.mkdirSync(path, { mode })
  },
  rmdirSync: (path) => fss.rmdirSync(path),
  readdirSync: (path) => fss.readdirSync(path, { withFileTypes: true }),
  realpathSync: (path) => fss.realpathSync(path),
  readlinkSync: (path) => fss.readlinkSync(path, 'utf8'),
  fchmodSync: (fd, mode) => fss.fchmodSync(fd, mode),
  chmodSync: (path, mode) => fss.chmodSync(path, mode),
  accessSync: (path, mode) => fss.accessSync(path, mode),
  fsync: (fd) => fsyncAsync(fd),
  watch: (path, options, listener) => fss.watch(path, options, listener),
  promises: {
    readFile: (path) => fss.promises.readFile(path),
    writeFile: (path, data, options) => fss.promises.writeFile(path, data, options),
    readdir: (path) => fss.promises.readdir(path, { withFileTypes: true }),
    lstat: (path) => fss.promises.lstat(path),
    stat: (path) => fss.promises.stat(path),
    mkdir: async (path, mode) => {
      await fss.promises.mkdir(path, { mode })
    },
    rmdir: (path) => fss.promises.rmdir(path),
    unlink: (path) => fss.promises.unlink(path),
    rename: (from, to) => fss.promises.rename(from, to),
    readlink: (path) => fss.promises.readlink(path),
    symlink: (target, path) => fss.promises.symlink(target, path),
    chmod: (path, mode) => fss.promises.chmod(path, mode),
    open: (path, flags, mode) => openAsync(path, flags, mode),
    fstat: (fd) => fstatAsync(fd),
    read: async (fd, buffer, offset, length, position) =>
      (await readAsync(fd, buffer, offset, length, position)).bytesRead,
    close: (fd) => closeAsync(fd),
  },
}

let current: Disk = nodeDisk

type SyncName = Exclude<keyof Disk, 'promises'>
type AsyncName = keyof Disk['promises']

function delegate(): Disk {
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(nodeDisk) as SyncName[]) {
    if ((name as string) === 'promises') continue
    out[name] = (...args: unknown[]) => (current[name] as (...a: unknown[]) => unknown)(...args)
  }
  const promises: Record<string, unknown> = {}
  for (const name of Object.keys(nodeDisk.promises) as AsyncName[]) {
    promises[name] = (...args: unknown[]) =>
      (current.promises[name] as (...a: unknown[]) => unknown)(...args)
  }
  out.promises = promises
  return out as unknown as Disk
}

/** What memory and history call: the real file system, or what a test put in front of it. */
export const disk: Disk = delegate()

/**
 * Puts `next` in front of every later call (tests: fault injection, race interleaving).
 * Returns the function that restores the previous one.
 */
export function setDisk(next: Disk): () => void {
  const previous = current
  current = next
  return () => {
    current = previous
  }
}

/**
 * The file system in front of every call now (`nodeDisk`, or what a test put there): a key for
 * what is read once per process and must be read again through a test's seam.
 */
export function diskInUse(): Disk {
  return current
}

/** True while no test put a wrapper in front of the file system (`setDisk`). */
export function usesNodeDisk(): boolean {
  return current === nodeDisk
}

/**
 * True where a folder's open handle can name its entries (`/proc/self/fd/<fd>/<name>` on
 * Linux), so that nothing re-walks a path that a symlink swapped in meanwhile could redirect.
 * Probed once, outside the seam: it is a fact about the platform, not about the data.
 */
export const handlesNameEntries: boolean =
  process.platform === 'linux' && fss.existsSync('/proc/self/fd')

/** The access(2) modes Cairn asks about. */
export const ACCESS = { READ: fss.constants.R_OK, ENTER: fss.constants.X_OK } as const

/** The open(2) flags Cairn uses; 0 where the platform lacks one (O_NOFOLLOW on Windows). */
export const OPEN = {
  READ: fss.constants.O_RDONLY,
  /** Create a new file for writing; fails if the name exists. */
  WRITE_NEW: fss.constants.O_CREAT | fss.constants.O_EXCL | fss.constants.O_WRONLY,
  /** The same, also for reading back what was written. */
  READ_WRITE_NEW: fss.constants.O_CREAT | fss.constants.O_EXCL | fss.constants.O_RDWR,
  /** An existing file, to read and write. */
  READ_WRITE: fss.constants.O_RDWR,
  /** Created or emptied, to write (`w`). */
  WRITE_TRUNC: fss.constants.O_CREAT | fss.constants.O_TRUNC | fss.constants.O_WRONLY,
  /** Created or emptied, to read and write (`w+`). */
  READ_WRITE_TRUNC: fss.constants.O_CREAT | fss.constants.O_TRUNC | fss.constants.O_RDWR,
  /** Every write goes to the file's end, wherever that is by then (whoever else wrote). */
  APPEND: fss.constants.O_APPEND,
  NOFOLLOW: fss.constants.O_NOFOLLOW ?? 0,
  DIRECTORY: fss.constants.O_DIRECTORY ?? 0,
  /** The open itself never waits (a fifo with no writer); reads of a plain file are alike. */
  NONBLOCK: fss.constants.O_NONBLOCK ?? 0,
} as const

/**
 * Writes one of Cairn's own small files (history.git's config, its notes) whole, never through a
 * link put in its place (O_NOFOLLOW: ELOOP instead, and nothing outside the data folder is
 * written) nor waiting on a fifo there (O_NONBLOCK: ENXIO instead of an open that never returns).
 */
export function writeOwnFile(file: string, text: string): void {
  const fd = disk.openSync(file, OPEN.WRITE_TRUNC | OPEN.NOFOLLOW | OPEN.NONBLOCK, 0o644)
  try {
    disk.writeFileSync(fd, text)
  } finally {
    closeQuietly(fd)
  }
}

// How much `readPlainFile` asks for at a time once a file grew past the size it looked at.
const GROWN_READ = 64 * 1024

/** The code of `readPlainFile`'s refusal of anything but a plain file (no errno has it). */
export const NOT_A_FILE = 'ENOTAFILE'

/**
 * The code of `readPlainFile`'s refusal of a file larger than its kind can hold (no errno has
 * it): damage as much as a fifo is (a 2 GB file at a ref), never read into memory.
 */
export const TOO_LARGE = 'ETOOLARGE'

// How `readPlainFile` opens: never through a link, never waiting at open (a fifo).
const PLAIN_READ = OPEN.READ | OPEN.NOFOLLOW | OPEN.NONBLOCK

// Anything but a plain file, or one past `cap`, is refused before a byte is read. A folder is
// refused as EISDIR, as node's `readFile` says it (isomorphic-git reads that as "no such ref").
function checkPlain(stats: Stats, cap: number): void {
  if (stats.isDirectory()) {
    throw Object.assign(new Error('EISDIR: a folder, not a file'), { code: 'EISDIR' })
  }
  if (!stats.isFile()) {
    throw Object.assign(new Error(`${NOT_A_FILE}: not a plain file`), { code: NOT_A_FILE })
  }
  if (stats.size > cap) throw tooLarge(cap)
}

function tooLarge(cap: number): Error {
  return Object.assign(new Error(`${TOO_LARGE}: larger than ${cap} bytes`), { code: TOO_LARGE })
}

// How many bytes to ask for next: the size looked at and one byte more to find the end; a file
// that grew past it (a read that filled its buffer) is read on in large reads, never a byte a
// call (rdisk29). Past `cap` it is refused (a file being filled while read).
function nextWant(size: number, total: number, read: number, asked: number, cap: number): number {
  if (total > cap) throw tooLarge(cap)
  return read === asked ? GROWN_READ : Math.max(size - total, 0) + 1
}

function joined(chunks: Buffer[], total: number): Buffer {
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total)
}

/**
 * The whole of `file` when it is a plain file of at most `cap` bytes, read through one
 * descriptor: never through a link (ELOOP), never from a fifo, a socket or a device, whose
 * read may wait forever (a fifo with no writer: a hang at open) or never end (`/dev/zero`):
 * those throw `NOT_A_FILE` (a folder EISDIR); a file larger than `cap` throws `TOO_LARGE` (each kind's cap is in
 * `OWN_FILE_CAP`, lib/own-file-caps.ts). `readFileSync` by name does both, so every file Cairn
 * owns and reads by name (in history.git, conversations/, sync/, the settings and the lock) is
 * read here: the one way to read them, so that anything but a plain file, or one larger than
 * its kind ever is, is damage everywhere (`isNotPlainFile`), never a hang nor all memory.
 */
export function readPlainFile(file: string, cap: number): Buffer {
  const fd = disk.openSync(file, PLAIN_READ)
  try {
    return readOpenPlainFile(fd, cap)
  } finally {
    closeQuietly(fd)
  }
}

/**
 * `readPlainFile` for a file already open (`fd`, read from where it stands, left open): a
 * plain file of at most `cap` bytes, and never more than `cap` read even if it grows meanwhile.
 */
export function readOpenPlainFile(fd: number, cap: number): Buffer {
  const stats = disk.fstatSync(fd)
  checkPlain(stats, cap)
  const chunks: Buffer[] = []
  let total = 0
  let want = stats.size + 1
  for (;;) {
    const chunk = Buffer.allocUnsafe(want)
    const read = disk.readSync(fd, chunk, 0, chunk.length, null)
    if (read === 0) break
    chunks.push(chunk.subarray(0, read))
    total += read
    want = nextWant(stats.size, total, read, chunk.length, cap)
  }
  return joined(chunks, total)
}

/**
 * `readPlainFile` on the thread pool (the conversations, the settings, the API key, sync's
 * files), through the seam as every other read, so a test can fail it too.
 */
export async function readPlainFileAsync(file: string, cap: number): Promise<Buffer> {
  const fd = await disk.promises.open(file, PLAIN_READ)
  try {
    const stats = await disk.promises.fstat(fd)
    checkPlain(stats, cap)
    const chunks: Buffer[] = []
    let total = 0
    let want = stats.size + 1
    for (;;) {
      const chunk = Buffer.allocUnsafe(want)
      const read = await disk.promises.read(fd, chunk, 0, chunk.length, null)
      if (read === 0) break
      chunks.push(chunk.subarray(0, read))
      total += read
      want = nextWant(stats.size, total, read, chunk.length, cap)
    }
    return joined(chunks, total)
  } finally {
    // Only read from: its close reports nothing Cairn relies on.
    await disk.promises.close(fd).catch(() => undefined)
  }
}

/**
 * True when `readPlainFile` refused what has the name because it is not a plain file: a link
 * (ELOOP, never followed), a fifo or a device (`NOT_A_FILE`), a socket (whose open fails:
 * ENXIO), or a folder (EISDIR); or because it is larger than its
 * kind can hold (`TOO_LARGE`). Damage, never an I/O error: nothing there is what Cairn wrote.
 */
export function isNotPlainFile(error: unknown): boolean {
  const code = errorCode(error)
  return (
    code === NOT_A_FILE ||
    code === TOO_LARGE ||
    code === 'ELOOP' ||
    code === 'EISDIR' ||
    code === 'ENXIO'
  )
}

/** `readPlainFile`, or null when nothing has that name or it is damage (`isNotPlainFile`). */
export function readPlainFileOrNull(file: string, cap: number): Buffer | null {
  try {
    return readPlainFile(file, cap)
  } catch (error) {
    if (isMissing(error) || isNotPlainFile(error)) return null
    throw error
  }
}

/**
 * Appends `text` to `file` (made, mode 0600, when missing), never through a link (ELOOP) and
 * never waiting on a fifo: anything but a plain file there is refused (`NOT_A_FILE`, or ENXIO
 * for a fifo with no reader). For Cairn's own derived records, whose writes need not last.
 */
export function appendPlainFile(file: string, text: string): void {
  const flags = OPEN.APPEND | OPEN.NOFOLLOW | OPEN.NONBLOCK | fss.constants.O_CREAT
  const fd = disk.openSync(file, flags | fss.constants.O_WRONLY, 0o600)
  try {
    if (!disk.fstatSync(fd).isFile()) {
      throw Object.assign(new Error(`${NOT_A_FILE}: not a plain file`), { code: NOT_A_FILE })
    }
    const bytes = Buffer.from(text, 'utf8')
    let done = 0
    while (done < bytes.length) done += disk.writeSync(fd, bytes.subarray(done))
  } finally {
    closeQuietly(fd)
  }
}

/** Makes `dir` and any missing parents (`mode` for the ones it makes); fine if it exists. */
export function makeFolders(dir: string, mode = 0o700): void {
  try {
    disk.mkdirSync(dir, mode)
  } catch (error) {
    if (isCode(error, 'EEXIST')) return
    if (!isCode(error, 'ENOENT') || path.dirname(dir) === dir) throw error
    makeFolders(path.dirname(dir), mode)
    try {
      disk.mkdirSync(dir, mode)
    } catch (again) {
      if (!isCode(again, 'EEXIST')) throw again
    }
  }
}

/**
 * fsyncs the folder `dir`, so the renames and new names in it are durable (nothing to do on
 * Windows, where a folder cannot be opened for it).
 */
export async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  const fd = disk.openSync(dir, OPEN.READ | OPEN.DIRECTORY)
  try {
    await disk.fsync(fd)
  } finally {
    closeQuietly(fd)
  }
}

/** True when something (a file, folder or link) has the name `file`; I/O errors are thrown. */
export function exists(file: string): boolean {
  try {
    return disk.lstatIfThere(file) !== undefined
  } catch (error) {
    if (isMissing(error)) return false
    throw error
  }
}

/** Removes the file `file` if it is there (an I/O error is thrown). */
export function removeFile(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

/**
 * Closes `fd`, ignoring any error. For a descriptor whose close can report nothing Cairn
 * relies on: one only read from, one whose writes were fsynced before, one whose writes Cairn
 * does not need to last (rebuilt or checked when read), and clean-up paths where an earlier
 * error is being passed on (which the close must not hide). The descriptor is released all
 * the same (POSIX leaves it unspecified after a failed close; Linux always releases it), so a
 * read's or a flushed write's result never turns into a failure here (docs/durability.md,
 * "Closing"). A descriptor with writes meant to last and not yet fsynced is closed with
 * `disk.closeSync`: its close may be the one report that those writes failed.
 */
export function closeQuietly(fd: number): void {
  try {
    disk.closeSync(fd)
  } catch {
    // Already closed.
  }
}

/**
 * Removes the file `file`, ignoring any error: for clean-up of a temp file that may never
 * have been made, or be gone already (where an I/O error must not hide the first failure).
 */
export function unlinkQuietly(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch {
    // Never made, or gone already.
  }
}

/**
 * Removes `target` and, for a folder, everything in it; fine if it is not there. For Cairn's
 * own folders inside the git directory (an index being rebuilt), never the memory folder
 * (see lib/folders.ts `removeTree`, which works by handles).
 */
export function removePath(target: string): void {
  let stats
  try {
    stats = disk.lstatSync(target)
  } catch (error) {
    if (isMissing(error)) return
    throw error
  }
  if (!stats.isDirectory()) return removeFile(target)
  for (const name of listNames(target)) removePath(path.join(target, name))
  try {
    disk.rmdirSync(target)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

/** The names in folder `dir`, or none when it (or a folder on the way) is missing. */
export function listNames(dir: string): string[] {
  try {
    return disk.readdirSync(dir).map((dirent) => dirent.name)
  } catch (error) {
    if (isMissing(error)) return []
    throw error
  }
}

/**
 * The names in `dir` when it is a folder itself; none when it is missing or is a link (to a
 * folder outside the data folder, say), whose files are never cleared through it.
 */
export function listOwnFolderNames(dir: string): string[] {
  let stats: Stats | undefined
  try {
    stats = disk.lstatIfThere(dir)
  } catch (error) {
    // A file where a folder on the way should be (`refs` a file, for `refs/heads`): missing.
    if (isMissing(error)) return []
    throw error
  }
  return stats?.isDirectory() ? listNames(dir) : []
}

/**
 * `listNames` on the thread pool: a folder that once held thousands of names takes a while
 * to read, longer while the disk is busy (maintenance lists all 256 object folders).
 */
export async function listNamesAsync(dir: string): Promise<string[]> {
  try {
    return (await disk.promises.readdir(dir)).map((dirent) => dirent.name)
  } catch (error) {
    if (isMissing(error)) return []
    throw error
  }
}

/** Node's errno code of an error, if any. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/** True for the errors that mean "nothing is there": ENOENT, or ENOTDIR on the way. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** True when `error` carries errno `code`. */
export function isCode(error: unknown, code: string): boolean {
  return errorCode(error) === code
}

/**
 * True when the system's permissions refused the call: EACCES, or EPERM (an ACL, a sandbox, a
 * flag such as immutable). Not EBUSY: see `isLastingRefusal` for what a retry will not mend.
 */
export function isDenied(error: unknown): boolean {
  const code = errorCode(error)
  return code === 'EACCES' || code === 'EPERM'
}
