import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { segmentsOf, toVirtual } from './paths'
import { requireEntry, shortOid, treeOf, versionOf } from './read'
import type { Repo } from './repo'
import { changeResult, requireFilePath, USER_INTENT } from './restore-common'
import { nodeAt } from './tree-state'
import { writeFileSafely } from './work-tree'

/** Puts one file back to its content at `oid` (the undo for an overwrite or a bad edit). */
export async function restoreFile(repo: Repo, path: string, oid: string): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const relative = requireFilePath(path)
  // Normalized, so the commit's paths match the index (no trailing slash).
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  const then = await nodeAt(repo.store, await treeOf(repo, oid), segments)
  if (then?.kind !== 'blob') {
    throw new CairnError('not-found', `${virtual} was not a file in ${versionOf(entry)}.`)
  }
  const now = await nodeAt(repo.store, repo.root(), segments)
  if (now?.kind === 'blob' && now.oid === then.oid) {
    return { commit: null, message: `${virtual} already matches ${versionOf(entry)}.` }
  }
  await writeFileSafely(repo.workRoot, relative, await repo.store.readBlob(then.oid))
  return changeResult(
    await repo.commit([relative], {
      ...USER_INTENT,
      command: 'restore-file',
      subject: `restore ${virtual} from ${shortOid(oid)}`,
      paths: [virtual],
      restoredFrom: oid,
    }),
    `Restored ${virtual} to ${versionOf(entry)}.`,
  )
}
