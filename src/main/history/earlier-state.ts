import { CairnError } from '../lib/errors'
import { escapeInvisible } from '../lib/text'
import { DamagedFolderError, DamagedHistoryError } from './damage'
import { shownPath, toVirtual } from './paths'
import { momentOf, treeOf, type RepoView } from './read'
import type { IndexEntry } from './side-index'
import type { TreeNode } from './tree-state'

/** How many files a refusal names before "…". */
const FILES_LISTED = 5

/** The tree of the version before `entry`; its commit damaged is its whole folder's damage. */
export async function treeBefore(repo: RepoView, entry: IndexEntry): Promise<TreeNode> {
  try {
    return await treeOf(repo, entry.parent)
  } catch (error) {
    if (error instanceof DamagedHistoryError) throw new DamagedFolderError(error, '', 'before')
    throw error
  }
}

/**
 * Runs `diff` (of the version before `entry` with `entry`'s own, for an undo or to show the
 * change), saying in plain words which folder of the version before is damaged when that is
 * why it failed: `entry` itself is intact, so "damaged at <this change>" would point at the
 * wrong version. It names the files the change touched in that folder, when the side index
 * knows them (what they held then is what is lost).
 */
export async function readingEarlierState<T>(
  entry: IndexEntry,
  purpose: 'undo' | 'show',
  diff: () => Promise<T>,
): Promise<T> {
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
        : `what ${files.slice(0, FILES_LISTED).join(', ')}${files.length > FILES_LISTED ? ', …' : ''} held`
    const lead = purpose === 'undo' ? 'Cannot undo that change' : 'Cannot show that change'
    throw new CairnError(
      'history-damaged',
      `${lead} (${describeChange(entry)}): the history's record of ${where} from before it ${how}, so ${what} then cannot be read.${purpose === 'undo' ? ' Nothing was changed.' : ''}`,
    )
  }
}

/**
 * A change named for people: its time and what it touched ("3 Nov, 14:02, notes.md"), with
 * characters that draw as nothing escaped, as every path a message shows (`shownPath`).
 */
export function describeChange(entry: IndexEntry): string {
  const [first] = entry.paths
  const name = first
    ? escapeInvisible(first.replace(/^\/memories\/?/, '')) || '/memories'
    : 'memory'
  const more = entry.paths.length > 1 ? ` and ${entry.paths.length - 1} more` : ''
  return `${momentOf(entry.time)}, ${name}${more}`
}
