/**
 * A git tree read in place, entry by entry, for maintenance's pack walk: the walk compares
 * each tree with the version before it and needs, for most entries, only to see that the id
 * under a name did not change. Parsed into entry objects with hex ids (`parseTree`), the
 * trees of one pass made about a quarter of the 1.07 GB of heap it allocated
 * (docs/performance.md, stop 16); read here, an unchanged entry costs no allocation at all.
 *
 *   tree  = entry*
 *   entry = <octal mode> SP <name> NUL <20-byte id>
 *
 * What a tree read here accepts is exactly what `parseTree(…, { foreign: true })` accepts,
 * when its entries are in git's order (each name after the one before, bytewise, a folder's
 * as if followed by `/`; a file named `x/` before the folder `x`), as git and Cairn write
 * them. A tree in another order is left to `parseTree` (`treeShape` says `unsorted`). The
 * modes and the name check are `parseTree`'s own (tree-entry.ts); a name twice, which
 * `parseTree` finds with a set of names, is found here from git's order.
 */
import { entryNameAt, isEntryName, treeModeAt } from './tree-entry'

/** What `treeShape` found. */
export type TreeShape =
  /** `parseTree(…, { foreign: true })` would throw. */
  | 'invalid'
  /** It would not, and the entries are in git's order (so each name is there once). */
  | 'sorted'
  /** Entries out of git's order: whether the tree parses is for `parseTree` to say. */
  | 'unsorted'

const SPACE = 0x20
const SLASH = 0x2f

/**
 * One entry of a tree's bytes: where its name is, where its id is, whether it is a folder.
 * Moved along the tree by `next`; one cursor serves a whole tree, whatever its size.
 */
export class TreeCursor {
  /** Where the next entry starts. */
  private at = 0
  nameStart = 0
  nameEnd = 0
  /** Where the 20-byte id starts. */
  idAt = 0
  /** Mode `40000` (or `040000`): a folder. */
  folder = false
  /** What made the last `next` return false: the end of the tree (`done`) or damage. */
  done = false

  /** Where the entry `next` moved to ends. */
  get end(): number {
    return this.at
  }

  constructor(readonly bytes: Buffer) {}

  /**
   * Moves to the next entry; false at the end, or at an entry `parseTree` would refuse
   * (`done` tells them apart). Its mode must be one `parseTree` takes from a tree made
   * elsewhere; its name is not decoded here (`treeShape` checks names).
   */
  next(): boolean {
    const bytes = this.bytes
    const end = bytes.length
    const at = this.at
    if (at >= end) {
      this.done = true
      return false
    }
    // As `parseTree` finds them: the first space, then the first NUL after it.
    let space = at
    while (space < end && bytes[space] !== SPACE) space++
    let nul = space + 1
    while (nul < end && bytes[nul] !== 0) nul++
    if (space >= end || nul >= end || nul + 21 > end) return false
    const mode = treeModeAt(bytes, at, space)
    if (mode === null) return false
    this.folder = mode.folder
    this.nameStart = space + 1
    this.nameEnd = nul
    this.idAt = nul + 1
    this.at = nul + 21
    return true
  }

  /**
   * The entry's name as `parseTree` gives it (ASCII as it is, anything else as UTF-8), in a
   * tree `treeShape` took: a name that is not UTF-8 throws.
   */
  name(): string {
    const name = entryNameAt(this.bytes, this.nameStart, this.nameEnd)
    if (name === null) throw new TypeError('a tree entry name that is not UTF-8')
    return name
  }

  /** The entry's id as 40 hex digits. */
  id(): string {
    return this.bytes.toString('hex', this.idAt, this.idAt + 20)
  }

  /** True when `other`'s entry holds the same 20-byte id as this one. */
  sameId(other: TreeCursor): boolean {
    const a = this.bytes
    const b = other.bytes
    const x = this.idAt
    const y = other.idAt
    for (let k = 0; k < 20; k++) if (a[x + k] !== b[y + k]) return false
    return true
  }

  /** True when `other`'s entry has the same name as this one (a folder or not). */
  sameName(other: TreeCursor): boolean {
    const length = this.nameEnd - this.nameStart
    if (other.nameEnd - other.nameStart !== length) return false
    return (
      this.bytes.compare(
        other.bytes,
        other.nameStart,
        other.nameEnd,
        this.nameStart,
        this.nameEnd,
      ) === 0
    )
  }

  /**
   * This entry against `other`'s in git's order: the names bytewise, a folder's as if `/`
   * followed it. Negative when this one comes first; 0 for the same name and kind.
   */
  compare(other: TreeCursor): number {
    return compareKeys(
      this.bytes,
      this.nameStart,
      this.nameEnd,
      this.folder,
      other.bytes,
      other.nameStart,
      other.nameEnd,
      other.folder,
    )
  }

  /** Goes back (or on) to the entry starting at `at`: the next `next` reads it. */
  seek(at: number): void {
    this.at = at
    this.done = false
  }
}

/** Where each entry of the tree `treeShape` reads starts (one call at a time: it is synchronous). */
let starts = new Int32Array(256)

/**
 * How `bytes` (a tree's content) reads (see `TreeShape`). Allocates nothing but for a name
 * that is not ASCII, which is decoded, as `parseTree` does, to see that it is UTF-8.
 */
