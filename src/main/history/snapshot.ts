/**
 * Memory as it was after a commit, for browsing it read-only ("Memory at this reply"): every
 * file and folder of that commit's tree with its size and the time it last changed. Read side.
 */
import type { MemoryEntry } from '../../shared/types'
import type { Ancestry } from './ancestry'
import { DamagedHistoryError, readingVersion } from './damage'
import type { Lookup, TreeItem } from './lookup'
import type { RawCommit } from './object-store'
import { toVirtual } from './paths'
import { requireVersion, type RepoView } from './read'
import { diffNodes, treeFromOid } from './tree-state'

/**
 * Most commits a listing at a commit the side index lacks walks back through their objects to
 * date its files (one tree diff each) before it gives up and lists the rest undated.
 */
const OFF_INDEX_STEPS = 1000

/** Most blob sizes remembered (blobs never change, so a size never goes stale). */
const SIZE_CACHE = 50_000

/** Lists trees at commits; remembers blob sizes between calls. */
export function createSnapshots(repo: RepoView, lookup: Lookup, ancestry: Ancestry) {
  const sizes = new Map<string, number>()

  // The sizes of `blobs`, null for a version whose object is missing, damaged or not a file's:
  // that file is listed as damaged, and the rest of that memory still shows (review
  // hunt12-story D5), as compare, blame and search already pass over such a version. Checked
  // cheaply (a packed version's records against their CRC-32s, its type from their headers; a
  // loose one read whole): sizes from headers alone listed a version damaged past its header,
  // or a tree where a file should be, as sound (review13-story R5). Reading every packed
  // version whole, deltas built, cost 606 ms for 200 files of 50 kB (review12-story, item 7).
  function sizesOf(blobs: ReadonlyArray<string>): Map<string, number | null> {
    const found = new Map<string, number | null>()
    const unknown: string[] = []
    for (const blob of blobs) {
      const known = sizes.get(blob)
      if (known !== undefined) found.set(blob, known)
      else unknown.push(blob)
    }
    for (const [blob, size] of repo.store.checkedBlobSizes(unknown)) {
      found.set(blob, size)
      if (size === null) continue
      if (sizes.size >= SIZE_CACHE) sizes.delete(sizes.keys().next().value as string)
      sizes.set(blob, size)
    }
    return found
  }

  /** Every file and folder of memory after commit `oid`, sorted by path. */
  async function listAt(oid: string): Promise<ReadonlyArray<MemoryEntry>> {
    const indexed = await requireVersion(repo, oid)
    const blobs: Array<{ path: string; oid: string }> = []
    const dirs: string[] = []
    async function walk(item: TreeItem, relative: string): Promise<void> {
      for (const [name, child] of await lookup.tree(item.oid)) {
        const path = relative ? `${relative}/${name}` : name
        if (child.kind === 'tree') {
          dirs.push(path)
          await walk(child, path)
        } else blobs.push({ path, oid: child.oid })
      }
    }
    // Damage in this version's trees (an entry Cairn never writes, a tree gone) is told as
    // "the history is damaged at <commit>", as every other read of a version tells it.
    await readingVersion(oid, async () => {
      const root = await lookup.itemAt(oid, [])
      if (root?.kind === 'tree') await walk(root, '')
    })
    // All at once: the packed records checked lie together, read in one go.
    const sized = sizesOf(blobs.map((blob) => blob.oid))
    const files = blobs.map(({ path, oid }) => {
      const size = sized.get(oid) ?? null
      return { path, size: size ?? 0, damaged: size === null }
    })

    // When each file last changed: the newest commit up to `oid`, along first parents (where
    // the file was as it is, see ancestry.ts), that touched it.
    const changed = new Map<string, number>()
    const wanted = new Set(files.map((file) => toVirtual(file.path)))
    const index = ancestry.index()
    const from = indexed ? oid : await datedOffIndex(oid, wanted, changed)
    let position = from === null ? -1 : ancestry.positionOf(from)
    while (position >= 0 && wanted.size > 0) {
      for (const file of index.filesAt(position)) {
        if (wanted.delete(file)) changed.set(file, index.timeAt(position))
      }
      position = ancestry.firstParentOf(position)
    }

    const result: MemoryEntry[] = []
    const totals = new Map<string, { size: number; modifiedAt: number }>()
    for (const file of files) {
      const virtual = toVirtual(file.path)
      const modifiedAt = changed.get(virtual) ?? 0
      result.push({
        path: virtual,
        kind: 'file',
        size: file.size,
        modifiedAt,
        ...(file.damaged ? { damaged: true as const } : {}),
      })
      for (let at = file.path.lastIndexOf('/'); at > 0; at = file.path.lastIndexOf('/', at - 1)) {
        const dir = file.path.slice(0, at)
        const total = totals.get(dir) ?? { size: 0, modifiedAt: 0 }
        totals.set(dir, {
          size: total.size + file.size,
          modifiedAt: Math.max(total.modifiedAt, modifiedAt),
        })
      }
    }
    for (const dir of dirs) {
      const total = totals.get(dir) ?? { size: 0, modifiedAt: 0 }
      result.push({ path: toVirtual(dir), kind: 'dir', ...total })
    }
    return result.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }

  /**
   * For a commit the side index lacks (a `git reset --hard` moved `main` back past it): its
   * first parents followed through their objects, each file of `wanted` dated by the commit
   * time of the newest one that changed it (`changed`, and taken out of `wanted`), down to the
   * first commit the index has, which is returned (null: none reached). Past
   * `OFF_INDEX_STEPS` commits, or at one that cannot be read, the walk stops: what it has not
   * dated is listed with no date (0), as a file no commit is found for.
   */
  async function datedOffIndex(
    oid: string,
    wanted: Set<string>,
    changed: Map<string, number>,
  ): Promise<string | null> {
    let at: string | null = oid
    // The parent read at one step is the next step's commit: each commit read once.
    let next: RawCommit | null = null
    try {
      for (let steps = 0; at && ancestry.positionOf(at) < 0; steps++) {
        if (steps >= OFF_INDEX_STEPS || wanted.size === 0) return null
        const commit: RawCommit = next ?? (await repo.store.readCommit(at))
        const parent: RawCommit | null = commit.parent
          ? await repo.store.readCommit(commit.parent)
          : null
        next = parent
        const deltas = await diffNodes(
          repo.store,
          parent ? treeFromOid(parent.tree) : null,
          treeFromOid(commit.tree),
        )
        for (const delta of deltas) {
          const virtual = toVirtual(delta.path)
          if (delta.after && wanted.delete(virtual)) changed.set(virtual, commit.timestamp * 1000)
        }
        at = commit.parent
      }
    } catch (error) {
      if (error instanceof DamagedHistoryError) return null
      throw error
    }
    return at
  }

  return { listAt }
}
