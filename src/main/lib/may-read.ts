import type { Stats } from 'node:fs'
import { ACCESS, disk } from './disk'

/**
 * Whether this process may read (`wanted` 4) or list and enter (5) an entry. The permission
 * bits answer first (owner, then group, then others; root may do anything); where they say no
 * and `at` names the entry, the kernel decides (`access`): a POSIX ACL can grant what the bits
 * refuse, as for a folder shared with `setfacl -m u:me:rwx` (hunt13-followups D4). Where there
 * are no user ids (Windows) the answer is yes.
 */
function mayRead(stats: Stats, wanted: number, at?: string): boolean {
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0) return true
  const groups = process.getgroups?.() ?? []
  const shift =
    stats.uid === uid ? 6 : stats.gid === process.getgid?.() || groups.includes(stats.gid) ? 3 : 0
  if (((stats.mode >> shift) & wanted) === wanted) return true
  if (at === undefined) return false
  try {
    disk.accessSync(at, ACCESS.READ | (wanted & 1 ? ACCESS.ENTER : 0))
    return true
  } catch {
    return false
  }
}

/**
 * True for a file or folder this process may not read (a folder: list and enter): the memory
 * browser and the Memory tool's listing name it instead of failing, and history's scans keep
 * its last version (a folder delete keeps it). The one rule for all of them, so what the
 * Memory tab calls unreadable is what history leaves alone. `at` names the entry, so that the
 * kernel has the last word (see `mayRead`).
 */
export function mayNotRead(stats: Stats, at?: string): boolean {
  return stats.isDirectory() ? !mayRead(stats, 0o5, at) : stats.isFile() && !mayRead(stats, 0o4, at)
}
