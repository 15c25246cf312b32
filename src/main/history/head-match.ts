import type { Stats } from 'node:fs'
import { isCode, isDenied } from '../lib/disk'
import { Folder, FolderTree, readFileIn } from '../lib/folders'
import { serializeTreeEncoded, type ObjectStore, type RawTreeEntry } from './object-store'
import type { PackedPositions } from './objects/object-database'
import type { PackedExtent } from './objects/packed-crc'
import { sameLoose, type KeptTree, type LooseStamp, type StatCache } from './stat-cache'
import type { Node, TreeEncoding, TreeNode } from './tree-state'
import {
  isUntracked,
  MAX_VERSIONED_BYTES,
  storedCopiesUnsound,
  type UncheckedBlobs,
} from './work-tree'

/**
 * The usual open's shortcut: HEAD's tree made from the memory folder itself, when the folder
 * is exactly HEAD. Open used to read, inflate and parse every tree of HEAD (73 at 10k files)
 * and then compare the folder with them; here the scan's blob ids (the stat cache's, or read
 * and hashed) are put together into git trees, hashed bottom-up, and the root's id compared
 * with HEAD's: equal SHA-1 means equal trees, with every tree's children known without
 * reading one.
 *
 * A folder takes the tree id it made at the last open instead of being serialized and hashed
 * again (git's "cache-tree"), when its entries are what they were then: the stat cache keeps
 * each folder's id under a key made of its entries as listed (each one's mode, name and id,
 * see `treeKeyOf`), and a folder whose entries give the same key takes the same id. The key
 * holds everything a tree holds, so equal keys are equal trees: a folder that changed in any
 * way (a file's blob, a name, a kind, a subfolder's id) makes another key and is hashed, with
 * nothing to drop or keep in step. The blob ids in it are the ones the walk uses anyway (the
 * stat cache's, or read and hashed). Such a node has an id and children but no bytes
 * (`encoding`): a commit serializes it when it first changes it, and a tree taken on its
 * loose file's stamp is serialized only if it must be mended.
 *
 * The checks at open stay what they were, but one: each file's stored copy as the full scan
 * checks it (`storedCopiesUnsound`), except a loose one whose stamp the stat cache keeps,
 * which is checked by that stamp after open (`unchecked`, `Repo.checkDeferred`), and each of
 * HEAD's trees: a packed one by its packed record's CRC-32
 * (`packed-crc.ts`; a delta read and hashed, as open read them all before), a loose one by its
 * stamp (size, inode, ctime, mtime) when it was last read whole (kept in the stat cache), else
 * read whole now. Null, with nothing written, for anything the full scan deals with itself
 * (it then runs as before, reading HEAD's trees): a folder that differs from HEAD, a file the
 * stat cache does not vouch for whose blob is not there whole, a damaged or missing object, a
 * temp file or any name history leaves out, a file too large, an empty folder.
 */
export async function folderAsHead(
  store: ObjectStore,
  workRoot: string,
  stats: StatCache,
  treeOid: string,
): Promise<FolderAsHead | null> {
  const walk: Walk = {
    store,
    stats,
    visited: new Set(),
    vouched: [],
    vouchedIds: [],
    unchecked: { relatives: [], oids: [] },
  }
  // The full scan that follows a miss counts the files it trusts itself (a file hashed here is
  // recorded, and so not hashed again).
  const { trusted } = stats
  const tree = new FolderTree(workRoot)
  let root: TreeNode | null | typeof NOT_HEAD
  try {
    root = await folderNode(walk, tree.root(), '')
  } finally {
    tree.close()
  }
  const trees: TreeNode[] = []
  let unread: UnreadTree[] | null = null
  if (root !== null && root !== NOT_HEAD) {
    const hashing: Hashing = { store, stats, trees, kept: new Map(), made: new Map() }
    const isHead = hashTrees(hashing, root, '') === treeOid
    // The packs' indexes asked for the walk's blobs and HEAD's trees together: each slice of a
    // pack's name table read once (some 16 reads of 64 KB at 50,000 objects), not once each.
    const looked = isHead
      ? store.db.packedPositions([...walk.vouchedIds, ...trees.map(({ oid }) => oid as string)])
      : null
    if (looked && !(await storedCopiesSound(walk, looked))) root = NOT_HEAD
    else {
      if (looked) unread = await treesStored(store, stats, trees, looked)
      // The folder as it is, for the next open. Not HEAD: only the trees made now are kept (an
      // id taken from the cache that led nowhere is not kept again, right or not).
      stats.keepTrees(unread === null ? hashing.made : hashing.kept)
    }
  }
  if (root === null || root === NOT_HEAD || unread === null) {
    stats.trusted = trusted
    return null
  }
  // As the full scan at open: the cache keeps exactly the files it saw.
  stats.retainOnly(walk.visited)
  return { root, unread, unchecked: walk.unchecked }
}

