/**
 * What a folder `delete` keeps: entries the host holds no copy of (a user's `.git`, a file
 * named so history cannot track it, one too large to version) would be lost for good with the
 * folder, so they are moved, each with its place inside the folder, to a new folder beside it,
 * `<name> (not in history)`, the name restores give a file they keep aside.
 */

import { disk, isCode } from '../lib/disk'
import { DIR_MODE, removeTree, TEMP_FILE_PREFIX, type Folder } from '../lib/folders'
import type { Logger } from '../lib/logger'
import { cutText, fitName } from '../lib/text'
import { MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH } from './path-rules'
import type { KeepsNoCopy } from './types'

/**
 * Why something is kept aside, which its new name says: `not-in-history` for what history
 * keeps no copy of (a file too large to version, one changed outside Cairn since, a folder of
 * such files: `big (not in history).md`), `unreadable` for a file kept aside because Cairn may
 * not read it (`private (unreadable).md`): its last readable version may well be in history,
 * so "not in history" would not be true of it (review13-story R6).
 */
export type AsideReason = 'not-in-history' | 'unreadable'

const ASIDE_LABELS: Readonly<Record<AsideReason, string>> = {
  'not-in-history': 'not in history',
  unreadable: 'unreadable',
}

/** What a folder delete would keep, and whether it would remove anything else. */
export interface KeptEntries {
  /** Name lists from the folder down (a kept folder is kept whole, not looked into). */
  readonly entries: string[][]
  /** True when the folder holds a file that is not kept (Cairn's own temp files aside). */
  readonly removesFiles: boolean
}

