/**
 * git's own lock on `main`: the file `refs/heads/main.lock`, created exclusively. Every git
 * command that moves `main` (`git commit`, `git reset`, `git update-ref`) creates it first and
 * gives up ("Unable to create '…/refs/heads/main.lock': File exists") when it is there; it
 * writes the new value into it and renames it over `main`. Cairn takes the same file around
 * its own move of `main` (after its last look at the ref, until the ref is written), so that a
 * git command at that moment fails cleanly instead of racing it, and a move of git's under way
 * is never written over.
 *
 * A `main.lock` that a killed git left behind holds until someone removes it: git refuses
 * every move of `main` then, and so does Cairn after a short wait, in words that say which
 * file to remove. Cairn's own, left by a kill between taking and releasing it, is removed at
 * the next open with its other temp files (open-repo.ts), as is any other lock in refs/heads
 * older than `STALE_GIT_LOCK_MS`; a younger one may be a running git's, and stays.
 */
import type { Stats } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { disk, isCode, makeFolders, OPEN, readPlainFileOrNull } from '../lib/disk'
import { CairnError } from '../lib/errors'
import { fromThisBoot, holderStillRunning, ownIdentity, type LockHolder } from '../lib/lock-holder'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { readMainRef } from './main-ref'
import { writeMainRef } from './object-store'
import { movedDuringError, movedOutside } from './outside-move'

/**
 * How long a move of `main` waits for git to let go of its lock (git itself waits 100 ms by
 * default, `core.filesRefLockTimeout`): a git command holds it for milliseconds.
 */
export const GIT_LOCK_WAIT_MS = 1000

// How often the lock is tried again while git holds it.
const RETRY_MS = 10

/**
 * An empty file Cairn keeps in the history folder, linked as `main.lock` to take the lock: a
 * second name is made and removed, no file is created or freed. On the bench machine's disk
 * (ext4 mounted `discard`) creating and removing an empty file cost 210 to 760 µs, the link
 * and its removal 48 to 91 µs (5,000 of each, 3 rounds, two processes, load 18; noisy).
 */
export const MAIN_LOCK_LINKED = 'cairn-main-lock'
const LINKED = MAIN_LOCK_LINKED

/**
 * A lock in refs/heads older than this is no running git's (a git command holds one for
 * milliseconds; an `update-ref --stdin` transaction as long as its caller waits), and open
 * removes it. Where hard links are refused Cairn's own `main.lock` is a file of its own that
 * names its process (`ownLockLeft`), so open removes it at once when that process is gone.
 */
export const STALE_GIT_LOCK_MS = 60_000

/**
 * Creates `main.lock` exclusively (true), or finds it there (false). Made as a second name of
 * `LINKED` (made first if missing, with `refs/heads`); where the file system refuses hard links
 * (or `LINKED` is no plain file), as a file of its own, as git makes it, naming Cairn's process.
 */
function take(gitdir: string, dir: string, file: string): Taken | null {
  const linked = path.join(gitdir, LINKED)
  for (let tries = 0; ; tries++) {
    try {
      disk.linkSync(linked, file)
      return { note: null }
    } catch (error) {
      if (isCode(error, 'EEXIST')) return null
      if (!isCode(error, 'ENOENT') || tries > 0) break
      // The kept file, or refs/heads, went missing: made again.
      makeFolders(dir, 0o755)
      disk.closeSync(disk.openSync(linked, OPEN.WRITE_TRUNC | OPEN.NOFOLLOW, 0o644))
    }
  }
  let fd: number
  try {
    fd = disk.openSync(file, OPEN.WRITE_NEW | OPEN.NOFOLLOW, 0o644)
  } catch (error) {
    if (isCode(error, 'EEXIST')) return null
    throw error
  }
  const note = holderNote()
  try {
    // Named, so the next open tells a killed Cairn's lock from a running git's (`ownLockLeft`).
    disk.writeSync(fd, Buffer.from(note))
  } catch {
    // Unnamed, it is told by its age alone, as before (and never as this process's own).
    return { note: '' }
  } finally {
    disk.closeSync(fd)
  }
  return { note }
}

/** How a lock was taken: as a second name of `LINKED` (null), or a file holding `note`. */
interface Taken {
  readonly note: string | null
}

/**
 * Locks this process took and could not remove (the release's unlink failed: a failing disk,
 * a permission taken away), by file: the file's identity then, and its note. Left there, it
 * refused every later move of `main` for the rest of the session (a commit owed after each
 * change, until a restart removed it). Found again exactly (same device and inode, the same
 * note where it is a file: never git's lock, which is a new file holding a commit id), it is
 * removed before the next take waits.
 */
