import type { CommitDetail, Comparison, FileChange } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { decodeUtf8 } from '../lib/text'
import { DamagedFolderError, DamagedHistoryError, damagedAt, readingVersion } from './damage'
import { segmentsOf, toRelative, toVirtual } from './paths'
import { toSummary } from './queries'
import { requireCommitEntry, requireVersion, treeOf, type RepoView } from './read'
import type { IndexEntry } from './side-index'
import { readingEarlierState, treeBefore } from './earlier-state'
import { diffNodes, nodeAt, type FileDelta } from './tree-state'

/**
 * The content of a file at a commit (null when it did not exist there or was a folder).
 * A damaged version is a `history-damaged` error.
 */
export async function readAt(repo: RepoView, virtual: string, oid: string): Promise<string | null> {
  await requireVersion(repo, oid)
  const segments = segmentsOf(toRelative(virtual))
  return readingVersion(oid, async () => {
    const node = await nodeAt(repo.store, await treeOf(repo, oid), segments)
    if (node?.kind !== 'blob') return null
    // `ignoreBOM` keeps a leading U+FEFF: the text is the file's, as `git show` prints it.
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(await repo.store.readBlob(node.oid))
  })
}

/** How much of a large commit `show` sends at once; the rest stays reachable per file. */
export interface ShowLimits {
  /** Most file changes listed (the first ones, in path order). */
  readonly maxChanges: number
  /** Most characters of before + after text, summed over the listed changes. */
  readonly maxTextChars: number
}

/**
 * A "restore all" or recovery commit can touch thousands of files of up to 1 MiB each:
 * sending them all would push hundreds of MB to the renderer and freeze it.
 */
export const SHOW_LIMITS: ShowLimits = { maxChanges: 100, maxTextChars: 2_000_000 }

interface PendingChange {
  readonly path: string
  readonly oldPath: string | null
  readonly before: string | null
  readonly after: string | null
  readonly status: FileChange['status']
}

/**
 * What one commit changed, file by file, with both sides (renamed files paired up). Large
 * commits come back bounded by `limits`: the first changes only, and files whose text would
 * overflow the budget with `omitted: true` and no text.
 */
export async function showCommit(
  repo: RepoView,
  oid: string,
  limits: ShowLimits = SHOW_LIMITS,
): Promise<CommitDetail> {
  const entry = await requireCommitEntry(repo, oid)
  // The version before it damaged is named as that, not as this change (review of stop 26).
  const pending = await readingVersion(oid, () =>
    readingEarlierState(entry, 'show', () => pendingChanges(repo, entry)),
  )
  const changes = await bounded(repo, pending, limits)
  return {
    commit: toSummary(entry),
    message: await readingVersion(oid, async () => (await repo.store.readCommit(oid)).message),
    changes,
    totalChanges: pending.length,
    truncated: changes.length < pending.length,
  }
}

/** The first changes of `pending` with their text, within `limits`. */
async function bounded(
  repo: RepoView,
  pending: ReadonlyArray<PendingChange>,
  limits: ShowLimits,
): Promise<FileChange[]> {
  const changes: FileChange[] = []
  let budget = limits.maxTextChars
  for (const item of pending.slice(0, limits.maxChanges)) {
    const full = await change(repo, item.path, item.oldPath, item.before, item.after, item.status)
    const cost = (full.before?.length ?? 0) + (full.after?.length ?? 0)
    if (cost > budget) {
      changes.push({ ...full, before: null, after: null, omitted: true })
      continue
    }
    budget -= cost
    changes.push(full)
  }
  return changes
}

/**
 * How memory at `from` differs from memory at `to` (default: now), file by file and bounded
 * like `showCommit`. A file that moved in between with its content unchanged shows as renamed
 * (git's exact rename detection, `git diff -M100%`); one moved and edited, as one removed and
 * one added.
 */
export async function compareCommits(
  repo: RepoView,
  from: string,
  to: string | null,
  limits: ShowLimits = SHOW_LIMITS,
): Promise<Comparison> {
  await requireVersion(repo, from)
  const target = to ?? repo.head()
  if (!target) throw new CairnError('not-found', 'The history is empty.')
  await requireVersion(repo, target)
  // Damage in either version's trees is told as "the history is damaged at" that version.
  const fromTree = await readingVersion(from, () => treeOf(repo, from))
  const targetTree = await readingVersion(target, () => treeOf(repo, target))
  const deltas = await diffNodes(repo.store, fromTree, targetTree).catch((error: unknown) => {
    if (error instanceof DamagedFolderError) {
      throw damagedAt(error.side === 'before' ? from : target, error)
    }
    throw error
  })
  const pending = withRenames(deltas, exactMoves(deltas))
  const changes = await bounded(repo, pending, limits)
  return {
    from,
    to: target,
    changes,
    totalChanges: pending.length,
    truncated: changes.length < pending.length,
  }
}

/** The bytes of a file at a commit (null when it did not exist there or was a folder). */
export async function readBytesAt(
  repo: RepoView,
  virtual: string,
  oid: string,
): Promise<Uint8Array | null> {
  await requireVersion(repo, oid)
  const segments = segmentsOf(toRelative(virtual))
  return readingVersion(oid, async () => {
    const node = await nodeAt(repo.store, await treeOf(repo, oid), segments)
    return node?.kind === 'blob' ? repo.store.readBlob(node.oid) : null
  })
}

