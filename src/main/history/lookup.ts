/**
 * Finding files in old commits quickly: which blob a path held at a commit, with the trees
 * read on the way kept (bounded) so that walking many commits reads each tree once. Read
 * side only. Commits and trees never change, so nothing kept here can go stale.
 */
import type { ObjectStore } from './object-store'

/** What a path names inside a tree: a file (its blob) or a folder (its tree). */
export interface TreeItem {
  readonly kind: 'blob' | 'tree'
  readonly oid: string
}

export interface Lookup {
  /** The blob id of the file at `segments` in commit `commitOid`, or null (absent or a folder). */
  blobAt(commitOid: string, segments: ReadonlyArray<string>): Promise<string | null>
  /** The item at `segments` (empty: the root tree) in commit `commitOid`, or null. */
  itemAt(commitOid: string, segments: ReadonlyArray<string>): Promise<TreeItem | null>
  /** A tree's entries by name. */
  tree(oid: string): Promise<ReadonlyMap<string, TreeItem>>
}

/** Most trees kept: enough for the directories of a few thousand commits. */
export const TREE_CACHE_SIZE = 4096

/** A lookup over `store`, keeping up to `capacity` parsed trees (oldest dropped first). */
export function createLookup(store: ObjectStore, capacity = TREE_CACHE_SIZE): Lookup {
  const trees = new Map<string, ReadonlyMap<string, TreeItem>>()

  async function tree(oid: string): Promise<ReadonlyMap<string, TreeItem>> {
    const known = trees.get(oid)
    if (known) return known
    const entries = new Map<string, TreeItem>()
    for (const entry of await store.readTree(oid)) {
      entries.set(entry.name, { kind: entry.kind, oid: entry.oid })
    }
    if (trees.size >= capacity) trees.delete(trees.keys().next().value as string)
    trees.set(oid, entries)
    return entries
  }

  async function itemAt(
    commitOid: string,
    segments: ReadonlyArray<string>,
  ): Promise<TreeItem | null> {
    let item: TreeItem = { kind: 'tree', oid: (await store.readCommit(commitOid)).tree }
    for (const segment of segments) {
      if (item.kind !== 'tree') return null
      const next = (await tree(item.oid)).get(segment)
      if (!next) return null
      item = next
    }
    return item
  }

  return {
    tree,
    itemAt,
    async blobAt(commitOid, segments) {
      const item = await itemAt(commitOid, segments)
      return item?.kind === 'blob' ? item.oid : null
    },
  }
}