const leftBehind = new Map<
  string,
  { readonly dev: number; readonly ino: number; readonly note: string | null }
>()

// Removes `file` when it is the lock this process left behind; true when it is gone now.
function removeLeftBehind(gitdir: string, file: string): boolean {
  const left = leftBehind.get(file)
  if (!left) return false
  let stats
  try {
    stats = disk.lstatIfThere(file)
  } catch {
    return false
  }
  const same =
    stats !== undefined &&
    stats.isFile() &&
    stats.dev === left.dev &&
    stats.ino === left.ino &&
    (left.note === null ? isSecondNameOfLinked(gitdir, stats) : readNote(file) === left.note)
  if (!same) {
    // Gone, or another's now (a person removed it, and git took the lock since).
    leftBehind.delete(file)
    return stats === undefined
  }
  try {
    disk.unlinkSync(file)
  } catch {
    return false
  }
  leftBehind.delete(file)
  return true
}

// A lock taken as a second name of `LINKED` is known by `LINKED` itself, there now: its device
// and inode alone are no proof. Removed with its kept file (a person clearing the history's
// locks), the inode is free, and ext4 hands it at once to the next file made, git's new
// `main.lock` (rhist33: Cairn then removed git's lock while git held it, and moved `main`).
function isSecondNameOfLinked(gitdir: string, stats: Stats): boolean {
  let linked
  try {
    linked = disk.lstatIfThere(path.join(gitdir, LINKED))
  } catch {
    return false
  }
  return (
    linked !== undefined &&
    linked.isFile() &&
    linked.dev === stats.dev &&
    linked.ino === stats.ino &&
    stats.nlink > 1
  )
}

/** A small note's text (a lock's, or one beside a lock); null when it is not there or cannot be read. */
export function readNote(file: string): string | null {
  try {
    return readPlainFileOrNull(file, OWN_FILE_CAP.TINY)?.toString('utf8') ?? null
  } catch {
    return null
  }
}

// Notes that the release of `file` (taken as `taken`) failed, when the file is still there.
function noteLeftBehind(file: string, taken: Taken): void {
  // An unnamed file cannot be told from another's by its bytes: left to the next open.
  if (taken.note === '') return
  try {
    const stats = disk.lstatIfThere(file)
    if (stats) leftBehind.set(file, { dev: stats.dev, ino: stats.ino, note: taken.note })
  } catch {
    // Not known: left to the next open, as before.
  }
}

/**
 * What Cairn writes in a `main.lock` of its own (where hard links are refused): one line,
 * `cairn-main-lock {"pid":…,"since":…,"host":…,"boot":…,"started":…,"pidns":…}`. git never
 * reads another's lock; its own holds the new value of the ref, a commit id.
 */
const NOTE_PREFIX = 'cairn-main-lock '

/**
 * One line, `prefix` then this process's fields and `more` as JSON: what Cairn writes in a lock
 * of git's it takes as a file of its own (`main.lock`), or beside one (`index.lock`,
 * git-lock-left.ts).
 */
export function holderNote(prefix = NOTE_PREFIX, more: Record<string, unknown> = {}): string {
  const holder: NamedHolder = {
    pid: process.pid,
    since: new Date().toISOString(),
    host: os.hostname(),
    ...ownIdentity(),
  }
  return `${prefix}${JSON.stringify({ ...holder, ...more })}\n`
}

/**
 * A `main.lock` note's holder: its process, and the machine it runs on (`os.hostname()`, and the
 * system's `/etc/machine-id` where there is one, `LockHolder.machine`: two machines may share a
 * host name, such as `localhost` or a default one).
 */
export interface NamedHolder extends LockHolder {
  readonly host?: string
}

/**
 * Whether `file`, a lock in refs/heads, is a `main.lock` of Cairn's own whose process is gone
 * (killed holding it; lock-holder.ts tells a reused process id from it). False for anything
 * else: git's lock, an unnamed one, one of a Cairn still running, or a file that cannot be read.
 */
export function ownLockLeft(file: string): boolean {
  const holder = readHolderNote(readNote(file) ?? '', NOTE_PREFIX)
  return holder !== null && noteHolderGone(holder, file)
}

/** The holder a note written by `holderNote(prefix)` names, or null for any other text. */
export function readHolderNote(text: string, prefix: string): NamedHolder | null {
  if (!text.startsWith(prefix)) return null
  try {
    const holder: unknown = JSON.parse(text.slice(prefix.length))
    return isHolder(holder) ? holder : null
  } catch {
    return null
  }
}

/**
 * Whether a note's holder, naming the lock `file`, is gone for sure: a process of this machine
 * that no longer runs, or an earlier boot of it (lock-holder.ts).
 */
