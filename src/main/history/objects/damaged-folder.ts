/**
 * `history.git/cairn-damaged/`: where open and maintenance keep what they find damaged in the
 * git directory (a link or a folder in a file's place, an orphan pack, a damaged object, a
 * log that is not a file), set aside, never deleted (docs/durability.md).
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import {
  disk,
  errorCode,
  isCode,
  isMissing,
  isNotPlainFile,
  makeFolders,
  readPlainFile,
} from '../../lib/disk'
import { diskProblem } from '../../lib/disk-errors'
import { fitName } from '../../lib/text'
import { OWN_FILE_CAP } from '../../lib/own-file-caps'

/** The folder's name inside the git directory. */
export const DAMAGED_FOLDER = 'cairn-damaged'

/**
 * `history.git/cairn-damaged/`, made when missing. Anything but a real folder there (a link
 * to a folder outside the data folder: what is kept aside would be moved out; a file: every
 * open refused) is itself moved out of the way first, under a name of its own, never
 * followed (rprobe28n).
 */
export function damagedFolder(gitdir: string): string {
  const aside = path.join(gitdir, DAMAGED_FOLDER)
  const there = disk.lstatIfThere(aside)
  if (there && !there.isDirectory()) {
    disk.renameSync(aside, freeName(gitdir, `${DAMAGED_FOLDER}-not-a-folder-${Date.now()}`))
  }
  makeFolders(aside, 0o700)
  return aside
}

/**
 * What was found damaged could not be moved into `cairn-damaged/`: the folder read-only or on
 * another file system (a mount), the disk full, the folder unmakeable. It is still where it
 * was, untouched (a rename is all or nothing). `code` is the refusal's errno, so a caller that
 * tells a failing disk from damage still does; `reason` says it for people.
 */
export class NotKeptAsideError extends Error {
  readonly code: string | undefined
  constructor(
    /** Its name inside the git directory (`HEAD`, `refs/heads/main`): never a host path. */
    readonly what: string,
    readonly reason: string,
    cause: unknown,
  ) {
    super(`${what} could not be kept aside in ${DAMAGED_FOLDER}/ because ${reason}`, { cause })
    this.name = 'NotKeptAsideError'
    this.code = errorCode(cause)
  }
}

// Words for why a move into cairn-damaged/ failed.
function whyNotKept(error: unknown): string {
  switch (errorCode(error)) {
    case 'EXDEV':
      return `${DAMAGED_FOLDER}/ is on another file system (a mount), and a move there would be a copy`
    case 'EROFS':
      return `${DAMAGED_FOLDER}/ is on a read-only file system`
    case 'EACCES':
    case 'EPERM':
      return `the system does not let Cairn add to ${DAMAGED_FOLDER}/ (permission denied, or the folder is made immutable)`
    default:
      return diskProblem(error)?.reason ?? 'of an unexpected file system error'
  }
}

/**
 * Moves `file` (whatever it is: a file, a link, a fifo, a folder) into `cairn-damaged/` as
 * `name` (cut to what a name may be: 255 bytes of UTF-8), or, when something has that name,
 * `name-<8 hex digits>`: a rename replaces what has its target's name, so two moves of one
 * name (the same orphan pack twice, two in one millisecond) would lose the first. One look
 * for a fresh name, however many were kept under it before (the ordinals `-2`, `-3`… cost a
 * look at each one taken). Returns the name it was kept under. One writer holds the data
 * folder, so nothing else makes a name between the look and the rename. When the move fails,
 * throws `NotKeptAsideError`, and `file` is where it was.
 */
export function moveIntoDamaged(gitdir: string, file: string, name: string): string {
  try {
    const kept = freeName(damagedFolder(gitdir), name)
    disk.renameSync(file, kept)
    return path.basename(kept)
  } catch (error) {
    const what = path.relative(gitdir, file).split(path.sep).join('/')
    throw new NotKeptAsideError(what, whyNotKept(error), error)
  }
}

/**
 * One of Cairn's own records in the git directory (the note of a command, a move or a restore
 * in flight, the search records), read by `readPlainFile`: its bytes, or null when there is
 * none. Anything but a plain file in its place (a link, a fifo, a folder, a device) is damage:
 * never read through nor waited on, moved into `cairn-damaged/` (so that the next write makes
 * a fresh one) and read as none. I/O errors are thrown.
 */
export function readOwnRecord(gitdir: string, file: string): Buffer | null {
  try {
    return readPlainFile(file, OWN_FILE_CAP.RECORDS)
  } catch (error) {
    if (isMissing(error)) return null
    if (!isNotPlainFile(error)) throw error
  }
  const name = path.relative(gitdir, file).split(path.sep).join('-')
  moveIntoDamaged(gitdir, file, `${name}-${Date.now()}`)
  return null
}

// The longest name most file systems take, in bytes (UTF-8), not characters.
const MAX_NAME_BYTES = 255

// `dir/name`, or `dir/name-<8 hex digits>` when that is taken, each cut to a name's length.
function freeName(dir: string, name: string): string {
  let candidate = path.join(dir, fitName(name, '', MAX_NAME_BYTES))
  while (taken(candidate)) {
    const tail = `-${randomBytes(4).toString('hex')}`
    candidate = path.join(dir, fitName(name, tail, MAX_NAME_BYTES))
  }
  return candidate
}

function taken(candidate: string): boolean {
  try {
    return disk.lstatIfThere(candidate) !== undefined
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false
    throw error
  }
}
