import type { BigIntStats } from 'node:fs'
import path from 'node:path'
import { disk } from '../lib/disk'

/**
 * The files Cairn itself wrote last, each with the stat its write left (size, mtime, ctime,
 * inode, device), so the watcher's event for that write can be told from a person's edit: an
 * event counts as Cairn's own only while its file still has exactly that stat. Anything else
 * (another size, time or inode, the file gone or replaced) is an outside change. A person's
 * edit in the same clock tick with the same size can keep all of it; so this only spares a
 * sliced walk its rescan (the change stamp), and the content is still compared with `HEAD`
 * before anything is left uncommitted.
 */
export interface OwnWrites {
  /** Cairn has just written the file at `relative` (its rename done): its stat is noted. */
  noteWritten(relative: string): void
  /** Cairn removed or replaced `relative` otherwise: no event for it is taken as its own. */
  forget(relative: string): void
  /** Whether the file at `relative` still has exactly the stat Cairn's last write left. */
  isOwn(relative: string): boolean
}

// The newest writes are the ones whose events are on their way; older ones are let go.
const KEPT = 256

type Stamp = Pick<BigIntStats, 'size' | 'mtimeNs' | 'ctimeNs' | 'ino' | 'dev'>

export function createOwnWrites(workRoot: string): OwnWrites {
  const written = new Map<string, Stamp>()
  const look = (relative: string): Stamp | null => {
    try {
      const stats = disk.lstatExactSync(path.join(workRoot, relative))
      return stats.isFile() ? stats : null
    } catch {
      return null
    }
  }
  return {
    noteWritten(relative) {
      written.delete(relative)
      const stamp = look(relative)
      if (stamp === null) return
      const { size, mtimeNs, ctimeNs, ino, dev } = stamp
      written.set(relative, { size, mtimeNs, ctimeNs, ino, dev })
      if (written.size > KEPT) written.delete(written.keys().next().value!)
    },
    forget(relative) {
      written.delete(relative)
    },
    isOwn(relative) {
      const noted = written.get(relative)
      if (noted === undefined) return false
      const now = look(relative)
      const same =
        now !== null &&
        now.size === noted.size &&
        now.mtimeNs === noted.mtimeNs &&
        now.ctimeNs === noted.ctimeNs &&
        now.ino === noted.ino &&
        now.dev === noted.dev
      // Changed once, it is the person's from then on, whatever it looks like later.
      if (!same) written.delete(relative)
      return same
    },
  }
}
