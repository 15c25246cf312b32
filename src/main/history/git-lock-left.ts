/**
 * Whether git's `index.lock` in the history folder was left by a git that is gone (killed, or
 * its machine stopped), so that Cairn may remove it. git itself never does: it refuses every
 * `git add` and `git commit` ("Another git process seems to be running in this repository")
 * until a person removes the file, and Cairn's index write waited on it for good.
 *
 * Its age alone does not tell: `git commit -a` (or `git commit <paths>`) holds `index.lock`
 * while the person writes the message in an editor, for minutes, with no file open on it. So a
 * lock is left only when it is older than `STALE_GIT_LOCK_MS` and, on a system whose `/proc`
 * lists the processes (Linux), no `git` process runs whose working folder, command line or
 * git variables name the data folder (the history's, or the memory folder inside it). Where
 * that cannot be told (no `/proc`), or a git process cannot be looked at (another user's), the
 * lock is never taken for left. Nor where `/proc` lists only some processes: Cairn in a sandbox
 * of its own (Flatpak, whose `/.flatpak-info` is there; any process namespace but the system's
 * first, such as a container's), where a git outside it is not listed. A git in another mount
 * namespace (a container on the same system) names the data folder by paths of its own, which
 * cannot be compared with Cairn's: it is taken as one that may hold the lock.
 */
import path from 'node:path'
import { closeQuietly, disk, isCode, OPEN, unlinkQuietly, writeOwnFile } from '../lib/disk'
import { readProc } from '../lib/lock-holder'
import {
  holderNote,
  noteHolderGone,
  readHolderNote,
  readNote,
  STALE_GIT_LOCK_MS,
} from './main-lock'

/** True when `lockFile` is a git lock no running git holds (see the top of this file). */
export function gitLockLeft(lockFile: string, dataDir: string): boolean {
  const stats = disk.lstatIfThere(lockFile)
  if (!stats?.isFile() || Date.now() - stats.mtimeMs <= STALE_GIT_LOCK_MS) return false
  if (!seesEveryProcess()) return false
  const pids = processIds()
  if (pids === null) return false
  const names = folderNames(dataDir)
  const mounts = namespaceOf('self', 'mnt')
  return !pids.some((pid) => gitFor(pid, names, mounts))
}

/**
 * A note beside git's `index.lock` while Cairn holds it (`history.git/cairn-index-lock`): git's
 * lock holds the new index's bytes, so it cannot name its writer itself. One line, as
 * `main.lock`'s own (main-lock.ts), with the lock's file and its birth time: `cairn-index-lock
 * {"pid":…,"since":…,"host":…,"boot":…,"started":…,"pidns":…,"machine":…,"lock":"<device>:<inode>",
 * "born":<ms>}`. Written once
 * the lock is made, removed once it is renamed or removed; a kill between leaves both.
 */
export const INDEX_LOCK_NOTE = 'cairn-index-lock'
const INDEX_NOTE_PREFIX = `${INDEX_LOCK_NOTE} `

// Where `takeIndexLock` makes the lock's file before it is the lock.
const INDEX_LOCK_MADE = 'cairn-index-lock-new'

/**
 * Creates git's `index.lock` in `gitdir` exclusively, noted, and returns it open for writing;
 * throws EEXIST when a lock is there. Made and noted under a name of Cairn's own first, then
 * linked as the lock (a link fails where the lock exists, as `O_EXCL` does), so a kill at any
 * moment leaves no lock or a noted one: made in place and noted after, a kill between the two
 * (tens of microseconds, hit by a kill loop racing `git add`) left a lock taken for git's, which
 * in Flatpak or a container stayed until removed by hand. Where the file system refuses hard
 * links, made in place and noted after, as before.
 */
export function takeIndexLock(gitdir: string, lockFile: string): number {
  // A lock there keeps its note: it may be a killed Cairn's, which the caller looks at next.
  if (disk.lstatIfThere(lockFile)) throw Object.assign(new Error('the lock exists'), EXISTS)
  const made = path.join(gitdir, INDEX_LOCK_MADE)
  // A kill's left-over (only one Cairn writes a data folder's history).
  unlinkQuietly(made)
  const fd = disk.openSync(made, OPEN.WRITE_NEW | OPEN.NOFOLLOW, 0o644)
  try {
    noteIndexLock(gitdir, fd)
    disk.linkSync(made, lockFile)
    return fd
  } catch (error) {
    closeQuietly(fd)
    // The note names a file that is not the lock (gone in a moment): never left naming it.
    forgetIndexLock(gitdir)
    if (isCode(error, 'EEXIST')) throw error
  } finally {
    unlinkQuietly(made)
  }
  // No hard links here (FAT, exFAT, some network folders): made in place, noted after.
  const direct = disk.openSync(lockFile, OPEN.WRITE_NEW | OPEN.NOFOLLOW, 0o644)
  noteIndexLock(gitdir, direct)
  return direct
}

const EXISTS = { code: 'EEXIST' }

