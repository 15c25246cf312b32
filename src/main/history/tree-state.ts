import { serializeTree, type ObjectStore, type RawTreeEntry } from './object-store'

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
  const entries = await store.readTree(node.oid)
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
 */
export async function setAt(
  store: ObjectStore,
  root: TreeNode,
  segments: ReadonlyArray<string>,
  value: Node | null,
): Promise<TreeNode> {
  if (segments.length === 0) {
    if (value && value.kind === 'tree') return value
    return emptyTree()
  }
  const result = await setIn(store, root, segments, value)
  return result ?? emptyTree()
}

async function setIn(
  store: ObjectStore,
  node: TreeNode | null,
  segments: ReadonlyArray<string>,
  value: Node | null,
): Promise<TreeNode | null> {
  const [name, ...rest] = segments as [string, ...string[]]
  const children = new Map(node ? await childrenOf(store, node) : [])
  const current = children.get(name)
  let next: Node | null
  if (rest.length === 0) {
    next = value
  } else {
    const sub = current && current.kind === 'tree' ? current : null
    if (!sub && !value) return node
    next = await setIn(store, sub, rest, value)
  }
  if (next === null || (next.kind === 'tree' && next.children?.size === 0)) {
    if (!current) return node
    children.delete(name)
  } else {
    if (current === next) return node
    children.set(name, next)
  }
  if (children.size === 0) return null
  return { kind: 'tree', oid: null, children }
}

/** Writes every directory that has no oid yet (post-order) and returns the root's oid. */
export async function flushTree(store: ObjectStore, node: TreeNode): Promise<string> {
  if (node.oid) return node.oid
  const entries: RawTreeEntry[] = []
  for (const [name, child] of node.children ?? new Map<string, Node>()) {
    if (child.kind === 'blob') {
      entries.push({ name, kind: 'blob', oid: child.oid, mode: child.mode })
    } else {
      entries.push({ name, kind: 'tree', oid: await flushTree(store, child), mode: '40000' })
    }
  }
  node.oid = await store.write('tree', serializeTree(entries))
  return node.oid
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

/** File-level differences between two nodes, descending only where ids differ. */
export async function diffNodes(
  store: ObjectStore,
  before: Node | null,
  after: Node | null,
  prefix = '',
  into: FileDelta[] = [],
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
  const left = before?.kind === 'tree' ? await childrenOf(store, before) : new Map<string, Node>()
  const right = after?.kind === 'tree' ? await childrenOf(store, after) : new Map<string, Node>()
  const names = new Set([...left.keys(), ...right.keys()])
  for (const name of [...names].sort()) {
    const child = prefix ? `${prefix}/${name}` : name
    await diffNodes(store, left.get(name) ?? null, right.get(name) ?? null, child, into)
  }
  return into
}
