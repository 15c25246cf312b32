/**
 * `main` moved by something other than this Cairn while it runs: a `git commit`, a
 * `git commit --amend`, a `git reset` made in the history folder with the git CLI. Cairn holds
 * `main`'s old value in memory; a commit made on it would move `main` back past the outside
 * commits, which then leave the history (and a later `git gc --prune` deletes them).
 *
 * So before a change, the ref on disk is compared with what Cairn holds (one small read), and
 * when it moved, Cairn takes the new value as `main`, as open does for commits made outside
 * Cairn while it was closed: its commits go into the side index and the in-memory trees, and
 * the caller then commits what the folder holds beyond the new tree on top of it. Nothing is
 * written to the ref or the folder here; what cannot be followed safely is refused.
 */
import { CairnError } from '../lib/errors'
import { readMainRef } from './main-ref'
import type { ObjectStore } from './object-store'
import { entriesSince, parentsOf, type IndexEntry } from './side-index'

/** What following an outside move of `main` did. */
export interface FollowedMove {
  /** Cairn's `main` before. */
  readonly from: string | null
  /** `main` as it was found on disk, now Cairn's. */
  readonly to: string
  /** Whether the old `main` is an ancestor of the new (commits added on top of it). */
  readonly descends: boolean
  /** The index entries taken in, oldest first (the whole history when it did not descend). */
  readonly added: ReadonlyArray<IndexEntry>
}

/** Refused: `main` names nothing Cairn can build on; nothing was changed. */
export function movedToDamageError(): CairnError {
  return new CairnError(
    'history-damaged',
    "The history's main branch was moved outside Cairn to a commit Cairn cannot read whole, so nothing was changed. Point it back at a whole commit with git, or restart Cairn to repair the history.",
  )
}

/** Refused: `main` moved while the change was being made; nothing of it reached the history. */
export function movedDuringError(): CairnError {
  return new CairnError(
    'conflict',
    "The history's main branch was moved outside Cairn while this change was being saved, so it was not saved on top of it. Try again.",
  )
}

/**
 * The value of `main` on disk when it is a commit id other than `head`; null when it is
 * `head`, or cannot be told (missing, garbage, unreadable: the caller's own write then puts its
 * value there, as before). One read of the ref file when it says `head` (the usual case);
 * otherwise `readMainRef` reads until two reads agree, so a read torn by an in-place write is
 * never taken for a move.
 */
export function movedOutside(gitdir: string, head: string | null): string | null {
  let reading
  try {
    reading = readMainRef(gitdir, head)
  } catch {
    return null
  }
  return reading.kind === 'ok' && reading.oid !== head ? reading.oid : null
}

/**
 * Takes `main` as found on disk when it moved outside Cairn (see the top of this file); null
 * when it did not. Every commit of the new history not yet indexed is read before anything
 * changes: one that cannot be (a ref naming no commit, a missing parent) refuses with
 * `movedToDamageError`, Cairn's state as it was.
 */
/**
 * What following needs of the repository: its head, its folder, its objects, its index and its
 * `adopt`. Named here rather than imported, because the repository itself asks this file
 * whether `main` moved (a circle of files otherwise).
 */
export interface FollowingRepo {
  head(): string | null
  readonly gitdir: string
  readonly store: ObjectStore
  readonly index: { positionOf(oid: string): number }
  adopt(
    head: string,
    tree: string,
    added: ReadonlyArray<IndexEntry>,
    replace?: boolean,
  ): Promise<void>
}

export async function followOutsideMove(
  repo: FollowingRepo,
  /** Called once everything was read, before Cairn's state changes (the lock's check). */
  beforeAdopt: () => void = () => {},
): Promise<FollowedMove | null> {
  const from = repo.head()
  const to = movedOutside(repo.gitdir, from)
  if (to === null) return null
  const store = repo.store
  let tree: string
  let added: IndexEntry[]
  let descends: boolean
  try {
    tree = (await store.readCommit(to)).tree
    added = await entriesSince(store, to, (oid) => repo.index.positionOf(oid) >= 0)
    descends = from === null || added.some((entry) => parentsOf(entry).includes(from))
    // Not on top of Cairn's `main` (an amend, a reset, another history): the outside history
    // wins, and the index is made again from it alone.
    if (!descends) added = await entriesSince(store, to, () => false)
  } catch {
    throw movedToDamageError()
  }
  beforeAdopt()
  await repo.adopt(to, tree, added, !descends)
  return { from, to, descends, added }
}
