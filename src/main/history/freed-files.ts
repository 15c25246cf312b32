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
 * like the rest; the open itself only lists the folder, once, and counts the names toward
 * `MAX_KEPT`). Whatever else is found there (a folder a person or a tool put there, a symlink)
 * is removed too, through handles: a folder with everything in it, a symlink itself, never
 * what it points to, and nothing outside this folder. That holds where entries are named by
 * handle (Linux); where they are named by path (macOS, Windows) a folder found there is left,
 * with one warning an open: one swapped for a symlink after it was listed would send the
 * removal of its entries through the link. Past `MAX_KEPT` names or `MAX_KEPT_BYTES`, with
 * less than `MIN_FREE_BYTES` free on the disk, for a file over `MAX_KEPT_FILE_BYTES`, or where the link cannot be made (the memory folder on
 * another file system, a file system without hard links), the rename frees the old file
 * itself, as before.
 */

import path from 'node:path'
import { disk, isCode, isMissing } from '../lib/disk'
import { Folder } from '../lib/folders'
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
  /** Names kept or found and not yet removed (tests). */
  pending(): number
  /** Stops the removals (at close): what is left is removed by the next open. */
  stop(): void
}

export interface FreedFilesOptions {
  /** Milliseconds until no command will have run for long enough (0 or less: quiet now). */
  readonly untilQuiet: () => number
  readonly logger?: Logger
}

/** A name to remove: in the folder of kept names, or (found there) in a folder inside it. */
interface Pending {
  /** The folder holding it (a handle: nothing is removed through a path a link could turn). */
  readonly parent: Folder
  readonly name: string
  /**
   * Its bytes toward `MAX_KEPT_BYTES`: `MAX_KEPT_FILE_BYTES` for a name found at open (not
   * looked at), 0 for an entry of a folder found there.
   */
  readonly bytes: number
  /** Listed as a folder: its entries go first. */
  readonly folder?: boolean
  /** A folder whose entries were queued before it, open by this handle: removed last. */
  readonly emptied?: Folder
}

/**
 * The kept names of the history at `gitdir`. Those found there (left by a kill, a power cut,
 * or a close before they went) are counted, from one listing, and removed like the others at
 * the first quiet moments: nothing of theirs is looked at on the open's path.
 */
export function createFreedFiles(gitdir: string, options: FreedFilesOptions): FreedFiles {
  const dir = path.join(gitdir, FREED_DIR)
  let top: Folder | null = null
  // Found at open: anything in this folder is Cairn's, and only a second name.
  let names: Pending[] = []
  let keptBytes = 0
  let usable = true
  try {
    top = openFolder(dir)
    if (!top) {
      disk.mkdirSync(dir, 0o700)
      top = openFolder(dir)
    }
    const opened = top
    // Left by a kill or a close: counted toward MAX_KEPT from the start, and toward
    // MAX_KEPT_BYTES as the largest file kept (their sizes are not asked for: an `lstat` each
    // on the open's path), so runs killed before a quiet moment never hold more than the cap.
    if (opened) {
      names = disk.readdirSync(opened.self).map((dirent) => ({
        parent: opened,
        name: dirent.name,
        bytes: MAX_KEPT_FILE_BYTES,
        folder: dirent.isDirectory(),
      }))
      keptBytes = names.length * MAX_KEPT_FILE_BYTES
    }
  } catch (error) {
    // A file or a symlink in place of the folder (ENOTDIR, ELOOP) is left alone, unused.
    if (!isCode(error, 'ENOTDIR') && !isCode(error, 'ELOOP')) {
      options.logger?.warn('Could not use the folder for replaced versions', error)
    }
    top?.close()
    top = null
  }
  if (!top) usable = false
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
  let leftFolder = false

  // Once stopped and no removal is under way: every handle closed (an unlink in flight names
  // its folder by the handle's number, which must not name another file meanwhile).
  const release = (): void => {
    for (const { emptied } of names) emptied?.close()
    names = []
    top?.close()
    top = null
  }

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

  // Said once per open: what could not be removed is tried again by the next one.
  const failed = (error: unknown): void => {
    if (warned) return
    warned = true
    options.logger?.warn('Could not remove a replaced version', error)
  }

  // Queues the entries of the folder `name` of `parent` before it, or removes the entry itself
  // when it is not a folder (a symlink: unlinked, never followed). After an `unlink` that
  // failed (`unlinkError`), an entry that is no folder keeps that failure.
  async function expand(parent: Folder, name: string, unlinkError?: unknown): Promise<void> {
    if (!parent.namesByHandle) {
      // Named by path (macOS, Windows): a folder swapped for a symlink between its listing and
      // the unlinks seconds later would send them outside, so it is not entered, only said.
      if (!leftFolder) options.logger?.warn('Left a folder among the replaced versions')
      leftFolder = true
      return
    }
    const folder = parent.openChildIfFolder(name)
    if (!folder) {
      if (unlinkError !== undefined) throw unlinkError
      return unlink(parent, name)
    }
    let listed
    try {
      listed = await disk.promises.readdir(folder.self)
    } catch (error) {
      folder.close()
      throw error
    }
    names.unshift(
      ...listed.map((dirent) => ({
        parent: folder,
        name: dirent.name,
        bytes: 0,
        folder: dirent.isDirectory(),
      })),
      { parent, name, bytes: 0, emptied: folder },
    )
  }

  async function unlink(parent: Folder, name: string): Promise<void> {
    try {
      await disk.promises.unlink(parent.entry(name))
    } catch (error) {
      if (isMissing(error)) return
      // A folder (EISDIR on Linux, EPERM elsewhere): emptied first.
      if (isCode(error, 'EISDIR') || isCode(error, 'EPERM')) return expand(parent, name, error)
      throw error
    }
  }

  async function remove({ parent, name, folder, emptied }: Pending): Promise<void> {
    if (emptied) {
      emptied.close()
      try {
        await disk.promises.rmdir(parent.entry(name))
      } catch (error) {
        if (!isMissing(error)) throw error
      }
    } else if (folder) await expand(parent, name)
    else await unlink(parent, name)
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
        const pending = names[0]!
        try {
          await remove(pending)
        } catch (error) {
          // Left for the next open. A folder whose entries could not all go is found again
          // then (its own removal fails: ENOTEMPTY), said once here.
          failed(error)
        }
        // Counted until it is gone (a folder's entries were queued before it meanwhile).
        const at = names.indexOf(pending)
        if (at >= 0) names.splice(at, 1)
        keptBytes -= pending.bytes
      }
    } finally {
      removing = false
      if (stopped) release()
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
      names.push({ parent: top!, name, bytes })
      schedule(options.untilQuiet())
    },
    pending: () => names.length,
    stop() {
      if (stopped) return
      stopped = true
      if (timer) clearTimeout(timer)
      timer = null
      if (!removing) release()
    },
  }
}

// The folder at `dir` by a handle, or null when nothing is there; a symlink or a file there
// throws (ELOOP, ENOTDIR).
function openFolder(dir: string): Folder | null {
  try {
    return Folder.openRoot(dir)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null
    throw error
  }
}
