/**
 * The names of the folders the twin checks listed, kept between commands: a create of a new
 * name is refused when the folder holds the name in another case or spelling (spelling-twin.ts),
 * and listing a flat folder of 10,000 entries for each create took 19–56 ms under load (stop 32).
 * A listing is used again only for the very folder it was taken of (device and inode) while its
 * modification and change times have not moved, which another program's `Notes.md` added, or any
 * entry removed or renamed, moves: the folder is then listed again. Cairn's own create of a new
 * file moves them too; that create adds its name to the listing and takes the times it leaves.
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
    if (stats && after && sameTimes(stats, after) && this.now() - after.mtimeMs >= SETTLED_MS) {
      if (this.listings.size >= MAX_FOLDERS)
        this.listings.delete(this.listings.keys().next().value!)
      this.listings.set(key!, { ...identity(after), byFold })
    }
    return byFold.get(folded) ?? []
  }

  /**
   * Cairn wrote in `folder`, through a temp file renamed into place: over a file it holds, or
   * as the new file `added` (checked by `withFold` in the same command), which joins the names
   * kept. They then go with the folder's times as the write left them.
   */
  wrote(folder: Folder, added?: string): void {
    const stats = folder.freshStats()
    const kept = stats && this.listings.get(keyOf(stats))
    if (!kept) return
    if (added !== undefined) {
      const key = this.fold(added)
      const names = kept.byFold.get(key)
      if (names) names.push(added)
      else kept.byFold.set(key, [added])
    }
    kept.mtimeMs = stats.mtimeMs
    kept.ctimeMs = stats.ctimeMs
  }
}

function keyOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`
}

function sameTimes(a: Pick<Stats, 'mtimeMs' | 'ctimeMs'>, b: Stats): boolean {
  return a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
}

function identity(stats: Stats): Omit<Listing, 'byFold'> {
  return { dev: stats.dev, ino: stats.ino, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs }
}
