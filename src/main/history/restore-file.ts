import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { readingVersion } from './damage'
import { segmentsOf, shownPath, toVirtual } from './paths'
import { requireCommitEntry, shortOid, treeOf, versionOf } from './read'
import type { Repo } from './repo'
import {
  applyOrExplain,
  changeResult,
  commitNow,
  keptAsideNote,
  noCopyOnDisk,
  requireFilePath,
  USER_INTENT,
  type Committer,
} from './restore-common'
import { nodeAt } from './tree-state'

/** Puts one file back to its content at `oid` (the undo for an overwrite or a bad edit). */
export async function restoreFile(
  repo: Repo,
  path: string,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const entry = await requireCommitEntry(repo, oid)
  const relative = requireFilePath(path)
  // Normalized, so the commit's paths match the index (no trailing slash).
  const virtual = toVirtual(relative)
  const shown = shownPath(relative)
  const segments = segmentsOf(relative)
  const { then, content } = await readingVersion(
    oid,
    async () => {
      const node = await nodeAt(repo.store, await treeOf(repo, oid), segments)
      if (node?.kind !== 'blob') return { then: null, content: null }
      return { then: node, content: await repo.store.readBlob(node.oid) }
    },
    true,
  )
  if (!then || !content) {
    throw new CairnError('not-found', `${shown} was not a file in ${versionOf(entry)}.`)
  }
  const now = await nodeAt(repo.store, repo.root(), segments)
  // A file grown too large to version, or one Cairn may not read, still shows its last version
  // in history: the folder does not match it, so the restore goes ahead (keeping it aside).
  if (now?.kind === 'blob' && now.oid === then.oid && !noCopyOnDisk(repo, relative)) {
    return { commit: null, message: `${shown} already matches ${versionOf(entry)}.` }
  }
  // Through the restores' common path: a file the history never held there is kept aside.
  const kept = await applyOrExplain(repo, [
    { path: relative, before: now?.kind === 'blob' ? now.oid : null, after: then.oid },
  ])
  const made = await commit([relative], {
    ...USER_INTENT,
    command: 'restore-file',
    subject: `restore ${virtual} from ${shortOid(oid)}`,
    paths: [virtual],
    restoredFrom: oid,
  })
  const message = `Restored ${shown} to ${versionOf(entry)}.${keptAsideNote(kept)}`
  // With no commit (history already named that version: the file had only grown too large)
  // the folder changed all the same, and the person is told where the large file went.
  return changeResult(made, message, kept)
}
