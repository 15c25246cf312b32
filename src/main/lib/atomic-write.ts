/**
 * Writes that never leave half a file: a hidden temp file in the same folder, fsync, rename
 * over the target, fsync the folder. Every domain that keeps files (the memory folder,
 * restores, settings, conversations) writes through `atomicWrite`.
 *
 * The metadata calls (open, write, rename, close) are synchronous: each takes microseconds on
 * a local disk, while each async hop through libuv's thread pool costs more than the call
 * itself. The fsyncs, which take milliseconds, stay asynchronous so the event loop keeps running.
 */

import { randomUUID } from 'node:crypto'
import fss, { constants } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { consoleLogger, type Logger } from './logger'

const fsync = promisify(fss.fsync)

/** Mode of every file Cairn writes: owner read/write only. */
export const FILE_MODE = 0o600
/** Mode of every folder Cairn creates: owner only. */
export const DIR_MODE = 0o700

/** Prefix of the temp files written during atomic writes; start-up recovery removes strays. */
export const TEMP_FILE_PREFIX = '.cairn-tmp-'

// 0 where the platform lacks it (Windows).
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0
const WRITE_NEW = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY

export interface AtomicWriteOptions {
  /**
   * Runs while the temp file is flushed (e.g. the secret scan); if it throws, nothing is
   * renamed and the error is the write's.
   */
  readonly beforeCommit?: () => Promise<void>
  /** Told when the folder could not be flushed after the rename (default: the console). */
  readonly logger?: Logger
}

/**
 * Writes `data` to `real` atomically. The temp file (`TEMP_FILE_PREFIX`…, opened O_EXCL and
 * O_NOFOLLOW, mode 0600) never survives a failure.
 */
export async function atomicWrite(
  real: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = path.dirname(real)
  const temp = path.join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`)
  let fd: number | undefined
  try {
    // The mode is only ever narrowed by the umask, so the file is never more than owner-only.
    fd = fss.openSync(temp, WRITE_NEW | O_NOFOLLOW, FILE_MODE)
    fss.writeFileSync(fd, data)
    const [flush, check] = await Promise.allSettled([
      fsync(fd),
      (options.beforeCommit ?? noCheck)(),
    ])
    if (flush.status === 'rejected') throw flush.reason
    if (check.status === 'rejected') throw check.reason
    fss.closeSync(fd)
    fd = undefined
    fss.renameSync(temp, real)
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd)
    try {
      fss.unlinkSync(temp)
    } catch {
      // Never created, or already renamed: nothing is left behind either way.
    }
    throw error
  }
  // The rename has happened: the new content is in place, so reporting a failure now would
  // tell Claude (and history) that nothing changed when something did. Durability of the
  // folder entry is best effort from here.
  await syncDirectory(dir).catch((error: unknown) =>
    (options.logger ?? consoleLogger).warn('Could not flush a folder after a write', error),
  )
}

async function noCheck(): Promise<void> {}

/** Flushes a folder's entries (a rename is durable only once its folder is). */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; its rename is already journaled by NTFS.
  if (process.platform === 'win32') return
  const fd = fss.openSync(dir, constants.O_RDONLY)
  try {
    await fsync(fd)
  } finally {
    fss.closeSync(fd)
  }
}

function closeQuietly(fd: number): void {
  try {
    fss.closeSync(fd)
  } catch {
    // Already closed: the write's own error is the one to report.
  }
}
