/**
 * The names of the folders the twin checks listed, kept between commands: a create of a new
 * name is refused when the folder holds the name in another case or spelling (spelling-twin.ts),
 * and listing a flat folder of 10,000 entries for each create took 19–56 ms under load (stop 32).
 * A listing is used again only for the very folder it was taken of (device and inode) while its
 * modification and change times have not moved, which another program's `Notes.md` added, or any
 * entry removed or renamed, moves: the folder is then listed again. Cairn's own create of a new
 * file moves them too; that create adds its name to the listing and takes the times it leaves,
 * unless those times are in whole milliseconds or coarser (ext4 with 128-byte inodes, FAT, many
 * network mounts): there another program's entry made later in the same second would leave them
 * as they are, so the names are listed again next time (rfold32).
 */

import type { Stats } from 'node:fs'
import type { Folder } from '../lib/folders'

// A folder changed this close to its listing may change again within the same tick of the file
// system's clock without moving its times (2 s on FAT): such a listing is used once, not kept.
const SETTLED_MS = 2_000

// At most this many folders' names are kept (a flat folder of 10,000 is about 1 MB).
const MAX_FOLDERS = 8

interface Listing {
  readonly dev: number
  readonly ino: number
  mtimeMs: number
  ctimeMs: number
  /** Names on disk by their folded form (`foldName`), in the order the listing gave them. */
  readonly byFold: Map<string, string[]>
}

/** Names on disk by folded form, listed or kept (see the file's comment). */
export class FolderNames {
  private readonly listings = new Map<string, Listing>()

  constructor(
    private readonly fold: (name: string) => string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The names `folder` holds whose folded form is `folded` (the check lists it when it must). */
  withFold(folder: Folder, folded: string): ReadonlyArray<string> {
    const stats = folder.freshStats()
    const kept = stats && this.listings.get(keyOf(stats))
    if (kept && sameTimes(kept, stats)) return kept.byFold.get(folded) ?? []
    const byFold = new Map<string, string[]>()
    for (const dirent of folder.list()) {
      const key = this.fold(dirent.name)
      const names = byFold.get(key)
      if (names) names.push(dirent.name)
      else byFold.set(key, [dirent.name])
    }
    const after = folder.freshStats()
    const key = stats && keyOf(stats)
    if (key) this.listings.delete(key)
    // Kept when nothing moved the folder's times while it was listed, nor just before.
    // Both times: one put back (`touch -d`) leaves the other to tell of a change (rfold32).
    if (stats && after && sameTimes(stats, after) && this.now() - changed(after) >= SETTLED_MS) {
      if (this.listings.size >= MAX_FOLDERS)
        this.listings.delete(this.listings.keys().next().value!)
      this.listings.set(key!, { ...identity(after), byFold })
    }
    return byFold.get(folded) ?? []
  }

  /**
   * Cairn starts a write in `folder` through a temp file renamed into place: over a file it
   * holds, or as a new file (checked by `withFold` in the same command). The kept names follow
   * the write only while nothing else moved the folder's times around it: before the temp file
   * is made, from then to the rename (the write's fsyncs, which can be long), and from the
   * rename to `wrote`. Another program's `Notes.md` made meanwhile drops them (mendH).
   */
  writing(folder: Folder): FolderWrite {
    // No names kept, none to follow: the folder's times are not looked at.
    if (this.listings.size === 0) return UNKEPT
    // The times the folder has while only Cairn's write changed it since the listing was kept.
    const first = folder.freshStats()
    const listing = first && this.listings.get(keyOf(first))
    let expected: Pick<Stats, 'mtimeMs' | 'ctimeMs'> | null =
      listing && sameTimes(listing, first) ? listing : null
    const key = first && keyOf(first)
    const drop = () => {
      if (key) this.listings.delete(key)
      expected = null
    }
    if (!expected) drop()
    // The folder's times now, if they are those expected: else the kept names go.
    const still = (): Stats | null => {
      if (!expected) return null
      const stats = folder.freshStats()
      if (stats && keyOf(stats) === key && sameTimes(expected, stats)) return stats
      drop()
      return null
    }
    // Times Cairn's own step just left become the ones expected (its step is the only change
    // when they were as expected just before it).
    const took = () => {
      if (!expected) return
      const stats = folder.freshStats()
      if (stats && keyOf(stats) === key) expected = timesOf(stats)
      else drop()
    }
    return {
      tempMade: took,
      aroundRename: (rename) => {
        still()
        rename()
        took()
      },
      wrote: (added) => {
        const stats = still()
        const kept = stats && this.listings.get(keyOf(stats))
        if (!kept) return
        // Coarse times move for the first change in their tick only: the write's own tick may
        // yet hold another program's entry that leaves them as the write left them (rfold32).
        if (coarse(stats)) {
          drop()
          return
        }
        if (added !== undefined) {
          const folded = this.fold(added)
          const names = kept.byFold.get(folded)
          if (names) names.push(added)
          else kept.byFold.set(folded, [added])
        }
        kept.mtimeMs = stats.mtimeMs
        kept.ctimeMs = stats.ctimeMs
      },
    }
  }
}

/** A write of Cairn's in a folder whose names are kept (`FolderNames.writing`). */
export interface FolderWrite {
  /** Its temp file was just made (and written). */
  tempMade(): void
  /** Runs the rename of the temp file into place. */
  aroundRename(rename: () => void): void
  /** It is done, as the file `added` new in the folder, or over a file the folder held. */
  wrote(added?: string): void
}

// A write in a folder while no names are kept: the rename runs, nothing else.
const UNKEPT: FolderWrite = {
  tempMade: () => {},
  aroundRename: (rename) => rename(),
  wrote: () => {},
}

function keyOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`
}

function sameTimes(a: Pick<Stats, 'mtimeMs' | 'ctimeMs'>, b: Stats): boolean {
  return a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
}

/** When the folder last changed, by either time (a modification time can be put back). */
function changed(stats: Stats): number {
  return Math.max(stats.mtimeMs, stats.ctimeMs)
}

/** Times a clock of whole milliseconds or coarser stamped (fine ones have a fraction of a ms). */
function coarse(stats: Stats): boolean {
  return Number.isInteger(stats.mtimeMs) && Number.isInteger(stats.ctimeMs)
}

function timesOf(stats: Stats): Pick<Stats, 'mtimeMs' | 'ctimeMs'> {
  return { mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs }
}

function identity(stats: Stats): Omit<Listing, 'byFold'> {
  return { dev: stats.dev, ino: stats.ino, ...timesOf(stats) }
}
