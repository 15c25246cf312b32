import type { FolderTree } from '../lib/folders'
import { parseMemoryPath } from '../memory'
import { isWithin, segmentsOf } from './paths'
import { systemIntent, type CommitIntent, type Repo } from './repo'
import type { IndexEntry } from './side-index'
import { nodeAt, type Node } from './tree-state'
import { scanPath, type ScanReport } from './work-tree'

/** What a change is about to touch: relative paths (a folder covers its subtree), or all. */
export type TouchedPaths = ReadonlyArray<string> | 'all'

/** The facts of a commit that saves edits made to the memory folder by someone else. */
const OUTSIDE_INTENT: CommitIntent = systemIntent('outside', 'Changes made outside Cairn')

const PATH_KEYS = ['path', 'old_path', 'new_path'] as const

/**
 * The paths a raw Memory tool command may touch, parsed with the tool's own rules (so they
 * name what the tool will touch). Reads touch nothing; paths the tool will refuse are left
 * out, since the tool changes nothing for them. `asOnDisk`: a delete's path and a rename's
 * source keep their spelling, as the tool then takes them (`spelledAsOnDisk`).
 */
export function touchedByCommand(input: unknown, asOnDisk = false): ReadonlyArray<string> {
  if (typeof input !== 'object' || input === null) return []
  const raw = input as Record<string, unknown>
  if (raw.command === 'view') return []
  const touched: string[] = []
  for (const key of PATH_KEYS) {
    const value = raw[key]
    if (typeof value !== 'string') continue
    const keepSpelling =
      asOnDisk && (raw.command === 'delete' || (raw.command === 'rename' && key === 'old_path'))
    const parsed = parseMemoryPath(value, { keepSpelling })
    if (parsed.ok) touched.push(parsed.relative)
  }
  return touched
}

/** The relative paths a revert of `entry` writes. */
export function touchedByRevert(entry: IndexEntry | undefined): ReadonlyArray<string> {
  return entry ? entry.files.map((file) => file.replace(/^\/memories\/?/, '')) : []
}

/**
 * Commits, as one system commit, whatever the folder holds at `touched` that `HEAD` does
 * not (an edit made outside Cairn), so that the change about to run there is committed on
 * its own. Reads and hashes only the touched paths; returns null when they match `HEAD`.
 */
export async function commitOutsideChanges(
  repo: Repo,
  touched: TouchedPaths,
  commit: (
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    report?: ScanReport,
  ) => Promise<IndexEntry | null> = (paths, intent, report) =>
    repo.commit(paths, intent, report ? { report } : {}),
  /**
   * Filled in with what the check met that history keeps no copy of (files too large to
   * version, files and folders Cairn may not read): for `'all'`, everything the folder holds.
   */
  report?: ScanReport,
  /**
   * The open folders of the change about to run: the check walks them for it (see
   * `ScanContext.tree`), so the change does not open them again.
   */
  tree?: FolderTree,
): Promise<IndexEntry | null> {
  if (touched === 'all') return commit('all', OUTSIDE_INTENT, report)
  const paths = outermost(touched)
  if (paths.length === 0 || !(await differsFromHead(repo, paths, report, tree))) return null
  try {
    return await commit(paths, OUTSIDE_INTENT)
  } finally {
    // The bytes the check read are as old as its commit's `fsync`s: a save made in place
    // meanwhile must be read by the change itself, not overwritten from them.
    tree?.forgetReads()
  }
}

/** True when the folder at any of `paths` (relative) is not what `HEAD`'s tree holds. */
export async function differsFromHead(
  repo: Repo,
  paths: ReadonlyArray<string>,
  report?: ScanReport,
  tree?: FolderTree,
): Promise<boolean> {
  const root = repo.root()
  for (const relative of paths) {
    const segments = segmentsOf(relative)
    const committed = await nodeAt(repo.store, root, segments)
    const onDisk = await scanPath(repo.store, repo.workRoot, segments, committed, {
      report,
      stats: repo.stats,
      tree,
    })
    if (!sameNode(committed, onDisk)) return true
  }
  return false
}

/** `paths` without duplicates and without paths inside another one (scanning it covers them). */
export function outermost(paths: ReadonlyArray<string>): ReadonlyArray<string> {
  const sorted = [...new Set(paths)].sort((a, b) => a.length - b.length)
  const kept: string[] = []
  for (const candidate of sorted) {
    if (!kept.some((parent) => isWithin(candidate, parent))) kept.push(candidate)
  }
  return kept
}

// `scanNode` hands back the committed folder node itself when nothing under it changed, and
// a fresh blob node (same id, same mode) for an unchanged file.
function sameNode(committed: Node | null, onDisk: Node | null): boolean {
  const a = isEmpty(committed) ? null : committed
  const b = isEmpty(onDisk) ? null : onDisk
  if (a === b) return true
  if (!a || !b || a.kind !== b.kind) return false
  if (a.kind === 'blob' && b.kind === 'blob') return a.oid === b.oid && a.mode === b.mode
  return a.oid !== null && a.oid === b.oid
}

function isEmpty(node: Node | null): boolean {
  return node === null || (node.kind === 'tree' && node.children?.size === 0)
}