/** HEAD's tree made from the folder, and its trees open vouched for without reading them. */
export interface FolderAsHead {
  readonly root: TreeNode
  /**
   * HEAD's loose trees taken on their file's stamp alone: damage beneath the file system (a
   * disk's own bit rot) keeps the stamp, so they are read once later (`checkUnreadTrees`),
   * before anything is committed on top of them; each holds the bytes that mend it.
   */
  readonly unread: ReadonlyArray<UnreadTree>
  /**
   * The files whose blobs' loose files open took on the stat cache's word, not looking at
   * them (`storedCopiesSound`): checked by their stamps later (`checkUncheckedBlobs`), before
   * anything is committed on top of them, packed, sent or restored.
   */
  readonly unchecked: UncheckedBlobs
}

/**
 * A tree of HEAD open took on its loose file's stamp, with the entries the folder made for it
 * (its bytes are made from them only if it must be mended).
 */
export interface UnreadTree {
  readonly oid: string
  readonly children: ReadonlyMap<string, Node>
}

/** Anything that makes the folder not plainly HEAD, or that the full scan must handle. */
const NOT_HEAD = Symbol('not HEAD')

interface Walk {
  readonly store: ObjectStore
  readonly stats: StatCache
  readonly visited: Set<string>
  /** The files the stat cache vouched for, and their blobs (checked after the walk). */
  readonly vouched: string[]
  readonly vouchedIds: string[]
  /** Those of them whose loose blob is left for the later check (`storedCopiesSound`). */
  readonly unchecked: UncheckedBlobs
}

async function folderNode(
  walk: Walk,
  folder: Folder,
  relative: string,
): Promise<TreeNode | null | typeof NOT_HEAD> {
  const children = new Map<string, Node>()
  for (const dirent of folder.list()) {
    const { name } = dirent
    // Temp files to remove, names to report, `.git`: the full scan's work.
    if (isUntracked(name)) return NOT_HEAD
    // Links and special files are never tracked (as the full scan).
    if (!dirent.isFile() && !dirent.isDirectory()) continue
    const path = relative ? `${relative}/${name}` : name
    let child: Node | null | typeof NOT_HEAD
    if (dirent.isDirectory()) {
      let sub: Folder | null
      try {
        sub = folder.openChildIfFolder(name)
      } catch (error) {
        // A folder Cairn may not enter: the full scan reports it.
        if (isDenied(error)) return NOT_HEAD
        throw error
      }
      if (!sub) return NOT_HEAD
      try {
        child = await folderNode(walk, sub, path)
      } finally {
        sub.close()
      }
    } else {
      const file = fileNode(walk, folder, path, name)
      child = file instanceof Promise ? await file : file
    }
    if (child === NOT_HEAD) return NOT_HEAD
    // An empty folder: git cannot hold it (as the full scan, which leaves it out).
    if (child) children.set(name, child)
  }
  return children.size === 0 ? null : { kind: 'tree', oid: null, children }
}

// No promise for a file the stat cache vouches for (its stored copy is checked once the folder
// made HEAD's tree, `storedCopiesSound`): at open that is every file.
function fileNode(
  walk: Walk,
  folder: Folder,
  relative: string,
  name: string,
): Node | typeof NOT_HEAD | Promise<Node | typeof NOT_HEAD> {
  let looked: Stats | null
  try {
    looked = folder.lstat(name)
  } catch (error) {
    // In a folder Cairn may list but not enter (mode 0444): the full scan reports it.
    if (isDenied(error)) return NOT_HEAD
    throw error
  }
  if (!looked?.isFile() || looked.size > MAX_VERSIONED_BYTES) return NOT_HEAD
  walk.visited.add(relative)
  const known = walk.stats.lookup(relative, looked)
  if (known === undefined) return readFile(walk, folder, relative, name, looked)
  walk.vouched.push(relative)
  walk.vouchedIds.push(known)
  return { kind: 'blob', oid: known, mode: '100644' }
}

