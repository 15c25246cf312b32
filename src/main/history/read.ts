/**
 * The read side of the history: what inspecting a commit needs, and nothing that writes.
 * `Repo` (repo.ts) adds `commit` on top of this view; the inspectors and queries take only
 * the view, so reading the history can never change it.
 */
import { CairnError } from '../lib/errors'
import { DamagedHistoryError, readingVersion } from './damage'
import { IndexDamagedError, IndexReplacedError, type IndexFile } from './index-file'
import type { ObjectStore } from './object-store'
import { entryFromCommit, type IndexEntry } from './side-index'
import { emptyTree, treeFromOid, type TreeNode } from './tree-state'

/** The history of one memory folder as readers see it. */
export interface RepoView {
  readonly store: ObjectStore
  readonly workRoot: string
  /** The commit `main` points at (null for an empty history). */
  head(): string | null
  /** The tree of `head`, kept in memory. */
  root(): TreeNode
  /** The side index: one entry per commit, oldest first (replaced when rebuilt). */
  readonly index: IndexFile
  entry(oid: string): IndexEntry | undefined
  /**
   * True while the side index, found damaged, lags HEAD until its rebuild is in: a commit it
   * lacks is not "not in the history", and a page from it would be stale.
   */
  indexRebuilding?(): boolean
}

/** What a read answers while the side index is rebuilt from the commits. */
export function indexRebuildingError(): CairnError {
  return new CairnError(
    'index-rebuilding',
    'Part of the history index was damaged; Cairn is rebuilding it from the commits. Try again in a moment.',
  )
}

/**
 * Runs `read`, a read of the side index. An entry found damaged there (its checksum, its
 * structure) fails it with `index-rebuilding`, and `damaged` is told (to say so and have the
 * index checked, then rebuilt from the commits). An index the read held while a rebuild or a
 * switched history swapped another in (`IndexReplacedError`) is not damage: the read runs
 * again on the index in use, once (unless `retry` is false: a read that writes is not run
 * twice), or answers `index-rebuilding`, nothing said and nothing checked. Closed and still
 * the index in use (a swap that failed after closing it), the index is damaged.
 */
export async function readIndexed<T>(
  repo: Pick<RepoView, 'index'>,
  read: () => Promise<T>,
  damaged: (error: IndexDamagedError) => void,
  retry = true,
): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (!(error instanceof IndexDamagedError)) throw error
    if (error instanceof IndexReplacedError && !repo.index.isClosed) {
      if (retry) return readIndexed(repo, read, damaged, false)
      throw indexRebuildingError()
    }
    damaged(error)
    throw indexRebuildingError()
  }
}

/** Throws `index-rebuilding` while the side index lags HEAD for a rebuild (a stale page). */
export function requireCurrentIndex(repo: RepoView): void {
  if (repo.indexRebuilding?.()) throw indexRebuildingError()
}

/** The commit `oid` of this history, or a `not-found` error. */
export function requireEntry(repo: RepoView, oid: string): IndexEntry {
  const entry = repo.entry(oid)
  if (!entry) {
    requireCurrentIndex(repo)
    throw new CairnError('not-found', 'That version is not in the history.')
  }
  return entry
}

/**
 * The commit `oid` for a read of what memory held at it: its side-index entry, or null when
 * the index lacks it but its commit can still be read (a person's `git reset --hard` moved
 * `main` back past it: it is in no timeline now, yet what Claude saw there can be shown). A
 * `not-found` error saying so plainly when even its commit is gone (the history was rewritten
 * outside Cairn and the version pruned with it); `history-damaged` when it is there but
 * cannot be read.
 */
export async function requireVersion(repo: RepoView, oid: string): Promise<IndexEntry | null> {
  const entry = repo.entry(oid)
  if (entry) return entry
  requireCurrentIndex(repo)
  if (!OID.test(oid)) throw new CairnError('not-found', 'That version is not in the history.')
  await readingVersion(oid, async () => {
    try {
      await repo.store.readCommit(oid)
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
      if (!repo.store.db.has(oid)) {
        throw new CairnError(
          'not-found',
          'That version is no longer in the history: the history was rewritten outside Cairn (a git reset or a rebase, say) and the version was removed with it.',
        )
      }
      // A file's or a folder's id where a version's belongs is no version, not damage.
      const type = readableAs(repo, oid)
      if (type !== null && type !== 'commit') {
        throw new CairnError('not-found', 'That version is not in the history.')
      }
      throw error
    }
  })
  return null
}

/**
 * The entry of commit `oid` for showing it or going back to it: its side-index entry, or,
 * when the index lacks it but its commit can be read (a person's `git reset --hard` moved
 * `main` back past it), one built from the commit itself. Errors as `requireVersion`'s: a
 * version gone with a rewrite outside Cairn is said to be so, plainly.
 */
export async function requireCommitEntry(repo: RepoView, oid: string): Promise<IndexEntry> {
  const indexed = await requireVersion(repo, oid)
  if (indexed) return indexed
  return readingVersion(oid, () => entryFromCommit(repo.store, oid))
}

const OID = /^[0-9a-f]{40}$/

// The type of the object `oid` when it reads whole; null when it does not.
function readableAs(repo: RepoView, oid: string): string | null {
  try {
    return repo.store.db.read(oid).type
  } catch {
    return null
  }
}

/** The tree of a commit of this history (empty for "before the first commit"). */
export async function treeOf(repo: RepoView, oid: string | null): Promise<TreeNode> {
  if (!oid) return emptyTree()
  return treeFromOid((await repo.store.readCommit(oid)).tree)
}

/**
 * A version as people name it, by its time: "the version of 3 Nov, 14:02" (the system's
 * language and time zone). Messages never name versions by commit id.
 */
export function versionOf(entry: { readonly time: number }): string {
  return `the version of ${momentOf(entry.time)}`
}

/** A moment as people name it: "3 Nov, 14:02". */
export function momentOf(time: number): string {
  // A time no date holds (a crafted or synced commit, indexed before times were clamped).
  if (Number.isNaN(new Date(time).getTime())) return 'an unknown time'
  return new Date(time).toLocaleString(undefined, {
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  })
}

/** The first 7 characters of a commit id, as git shows them (commit subjects only). */
export function shortOid(oid: string): string {
  return oid.slice(0, 7)
}
