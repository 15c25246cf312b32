import { DamagedFolderError, DamagedHistoryError, entryNameProblem } from './damage'
import {
  patchStored,
  serializeTreeEncoded,
  STORED_DATA_AT,
  storedObject,
  type ObjectStore,
  type RawTreeEntry,
} from './object-store'

/** A file as history sees it: its blob id and git mode. */
export interface BlobNode {
  readonly kind: 'blob'
  readonly oid: string
  readonly mode: string
}

/**
 * A directory. Persistent: an update builds new nodes along the changed path and shares the
 * rest, so the previous root stays valid for diffing. `oid` is null until `flushTree` writes
 * it; `children` is null until loaded from the store.
 */
export interface TreeNode {
  readonly kind: 'tree'
  oid: string | null
  children: ReadonlyMap<string, Node> | null
  /** The serialized tree and where each entry's id sits in it (set once written or read). */
  encoding?: TreeEncoding
  /** For a node made by `setAt`: the node it was derived from and the names it changed. */
  derived?: { readonly from: TreeNode; readonly names: Set<string>; reshaped: boolean }
  /** The `setAt` batch that made this node: that batch may still change it in place. */
  owner?: object
}

/** A tree's bytes, with the offset of each entry's 20-byte id (to patch one id cheaply). */
export interface TreeEncoding {
  readonly bytes: Buffer
  readonly idAt: ReadonlyMap<string, number>
  /**
   * Its loose file's bytes (`storedObject`), `bytes` a view into them, when this process wrote
   * it framed by hand: the next version copies and patches them, checksum included, instead
   * of copying the tree and then framing and summing it whole (40 KB for a flat folder of
   * 1,000 files, stop 15).
   */
  readonly stored?: Buffer
}

export type Node = BlobNode | TreeNode

/** A file-level difference between two trees (relative paths, null for "absent"). */
export interface FileDelta {
  readonly path: string
  readonly before: string | null
  readonly after: string | null
}

export function emptyTree(): TreeNode {
  return { kind: 'tree', oid: null, children: new Map() }
}

export function treeFromOid(oid: string): TreeNode {
  return { kind: 'tree', oid, children: null }
}

/** Loads a directory's entries from the store (once). */
export async function childrenOf(
  store: ObjectStore,
  node: TreeNode,
): Promise<ReadonlyMap<string, Node>> {
  if (node.children) return node.children
  if (!node.oid) throw new Error('tree without oid or children')
  const { entries, bytes, idAt } = await store.readTreeEncoded(node.oid)
  const children = new Map<string, Node>()
  for (const entry of entries) {
    children.set(
      entry.name,
      entry.kind === 'blob'
        ? { kind: 'blob', oid: entry.oid, mode: entry.mode }
        : { kind: 'tree', oid: entry.oid, children: null },
    )
  }
  node.children = children
  // Only a tree written the way Cairn writes it can be patched into the next version.
  if (idAt) node.encoding = { bytes, idAt }
  return children
}

/** Loads every directory under `node` (used at open, which also proves the trees are readable). */
export async function loadAll(store: ObjectStore, node: TreeNode): Promise<void> {
  const children = await childrenOf(store, node)
  for (const child of children.values()) if (child.kind === 'tree') await loadAll(store, child)
}

/** The node at `segments` (relative path split on `/`), or null. */
export async function nodeAt(
  store: ObjectStore,
  root: TreeNode,
  segments: ReadonlyArray<string>,
): Promise<Node | null> {
  let node: Node = root
  for (const segment of segments) {
    if (node.kind !== 'tree') return null
    const next: Node | undefined = (await childrenOf(store, node)).get(segment)
    if (!next) return null
    node = next
  }
  return node
}

/**
 * Returns a new root with `value` at `segments` (null removes it). Directories that become
 * empty are dropped, since git cannot store them; a file in the way of a directory is replaced.
 *
 * Persistent: `root` is left as it was. A folder a change reaches gets a new version, the
 * first time, which shares the old one's entries (`DerivedEntries`); calls passing the same
 * `owner` (one commit's paths) then change that version in place instead of making another.
 */
export async function setAt(
  store: ObjectStore,
  root: TreeNode,
  segments: ReadonlyArray<string>,
  value: Node | null,
  owner: object = {},
): Promise<TreeNode> {
  if (segments.length === 0) {
    if (value && value.kind === 'tree') return value
    return emptyTree()
  }
  const result = await setIn(store, root, segments, 0, value, owner)
  return result ?? emptyTree()
}

