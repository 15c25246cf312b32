/**
 * A commit's files as a flat map (relative path -> blob), read from and written back to git
 * trees. Merges, exports and imports work on these maps.
 */
import {
  DamagedHistoryError,
  entryNameProblem,
  serializeTree,
  type HistoryGit,
  type RawTreeEntry,
} from '../history'
import { foldedName } from '../lib/text'
import { mayDisplayAsAnother } from '../memory'

/** A file in a tree: its blob and git mode. */
export interface FileEntry {
  readonly oid: string
  readonly mode: string
}

export type FileMap = ReadonlyMap<string, FileEntry>

type Objects = HistoryGit['objects']

/** The longest file or folder name file systems take, in bytes (NAME_MAX). */
const MAX_NAME_BYTES = 255

/** The modes a memory file may have: a regular file, or an executable one. */
const FILE_MODES = new Set(['100644', '100755'])

/** Every file of the tree `treeOid` (null: no tree, no files). */
export async function readFileMap(objects: Objects, treeOid: string | null): Promise<FileMap> {
  const files = new Map<string, FileEntry>()
  if (!treeOid) return files
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const entry of await objects.readTree(oid)) {
      // A name holding `/` (git fsck's fullPathname; trees from elsewhere are read with their
      // names unchecked) would be taken for a file in a folder, and the folder's checks passed
      // by its parts: damage, as the history's own reader calls it.
      if (entry.name.includes('/')) {
        throw new DamagedHistoryError(oid, 'an entry whose name holds a path separator')
      }
      const path = prefix ? `${prefix}/${entry.name}` : entry.name
      if (entry.kind === 'tree') await walk(entry.oid, path)
      else files.set(path, { oid: entry.oid, mode: entry.mode })
    }
  }
  await walk(treeOid, '')
  return files
}

/** The files of commit `oid` (its tree). */
export async function commitFiles(objects: Objects, oid: string | null): Promise<FileMap> {
  if (!oid) return new Map()
  return readFileMap(objects, (await objects.readCommit(oid)).tree)
}

/** Writes the trees for `files` and returns the root tree's id. */
export async function writeFileMap(objects: Objects, files: FileMap): Promise<string> {
  interface Dir {
    readonly dirs: Map<string, Dir>
    readonly files: Map<string, FileEntry>
  }
  const root: Dir = { dirs: new Map(), files: new Map() }
  for (const [path, entry] of files) {
    const parts = path.split('/')
    let dir = root
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part)
      if (!next) {
        next = { dirs: new Map(), files: new Map() }
        dir.dirs.set(part, next)
      }
      dir = next
    }
    dir.files.set(parts.at(-1) as string, entry)
  }
  const write = async (dir: Dir): Promise<string> => {
    const entries: RawTreeEntry[] = []
    for (const [name, entry] of dir.files) {
      entries.push({ name, kind: 'blob', oid: entry.oid, mode: entry.mode })
    }
    for (const [name, sub] of dir.dirs) {
      entries.push({ name, kind: 'tree', oid: await write(sub), mode: '40000' })
    }
    return objects.write('tree', serializeTree(entries))
  }
  return write(root)
}

/**
 * Why a path from another repository cannot be a memory file (null when it can): anything
 * that could leave the folder or reach git's own files, a name that displays as another,
 * and links or other special entries.
 */
export function unsafeEntry(path: string, mode: string): string | null {
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return 'not a valid file name'
    if (segment.toLowerCase() === '.git') return 'a git folder'
    if (segment.includes('\\') || /\p{Cc}/u.test(segment)) return 'not a valid file name'
    // A bidi override shows "evil\u202Egpj.md" as "evildm.jpg", a zero-width space makes a
    // second "notes.md" (an emoji's joiner is a person's name, carried).
    if (mayDisplayAsAnother(segment)) return 'a name holding an invisible formatting character'
    // What the history refuses to hold (Cairn's own temp names, `.git` spelt as a file system
    // may fold it): refused here, before anything is written, not met later as "damage".
    if (entryNameProblem(segment)) return 'a name Cairn keeps for itself'
    // Linux and most file systems take at most 255 bytes per name: a longer one (100 CJK
    // characters, fine on another system) could never be written, and would fail every sync.
    if (Buffer.byteLength(segment, 'utf8') > MAX_NAME_BYTES)
      return 'a name too long for this system'
  }
  if (!FILE_MODES.has(mode)) return mode === '120000' ? 'a symbolic link' : 'a special file'
  return null
}

/** True where the file system ignores case in names (macOS and Windows, by default). */
export const NAMES_FOLD_CASE = process.platform === 'darwin' || process.platform === 'win32'

/**
 * Paths that name the same file where names ignore case and Unicode form (macOS and Windows
 * by default): `Notes.md` and `notes.md` would overwrite each other there. Pairs, as found.
 */
export function foldedCollisions(paths: Iterable<string>): Array<[string, string]> {
  const seen = new Map<string, string>()
  const found: Array<[string, string]> = []
  for (const path of paths) {
    const folded = foldedName(path)
    const other = seen.get(folded)
    if (other !== undefined && other !== path) found.push([other, path])
    else seen.set(folded, path)
  }
  return found
}