/**
 * The stored copy of each file the stat cache vouched for checked as the full scan checks it
 * (`storedCopiesUnsound`): in a pack by the pack's index, else loose by its stamp, else read
 * whole. The packs were asked for all of them at once, with HEAD's trees,
 * once the folder made HEAD's tree (`looked`, `packedPositions`: each slice of a pack's name
 * table read once, into memory reused). False when one is missing or damaged: the full scan
 * then finds and repairs it. A loose one whose stamp the stat cache keeps is not looked at
 * now (its `lstat`, some 15-24 ms for 1,024 files on Node 20, was what open at 10,000 loose
 * commits paid over packed): it goes in `walk.unchecked`, checked by that stamp later.
 */
async function storedCopiesSound(walk: Walk, looked: PackedPositions): Promise<boolean> {
  const { store, stats, vouched, vouchedIds, unchecked } = walk
  const unsound = await storedCopiesUnsound(
    store,
    stats,
    vouched,
    vouchedIds,
    looked,
    true,
    unchecked,
  )
  return unsound.length === 0
}

// A file the cache does not vouch for (most often one Cairn wrote last time): read and hashed
// as the full scan would, and its blob checked whole as the full scan checks a file that
// matches HEAD's (the only way the folder can still be HEAD).
async function readFile(
  walk: Walk,
  folder: Folder,
  relative: string,
  name: string,
  looked: Stats,
): Promise<Node | typeof NOT_HEAD> {
  const { store, stats } = walk
  let content: Buffer
  try {
    content = readFileIn(folder, name, undefined, MAX_VERSIONED_BYTES)
  } catch (error) {
    // A file too large, gone, not a file any more, or one Cairn may not read: the full scan
    // reports it (and keeps its last version).
    if (['EFBIG', 'ENOENT', 'ELOOP', 'EINVAL', 'EACCES', 'EPERM'].some((c) => isCode(error, c))) {
      return NOT_HEAD
    }
    throw error
  }
  const oid = store.hash('blob', content)
  // Its loose copy's stamp is taken before the copy is read whole, and kept with the record:
  // the next open then checks that copy by this one `lstat` instead of reading it whole again
  // (a change to the file after the `lstat` changes its stamp, and is read again then).
  const loose = store.db.inPack(oid) ? null : store.looseStat(oid)
  // Not there whole: a new file (the folder is not HEAD) or a copy to repair.
  if (!(await store.isIntact(oid))) return NOT_HEAD
  stats.record(relative, looked, oid)
  if (loose && loose.size > 0) stats.noteObjectChecked(relative, loose)
  return { kind: 'blob', oid, mode: '100644' }
}

interface Hashing {
  readonly store: ObjectStore
  readonly stats: StatCache
  /** Every folder, children first. */
  readonly trees: TreeNode[]
  /** Every folder's tree and key, for the next open ... */
  readonly kept: Map<string, KeptTree>
  /** ... and those of the folders made and hashed now. */
  readonly made: Map<string, KeptTree>
}

/**
 * Gives every folder under `node` (at `relative`) its id, children first: the one it made last
 * time when its entries give the same key (`StatCache.keptTree`), else its git tree made (its
 * bytes, and where each id sits in them, as a tree read back has) and hashed.
 */
function hashTrees(hashing: Hashing, node: TreeNode, relative: string): string {
  const children = node.children!
  // `forEach`, not `for…of`: open runs this once, in code not yet optimized, where each step
  // of a Map's iterator makes an object and an entry array (some 400 KB at 1,024 files).
  children.forEach((child, name) => {
    if (child.kind === 'tree') hashTrees(hashing, child, relative ? `${relative}/${name}` : name)
  })
  let kept = hashing.stats.keptTree(relative)
  if (kept && isTreeKeyOf(kept.key, children)) {
    node.oid = kept.oid
  } else {
    const encoding = serializeChildren(children)
    node.oid = hashing.store.hash('tree', encoding.bytes)
    node.encoding = encoding
    kept = { oid: node.oid, key: treeKeyOf(children) }
    hashing.made.set(relative, kept)
  }
  hashing.kept.set(relative, kept)
  hashing.trees.push(node)
  return node.oid
}

/**
 * The key of a folder of `children` (each folder among them with its id), kept with its tree
 * id in the stat cache: each entry as `<mode> <name>\0<id in hex>`, in the order listed. A
 * name holds no NUL and an id no NUL or space, so a key reads back one way only: equal keys
 * list the same entries (mode, name, id), in the same order, so make the same tree.
 */
export function treeKeyOf(children: ReadonlyMap<string, Node>): string {
  let key = ''
  for (const [name, child] of children) {
    key += `${modeOf(child)} ${name}\0${child.oid as string}`
  }
  return key
}

/**
 * True when `key` is `treeKeyOf(children)`: the same parts compared in place, so that open
 * makes no string for a folder whose key matches.
 */
