/**
 * One writer per data folder: a lock file (`cairn.lock`) naming the process that holds it.
 * A second Cairn (another window, another process, or a second core in this process) is
 * refused with a clear message; a lock left by a process that is gone is taken over.
 */

import { createHash, randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { CairnError } from './errors'
import {
  closeQuietly,
  disk,
  isCode,
  isNotPlainFile,
  listNames,
  OPEN,
  readPlainFile,
  unlinkQuietly,
} from './disk'
import { OWN_FILE_CAP } from './own-file-caps'
import {
  fromThisBoot,
  holderStillRunning,
  inOwnNamespace,
  machineId,
  ownIdentity,
  type HolderIdentity,
} from './lock-holder'

/** The name of the lock file in the data folder. */
export const LOCK_FILE = 'cairn.lock'

/** A held lock. */
export interface InstanceLock {
  /** Throws a `locked` error when another process took the lock over meanwhile. */
  assertHeld(): void
  /**
   * True when a lock was found and taken over (its process was gone): the Cairn before this
   * one did not close, so what a kill can leave behind (temp files) is looked for everywhere.
   */
  readonly tookOver: boolean
  /** Removes the lock file if it is still this one's. Safe to call twice. */
  release(): void
}

interface Owner extends HolderIdentity {
  readonly pid: number
  readonly host: string
  readonly token: string
  readonly since: string
}

// Tokens of locks this process released: one whose file could not be removed is stale.
const released = new Set<string>()

// A lock file that cannot be read is a lock being written right now, unless it is older.
const UNREADABLE_GRACE_MS = 10_000

// How long a start waits for another Cairn taking the same stale lock over (milliseconds
// in practice) before it gives up with `locked`.
const TAKEOVER_WAIT_MS = 2_000

// Take-over mutexes stepped past before giving up: each one means a Cairn killed in the
// middle of a take-over, so more than a couple never happen.
const MAX_STALE_MUTEXES = 8

/** Takes the lock of `dataDir` or throws a `locked` CairnError naming the holder. */
export function acquireInstanceLock(dataDir: string): InstanceLock {
  const file = path.join(dataDir, LOCK_FILE)
  const me: Owner = {
    pid: process.pid,
    host: os.hostname(),
    token: randomBytes(8).toString('hex'),
    since: new Date().toISOString(),
    ...ownIdentity(),
  }
  const text = `${JSON.stringify(me)}\n`
  let tookOver = false
  const giveUpAt = Date.now() + TAKEOVER_WAIT_MS
  for (let attempt = 0; attempt < 50 && Date.now() <= giveUpAt; attempt++) {
    let ino: number
    try {
      ino = createLockFile(file, text, me.token)
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
      const found = readLock(file)
      if (found === 'gone') continue
      if (found === 'unreadable') throw lockedError(null)
      if (isLive(file, found)) throw lockedError(found)
      const outcome = takeOver(file, found, text, me.token)
      if (outcome === 'busy') {
        // Another starting Cairn is taking the same stale lock over right now: its lock will
        // be there in a moment, and refuse this one.
        pause(20)
        continue
      }
      if (outcome === 'changed') continue
      ino = outcome
      tookOver = true
    }
    removeLeftovers(file)
    // What the lock file holds while it is this one's, and room to read one byte more (a
    // longer file is not this one's either): checked before every commit, read into the same
    // bytes each time, with no `fstat` for its size.
    const expected = Buffer.from(text)
    const found = Buffer.alloc(expected.byteLength + 1)
    return {
      tookOver,
      assertHeld() {
        // The file is this one's while it holds this one's token (an inode number alone may
        // be reused by a lock made after this one's was deleted).
        let length = -1
        try {
          // Never through a link nor waiting on a fifo: either in the lock's place is not
          // this one's lock (a fifo reads as empty).
          const fd = disk.openSync(file, OPEN.READ | OPEN.NOFOLLOW | OPEN.NONBLOCK)
          try {
            // Until the bytes are full or the file ends: a short read (possible on FUSE or a
            // network folder) is not another Cairn's lock.
            length = 0
            for (let n = -1; n !== 0 && length < found.byteLength; length += n) {
              n = disk.readSync(fd, found, length, found.byteLength - length, length)
            }
          } finally {
            closeQuietly(fd)
          }
        } catch (error) {
          if (!isCode(error, 'ENOENT') && !isNotPlainFile(error)) throw error
        }
        if (length !== expected.byteLength || !found.subarray(0, length).equals(expected)) {
          throw takenOverError()
        }
      },
      release() {
        released.add(me.token)
        try {
          if (
            disk.lstatSync(file).ino === ino &&
            readPlainFile(file, OWN_FILE_CAP.TINY).toString('utf8') === text
          ) {
            disk.unlinkSync(file)
          }
        } catch {
          // Gone already.
        }
      },
    }
  }
  throw lockedError(null)
}

/**
 * A temp file name for writing `file`, new at each call: one whose removal failed (its unlink
 * is quiet) must not be in the way of the next write (the take-over's, or the next attempt's),
 * which creates its temp file exclusively. Ends in `.tmp`, so `removeLeftovers` takes it.
 */
function tempFileFor(file: string, token: string): string {
  return `${file}.${token}-${randomBytes(4).toString('hex')}.tmp`
}

/**
 * Creates `file` holding `text`, never empty or half written: the text goes to a temp file
 * first, which is then hard-linked as the lock (a link fails if the lock exists, like
 * O_EXCL). Where the file system has no hard links, O_EXCL and a write. Returns its inode;
 * throws EEXIST when the lock exists.
 */
function createLockFile(file: string, text: string, token: string): number {
  const temp = tempFileFor(file, token)
  const fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o600)
  let ino: number
  try {
    disk.writeFileSync(fd, text)
    ino = disk.fstatSync(fd).ino
  } catch (error) {
    unlinkQuietly(temp)
    throw error
  } finally {
    closeQuietly(fd)
  }
  try {
    disk.linkSync(temp, file)
    return ino
  } catch (error) {
    if (isCode(error, 'EEXIST')) throw error
    // The temp file is gone: a Cairn that holds the lock now tidied it away (`removeLeftovers`).
    if (isCode(error, 'ENOENT'))
      throw Object.assign(new Error('the lock exists'), { code: 'EEXIST' })
    if (!isCode(error, 'EPERM') && !isCode(error, 'ENOTSUP') && !isCode(error, 'ENOSYS')) {
      throw error
    }
  } finally {
    unlinkQuietly(temp)
  }
  // No hard links here (FAT, exFAT): create it exclusively and write it.
  const direct = disk.openSync(file, OPEN.WRITE_NEW, 0o600)
  try {
    disk.writeFileSync(direct, text)
    return disk.fstatSync(direct).ino
  } catch (error) {
    // A lock without its owner would look like one being written: never leave it.
    unlinkQuietly(file)
    throw error
  } finally {
    closeQuietly(direct)
  }
}