async function setIn(
  store: ObjectStore,
  node: TreeNode | null,
  segments: ReadonlyArray<string>,
  depth: number,
  value: Node | null,
  owner: object,
): Promise<TreeNode | null> {
  const name = segments[depth] as string
  const children = node ? await childrenOf(store, node) : null
  const current = children?.get(name) ?? null
  let next: Node | null
  if (depth === segments.length - 1) {
    next = value
  } else {
    const sub = current && current.kind === 'tree' ? current : null
    if (!sub && !value) return node
    next = await setIn(store, sub, segments, depth + 1, value, owner)
  }
  if (next !== null && next.kind === 'tree' && next.children?.size === 0) next = null
  if (next === current) return node
  // The one place a name enters a folder version (a scan leaves out untracked names, a tree
  // read back was checked): a name no Cairn tree may hold is refused here, once per changed
  // name, where the whole tree used to be parsed again after it was written.
  const problem = next === null ? null : entryNameProblem(name)
  if (problem) throw new DamagedHistoryError('(a tree being written)', problem)
  const target = writable(node, owner)
  const entries = target.children as DerivedEntries
  const derived = target.derived as NonNullable<TreeNode['derived']>
  if (next === null) {
    entries.delete(name)
    derived.reshaped = true
  } else {
    if (!current || current.kind !== next.kind) derived.reshaped = true
    entries.set(name, next)
  }
  derived.names.add(name)
  return entries.size === 0 ? null : target
}

/**
 * `node` itself when this batch made it (and it is not written yet), else a new version of it
 * to change, which shares its entries (see `DerivedEntries`).
 */
function writable(node: TreeNode | null, owner: object): TreeNode {
  if (node && node.owner === owner && node.oid === null && node.derived) return node
  return {
    kind: 'tree',
    oid: null,
    children: DerivedEntries.of(node?.children ?? EMPTY),
    derived: node
      ? { from: node, names: new Set(), reshaped: false }
      : { from: emptyTree(), names: new Set(), reshaped: true },
    owner,
  }
}

/**
 * Writes every directory that has no oid yet (post-order) and returns the root's oid. A folder
 * derived from a written one by changing entries' ids only is not serialized again: the old
 * bytes are copied and the new ids written over the old ones.
 */
export async function flushTree(store: ObjectStore, node: TreeNode): Promise<string> {
  if (node.oid) return node.oid
  const children = node.children ?? new Map<string, Node>()
  // Derived from a written folder, only the names changed since can hold a folder not yet
  // written: everything under a written folder is written (post-order), and never changed.
  const from = node.derived?.from
  const unwritten = from?.oid ? [...node.derived!.names] : children.keys()
  for (const name of unwritten) {
    const child = children.get(name)
    if (child?.kind === 'tree' && !child.oid) await flushTree(store, child)
  }
  const encoding = patchedEncoding(node) ?? framed(encode(children))
  node.oid = await store.write('tree', encoding.bytes, undefined, encoding.stored)
  node.encoding = encoding
  // Written: from now on a change copies it (and the node it came from can be let go).
  node.derived = undefined
  node.owner = undefined
  return node.oid
}

function patchedEncoding(node: TreeNode): TreeEncoding | null {
  const derived = node.derived
  const base = derived?.from.encoding
  if (!derived || derived.reshaped || !base || !node.children) return null
  if (base.stored) return patchedStored(node, derived.names, base, base.stored)
  const bytes = Buffer.from(base.bytes)
  for (const name of derived.names) {
    const at = base.idAt.get(name)
    const child = node.children.get(name)
    if (at === undefined || !child?.oid) return null
    // A file's mode sits before its name: a changed mode means serializing afresh.
    if (child.kind === 'blob' && !modeMatches(bytes, at, name, child.mode)) return null
    bytes.write(child.oid, at, 20, 'hex')
  }
  return framed({ bytes, idAt: base.idAt })
}

/**
 * `patchedEncoding` from the loose file's bytes of the version before: the ids that changed
 * are written over the old ones in a copy, and its checksum updated from them alone.
 */
function patchedStored(
  node: TreeNode,
  names: ReadonlySet<string>,
  base: TreeEncoding,
  baseStored: Buffer,
): TreeEncoding | null {
  const stored = Buffer.allocUnsafe(baseStored.byteLength)
  baseStored.copy(stored)
  // Where the tree's content starts in the block's data (after `tree <size>\0`).
  const start = base.bytes.byteOffset - baseStored.byteOffset - STORED_DATA_AT
  const bytes = stored.subarray(STORED_DATA_AT + start, STORED_DATA_AT + start + base.bytes.length)
  for (const name of names) {
    const at = base.idAt.get(name)
    const child = node.children!.get(name)
    if (at === undefined || !child?.oid) return null
    // A file's mode sits before its name: a changed mode means serializing afresh.
    if (child.kind === 'blob' && !modeMatches(bytes, at, name, child.mode)) return null
    patchStored(stored, start + at, Buffer.from(child.oid, 'hex'))
  }
  return { bytes, idAt: base.idAt, stored }
}