export function isTreeKeyOf(key: string, children: ReadonlyMap<string, Node>): boolean {
  // -1 once an entry differs. `forEach` for the reason given in `hashTrees`.
  let at = 0
  children.forEach((child, name) => {
    if (at < 0) return
    const mode = modeOf(child)
    const oid = child.oid as string
    if (!key.startsWith(mode, at) || key.charCodeAt(at + mode.length) !== 0x20) {
      at = -1
      return
    }
    at += mode.length + 1
    if (!key.startsWith(name, at) || key.charCodeAt(at + name.length) !== 0) {
      at = -1
      return
    }
    at += name.length + 1
    at = key.startsWith(oid, at) ? at + oid.length : -1
  })
  return at === key.length
}

function modeOf(node: Node): string {
  return node.kind === 'blob' ? node.mode : '40000'
}

/** The tree of `children`, each folder among them with its id. */
function serializeChildren(children: ReadonlyMap<string, Node>): TreeEncoding {
  const entries: RawTreeEntry[] = []
  for (const [name, child] of children) {
    entries.push(
      child.kind === 'blob'
        ? { name, kind: 'blob', oid: child.oid, mode: child.mode }
        : { name, kind: 'tree', oid: child.oid as string, mode: '40000' },
    )
  }
  return serializeTreeEncoded(entries)
}

/**
 * True when each of `trees` (HEAD's, by now) is stored whole: packed, its record matching the
 * CRC-32 its pack index holds (the index listing it alone would vouch for a copy damaged
 * inside the pack), or read whole; or loose with the stamp (size, inode, ctime, mtime) it had
 * when last read whole, else read whole now. Their loose stamps are then what the stat cache
 * keeps for the next open. Returns the loose ones taken on their stamp alone (not read); null
 * for a missing or damaged one: the full path reads HEAD's trees and deals with it (a tree
 * rebuilt from the folder).
 */
async function treesStored(
  store: ObjectStore,
  stats: StatCache,
  trees: ReadonlyArray<TreeNode>,
  looked: PackedPositions,
): Promise<UnreadTree[] | null> {
  const { db } = store
  const ids = trees.map(({ oid }) => oid as string)
  // Packed ones by their records' CRC-32 (see `packed-crc.ts`), all at once: reading and
  // hashing HEAD's 73 trees at 10k commits cost open some 6-10 ms, this about one. Where each
  // record ends is taken from the last open's check when the pack and start are the same.
  const extents = { known: stats.packedExtents(), found: new Map<string, PackedExtent>() }
  const packed = db.packedRecordsSound(
    ids.filter((id) => !db.packedCopyDamaged(id)),
    extents,
    looked,
  )
  const checked = new Map<string, LooseStamp>()
  const unread: UnreadTree[] = []
  for (const [at, id] of ids.entries()) {
    // A packed copy that fails is noted as damaged: a sound loose copy (the repair's) then
    // stands in for it below, as reads take it. One this check cannot tell (a delta) is read.
    const sound = packed.get(id)
    if (sound === true || (sound === null && db.checkPackedCopy(id))) continue
    const loose = store.looseStat(id)
    if (loose === null || loose.size === 0) return null
    // Its entries (HEAD's nodes are never changed: a commit makes new ones), made bytes only
    // if it must be mended.
    if (sameLoose(loose, stats.checkedTree(id)))
      unread.push({ oid: id, children: trees[at]!.children! })
    else if (!(await store.isIntact(id))) return null
    checked.set(id, loose)
  }
  stats.keepTreesChecked(checked)
  stats.keepPackedExtents(extents.found)
  return unread
}

/**
 * Reads each of `trees` (the `unread` of `folderAsHead`) whole and writes a damaged or
 * missing one again from the bytes made from the folder (the same bytes: its id proves them).
 * Returns the ids it wrote; the caller flushes the store.
 */
export async function mendUnreadTrees(
  store: ObjectStore,
  trees: ReadonlyArray<UnreadTree>,
): Promise<string[]> {
  const mended: string[] = []
  for (const { oid, children } of trees) {
    if (await store.isIntact(oid)) continue
    // Every folder below has its id (made or kept at open). Checked all the same: what is
    // written under an id must be the object it names.
    const { bytes } = serializeChildren(children)
    if (store.hash('tree', bytes) !== oid) {
      throw new Error('a tree made from the memory folder does not have the id it was taken for')
    }
    await store.write('tree', bytes, oid)
    mended.push(oid)
  }
  return mended
}