/** Notes that this process holds `index.lock`, made as `fd` (best effort: unnoted, it is git's). */
function noteIndexLock(gitdir: string, fd: number): void {
  try {
    const { dev, ino, birthtimeMs } = disk.fstatSync(fd)
    const note = holderNote(INDEX_NOTE_PREFIX, { lock: `${dev}:${ino}`, born: birthtimeMs })
    writeOwnFile(path.join(gitdir, INDEX_LOCK_NOTE), note)
  } catch {
    // A lock without its note is taken for git's: it stays until removed by hand, as before.
  }
}

/** Removes the note once the lock it names is renamed or removed. */
export function forgetIndexLock(gitdir: string): void {
  unlinkQuietly(path.join(gitdir, INDEX_LOCK_NOTE))
}

/**
 * True when `lockFile`, git's `index.lock` in `gitdir`, is Cairn's own (the note names its very
 * file, born when the note says: a git's lock made after a kill may reuse the inode) and its
 * holder is gone for sure: a process of this machine, boot and process namespace that no longer
 * runs, or an earlier boot's (lib/lock-holder.ts). Its age does not matter. A holder in another
 * namespace (a Flatpak or container Cairn beside this one) or of another machine is never gone
 * here; nor is one where the file system gives no birth time to compare.
 */
export function ownIndexLockLeft(gitdir: string, lockFile: string): boolean {
  const holder = readHolderNote(
    readNote(path.join(gitdir, INDEX_LOCK_NOTE)) ?? '',
    INDEX_NOTE_PREFIX,
  )
  const { lock, born } = (holder ?? {}) as { lock?: unknown; born?: unknown }
  if (holder === null || typeof lock !== 'string' || typeof born !== 'number') return false
  const stats = disk.lstatIfThere(lockFile)
  if (!stats?.isFile() || lock !== `${stats.dev}:${stats.ino}`) return false
  // Born when the note says Cairn's lock was: a git's lock made since on the same inode (reused
  // at once on ext4) is born later. Compared with the note's time instead, a clock set back after
  // the kill (an NTP step, a clock kept in local time) made git's live lock look Cairn's.
  if (!(stats.birthtimeMs > 0) || stats.birthtimeMs !== born) return false
  return noteHolderGone(holder, lockFile)
}

/**
 * The inode of the first process namespace, the one the system starts in (the kernel's
 * `PROC_PID_INIT_INO`, the same on every Linux since 3.8): a process in any other sees only
 * that namespace's processes in `/proc`.
 */
const FIRST_PID_NAMESPACE = 'pid:[4026531836]'

// False where `/proc` may not list a git that holds the lock: Cairn in Flatpak, or in a process
// namespace of its own (a container, `unshare -p`). Where it cannot be told, false too.
function seesEveryProcess(): boolean {
  if (process.platform !== 'linux') return false
  if (disk.lstatIfThere('/.flatpak-info')) return false
  return namespaceOf('self', 'pid') === FIRST_PID_NAMESPACE
}

// `/proc/<pid>/ns/<kind>` (`mnt:[4026531840]`), or null where it cannot be read.
function namespaceOf(pid: number | 'self', kind: 'pid' | 'mnt'): string | null {
  try {
    return disk.readlinkSync(`/proc/${pid}/ns/${kind}`)
  } catch {
    return null
  }
}

// The ids of the running processes, or null where `/proc` does not list them.
function processIds(): number[] | null {
  if (process.platform !== 'linux') return null
  try {
    return disk
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry.name))
      .map((entry) => Number(entry.name))
  } catch {
    return null
  }
}

// The data folder as given and with its links resolved (a person may reach it either way).
function folderNames(dataDir: string): string[] {
  const names = [path.resolve(dataDir)]
  try {
    const real = disk.realpathSync(dataDir)
    if (!names.includes(real)) names.push(real)
  } catch {
    // Gone: the name given is what there is.
  }
  return names
}

// Whether process `pid` is a git that may hold a lock in the data folder: a process named
// `git` (or `git-<helper>`) whose working folder, arguments or environment name it, or that
// runs in another mount namespace. One that cannot be looked at is taken as such; one that
// exited meanwhile is not.
function gitFor(pid: number, names: ReadonlyArray<string>, mounts: string | null): boolean {
  const comm = readProc(`/proc/${pid}/comm`)
  if (comm === null) return false
  const name = comm.trim()
  if (name !== 'git' && !name.startsWith('git-')) return false
  // Its folders are named as its own mounts show them (a container's `/data`): not comparable.
  if (mounts === null || namespaceOf(pid, 'mnt') !== mounts) return true
  const cmdline = readProc(`/proc/${pid}/cmdline`)
  const environ = readProc(`/proc/${pid}/environ`)
  let cwd: string | undefined
  try {
    cwd = disk.realpathSync(`/proc/${pid}/cwd`)
  } catch {
    cwd = undefined
  }
  if (cmdline === null || environ === null || cwd === undefined) return true
  const inside = (text: string) =>
    names.some((folder) => text === folder || text.startsWith(folder + path.sep))
  if (inside(cwd)) return true
  // `--git-dir=<data>/history.git`, `GIT_DIR=<data>/history.git`, `-C <data>/memories`, …
  const words = [...cmdline.split('\0'), ...environ.split('\0')]
  return words.some((word) => names.some((folder) => word.includes(folder)))
}