export function noteHolderGone(holder: NamedHolder, file: string): boolean {
  // Another machine's (a data folder two machines share), or one that does not say and is from
  // another boot: its process id and boot say nothing of a process here, and taken at once it
  // would take a running Cairn's lock. Only its age tells (`STALE_GIT_LOCK_MS`, at open). So for
  // one written in another process namespace (a Flatpak Cairn beside a native one): lock-holder.ts
  // never judges it by its process id, and it is not left.
  if (holder.host !== os.hostname() && (holder.host !== undefined || !fromThisBoot(holder))) {
    return false
  }
  return !holderStillRunning(holder, file)
}

function isHolder(value: unknown): value is NamedHolder {
  if (typeof value !== 'object' || value === null) return false
  const holder = value as Record<string, unknown>
  return (
    Number.isSafeInteger(holder.pid) &&
    (holder.pid as number) > 0 &&
    typeof holder.since === 'string' &&
    (holder.boot === undefined || typeof holder.boot === 'string') &&
    (holder.started === undefined || typeof holder.started === 'string') &&
    (holder.host === undefined || typeof holder.host === 'string') &&
    (holder.machine === undefined || typeof holder.machine === 'string') &&
    (holder.pidns === undefined || typeof holder.pidns === 'string')
  )
}

/** The lock, held: `release` removes it (once; a failure leaves it to the next take or open). */
export interface HeldMainLock {
  release(): void
}

/** Refused: git holds (or a stopped git left) its lock on `main`; `main` did not move. */
export function gitHoldsMainError(): CairnError {
  return new CairnError(
    'conflict',
    "The history's main branch is locked by git (the file refs/heads/main.lock in the history folder, history.git): a git command is running there, or one was stopped and left it behind. Cairn waited, then did not move main, so this change is not in the history yet. If no git command is running, remove that file (git refuses to work until it is gone too); Cairn also removes it when it starts.",
  )
}

/**
 * Takes git's lock on `main` in `gitdir`, waiting up to `waitMs` while another holds it, then
 * refusing with `gitHoldsMainError`. Anything in the lock's place (a folder, a link) counts as
 * held, as it does for git.
 */
export async function lockMain(
  gitdir: string,
  waitMs: number = GIT_LOCK_WAIT_MS,
): Promise<HeldMainLock> {
  const dir = path.join(gitdir, 'refs', 'heads')
  const file = path.join(dir, 'main.lock')
  const until = performance.now() + waitMs
  let taken: Taken | null
  while (!(taken = take(gitdir, dir, file))) {
    if (removeLeftBehind(gitdir, file)) continue
    if (performance.now() >= until) throw gitHoldsMainError()
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS))
  }
  // Taken: the lock left behind is gone, and a file there later is another's.
  leftBehind.delete(file)
  const took = taken
  let held = true
  return {
    release() {
      if (!held) return
      held = false
      // `main` has moved by now. A lock the unlink leaves is removed by this process's next
      // take (`removeLeftBehind`), or by the next open.
      try {
        disk.unlinkSync(file)
      } catch (error) {
        if (!isCode(error, 'ENOENT')) noteLeftBehind(file, took)
      }
    },
  }
}

/**
 * Moves `main` (`move` writes the ref) under git's lock, as a compare and swap: a `main` moved
 * outside Cairn since `expected` (a commit made with git) is never moved back past, refused
 * with `movedDuringError`, and the next change follows it. The lock is let go either way.
 */
export async function moveMainLocked(
  gitdir: string,
  expected: string | null,
  move: () => void | Promise<void>,
): Promise<void> {
  const lock = await lockMain(gitdir)
  try {
    if (movedOutside(gitdir, expected) !== null) throw movedDuringError()
    await move()
  } finally {
    lock.release()
  }
}

/**
 * Makes `main`, found linked to the branch `symbolic` (`ref: refs/heads/x`, a `git
 * symbolic-ref`) at the commit `oid`, a branch of its own at `oid` again (`writeMainRef`, the
 * durable write of the ref), under git's lock: Cairn moves `main` itself, and writing a commit
 * id over the link would drop it unsaid (docs/durability.md). Refused with `movedDuringError` when
 * `main` changed meanwhile; the branch it linked to is never written.
 */
export async function unlinkMain(gitdir: string, oid: string, symbolic: string): Promise<void> {
  const lock = await lockMain(gitdir)
  try {
    const now = readMainRef(gitdir)
    if (now.kind !== 'ok' || now.oid !== oid || now.symbolic !== symbolic) {
      throw movedDuringError()
    }
    await writeMainRef(gitdir, oid)
  } finally {
    lock.release()
  }
}
