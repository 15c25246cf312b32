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
import { cutWithEllipsis, escapeInvisible } from '../lib/text'
import { readMainRef } from './main-ref'
import type { ObjectStore } from './object-store'
import {
  commitsSince,
  entriesSince,
  entryFromCommit,
  parentsOf,
  type IndexEntry,
} from './side-index'

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
  /**
   * The branch `main` was found linked to (`ref: refs/heads/x`, a `git symbolic-ref`): `to`
   * is that branch's commit. The caller makes `main` a branch of its own again at `to`.
   */
  readonly symbolic?: string
  /**
   * Cairn's commits that left `main` with the move (a reset, an amend, an `update-ref` back),
   * newest first, as its index held them: all of them (their files are kept; a commit's
   * body names the first `MAX_DROPPED_LISTED`).
   */
  readonly dropped: ReadonlyArray<IndexEntry>
}

/** How many of the commits a move left out of `main` are named (a reset of thousands: the first). */
export const MAX_DROPPED_LISTED = 100

/** Refused: `main` names nothing Cairn can build on; nothing was changed. */
export function movedToDamageError(): CairnError {
  return new CairnError(
    'history-damaged',
    "The history's main branch was moved outside Cairn to a commit Cairn cannot read whole, so nothing was changed. Point it back at a whole commit with git, or restart Cairn to repair the history.",
  )
}

/**
 * What Cairn tells when it found `main` a link to the branch `symbolic` (a `git symbolic-ref`)
 * at `oid` and made it a branch of its own there again (docs/durability.md).
 */
export function unlinkedMessage(symbolic: string, oid: string): string {
  const branch = cutWithEllipsis(escapeInvisible(symbolic.slice('refs/heads/'.length)), 80)
  return `The history's main branch had been made a link to the branch "${branch}" with git (git symbolic-ref), outside Cairn. Cairn saves your memory on main itself, so main is a branch of its own again, at the commit "${branch}" names (${oid.slice(0, 12)}), with everything made through the link. "${branch}" was left as it is; nothing was lost.`
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
  return mainMoved(gitdir, head)?.oid ?? null
}

/**
 * `movedOutside`'s reading whole: the commit `main` names, and the branch it links to when git
 * made it a link (`git symbolic-ref`). A link counts as moved even to `head` itself: the next
 * write of `main` would replace it, which the follow does first, and says so.
 */
export function mainMoved(
  gitdir: string,
  head: string | null,
): { readonly oid: string; readonly symbolic?: string } | null {
  let reading
  try {
    reading = readMainRef(gitdir, head)
  } catch {
    return null
  }
  if (reading.kind !== 'ok' || (reading.oid === head && reading.symbolic === undefined)) {
    return null
  }
  return reading
}

/**
 * Takes `main` as found on disk when it moved outside Cairn (see the top of this file); null
 * when it did not. Every commit of the new history not yet indexed is read before anything
 * changes: one that cannot be (a ref naming no commit, a missing parent) refuses with
 * `movedToDamageError`, Cairn's state as it was. `progress` is told how many of the commits
 * git added were read (`total` null while they are being found), only when `main` moved.
 */
/**
 * `Repo.adopt`'s shape (repo.ts, which documents it), defined once here: the repository asks
 * this file whether `main` moved, so this file cannot import the repository's (a circle).
 */
export type AdoptHead = (
  head: string,
  tree: string,
  added: ReadonlyArray<IndexEntry>,
  replace?: boolean,
) => Promise<void>

/** What following needs of the repository: its head, folder, objects, index and `adopt`. */
export interface FollowingRepo {
  head(): string | null
  readonly gitdir: string
  readonly store: ObjectStore
  readonly index: { positionOf(oid: string): number; find(oid: string): IndexEntry | undefined }
  readonly adopt: AdoptHead
}

export async function followOutsideMove(
  repo: FollowingRepo,
  /** Called once everything was read, before Cairn's state changes (the lock's check). */
  beforeAdopt: () => void = () => {},
  progress: (done: number, total: number | null) => void = () => {},
): Promise<FollowedMove | null> {
  const from = repo.head()
  const found = mainMoved(repo.gitdir, from)
  if (found === null) return null
  const to = found.oid
  const linked = found.symbolic === undefined ? {} : { symbolic: found.symbolic }
  // Linked to a branch at Cairn's own head: nothing to take in.
  if (to === from) return { from, to, descends: true, added: [], ...linked, dropped: [] }
  const store = repo.store
  let tree: string
  let added: IndexEntry[]
  let descends: boolean
  progress(0, null)
  try {
    tree = (await store.readCommit(to)).tree
    added = await entriesSince(store, to, (oid) => repo.index.positionOf(oid) >= 0, progress)
    descends = from === null || added.some((entry) => parentsOf(entry).includes(from))
    // Not on top of Cairn's `main` (an amend, a reset, another history): the outside history
    // wins, and the index is made again from it alone: the walk above, when it met none of
    // the commits the index holds (another history whole), else every commit of it again,
    // those the index holds taken from it rather than read and compared again (a reset back
    // one commit in a history of 5,000 read and compared all 5,000 trees twice).
    if (!descends && !walkedWhole(repo, added)) added = await wholeHistory(repo, to, progress)
  } catch {
    throw movedToDamageError()
  }
  const dropped = descends ? [] : droppedBy(repo, from, added)
  beforeAdopt()
  await repo.adopt(to, tree, added, !descends)
  return { from, to, descends, added, ...linked, dropped }
}

/** Whether `added`, a walk stopped at what the index holds, went to the first commit. */
function walkedWhole(repo: FollowingRepo, added: ReadonlyArray<IndexEntry>): boolean {
  return (
    added.length > 0 &&
    !added.some((entry) => parentsOf(entry).some((oid) => repo.index.positionOf(oid) >= 0))
  )
}

/**
 * Every commit `to` reaches, oldest first as a rebuild orders them, each entry the index's
 * own where it holds one (equal to one made from the commit), else made from the commit.
 */
async function wholeHistory(
  repo: FollowingRepo,
  to: string,
  progress: (done: number, total: number) => void,
): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = []
  const oids = await commitsSince(repo.store, to, () => false)
  progress(0, oids.length)
  for (const oid of oids) {
    let known: IndexEntry | undefined
    try {
      known = repo.index.find(oid)
    } catch {
      // A damaged entry: made from its commit instead.
    }
    entries.push(known ?? (await entryFromCommit(repo.store, oid)))
    progress(entries.length, oids.length)
  }
  return entries
}

/**
 * The commits of Cairn's `main` (from its index, before it is replaced) that the new history
 * `kept` does not hold, newest first: what a reset or an amend made outside left out.
 */
function droppedBy(
  repo: FollowingRepo,
  from: string | null,
  kept: ReadonlyArray<IndexEntry>,
): IndexEntry[] {
  const onMain = new Set(kept.map((entry) => entry.oid))
  const dropped: IndexEntry[] = []
  const seen = new Set<string>()
  const next = from === null ? [] : [from]
  // All of them, not the first `MAX_DROPPED_LISTED`: the files of the 101st of a reset were
  // committed as an outside edit, and one back past 100 was called a replacement (rout30).
  while (next.length > 0) {
    const oid = next.shift()!
    if (onMain.has(oid) || seen.has(oid)) continue
    seen.add(oid)
    let entry: IndexEntry | undefined
    try {
      entry = repo.index.find(oid)
    } catch {
      // A damaged entry: named by nothing; the kept files are still kept.
      continue
    }
    if (!entry) continue
    dropped.push(entry)
    next.push(...parentsOf(entry))
  }
  return dropped
}
