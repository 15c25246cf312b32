import type { ChangeResult } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { segmentsOf, toVirtual } from './paths'
import { shortOid, treeOf, versionOf } from './read'
import type { Repo } from './repo'
import { changeResult, requireFilePath, USER_INTENT } from './restore-common'
import { listFiles, nodeAt } from './tree-state'
import { writeFileSafely } from './work-tree'

/** Brings back a deleted file or folder from the last version that had it. */
export async function restoreDeleted(repo: Repo, path: string): Promise<ChangeResult> {
  const relative = requireFilePath(path)
  // The index stores normalized paths: `/memories/d/` must find the commits of `/memories/d`.
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  if (await nodeAt(repo.store, repo.root(), segments)) {
    throw new CairnError('exists', `${virtual} exists; restore one of its versions instead.`)
  }
  // The timeline's path filter, run on the index's file ids.
  const touches = repo.index.pathMatcher(virtual)
  for (let i = repo.index.size - 1; i >= 1; i--) {
    if (!touches(i)) continue
    const entry = repo.index.at(i)
    if (!entry.parent) continue
    const before = await nodeAt(repo.store, await treeOf(repo, entry.parent), segments)
    if (!before) continue
    const files = await listFiles(repo.store, before, relative)
    for (const [file, blob] of files) {
      await writeFileSafely(repo.workRoot, file, await repo.store.readBlob(blob))
    }
    return changeResult(
      await repo.commit([relative], {
        ...USER_INTENT,
        command: 'restore-deleted',
        subject: `restore deleted ${virtual} from ${shortOid(entry.parent)}`,
        paths: [virtual],
        restoredFrom: entry.parent,
      }),
      `Brought back ${virtual} as of ${versionOf(repo.entry(entry.parent) ?? entry)}.`,
    )
  }
  throw new CairnError('not-found', `No earlier version of ${virtual} is in the history.`)
}