/** The entries under `folder` that `keepsNoCopy` picks, and whether anything else is there. */
export function findKeptEntries(folder: Folder, keepsNoCopy: KeepsNoCopy): KeptEntries {
  const found: string[][] = []
  let removesFiles = false
  const walk = (current: Folder, at: ReadonlyArray<string>): void => {
    for (const dirent of current.list()) {
      const stats = current.lstat(dirent.name)
      if (!stats) continue
      if (keepsNoCopy(dirent.name, stats, current.entry(dirent.name)))
        found.push([...at, dirent.name])
      else if (!stats.isDirectory()) {
        if (!dirent.name.startsWith(TEMP_FILE_PREFIX)) removesFiles = true
      } else {
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
  return { entries: found, removesFiles }
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
  within: string,
): string {
  const kept = asideName(name, (candidate) => parent.lstat(candidate) !== null, 'folder', within)
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
 * For a full disk, where `moveKeptEntries` cannot make its folder: the folder itself is
 * renamed to the kept name (a rename needs no new space), then everything in it but `entries`
 * is removed (unlinks free space). Returns the kept name. A crash in between leaves files
 * history holds in the kept folder: moved, never lost (the next scan sees them there). A
 * removal that fails is logged and leaves the rest the same way.
 */
export function keepFolderInPlace(
  parent: Folder,
  name: string,
  entries: ReadonlyArray<ReadonlyArray<string>>,
  within: string,
  logger: Logger,
): string {
  const kept = asideName(name, (candidate) => parent.lstat(candidate) !== null, 'folder', within)
  disk.renameSync(parent.entry(name), parent.entry(kept))
  parent.syncLater()
  const wanted = new Set(entries.map((entry) => entry.join('/')))
  const onTheWay = new Set(
    entries.flatMap((entry) => entry.slice(0, -1).map((_, i) => entry.slice(0, i + 1).join('/'))),
  )
  const removeOthers = (folder: Folder, at: string): void => {
    for (const dirent of folder.list()) {
      const inside = at === '' ? dirent.name : `${at}/${dirent.name}`
      if (wanted.has(inside)) continue
      if (onTheWay.has(inside)) {
        const child = folder.openChild(dirent.name)
        try {
          removeOthers(child, inside)
        } finally {
          child.close()
        }
        continue
      }
      const stats = folder.lstat(dirent.name)
      if (!stats) continue
      if (stats.isDirectory()) removeTree(folder, dirent.name)
      else disk.unlinkSync(folder.entry(dirent.name))
    }
    folder.syncLater()
  }
  try {
    const folder = parent.openChild(kept)
    try {
      removeOthers(folder, '')
    } finally {
      folder.close()
    }
  } catch (error) {
    logger.warn(
      'Could not remove all of a deleted folder; the rest stays in its kept folder',
      error,
    )
  }
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
 * Renames the file `name` of `parent` aside, to `asideName`, within its own folder (a rename
 * needs no space); returns the new name. For a file `delete` and a `create` over a file that
 * history holds no copy of, which would otherwise be gone for good.
 */
export function keepFileAside(
  parent: Folder,
  name: string,
  within: string,
  kept = asideName(name, (candidate) => parent.lstat(candidate) !== null, 'file', within),
): string {
  disk.renameSync(parent.entry(name), parent.entry(kept))
  parent.syncLater()
  return kept
}

/** Best effort: `kept` (from `keepFileAside`) goes back to `name` if nothing took that name. */
export function returnFileAside(parent: Folder, kept: string, name: string): void {
  try {
    if (parent.lstat(name) === null) disk.renameSync(parent.entry(kept), parent.entry(name))
  } catch {
    // It stays under its aside name: moved, never lost.
  }
}

// A name `asideName` gives (`big (not in history).md`, `notes (not in history 2)`,
// `private (unreadable).md`), in any case: on a file system that ignores case (macOS's,
// Windows') `x (Unreadable).md` is the name `x (unreadable).md`, and a person's `Unreadable`
// is the same label to them.
const ASIDE_NAME = new RegExp(
  `\\((?:${Object.values(ASIDE_LABELS).join('|')})(?: \\d+)?\\)(?:\\.[^.]*)?$`,
  'i',
)

/**
 * True for a name that carries a kept-aside label, in any case (`x (Unreadable).md` too): what
 * `asideName` numbers instead of labelling twice.
 */
export function isAsideName(name: string): boolean {
  return ASIDE_NAME.test(name)
}

// The same, spelt as `asideName` spells it (its labels are lower case).
const OWN_ASIDE_NAME = new RegExp(ASIDE_NAME.source)

/**
 * True for a name as Cairn gives something it keeps aside (`big (not in history).md`,
 * `private (unreadable 2).md`). Keeping such a thing aside again would only rename it, on and
 * on for a tidy-minded Claude, so a delete refuses it. A person's own `Trip (Not In
 * History).md` is not one: Cairn never spells a label so, and keeping that file aside once
 * gives it Cairn's spelling (`Trip (not in history).md`), which the next delete refuses.
 */
export function isOwnAsideName(name: string): boolean {
  return OWN_ASIDE_NAME.test(name)
}

/**
 * The first unused of `notes (not in history)`, `notes (not in history 2)`, …; for a file,
 * the label goes before its extension (`big.md` -> `big (not in history).md`). A name that
 * carries a label already is numbered instead (`big (not in history).md` ->
 * `big (not in history 2).md`), never labelled twice. Used by a
 * folder delete and by restores, which keep aside what history never held; a file kept aside
 * because Cairn may not read it is labelled `unreadable` instead (see `AsideReason`). `within` is the
 * virtual folder it goes in (`/memories/a/`): the name is cut to what the path rules accept
 * there (a name of 128 characters, a path of 512; and 255 bytes on disk), so that Claude can
 * `view` and `delete` what it is told was kept.
 */
export function asideName(
  name: string,
  taken: (candidate: string) => boolean,
  kind: 'file' | 'folder',
  within: string,
  reason: AsideReason = 'not-in-history',
): string {
  const label = ASIDE_LABELS[reason]
  const room = Math.min(MAX_SEGMENT_LENGTH, MAX_PATH_LENGTH - within.length)
  const dot = kind === 'file' ? name.lastIndexOf('.') : -1
  // An extension too long to keep beside the label is kept as part of the stem (cut with it).
  const split = dot > 0 && name.length - dot + LONGEST_LABEL <= room
  // A name kept aside already (`x (unreadable).md`, a `create` over it keeping its content
  // aside once more) is numbered as a taken name is, `x (unreadable 2).md`: never
  // `x (unreadable) (unreadable).md`. Its label becomes the reason of this time.
  const stem = withoutLabel(split ? name.slice(0, dot) : name)
  const ext = split ? name.slice(dot) : ''
  for (let n = 1; ; n++) {
    const tail = ` (${label}${n > 1 ? ` ${n}` : ''})${ext}`
    const candidate = fitName(cutText(stem, Math.max(0, room - tail.length)), tail)
    if (!taken(candidate)) return candidate
  }
}

// A stem's label and number as `asideName` adds them (` (unreadable)`, ` (not in history 2)`),
// in any case, as `ASIDE_NAME`.
const LABEL_AT_END = new RegExp(
  ` \\((?:${Object.values(ASIDE_LABELS).join('|')})(?: \\d+)?\\)$`,
  'i',
)

// `stem` without the label `asideName` gave it, if any (a stem that is only a label is kept).
function withoutLabel(stem: string): string {
  const found = LABEL_AT_END.exec(stem)
  return found && found.index > 0 ? stem.slice(0, found.index) : stem
}

// The longest label with a number of up to four digits, as long as it gets in practice.
const LONGEST_LABEL = ` (${ASIDE_LABELS['not-in-history']} 9999)`.length
