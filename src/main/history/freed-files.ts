/**
 * The old versions a command's writes replace, kept alive by a second name until a quiet
 * moment. A write's `rename(2)` over a memory file frees the old file's blocks, and on a file
 * system mounted with `discard` (ext4 here) the call waits for the disk to discard them: 0.8–1
 * ms of a command at load 16 (p99 25–29 ms), against 0.07–0.1 ms (p99 1–2.4 ms) when the old
 * file has a second name, so the rename frees nothing (issue #15, stop 14). The second name is
 * a hard link in `history.git/cairn-freed/`, made just before the rename; the names are
 * removed there one at a time (each `unlink` then waits for that discard, 2.4 ms at the same
 * load) once no command has run for `quietMs`, as maintenance removes what it packed.
 *
 * Nothing here is data: a link is only a second name for an old version that the history
 * already holds (the commit recording the new version is durable before the rename). A link
 * is never `fsync`ed; a kill or a power cut between a command and the removal of its link
 * leaves a name here, and every open removes whatever it finds (at its first quiet moments,
 * like the rest). Past `MAX_KEPT` names or `MAX_KEPT_BYTES`, with less than `MIN_FREE_BYTES`
 * free on the disk, for a file over
 * `MAX_KEPT_FILE_BYTES`, or where the link cannot be made (the memory folder on
 * another file system, a file system without hard links), the rename frees the old file
 * itself, as before.
 */

import path from 'node:path'
import { disk, isCode, listNames } from '../lib/disk'
import type { Logger } from '../lib/logger'

/** The folder of the kept names, in the git directory. */
export const FREED_DIR = 'cairn-freed'

/** The quiet wanted before each removal, unless maintenance's `quietMs` says otherwise. */
export const FREED_QUIET_MS = 500

/** At most this many old versions kept at once. */
export const MAX_KEPT = 256

/**
 * Only old versions this small are kept, and at most `MAX_KEPT_BYTES` of them at once: the
 * space they hold is freed only at the next quiet moment, and a burst of large writes on a
 * nearly full disk must not fail for space the plain rename would have freed.
 */
export const MAX_KEPT_FILE_BYTES = 1 << 20
export const MAX_KEPT_BYTES = 16 << 20

/**
 * Nothing is kept while the memory folder's file system has less than this free (asked at
 * most once a second): on a small or nearly full disk every freed block counts, and a write
 * must not fail for space a plain rename would have given back.
 */
export const MIN_FREE_BYTES = 256 << 20
const ROOM_CHECK_MS = 1000

export interface FreedFiles {
  /**
   * Keeps the file at `entry` (a path, through its folder's handle) alive by a second name,
   * just before a rename replaces it. Never throws: without the name, the rename frees it.
   */
  keep(entry: string): void
  /** Names kept and not yet removed (tests). */
  pending(): number
  /** Stops the removals (at close): what is left is removed by the next open. */
  stop(): void
}

export interface FreedFilesOptions {
  /** Milliseconds until no command will have run for long enough (0 or less: quiet now). */
  readonly untilQuiet: () => number
  readonly logger?: Logger
}

/**
 * The kept names of the history at `gitdir`. Those found there (left by a kill, a power cut,
 * or a close before they went) are removed like the others, at the first quiet moments.
 */
export function createFreedFiles(gitdir: string, options: FreedFilesOptions): FreedFiles {
  const dir = path.join(gitdir, FREED_DIR)
  // Found at open: anything in this folder is Cairn's, and only a second name.
  let names: Array<{ readonly name: string; readonly bytes: number }> = []
  let keptBytes = 0
  let usable = true
  try {
    const found = disk.lstatIfThere(dir)
    if (!found) disk.mkdirSync(dir, 0o700)
    else if (found.isDirectory()) {
      // Left by a kill or a close: counted with their sizes, so the caps hold from the start.
      names = listNames(dir).map((name) => ({
        name,
        bytes: disk.lstatIfThere(path.join(dir, name))?.size ?? 0,
      }))
      keptBytes = names.reduce((sum, { bytes }) => sum + bytes, 0)
    } else usable = false
  } catch (error) {
    usable = false
    options.logger?.warn('Could not use the folder for replaced versions', error)
  }
  const prefix = `${process.pid.toString(36)}-${Date.now().toString(36)}-`
  let next = 0
  let roomCheckedAt = -Infinity
  let roomy = false
  // True when the file system holding `folder` has room to spare (see MIN_FREE_BYTES).
  const hasRoom = (folder: string): boolean => {
    const now = performance.now()
    if (now - roomCheckedAt < ROOM_CHECK_MS) return roomy
    roomCheckedAt = now
    try {
      const { bavail, bsize } = disk.statfsSync(folder)
      roomy = bavail * bsize >= MIN_FREE_BYTES
    } catch {
      roomy = false
    }
    return roomy
  }
  let stopped = false
  let timer: NodeJS.Timeout | null = null
  let removing = false
  let warned = false

  const schedule = (wait: number): void => {
    if (stopped || timer || removing || names.length === 0) return
    timer = setTimeout(
      () => {
        timer = null
        void drain()
      },
      Math.max(1, Math.ceil(wait)),
    )
    timer.unref()
  }

  // One removal at a time, each at a quiet moment; a command coming meanwhile waits for at
  // most one discard.
  async function drain(): Promise<void> {
    removing = true
    try {
      while (!stopped && names.length > 0) {
        const wait = options.untilQuiet()
        if (wait > 0) {
          removing = false
          return schedule(wait)
        }
        const { name, bytes } = names.shift()!
        keptBytes -= bytes
        try {
          await disk.promises.unlink(path.join(dir, name))
        } catch (error) {
          // Left for the next open; said once.
          if (!isCode(error, 'ENOENT') && !warned) {
            warned = true
            options.logger?.warn('Could not remove a replaced version', error)
          }
        }
      }
    } finally {
      removing = false
    }
  }

  schedule(options.untilQuiet())
  return {
    keep(entry) {
      if (!usable || stopped || names.length >= MAX_KEPT) return
      // Asked of the folder the names go to: a link is made only on the same file system.
      if (!hasRoom(dir)) return
      const name = `${prefix}${(next++).toString(36)}`
      const kept = path.join(dir, name)
      try {
        disk.linkSync(entry, kept)
      } catch {
        // Not there (a create), a folder, another file system, one without hard links: the
        // rename frees it.
        return
      }
      // Looked at through the new name (the command has looked at its file once already):
      // not a file, one that had a second name before (the rename would free nothing), or too
      // large to hold until a quiet moment — the name goes again at once (freeing nothing:
      // the file still has its own) and the rename does as before.
      let bytes = -1
      try {
        const stats = disk.lstatSync(kept)
        if (stats.isFile() && stats.nlink === 2) bytes = stats.size
      } catch {
        // Left as unknown: given up below.
      }
      if (bytes < 0 || bytes > MAX_KEPT_FILE_BYTES || keptBytes + bytes > MAX_KEPT_BYTES) {
        try {
          disk.unlinkSync(kept)
        } catch {
          // Removed by the next open's sweep.
        }
        return
      }
      keptBytes += bytes
      names.push({ name, bytes })
      schedule(options.untilQuiet())
    },
    pending: () => names.length,
    stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      timer = null
    },
  }
}
