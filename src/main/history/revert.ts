import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { escapeInvisible } from '../lib/text'
import { DamagedFolderError, DamagedHistoryError, readingVersion } from './damage'
import { segmentsOf, shownPath, toVirtual } from './paths'
import { momentOf, requireEntry, shortOid, treeOf } from './read'
import type { IndexEntry } from './side-index'
import type { Repo } from './repo'
import {
  applyOrExplain,
  changeResult,
  commitNow,
  keptAsideNote,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import { diffNodes, nodeAt, type FileDelta, type TreeNode } from './tree-state'

/** How many conflicting paths a refused revert names before "…". */
const CONFLICTS_LISTED = 5

/**
 * Undoes one commit with a new commit. Refuses, changing nothing, when a file it touched
 * has changed since.
 */
export async function revert(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await readingVersion(
    oid,
    () =>
      readingEarlierState(entry, async () =>
        diffNodes(repo.store, await treeBefore(repo, entry), await treeOf(repo, oid)),
      ),
    true,
  )
  const conflicts: string[] = []
  for (const delta of deltas) {
    const current = await nodeAt(repo.store, repo.root(), segmentsOf(delta.path))
    const currentOid = current?.kind === 'blob' ? current.oid : current ? 'folder' : null
    if (currentOid !== delta.after) conflicts.push(shownPath(delta.path))
  }
  if (conflicts.length > 0) {
    const listed =
      conflicts.slice(0, CONFLICTS_LISTED).join(', ') +
      (conflicts.length > CONFLICTS_LISTED ? ', …' : '')
    throw new CairnError(
      'conflict',
      `Cannot undo that change (${describe(entry)}): ${listed} changed since. Nothing was changed; restore a version of the file instead.`,
    )
  }
  const inverse = deltas.map((delta) => ({ ...delta, before: delta.after, after: delta.before }))
  if (inverse.length === 0) {
    return { commit: null, message: `That change (${describe(entry)}) changed nothing.` }
  }
  // Its intent on disk meanwhile: a kill half-way is finished at the next open.
  const { kept, made } = await applyAndCommit(
    repo,
    inverse,
    inverse.map((delta) => delta.path),
    {
      ...USER_INTENT,
      command: 'revert',
      subject: `revert ${shortOid(oid)}: ${entry.subject}`,
      paths: inverse.map((delta) => toVirtual(delta.path)),
      restoredFrom: oid,
    },
    () =>
      readingVersion(
        oid,
        () => bringingBack(entry, inverse, () => applyOrExplain(repo, inverse, 'The undo')),
        true,
      ),
    commit,
  )
  return changeResult(
    made,
    `Undid the change of ${momentOf(entry.time)}.${keptAsideNote(kept)}`,
    kept,
  )
}

/**
 * Runs `apply` (which reads every version it brings back before it writes anything), saying in
 * plain words which file's earlier version is damaged when that is why it failed: the change
 * itself is intact, so "damaged at <this change>" would point at the wrong version.
 */
async function bringingBack<T>(
  entry: IndexEntry,
  inverse: ReadonlyArray<FileDelta>,
  apply: () => Promise<T>,
): Promise<T> {
  try {
    return await apply()
  } catch (error) {
    const lost =
      error instanceof DamagedHistoryError
        ? inverse.find((delta) => delta.after === error.oid)
        : undefined
    if (!lost) throw error
    throw new CairnError(
      'history-damaged',
      `Cannot undo that change (${describe(entry)}): the history's copy of ${shownPath(lost.path)} from before it is damaged on disk, so that version cannot be brought back. Nothing was changed.`,
    )
  }
}

/** The tree of the version before `entry`; its commit damaged is its whole folder's damage. */
async function treeBefore(repo: Repo, entry: IndexEntry): Promise<TreeNode> {
  try {
    return await treeOf(repo, entry.parent)
  } catch (error) {
    if (error instanceof DamagedHistoryError) throw new DamagedFolderError(error, '', 'before')
    throw error
  }
}

/**
 * Runs `diff` (of the version before `entry` with `entry`'s own), saying in plain words which
 * folder of the version before is damaged when that is why it failed: `entry` itself is intact,
 * so "damaged at <this change>" would point at the wrong version. It names the files the change
 * touched in that folder, when the side index knows them (what they held then is what is lost).
 */
async function readingEarlierState<T>(entry: IndexEntry, diff: () => Promise<T>): Promise<T> {
  try {
    return await diff()
  } catch (error) {
    if (!(error instanceof DamagedFolderError) || error.side !== 'before') throw error
    const where =
      error.folder === '' ? 'the memory folder' : `the folder ${shownPath(error.folder)}`
    // "not a tree": a folder whose id is another kind of record's; "holds not a tree" said
    // nothing. A name it holds twice may carry invisible characters: shown escaped.
    const how =
      error.detail === 'missing' || error.detail === 'corrupt'
        ? 'is damaged on disk'
        : error.detail.startsWith('not a ')
          ? 'is damaged'
          : `holds ${escapeInvisible(error.detail)}`
    // The files it changed there, as the side index knows them: an entry rebuilt from the
    // commit since the damage has none (its diff failed too), so the paths it names stand in.
    const inside = `${toVirtual(error.folder)}/`
    const known = entry.files.length > 0 ? entry.files : entry.paths
    const files = known.filter((file) => file.startsWith(inside)).map(escapeInvisible)
    const what =
      files.length === 0
        ? 'what the files it changed there held'
        : `what ${files.slice(0, CONFLICTS_LISTED).join(', ')}${files.length > CONFLICTS_LISTED ? ', …' : ''} held`
    throw new CairnError(
      'history-damaged',
      `Cannot undo that change (${describe(entry)}): the history's record of ${where} from before it ${how}, so ${what} then cannot be read. Nothing was changed.`,
    )
  }
}

/** A change named for people: its time and what it touched ("3 Nov, 14:02, notes.md"). */
function describe(entry: IndexEntry): string {
  const [first] = entry.paths
  const name = first ? first.replace(/^\/memories\/?/, '') || '/memories' : 'memory'
  const more = entry.paths.length > 1 ? ` and ${entry.paths.length - 1} more` : ''
  return `${momentOf(entry.time)}, ${name}${more}`
}
