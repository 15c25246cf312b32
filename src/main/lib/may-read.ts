import type { Stats } from 'node:fs'
import { ACCESS, disk, isCode, isDenied, isMissing } from './disk'
import { refusedTwice } from './folders'

/**
 * Whether this process may read (`wanted` 4) or list and enter (5) an entry. The permission
 * bits answer first (owner, then group, then others; root may do anything); where they say no
 * and `at` names the entry, the kernel decides (`access`): a POSIX ACL can grant what the bits
 * refuse, as for a folder shared with `setfacl -m u:me:rwx` (hunt13-followups D4). For another
 * account's entry it decides a yes too: an ACL can refuse what the bits grant (rfirst30). Where
 * there are no user ids (Windows) the answer is yes. Only EACCES or EPERM, twice, is a no; any
 * other failure of the disk is thrown (see below).
 */
function mayRead(stats: Stats, wanted: number, at?: string): boolean {
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0) return true
  // The groups only when the owner is another (a call to the system each time; the memory's
  // own files, the usual case, need none: the tree asks this of every file).
  const shift =
    stats.uid === uid
      ? 6
      : stats.gid === process.getgid?.() || (process.getgroups?.() ?? []).includes(stats.gid)
        ? 3
        : 0
  // The owner's bits are the owner's last word (an ACL's owner entry is those bits); for
  // another's entry they may say yes where an ACL entry naming this account or one of its groups
  // says no (`u:me:---`), so there the kernel is asked as well when `at` names the entry.
  if (((stats.mode >> shift) & wanted) === wanted && (shift === 6 || at === undefined)) return true
  if (at === undefined) return false
  try {
    // Asked once more when refused, as every read is (`refusedTwice`): a one-off refusal must
    // not name a readable file unreadable, which has the scans keep its last version.
    refusedTwice(() => disk.accessSync(at, ACCESS.READ | (wanted & 1 ? ACCESS.ENTER : 0)))
    return true
  } catch (error) {
    // Refused twice: a real permission problem.
    if (isDenied(error)) return false
    // Gone, or another entry in its place, since its `lstat`: nothing refused it; what comes
    // next (a read, a folder's open) finds it gone, as it would have without this question.
    if (isMissing(error) || isCode(error, 'ELOOP')) return true
    // A disk that fails (EIO, EMFILE, ENOMEM...) says nothing about permission: passed on as
    // the I/O error it is, never taken for "unreadable".
    throw error
  }
}

/**
 * True for a file or folder this process may not read (a folder: list and enter): the memory
 * browser and the Memory tool's listing name it instead of failing, and history's scans keep
 * its last version (a folder delete keeps it). The one rule for all of them, so what the
 * Memory tab calls unreadable is what history leaves alone. `at` names the entry, so that the
 * kernel has the last word (see `mayRead`). Throws when the disk fails to answer (EIO, EMFILE):
 * that is no answer about permission, and every caller fails as on any other read that fails.
 */
export function mayNotRead(stats: Stats, at?: string): boolean {
  return stats.isDirectory() ? !mayRead(stats, 0o5, at) : stats.isFile() && !mayRead(stats, 0o4, at)
}
