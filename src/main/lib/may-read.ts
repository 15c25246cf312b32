import type { Stats } from 'node:fs'

/**
 * Whether this process's permission bits allow `wanted` (4: read, 5: read and enter) on an
 * entry, as the kernel checks them (owner, then group, then others; root may do anything).
 * ACLs aside; where there are no user ids (Windows) the answer is yes.
 */
function mayRead(stats: Stats, wanted: number): boolean {
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0) return true
  const groups = process.getgroups?.() ?? []
  const shift =
    stats.uid === uid ? 6 : stats.gid === process.getgid?.() || groups.includes(stats.gid) ? 3 : 0
  return ((stats.mode >> shift) & wanted) === wanted
}

/**
 * True for a file or folder the permission bits forbid this process to read (a folder: to list
 * and enter): the memory browser and the Memory tool's listing name it instead of failing, and
 * history's scans keep its last version (a folder delete keeps it). The one rule for all of
 * them, so what the Memory tab calls unreadable is what history leaves alone.
 */
export function mayNotRead(stats: Stats): boolean {
  return stats.isDirectory() ? !mayRead(stats, 0o5) : stats.isFile() && !mayRead(stats, 0o4)
}