export function treeShape(bytes: Buffer): TreeShape {
  const entry = new TreeCursor(bytes)
  const before = new TreeCursor(bytes)
  let count = 0
  for (let at = 0; entry.next(); at = entry.end) {
    if (!isEntryName(bytes, entry.nameStart, entry.nameEnd)) return 'invalid'
    if (count > 0) {
      const order = before.compare(entry)
      // The same name and kind twice: `parseTree` refuses a name it has seen.
      if (order === 0) return 'invalid'
      if (order > 0) return 'unsorted'
      if (entry.folder && fileBefore(bytes, entry, count, before)) return 'invalid'
    }
    if (count === starts.length) {
      const more = new Int32Array(count * 2)
      more.set(starts)
      starts = more
    }
    starts[count++] = at
    before.seek(at)
    before.next()
  }
  return entry.done ? 'sorted' : 'invalid'
}

/**
 * True when one of the `count` entries before `folder` (in git's order so far) is a file (or
 * link) of the folder's name. Between a file `a` and a folder `a` (`a/`) only entries whose
 * keys (a folder's name and `/`) start with `a` can sort, so the file is found going back
 * from the folder while keys start so. (A folder `a` sorts between a file `a/` and a folder
 * `a/`: its key `a/` starts with the name `a/`, its name does not.)
 */
function fileBefore(bytes: Buffer, folder: TreeCursor, count: number, scan: TreeCursor): boolean {
  const length = folder.nameEnd - folder.nameStart
  let found = false
  for (let i = count - 1; i >= 0; i--) {
    scan.seek(starts[i] as number)
    scan.next()
    const nameLength = scan.nameEnd - scan.nameStart
    if (nameLength + (scan.folder ? 1 : 0) < length) break
    // The name's bytes (all of the folder's name but its last byte, for a folder one shorter),
    // then the '/' of such a folder's key.
    const common = Math.min(nameLength, length)
    const prefix = bytes.compare(
      bytes,
      folder.nameStart,
      folder.nameStart + common,
      scan.nameStart,
      scan.nameStart + common,
    )
    if (prefix !== 0) break
    if (common < length && bytes[folder.nameEnd - 1] !== SLASH) break
    if (nameLength === length && !scan.folder) {
      found = true
      break
    }
  }
  return found
}

/**
 * A tree in git's order (`treeShape` said `sorted`: each entry strictly after the one before),
 * searched by name and kind: where each entry starts is read once, when first asked, then
 * each search is a binary search. The walk asks it for each entry a tree has and its base
 * has not (an added file, a file become a folder); read from the tree's start each time,
 * adding n files to a folder of n cost n² steps (review18-maint R1).
 */
export class SortedTree {
  private starts: Int32Array | null = null
  private readonly scan: TreeCursor

  constructor(readonly bytes: Buffer) {
    this.scan = new TreeCursor(bytes)
  }

  /**
   * The entry of the other kind (a file where `entry` is a folder, or a folder where it is a
   * file) with `entry`'s name, or null. The cursor returned moves at the next call.
   */
  otherKindNamed(entry: TreeCursor): TreeCursor | null {
    const starts = (this.starts ??= this.index())
    const scan = this.scan
    let low = 0
    let high = starts.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      scan.seek(starts[middle] as number)
      scan.next()
      const order = compareKeys(
        this.bytes,
        scan.nameStart,
        scan.nameEnd,
        scan.folder,
        entry.bytes,
        entry.nameStart,
        entry.nameEnd,
        !entry.folder,
      )
      if (order === 0) return scan
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return null
  }

  private index(): Int32Array {
    const scan = this.scan
    let count = 0
    scan.seek(0)
    while (scan.next()) count++
    const starts = new Int32Array(count)
    scan.seek(0)
    for (let k = 0, at = 0; scan.next(); at = scan.end) starts[k++] = at
    return starts
  }
}

// Git's order of tree entries: names compared bytewise, a folder's as if followed by '/';
// 0 only for the same name and kind.
function compareKeys(
  a: Buffer,
  aStart: number,
  aEnd: number,
  aFolder: boolean,
  b: Buffer,
  bStart: number,
  bEnd: number,
  bFolder: boolean,
): number {
  const aLength = aEnd - aStart
  const bLength = bEnd - bStart
  const common = Math.min(aLength, bLength)
  for (let k = 0; k < common; k++) {
    const diff = (a[aStart + k] as number) - (b[bStart + k] as number)
    if (diff !== 0) return diff
  }
  // Then the keys' bytes past the shorter name: its '/' when a folder, then its end (-1).
  const aKey = aLength + (aFolder ? 1 : 0)
  const bKey = bLength + (bFolder ? 1 : 0)
  for (let k = common; k < Math.min(aKey, bKey); k++) {
    const x = k < aLength ? (a[aStart + k] as number) : SLASH
    const y = k < bLength ? (b[bStart + k] as number) : SLASH
    if (x !== y) return x - y
  }
  if (aKey !== bKey) return aKey - bKey
  // The same key for a file and a folder: a file named `x/` beside the folder `x` (git never
  // writes that name; a tree made elsewhere may hold it, and `parseTree` takes it). Not the
  // same entry: the file first.
  return (aFolder ? 1 : 0) - (bFolder ? 1 : 0)
}
