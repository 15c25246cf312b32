import type { BigIntStats } from 'node:fs'
import path from 'node:path'
import { disk, isMissing } from '../lib/disk'
import { isWithin } from './paths'

/**
 * The files Cairn itself wrote last, each with the stat its write left (size, mtime, ctime,
 * inode, device), so the watcher's event for that write can be told from a person's edit: an
 * event counts as Cairn's own only while its file still has exactly that stat. Anything else
 * (another size, time or inode, the file gone or replaced) is an outside change. A person's
 * edit in the same clock tick with the same size can keep all of it; so this only spares a
 * sliced walk its rescan (the change stamp), and the content is still compared with `HEAD`
 * before anything is left uncommitted.
 *
 * A command's delete, rename and new folders are noted the same careful way, as what the
 * command expects rather than what a look afterwards finds: a path it removes (a delete, a
 * rename's source) is its own only while nothing is there (a person's file put back in its
 * place is not); a rename's target only while it is the very entry that was moved (inode and
 * device, and for a file its size and mtime, as `lstat` gave them just before the move); a
 * folder a create or a rename made for its target only while it keeps the inode, device and
 * mtime it had when the command ended (a person's file added there changes its mtime).
 */
export interface OwnWrites {
  /** Cairn has just written the file at `relative` (its rename done): its stat is noted. */
  noteWritten(relative: string): void
  /** Cairn removed or replaced `relative` otherwise: no event for it is taken as its own. */
  forget(relative: string): void
  /** A command is about to remove `relative` (a file or a folder, with all below it). */
  noteRemoving(relative: string): void
  /** A command is about to move `from` to `to` (and make the folders `to` lacks). */
  noteMoving(from: string, to: string): void
  /** A command is about to write `relative` into folders it makes. */
  noteCreating(relative: string): void
  /** The command noted above has ended: the folders it made are noted as they are now. */
  settleMoves(): void
  /** Whether the entry at `relative` is still exactly as Cairn's last change there left it. */
  isOwn(relative: string): boolean
}

// The newest writes are the ones whose events are on their way; older ones are let go.
const KEPT = 256

type Stamp = Pick<BigIntStats, 'size' | 'mtimeNs' | 'ctimeNs' | 'ino' | 'dev'>

/** What a command's move expects at a path: nothing, or the entry it moved or made there. */
type Expected =
  | { readonly kind: 'gone' }
  | {
      readonly kind: 'file' | 'folder'
      readonly ino: bigint
      readonly dev: bigint
      /** A moved file's size and mtime; a made folder's mtime. Null: not compared. */
      readonly size: bigint | null
      readonly mtimeNs: bigint | null
    }

export function createOwnWrites(workRoot: string): OwnWrites {
  const written = new Map<string, Stamp>()
  const moved = new Map<string, Expected>()
  // Folders a command in flight is making, noted once it has ended (`settleMoves`).
  let making: string[] = []
  const lstat = (relative: string): BigIntStats | null => {
    try {
      return disk.lstatExactSync(path.join(workRoot, relative))
    } catch {
      return null
    }
  }
  // Absent for sure: a failing disk is no proof of a removal.
  const absent = (relative: string): boolean => {
    try {
      disk.lstatExactSync(path.join(workRoot, relative))
      return false
    } catch (error) {
      return isMissing(error)
    }
  }
  const look = (relative: string): Stamp | null => {
    const stats = lstat(relative)
    return stats?.isFile() ? stats : null
  }
  const expect = (relative: string, expected: Expected) => {
    moved.delete(relative)
    moved.set(relative, expected)
    if (moved.size > KEPT) moved.delete(moved.keys().next().value!)
  }
  // The outermost folder above `relative` that is not there yet, if any.
  const firstMissing = (relative: string): string | null => {
    let missing: string | null = null
    for (let dir = path.posix.dirname(relative); dir !== '.' && dir !== '';) {
      if (!absent(dir)) break
      missing = dir
      dir = path.posix.dirname(dir)
    }
    return missing
  }
  const matches = (relative: string, expected: Expected): boolean => {
    if (expected.kind === 'gone') return absent(relative)
    const now = lstat(relative)
    if (!now || (expected.kind === 'file' ? !now.isFile() : !now.isDirectory())) return false
    return (
      now.ino === expected.ino &&
      now.dev === expected.dev &&
      (expected.size === null || now.size === expected.size) &&
      (expected.mtimeNs === null || now.mtimeNs === expected.mtimeNs)
    )
  }
  return {
    noteWritten(relative) {
      written.delete(relative)
      moved.delete(relative)
      const stamp = look(relative)
      if (stamp === null) return
      const { size, mtimeNs, ctimeNs, ino, dev } = stamp
      written.set(relative, { size, mtimeNs, ctimeNs, ino, dev })
      if (written.size > KEPT) written.delete(written.keys().next().value!)
    },
    forget(relative) {
      written.delete(relative)
      moved.delete(relative)
    },
    noteRemoving(relative) {
      written.delete(relative)
      expect(relative, { kind: 'gone' })
    },
    noteMoving(from, to) {
      const stats = lstat(from)
      written.delete(from)
      written.delete(to)
      expect(from, { kind: 'gone' })
      const missing = firstMissing(to)
      if (missing !== null) making.push(missing)
      if (!stats || !(stats.isFile() || stats.isDirectory())) return
      const file = stats.isFile()
      expect(to, {
        kind: file ? 'file' : 'folder',
        ino: stats.ino,
        dev: stats.dev,
        // A rename moves a file as it is (its ctime changes); a folder's entries may not.
        size: file ? stats.size : null,
        mtimeNs: file ? stats.mtimeNs : null,
      })
    },
    noteCreating(relative) {
      const missing = firstMissing(relative)
      if (missing !== null) making.push(missing)
    },
    settleMoves() {
      for (const folder of making) {
        const stats = lstat(folder)
        if (!stats?.isDirectory()) continue
        const { ino, dev, mtimeNs } = stats
        expect(folder, { kind: 'folder', ino, dev, size: null, mtimeNs })
      }
      making = []
    },
    isOwn(relative) {
      const noted = written.get(relative)
      if (noted !== undefined) {
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
      }
      const expected = moved.get(relative)
      if (expected !== undefined) {
        const same = matches(relative, expected)
        if (!same) moved.delete(relative)
        return same
      }
      // Below a folder a command removed: its files' events, while it is still gone.
      for (const [at, gone] of moved) {
        if (gone.kind === 'gone' && at !== '' && relative !== at && isWithin(relative, at)) {
          return absent(at)
        }
      }
      return false
    },
  }
}
