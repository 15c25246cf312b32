import type { ChangeResult } from '../../shared/types'
import { readingVersion } from './damage'
import { requireCommitEntry, shortOid, treeOf, versionOf } from './read'
import type { CommitIntent, Repo } from './repo'
import {
  applyOrExplain,
  changeResult,
  commitNow,
  findNoCopyEntries,
  keptAsideNote,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { applyAndCommit } from './restore-intent'
import { segmentsOf, shownPath } from './paths'
import { diffNodes, nodeAt, type FileDelta } from './tree-state'
import type { ScanReport } from './work-tree'

/** A restore of the whole folder's answer, and what it left as it is (relative paths). */
export type RestoredAll = ChangeResult & {
  /**
   * Files it left (Cairn may not read them, or they are too large to keep, and no version
   * holds them) and folders it may not enter: everything else is as `oid` had it.
   */
  readonly leftAsItIs: ReadonlyArray<string>
}

/**
 * Makes the whole memory folder what it was at `oid`, in one commit. `scanned`: the report of
 * a scan of the whole folder made just before in the same turn of the queue (the check that
 * commits edits made outside Cairn first), asked for what history keeps no copy of
 * (`newScanReport(true)`); without that the folder is walked here for it.
 */
export async function restoreAll(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
  scanned: ScanReport | null = null,
): Promise<RestoredAll> {
  const entry = await requireCommitEntry(repo, oid)
  // History's trees still show a file too large to version, or one Cairn may not read, at its
  // last versioned content: found on disk, or the restore "already matched" over them.
  const noCopy = scanned?.noCopy ?? findNoCopyEntries(repo)
  const { deltas, unseen, left } = await readingVersion(
    oid,
    async () => {
      const target = await treeOf(repo, oid)
      const found = await diffNodes(repo.store, repo.root(), target)
      const changed = new Set(found.map((delta) => delta.path))
      const extra: FileDelta[] = []
      const left: string[] = []
      for (const relative of noCopy.files) {
        if (changed.has(relative)) continue
        const then = await nodeAt(repo.store, target, segmentsOf(relative))
        if (then?.kind !== 'blob') {
          // Neither history nor the target holds it: nothing to bring back, and no copy to
          // delete it against. Left, and said so: never "already matches" (review13 R3).
          if (then === null) left.push(relative)
          continue
        }
        const now = await nodeAt(repo.store, repo.root(), segmentsOf(relative))
        // Kept aside by `applyDeltas` (never read, so never written over), the version written.
        extra.push({
          path: relative,
          before: now?.kind === 'blob' ? now.oid : null,
          after: then.oid,
        })
      }
      // A folder Cairn may not enter, whose content the target holds and the diff shows as
      // unchanged: what it holds now is unknown, so it is named instead of said to match.
      const unseen: string[] = []
      for (const relative of noCopy.folders) {
        if (found.some((delta) => delta.path.startsWith(`${relative}/`))) continue
        if ((await nodeAt(repo.store, target, segmentsOf(relative))) !== null) unseen.push(relative)
      }
      return { deltas: [...found, ...extra], unseen, left }
    },
    true,
  )
  const leftNote = left
    .map((relative) =>
      noCopy.unreadable.has(relative)
        ? ` ${shownPath(relative)} was left as it is: Cairn may not read it (permission denied), and the history has no version of it.`
        : ` ${shownPath(relative)} was left as it is: it is too large for the history to keep, and the history has no version of it.`,
    )
    .join('')
  const unseenNote = unseen
    .map(
      (relative) =>
        ` Cairn may not read ${shownPath(relative)} (permission denied), so it could not tell whether that folder matches; it was left as it is.`,
    )
    .join('')
  const leftAsItIs = [...left, ...unseen]
  if (deltas.length === 0) {
    return {
      leftAsItIs,
      commit: null,
      message:
        unseen.length === 0 && left.length === 0
          ? `The memory folder already matches ${versionOf(entry)}.`
          : `Nothing Cairn can read differs from ${versionOf(entry)}.${leftNote}${unseenNote}`,
    }
  }
  const intent: CommitIntent = {
    ...USER_INTENT,
    command: 'restore-all',
    subject: `restore all memories to ${shortOid(oid)}`,
    restoredFrom: oid,
  }
  // Durable before the first file changes: a kill half-way is finished at the next open.
  const { kept, made } = await applyAndCommit(
    repo,
    deltas,
    deltas.map((delta) => delta.path),
    intent,
    () =>
      // Named: a refusal said only "permission was denied" (review13 R4).
      readingVersion(oid, () => applyOrExplain(repo, deltas), true),
    commit,
  )
  return {
    ...changeResult(
      made,
      `Restored the memory folder to ${versionOf(entry)}.${keptAsideNote(kept)}${leftNote}${unseenNote}`,
      kept,
    ),
    leftAsItIs,
  }
}