/**
 * What a kill can leave behind: temp files of a lock or take-over mutex being created, a
 * take-over's mutex, and the `.stale-*` asides of Cairns before the mutex. Asides are removed
 * only once old, since a Cairn from before the mutex starting now may be about to read its
 * own. Temp files go whatever their age (a kill leaves one, and no temp file may outlive the
 * open that follows): a Cairn starting now whose temp file vanishes before its link or rename
 * takes that as the lock having changed, and finds this one. Mutexes go whatever their age:
 * each names one lock, which is no longer there now that this lock is, and never comes back
 * (a token is never reused), so a taker holding one finds the lock changed and backs off.
 * Best effort: a failing disk must not leave the lock just taken behind, held by no one.
 */
function removeLeftovers(file: string): void {
  const dir = path.dirname(file)
  const name = path.basename(file)
  let names: string[]
  try {
    names = listNames(dir)
  } catch {
    return
  }
  for (const entry of names) {
    if (!entry.startsWith(`${name}.`)) continue
    const leftover = path.join(dir, entry)
    if (/^[^.]+\.lock\.takeover-[0-9a-f]+$/.test(entry)) {
      unlinkQuietly(leftover)
    } else if (entry.endsWith('.tmp')) {
      unlinkQuietly(leftover)
    } else if (/\.stale-[0-9a-f]+$/.test(entry)) {
      try {
        const stat = disk.lstatIfThere(leftover)
        if (stat && Date.now() - stat.mtimeMs > UNREADABLE_GRACE_MS) unlinkQuietly(leftover)
      } catch {
        // Left for the next start.
      }
    }
  }
}

interface Stale extends Owner {
  /** The lock file's exact text and inode: what a taker checks is still there. */
  readonly raw: string
  readonly ino: number
  readonly stale: boolean
}

type Found = 'gone' | 'unreadable' | Stale

function readLock(file: string): Found {
  let raw: string
  let stat: { mtimeMs: number; ino: number }
  try {
    try {
      raw = readPlainFile(file, OWN_FILE_CAP.TINY).toString('utf8')
    } catch (error) {
      // A link, a fifo or a folder in the lock's place: never read through nor waited on,
      // an unreadable lock (taken over once it is old enough, as any other).
      if (!isNotPlainFile(error)) throw error
      raw = ''
    }
    stat = disk.lstatSync(file)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 'gone'
    throw error
  }
  try {
    const owner = JSON.parse(raw) as Owner
    if (typeof owner.pid !== 'number' || typeof owner.token !== 'string') throw new Error()
    return { ...owner, raw, ino: stat.ino, stale: false }
  } catch {
    return Date.now() - stat.mtimeMs > UNREADABLE_GRACE_MS
      ? { pid: -1, host: '', token: '', since: '', raw, ino: stat.ino, stale: true }
      : 'unreadable'
  }
}

