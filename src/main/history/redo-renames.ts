/**
 * Redoes, at open, the renames of memory files a power cut lost (docs/durability.md, "Cost").
 *
 * A command's `create`, `str_replace` or `insert` flushes its file's temp file together with
 * its commit's write-ahead log batch, which also records the rename that will publish it (a
 * `LoggedRename`); the rename then happens, but its folder is not `fsync`ed on the command's
 * path: the log's checkpoint does that before it empties the file holding the record. A power
 * cut before that checkpoint may lose the rename (the temp file, whose name its own `fsync`
 * made durable, is still there, the target as it was), while the log moves `main` forward to
 * the commit that records the change. Here the rename is done again, so the folder is what the
 * acknowledged commit says, but only when nothing else could have happened: the temp file
 * holds exactly the logged version, and the target holds the version the commit's parent had
 * (or nothing, where it had none). Anything else (a person's edit since, the temp file gone)
 * is left alone: the scan that follows removes the temp file and records what the folder holds.
 *
 * Every logged rename's folder is `fsync`ed, redone or not (after a kill, the rename may be in
 * the page cache only), before the log is emptied. A kill while redoing leaves the log as it
 * was: the next open finds each rename done (its temp file gone) or does it.
 */
import { disk } from '../lib/disk'
import {
  Folder,
  FolderDeniedError,
  FolderTree,
  isOwnTempName,
  readFileIn,
  RootIsLinkError,
} from '../lib/folders'
import { entryNameProblem } from './damage'
import { hashObject } from './objects/object-database'
import type { ObjectStore } from './object-store'
import type { LoggedRename } from './objects/object-log'

/** What `redoRenames` did: renames redone, and left (the temp file or the target not as logged). */
export interface RedoneRenames {
  readonly redone: number
  readonly left: number
}

/**
 * The size of the blob `oid` from its stored header (the log's objects are written and
 * durable when the redo runs), or null when it cannot be read: its file is then left.
 */
export type BlobSizeOf = (oid: string) => number | null

/** `store`'s blob sizes as a `BlobSizeOf`: a blob it cannot size (missing, damaged) is null. */
export function blobSizesIn(store: Pick<ObjectStore, 'blobSize'>): BlobSizeOf {
  return (oid) => {
    try {
      return store.blobSize(oid)
    } catch {
      return null
    }
  }
}

/**
 * Redoes the lost renames among `renames` (oldest first) in the memory folder at `workRoot`
 * and makes each one's folder durable. A file is compared with a logged version by its size
 * first (`sizeOf`), and never read past that size. A name that could not be Cairn's (a
 * crafted record) is skipped; a missing folder or file is left; other I/O errors are thrown
 * (open fails, changing nothing more, and the log is kept for the next open).
 */
export async function redoRenames(
  workRoot: string,
  renames: ReadonlyArray<LoggedRename>,
  sizeOf: BlobSizeOf,
): Promise<RedoneRenames> {
  const tree = new FolderTree(workRoot)
  let redone = 0
  let left = 0
  try {
    const touched = new Set<Folder>()
    for (const rename of renames) {
      if (!plausible(rename)) {
        left++
        continue
      }
      const folder = folderOf(tree, rename.dir)
      if (!(folder instanceof Folder)) {
        left++
        continue
      }
      touched.add(folder)
      if (redoes(folder, rename, sizeOf)) {
        disk.renameSync(folder.entry(rename.temp), folder.entry(rename.name))
        redone++
      } else left++
    }
    // Every logged rename's folder, so that the log can be emptied after.
    await Promise.all([...touched].map((folder) => folder.sync()))
  } finally {
    tree.close()
  }
  return { redone, left }
}

// The folder at `dir`, or null where there is none Cairn may use (missing, a link or a file on
// the way, not allowed in: the scan that follows reports those as it always does).
function folderOf(tree: FolderTree, dir: string): Folder | null {
  try {
    const folder = tree.folder(dir)
    return folder instanceof Folder ? folder : null
  } catch (error) {
    if (error instanceof RootIsLinkError || error instanceof FolderDeniedError) return null
    throw error
  }
}

// Whether `rename` is to be redone: its temp file holds exactly the logged version, and its
// target holds the version before (or nothing, where there was none).
function redoes(folder: Folder, rename: LoggedRename, sizeOf: BlobSizeOf): boolean {
  if (!holds(folder, rename.temp, rename.blob, sizeOf)) return false
  return holds(folder, rename.name, rename.previous, sizeOf)
}

// Whether `name` in `folder` holds exactly the blob `oid` (a regular file of its size and
// content), or nothing where `oid` is null. Anything else (a folder, a link, a file of another
// size, one that cannot be read or whose blob's size is unknown) does not: it is left to the
// scan, never read past the logged version's size (a 3 GiB file is not read at all), and never
// keeps Cairn from opening.
function holds(folder: Folder, name: string, oid: string | null, sizeOf: BlobSizeOf): boolean {
  let stats
  try {
    stats = folder.lstat(name)
  } catch {
    return false
  }
  if (stats === null || oid === null) return stats === null && oid === null
  const size = sizeOf(oid)
  if (size === null || !stats.isFile() || stats.size !== size) return false
  try {
    // Read no further than the logged size, should the file have grown since the lstat.
    const content = size === 0 ? Buffer.alloc(0) : readFileIn(folder, name, stats, size)
    return hashObject('blob', content) === oid
  } catch {
    return false
  }
}

// A record names one entry of a folder, by names Cairn itself uses: one of its temp names for
// `temp`, names the history may hold for the target and the folders on the way.
function plausible({ dir, temp, name }: LoggedRename): boolean {
  const held = (segment: string) => entryNameProblem(segment) === null
  if (dir !== '' && !dir.split('/').every(held)) return false
  return isOwnTempName(temp) && held(name)
}
