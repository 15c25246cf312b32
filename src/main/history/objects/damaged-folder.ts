/**
 * `history.git/cairn-damaged/`: where open and maintenance keep what they find damaged in the
 * git directory (a link or a folder in a file's place, an orphan pack, a damaged object, a
 * log that is not a file), set aside, never deleted (docs/durability.md).
 */
import path from 'node:path'
import { disk, isCode, isMissing, isNotPlainFile, makeFolders, readPlainFile } from '../../lib/disk'
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
 * Moves `file` (whatever it is: a file, a link, a fifo, a folder) into `cairn-damaged/` as
 * `name`, or `name-2`, `name-3`… when that is taken: a rename replaces what has its target's
 * name, so two moves of one name (the same orphan pack twice, two in one millisecond) would
 * lose the first. Returns the name it was kept under. One writer holds the data folder, so
 * nothing else makes a name between the check and the rename.
 */
export function moveIntoDamaged(gitdir: string, file: string, name: string): string {
  const kept = freeName(damagedFolder(gitdir), name)
  disk.renameSync(file, kept)
  return path.basename(kept)
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

// `dir/name`, or `dir/name-2`… : the first that nothing has.
function freeName(dir: string, name: string): string {
  for (let n = 1; ; n++) {
    const candidate = path.join(dir, n === 1 ? name : `${name}-${n}`)
    try {
      if (disk.lstatIfThere(candidate) === undefined) return candidate
    } catch (error) {
      if (isCode(error, 'ENOENT')) return candidate
      throw error
    }
  }
}
