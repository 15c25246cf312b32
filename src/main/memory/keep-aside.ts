/**
 * What a folder `delete` keeps: entries the host holds no copy of (a user's `.git`, a file
 * named so history cannot track it, one too large to version) would be lost for good with the
 * folder, so they are moved, each with its place inside the folder, to a new folder beside it,
 * `<name> (not in history)`, the name restores give a file they keep aside.
 */

import { disk, isCode } from '../lib/disk'
import { DIR_MODE, type Folder } from '../lib/folders'
import { fitName } from '../lib/text'
import type { KeepsNoCopy } from './types'

/** The label restores use for what they keep aside (`big (not in history).md`). */
const ASIDE_LABEL = 'not in history'

/**
 * The entries under `folder` that `keepsNoCopy` picks, as name lists from `folder` down
 * (a picked folder is kept whole, not looked into).
 */
export function findKeptEntries(folder: Folder, keepsNoCopy: KeepsNoCopy): string[][] {
  const found: string[][] = []
  const walk = (current: Folder, at: ReadonlyArray<string>): void => {
    for (const dirent of current.list()) {
      const stats = current.lstat(dirent.name)
      if (!stats) continue
      if (keepsNoCopy(dirent.name, stats)) found.push([...at, dirent.name])
      else if (stats.isDirectory()) {
        const child = current.openChildIfFolder(dirent.name)
        if (!child) continue
        try {
          walk(child, [...at, dirent.name])
        } finally {
          child.close()
        }
      }
    }
  }
  walk(folder, [])
  return found
}

/**
 * Moves `entries` (from `findKeptEntries`) out of `parent`'s folder `from` into a new folder
 * beside it, named after `name`; returns that folder's name. Done before the folder is
 * renamed aside for removal, so that a crash never leaves them in a temp folder. Renames only, through handles
 * (a folder swapped for a link on the way is refused, never followed), so nothing is copied
 * and nothing can fail for lack of space but a folder's creation. On failure what was moved
 * goes back (best effort: what cannot stays in the new folder) and the error is thrown.
 */
export function moveKeptEntries(
  parent: Folder,
  from: string,
  name: string,
  entries: ReadonlyArray<ReadonlyArray<string>>,
): string {
  const kept = asideName(name, (candidate) => parent.lstat(candidate) !== null, 'folder')
  disk.mkdirSync(parent.entry(kept), DIR_MODE)
  const moved: ReadonlyArray<string>[] = []
  try {
    for (const entry of entries) {
      moveEntry(parent, from, kept, entry, true)
      moved.push(entry)
    }
  } catch (error) {
    returnKeptEntries(parent, kept, from, moved)
    throw error
  }
  parent.syncLater()
  return kept
}

/**
 * Best effort, after the delete failed: moves `entries` back from `kept` to `to`, then removes
 * `kept` if that left it empty. What cannot go back stays in `kept`: moved, never lost.
 */
export function returnKeptEntries(
  parent: Folder,
  kept: string,
  to: string,
  entries: ReadonlyArray<ReadonlyArray<string>>,
): void {
  for (const entry of [...entries].reverse()) {
    try {
      moveEntry(parent, kept, to, entry, false)
    } catch {
      // It stays in the kept folder.
    }
  }
  removeEmptyFolders(parent, kept)
}

// Renames `parent/from/…entry` to `parent/to/…entry`, making the folders on the way in `to`
// when `make` (and they are missing).
function moveEntry(
  parent: Folder,
  from: string,
  to: string,
  entry: ReadonlyArray<string>,
  make: boolean,
): void {
  const source = parent.openChild(from)
  const opened: Folder[] = [source]
  try {
    const target = parent.openChild(to)
    opened.push(target)
    let fromFolder = source
    let toFolder = target
    for (const segment of entry.slice(0, -1)) {
      fromFolder = fromFolder.openChild(segment)
      opened.push(fromFolder)
      if (make) {
        try {
          disk.mkdirSync(toFolder.entry(segment), DIR_MODE)
        } catch (error) {
          if (!isCode(error, 'EEXIST')) throw error
        }
      }
      toFolder = toFolder.openChild(segment)
      opened.push(toFolder)
    }
    const last = entry[entry.length - 1]!
    disk.renameSync(fromFolder.entry(last), toFolder.entry(last))
    fromFolder.syncLater()
    toFolder.syncLater()
  } finally {
    for (const folder of opened.reverse()) folder.close()
  }
}

// Removes `name` of `parent` if it holds nothing but (empty) folders; keeps anything else.
function removeEmptyFolders(parent: Folder, name: string): void {
  try {
    const folder = parent.openChild(name)
    try {
      for (const dirent of folder.list()) {
        if (dirent.isDirectory()) removeEmptyFolders(folder, dirent.name)
      }
    } finally {
      folder.close()
    }
    disk.rmdirSync(parent.entry(name))
  } catch {
    // Not empty, or gone: nothing is lost either way.
  }
}

/**
 * The first unused of `notes (not in history)`, `notes (not in history 2)`, …; for a file,
 * the label goes before its extension (`big.md` -> `big (not in history).md`). Used by a
 * folder delete and by restores, which keep aside what history never held.
 */
export function asideName(
  name: string,
  taken: (candidate: string) => boolean,
  kind: 'file' | 'folder',
): string {
  const dot = kind === 'file' ? name.lastIndexOf('.') : -1
  const stem = dot > 0 ? name.slice(0, dot) : name
  const ext = dot > 0 ? name.slice(dot) : ''
  for (let n = 1; ; n++) {
    const candidate = fitName(stem, ` (${ASIDE_LABEL}${n > 1 ? ` ${n}` : ''})${ext}`)
    if (!taken(candidate)) return candidate
  }
}