/** `encoding` with its loose file's bytes, `bytes` then a view into them (see `stored`). */
function framed(encoding: TreeEncoding): TreeEncoding {
  const stored = storedObject('tree', encoding.bytes)
  if (!stored) return encoding
  const start = stored.byteLength - 4 - encoding.bytes.byteLength
  return {
    bytes: stored.subarray(start, start + encoding.bytes.byteLength),
    idAt: encoding.idAt,
    stored,
  }
}

function modeMatches(bytes: Buffer, idAt: number, name: string, mode: string): boolean {
  const nameBytes = Buffer.byteLength(name)
  const start = idAt - 1 - nameBytes - 1 - mode.length
  return start >= 0 && bytes.toString('latin1', start, start + mode.length + 1) === `${mode} `
}

function encode(children: ReadonlyMap<string, Node>): TreeEncoding {
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

/** Every file under `node`, as relative path -> blob id. */
export async function listFiles(
  store: ObjectStore,
  node: Node | null,
  prefix = '',
  into: Map<string, string> = new Map(),
): Promise<Map<string, string>> {
  if (!node) return into
  if (node.kind === 'blob') {
    into.set(prefix, node.oid)
    return into
  }
  for (const [name, child] of await childrenOf(store, node)) {
    await listFiles(store, child, prefix ? `${prefix}/${name}` : name, into)
  }
  return into
}

/**
 * What one batch of `setAt` changed, folder by folder: each folder it made, the folder it was
 * derived from and the names it set or removed there (every other entry is the same node).
 */
export type TreeChanges = ReadonlyMap<
  TreeNode,
  { readonly from: TreeNode; readonly names: ReadonlySet<string> }
>

/**
 * The changes of the folders under `root` not written yet, taken before `flushTree` forgets
 * them, so that `diffNodes` from the root they were derived from looks only at the names a
 * commit changed instead of every entry of each folder on the way (1,000 in a flat folder).
 */
export function changesOf(root: TreeNode): TreeChanges {
  const changes = new Map<TreeNode, { from: TreeNode; names: ReadonlySet<string> }>()
  const visit = (node: TreeNode): void => {
    const derived = node.derived
    if (!derived || node.oid !== null || changes.has(node)) return
    changes.set(node, { from: derived.from, names: derived.names })
    for (const name of derived.names) {
      const child = node.children?.get(name)
      if (child?.kind === 'tree') visit(child)
    }
  }
  visit(root)
  return changes
}

/** Awaited between two steps of background work; gives the event loop back when it is time. */
export type Pause = () => Promise<void> | undefined

/** How `diffNodes` walks: what it may skip, and whether it pauses before reading a tree. */
export interface DiffWalk {
  /** The changes of `after`'s folders (see `changesOf`). */
  readonly changes?: TreeChanges
  /**
   * Awaited before each tree is read from the store (loaded folders are taken as they are). A
   * folder of 20,000 files is a tree of 800 KB, rebuilt from its deltas and parsed: the side
   * index's background checks read two of them for each commit they check, and the pause lets
   * an answer through between them (stop 31). A commit's own diff passes none.
   */
  readonly pause?: Pause
}

/**
 * File-level differences between two nodes, descending only where ids differ, in path order
 * (names sorted at each level). Only the names that differ are sorted, not whole folders;
 * with `changes` (of `after`, see `changesOf`), a folder derived from the one it is compared
 * with is not even walked: only its changed names are looked at.
 */
export async function diffNodes(
  store: ObjectStore,
  before: Node | null,
  after: Node | null,
  prefix = '',
  into: FileDelta[] = [],
  walk: DiffWalk = {},
): Promise<FileDelta[]> {
  if (before === after) return into
  if (before && after && before.oid !== null && before.oid === after.oid) {
    if (before.kind === after.kind) return into
  }
  if (before?.kind === 'blob' && after?.kind === 'blob') {
    into.push({ path: prefix, before: before.oid, after: after.oid })
    return into
  }
  if (before?.kind === 'blob') into.push({ path: prefix, before: before.oid, after: null })
  if (after?.kind === 'blob') into.push({ path: prefix, before: null, after: after.oid })
  // Loaded folders (most, in a commit's diff) are taken as they are, without an await.
  const left =
    before?.kind === 'tree'
      ? (before.children ?? (await entriesOf(store, before, prefix, 'before', walk.pause)))
      : EMPTY
  const right =
    after?.kind === 'tree'
      ? (after.children ?? (await entriesOf(store, after, prefix, 'after', walk.pause)))
      : EMPTY
  const names: string[] = []
  const changed = after?.kind === 'tree' ? walk.changes?.get(after) : undefined
  if (changed && changed.from === before) {
    for (const name of changed.names) {
      const node = right.get(name)
      if (node ? differs(left.get(name), node) : left.has(name)) names.push(name)
    }
  } else {
    for (const [name, node] of right) if (differs(left.get(name), node)) names.push(name)
    for (const name of left.keys()) if (!right.has(name)) names.push(name)
  }
  names.sort()
  for (const name of names) {
    const child = prefix ? `${prefix}/${name}` : name
    await diffNodes(store, left.get(name) ?? null, right.get(name) ?? null, child, into, walk)
  }
  return into
}

const EMPTY: ReadonlyMap<string, Node> = new Map()

/** `childrenOf` for `diffNodes`: damage says which folder, on which side (see `DamagedFolderError`). */
async function entriesOf(
  store: ObjectStore,
  node: TreeNode,
  folder: string,
  side: 'before' | 'after',
  pause: Pause | undefined,
): Promise<ReadonlyMap<string, Node>> {
  if (pause) await pause()
  try {
    return await childrenOf(store, node)
  } catch (error) {
    if (error instanceof DamagedHistoryError && !(error instanceof DamagedFolderError)) {
      throw new DamagedFolderError(error, folder, side)
    }
    throw error
  }
}

/**
 * The entries of a folder version made by `setAt`: the entries of a version before it
 * (shared, never changed) and the names changed since (null: removed). A commit that edits
 * one file of a folder of 1,000 then records one name instead of copying 1,000 entries (a
 * version before stays as it was for whoever still reads it: a diff, a restore). When the
 * changes outgrow the square root of the shared entries, the next version starts from a flat
 * copy, so a read stays two lookups and the copies cost about 2√n entries per commit.
 *
 * Only the batch that made it changes it (`setIn`, before the folder is written). Listing it
 * gives the shared entries' order, changed ones in place, then the added names; callers that
 * need an order sort (git's tree order, a diff's path order).
 */
class DerivedEntries implements ReadonlyMap<string, Node> {
  private constructor(
    private readonly shared: ReadonlyMap<string, Node>,
    private readonly changes: Map<string, Node | null>,
    private count: number,
  ) {}

  /** A new version of `entries`, to change. */
  static of(entries: ReadonlyMap<string, Node>): DerivedEntries {
    if (!(entries instanceof DerivedEntries)) {
      return new DerivedEntries(entries, new Map(), entries.size)
    }
    const { shared, changes, count } = entries
    if (changes.size * changes.size <= shared.size) {
      return new DerivedEntries(shared, new Map(changes), count)
    }
    return new DerivedEntries(new Map(entries), new Map(), count)
  }

  get size(): number {
    return this.count
  }

  get(name: string): Node | undefined {
    const changed = this.changes.get(name)
    return changed === undefined ? this.shared.get(name) : (changed ?? undefined)
  }

  has(name: string): boolean {
    const changed = this.changes.get(name)
    return changed === undefined ? this.shared.has(name) : changed !== null
  }

  set(name: string, node: Node): void {
    if (!this.has(name)) this.count++
    this.changes.set(name, node)
  }

  delete(name: string): void {
    if (!this.has(name)) return
    this.count--
    if (this.shared.has(name)) this.changes.set(name, null)
    else this.changes.delete(name)
  }

  *entries(): MapIterator<[string, Node]> {
    for (const entry of this.shared) {
      const changed = this.changes.get(entry[0])
      if (changed === undefined) yield entry
      else if (changed !== null) yield [entry[0], changed]
    }
    for (const [name, changed] of this.changes) {
      if (changed !== null && !this.shared.has(name)) yield [name, changed]
    }
  }

  *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name
  }

  *values(): MapIterator<Node> {
    for (const [, node] of this.entries()) yield node
  }

  [Symbol.iterator](): MapIterator<[string, Node]> {
    return this.entries()
  }

  forEach(
    callback: (node: Node, name: string, map: ReadonlyMap<string, Node>) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, node] of this.entries()) callback.call(thisArg, node, name, this)
  }
}

// As the walk itself decides: a node of the same kind and id is the same.
function differs(a: Node | undefined, b: Node): boolean {
  if (a === b) return false
  return !a || a.kind !== b.kind || a.oid === null || a.oid !== b.oid
}
