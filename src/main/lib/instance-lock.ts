/**
 * One writer per data folder: a lock file (`cairn.lock`) naming the process that holds it.
 * A second Cairn (another window, another process, or a second core in this process) is
 * refused with a clear message; a lock left by a process that is gone is taken over.
 */

import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { CairnError } from './errors'
import { closeQuietly, disk, isCode, listNames, OPEN, unlinkQuietly } from './disk'
import { holderStillRunning, ownIdentity, type HolderIdentity } from './lock-holder'

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
  for (let attempt = 0; attempt < 5; attempt++) {
    let ino: number
    try {
      ino = createLockFile(file, text, me.token)
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
      const found = readLock(file)
      if (found === 'gone') continue
      if (isLive(found)) throw lockedError(found === 'unreadable' ? null : found)
      takeOver(file, found === 'unreadable' ? null : found.raw)
      tookOver = true
      continue
    }
    removeLeftovers(file)
    return {
      tookOver,
      assertHeld() {
        // The file is this one's while it holds this one's token (an inode number alone may
        // be reused by a lock made after this one's was deleted).
        let now: string | null = null
        try {
          now = disk.readFileSync(file).toString('utf8')
        } catch (error) {
          if (!isCode(error, 'ENOENT')) throw error
        }
        if (now !== text) {
          throw new CairnError(
            'locked',
            'Another Cairn took over this data folder, so this one stopped saving changes. Close one of them.',
          )
        }
      },
      release() {
        released.add(me.token)
        try {
          if (
            disk.lstatSync(file).ino === ino &&
            disk.readFileSync(file).toString('utf8') === text
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
 * Creates `file` holding `text`, never empty or half written: the text goes to a temp file
 * first, which is then hard-linked as the lock (a link fails if the lock exists, like
 * O_EXCL). Where the file system has no hard links, O_EXCL and a write. Returns its inode;
 * throws EEXIST when the lock exists.
 */
function createLockFile(file: string, text: string, token: string): number {
  const temp = `${file}.${token}.tmp`
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

// Temp files of a lock creation or take-over that a kill interrupted: meaningless once the
// lock is held.
// Best effort: a failing disk must not leave the lock just taken behind, held by no one.
function removeLeftovers(file: string): void {
  const name = path.basename(file)
  let names: string[]
  try {
    names = listNames(path.dirname(file))
  } catch {
    return
  }
  for (const entry of names) {
    if (entry.startsWith(`${name}.`) && /\.tmp$|\.stale-[0-9a-f]+$/.test(entry)) {
      unlinkQuietly(path.join(path.dirname(file), entry))
    }
  }
}

type Found = 'gone' | 'unreadable' | (Owner & { readonly raw: string; readonly stale: boolean })

function readLock(file: string): Found {
  let raw: string
  let mtime: number
  try {
    raw = disk.readFileSync(file).toString('utf8')
    mtime = disk.lstatSync(file).mtimeMs
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 'gone'
    throw error
  }
  try {
    const owner = JSON.parse(raw) as Owner
    if (typeof owner.pid !== 'number' || typeof owner.token !== 'string') throw new Error()
    return { ...owner, raw, stale: false }
  } catch {
    return Date.now() - mtime > UNREADABLE_GRACE_MS
      ? { pid: -1, host: '', token: '', since: '', raw, stale: true }
      : 'unreadable'
  }
}

function isLive(found: Exclude<Found, 'gone'>): boolean {
  if (found === 'unreadable') return true
  if (found.stale) return false
  if (found.pid === process.pid && released.has(found.token)) return false
  // A lock from another machine (a shared folder) cannot be checked: it is respected.
  if (found.host !== os.hostname()) return true
  return holderStillRunning(found)
}

/**
 * Replaces a stale lock. It is renamed aside first (only one taker can rename it); if what was
 * renamed is not the stale lock after all (someone else's fresh one), it is linked back.
 */
function takeOver(file: string, staleRaw: string | null): void {
  const aside = `${file}.stale-${randomBytes(6).toString('hex')}`
  try {
    disk.renameSync(file, aside)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return
    throw error
  }
  let raw: string | null = null
  try {
    raw = disk.readFileSync(aside).toString('utf8')
  } catch {
    // Treat as stale.
  }
  if (staleRaw !== null && raw !== null && raw !== staleRaw) {
    try {
      disk.linkSync(aside, file)
    } catch {
      // A newer lock is there already; the one renamed aside lost its place.
    }
  }
  try {
    disk.unlinkSync(aside)
  } catch {
    // Gone already.
  }
}

function lockedError(owner: Owner | null): CairnError {
  const who = owner
    ? owner.host === os.hostname()
      ? ` (process ${owner.pid})`
      : ` (on the computer ${owner.host})`
    : ''
  return new CairnError(
    'locked',
    `Cairn is already open on this data folder${who}. Close the other Cairn window first, then try again. If no other Cairn is open, restarting the computer frees the folder.`,
  )
}