// Every change of a commit by blob id only (cheap: no content is read).
async function pendingChanges(
  repo: RepoView,
  entry: IndexEntry,
): Promise<ReadonlyArray<PendingChange>> {
  const deltas = await diffNodes(
    repo.store,
    await treeBefore(repo, entry),
    await treeOf(repo, entry.oid),
  )
  const added = new Map<string, string>()
  for (const delta of deltas) if (!delta.before && delta.after) added.set(delta.path, delta.after)
  // A rename commit's deleted source files map onto the added files under the new name.
  const renamedTo = new Map<string, string>()
  const [from, to] = entry.command === 'rename' ? entry.paths : []
  if (from && to) {
    const source = toRelative(from)
    const target = toRelative(to)
    for (const delta of deltas) {
      if (delta.after || !(delta.path === source || delta.path.startsWith(`${source}/`))) continue
      const moved = target + delta.path.slice(source.length)
      if (added.has(moved)) renamedTo.set(delta.path, moved)
    }
  }
  return withRenames(deltas, renamedTo)
}

/**
 * The removed files whose exact content a file added in `deltas` has (removed path -> added
 * path), as git's exact rename detection pairs them: each removed file once, one of the same
 * name first, else the first in path order (empty files too, as git does).
 */
function exactMoves(deltas: ReadonlyArray<FileDelta>): Map<string, string> {
  const removed = new Map<string, string[]>()
  for (const delta of deltas) {
    if (delta.before && !delta.after) {
      const paths = removed.get(delta.before)
      if (paths) paths.push(delta.path)
      else removed.set(delta.before, [delta.path])
    }
  }
  const moves = new Map<string, string>()
  if (removed.size === 0) return moves
  const nameOf = (relative: string) => relative.slice(relative.lastIndexOf('/') + 1)
  for (const delta of deltas) {
    if (delta.before || !delta.after) continue
    const sources = removed.get(delta.after)?.filter((source) => !moves.has(source))
    if (!sources?.length) continue
    const sameName = sources.find((source) => nameOf(source) === nameOf(delta.path))
    moves.set(sameName ?? (sources[0] as string), delta.path)
  }
  return moves
}

/** `deltas` as changes, each removed file of `renamedTo` paired with the file it became. */
function withRenames(
  deltas: ReadonlyArray<FileDelta>,
  renamedTo: ReadonlyMap<string, string>,
): PendingChange[] {
  const added = new Map<string, string>()
  for (const delta of deltas) if (!delta.before && delta.after) added.set(delta.path, delta.after)
  const pairedTargets = new Set(renamedTo.values())
  const pending: PendingChange[] = []
  for (const delta of deltas) {
    if (pairedTargets.has(delta.path)) continue
    const moved = renamedTo.get(delta.path)
    if (moved) {
      pending.push({
        path: toVirtual(moved),
        oldPath: toVirtual(delta.path),
        before: delta.before,
        after: added.get(moved) ?? null,
        status: 'renamed',
      })
      continue
    }
    const status = !delta.before ? 'added' : !delta.after ? 'deleted' : 'modified'
    pending.push({
      path: toVirtual(delta.path),
      oldPath: null,
      before: delta.before,
      after: delta.after,
      status,
    })
  }
  return pending
}

/** One file compared between two commits of this history. */
export async function diffFile(
  repo: RepoView,
  virtual: string,
  from: string,
  to: string,
): Promise<FileChange> {
  await requireVersion(repo, from)
  await requireVersion(repo, to)
  const segments = segmentsOf(toRelative(virtual))
  const before = await readingVersion(from, async () =>
    nodeAt(repo.store, await treeOf(repo, from), segments),
  )
  const after = await readingVersion(to, async () =>
    nodeAt(repo.store, await treeOf(repo, to), segments),
  )
  const beforeOid = before?.kind === 'blob' ? before.oid : null
  const afterOid = after?.kind === 'blob' ? after.oid : null
  if (!beforeOid && !afterOid) {
    throw new CairnError('not-found', `${virtual} is not a file in either version.`)
  }
  // The same content on both sides (the same commit twice, or a file neither commit changed)
  // is unchanged, as `git diff` shows nothing for it.
  const status =
    beforeOid === afterOid ? 'unchanged' : !beforeOid ? 'added' : !afterOid ? 'deleted' : 'modified'
  return change(repo, virtual, null, beforeOid, afterOid, status)
}

async function change(
  repo: RepoView,
  path: string,
  oldPath: string | null,
  beforeOid: string | null,
  afterOid: string | null,
  status: FileChange['status'],
): Promise<FileChange> {
  const before = await textOf(repo, beforeOid)
  const after = await textOf(repo, afterOid)
  // A version whose own copy is intact is shown, whole, when only the earlier one is damaged;
  // a deletion has nothing of its own to show.
  const beforeDamaged = before.damaged && !after.damaged && afterOid !== null
  const damaged = !beforeDamaged && (before.damaged || after.damaged)
  const binary =
    (beforeOid !== null && !before.damaged && before.text === null) ||
    (afterOid !== null && !after.damaged && after.text === null)
  return {
    path,
    oldPath,
    status,
    before: before.text,
    after: after.text,
    binary,
    ...(damaged ? { damaged } : {}),
    ...(beforeDamaged ? { beforeDamaged } : {}),
  }
}

// A blob's text; a missing or corrupt blob is shown as damaged, not as an error.
async function textOf(
  repo: RepoView,
  oid: string | null,
): Promise<{ readonly text: string | null; readonly damaged: boolean }> {
  if (oid === null) return { text: null, damaged: false }
  try {
    return { text: decodeUtf8(await repo.store.readBlob(oid)), damaged: false }
  } catch (error) {
    if (error instanceof DamagedHistoryError) return { text: null, damaged: true }
    throw error
  }
}