function isLive(file: string, found: Stale): boolean {
  if (found.stale) return false
  if (found.pid === process.pid && released.has(found.token)) return false
  // A lock from another machine (a shared folder) cannot be checked: it is respected.
  if (found.host !== os.hostname()) return true
  return holderStillRunning(found, file)
}

/**
 * Replaces the stale lock `stale` with this one's (`text`), returning its inode; 'busy' when
 * another Cairn is taking it over right now, 'changed' when the lock is no longer `stale`.
 *
 * Only the holder of a mutex file, `cairn.lock.takeover-<digest of the stale lock>`, created
 * exclusively, may replace the lock, and only after checking, mutex held, that the lock is
 * still the stale one: so two starting Cairns never both take it. Renaming the stale lock
 * aside, as before, let a second taker rename the first one's fresh lock aside too.
 *
 * A mutex whose owner is gone (killed mid take-over) is stale in turn: it is not removed
 * (that would race the same way) but stepped past, to a mutex named after both it and the
 * lock, which again only one taker can create.
 */
function takeOver(
  file: string,
  stale: Stale,
  text: string,
  token: string,
): number | 'busy' | 'changed' {
  let key = digest(stale.raw)
  for (let depth = 0; depth < MAX_STALE_MUTEXES; depth++) {
    const mutex = `${file}.takeover-${key}`
    try {
      createLockFile(mutex, text, token)
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
      const holder = readLock(mutex)
      if (holder === 'gone') return 'changed'
      if (holder === 'unreadable' || isLive(mutex, holder)) return 'busy'
      key = digest(key + holder.raw)
      continue
    }
    try {
      return replaceIfStill(file, stale, text, token)
    } finally {
      // The lock is no longer `stale` now, so whoever takes this mutex next backs off.
      unlinkQuietly(mutex)
    }
  }
  return 'busy'
}

function replaceIfStill(
  file: string,
  stale: Stale,
  text: string,
  token: string,
): number | 'changed' {
  const now = readLock(file)
  if (now === 'gone' || now === 'unreadable' || now.raw !== stale.raw || now.ino !== stale.ino) {
    return 'changed'
  }
  const temp = tempFileFor(file, token)
  const fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o600)
  let ino: number
  try {
    disk.writeFileSync(fd, text)
    ino = disk.fstatSync(fd).ino
  } catch (error) {
    closeQuietly(fd)
    unlinkQuietly(temp)
    throw error
  }
  closeQuietly(fd)
  try {
    disk.renameSync(temp, file)
  } catch (error) {
    unlinkQuietly(temp)
    // Tidied away by a Cairn that holds the lock now (`removeLeftovers`).
    if (isCode(error, 'ENOENT')) return 'changed'
    throw error
  }
  return ino
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

// Waits without returning to the event loop: the lock is taken synchronously at open.
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** What a Cairn whose lock another one took over says when it is asked to change anything. */
export function takenOverError(): CairnError {
  return new CairnError(
    'locked',
    'Another Cairn took over this data folder, so this one stopped saving changes. Close one of them.',
  )
}

function lockedError(owner: Owner | null): CairnError {
  const free = 'If no other Cairn is open, restarting the computer frees the folder.'
  if (owner === null || owner.host === os.hostname()) {
    if (owner !== null && !sameMachine(owner)) {
      // A clone of this system (the same host name, another machine id or boot), sharing the
      // folder; or, by the same machine id, this system before a restart, the folder on a file
      // system other systems may mount (lock-holder.ts cannot tell the two apart there).
      const where =
        owner.machine === undefined || owner.machine === machineId()
          ? 'another computer with the same name that shares this folder, or on this computer before it last restarted'
          : 'another computer with the same name that shares this folder'
      return lockedOn(where, removeByHand)
    }
    // A process id of another namespace (a Flatpak or container Cairn, often its process 1)
    // means nothing to a person here.
    const who =
      owner === null
        ? ''
        : inOwnNamespace(owner)
          ? ` (process ${owner.pid})`
          : ' (in an app sandbox or a container on this computer, such as Flatpak or Docker)'
    return new CairnError(
      'locked',
      `Cairn is already open on this data folder${who}. Close the other Cairn window first, then try again. ${free}`,
    )
  }
  // Never judged stale (lock-holder.ts cannot look at another computer's processes), so no restart
  // here frees it: a folder synced or restored from another computer is freed by hand.
  return lockedOn(`the computer ${owner.host}`, removeByHand)
}

const removeByHand =
  'If no other Cairn is open, remove the file cairn.lock in the data folder, then try again.'

function lockedOn(where: string, advice: string): CairnError {
  return new CairnError(
    'locked',
    `Cairn is already open on this data folder (on ${where}). Close the other Cairn window first, then try again. ${advice}`,
  )
}

// False for a lock of another system that bears this one's host name: another machine id, or
// another boot with this one running meanwhile or on a shared folder (lock-holder.ts).
function sameMachine(owner: Owner): boolean {
  if (owner.machine !== undefined && owner.machine !== machineId()) return false
  return owner.boot === undefined || fromThisBoot(owner)
}
