/**
 * Histories kept aside when the person chose "Use the remote's memory": each under
 * `refs/cairn/backups/<machine>-<time>`, and brought back as a merge commit by You that joins
 * it to the current history (both memories kept; files both hold are handled as conflicts).
 */
import type { HistoryGit } from '../history'
import { CairnError } from '../lib/errors'
import { BACKUP_PREFIX, checkSafe, graphOf, mergeCommit } from './engine'
import { readRef, refNames } from './git-fs'
import { explore, mergeBaseOf } from './graph'
import type { ConflictRecord } from './store'

/** Joins the backup `name` into the current history; returns the conflicts it raised. */
export async function restoreBackup(
  history: HistoryGit,
  name: string,
  machine: string,
  now: () => number,
  namesFoldCase?: boolean,
): Promise<ReadonlyArray<ConflictRecord>> {
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name.includes('..')) {
    throw new CairnError('not-found', 'There is no backup by that name.')
  }
  const backup = await readRef(history.gitdir, `${BACKUP_PREFIX}${name}`)
  if (!backup) throw new CairnError('not-found', 'There is no backup by that name.')
  return history.exclusive(async (session) => {
    const local = session.head()
    const found = await explore(graphOf(history), backup)
    if (found.fresh.size === 0) {
      throw new CairnError('exists', 'That backup is already part of this memory’s history.')
    }
    await checkSafe(history.objects, backup, local, namesFoldCase)
    if (local === null || found.frontier.includes(local)) {
      await session.moveMain(backup, 'forward')
      return []
    }
    const merge = await mergeCommit(
      { git: history, machine, now, namesFoldCase },
      local,
      backup,
      mergeBaseOf(graphOf(history), found),
      'restore-backup',
    )
    await session.moveMain(merge.oid, 'forward')
    return merge.conflicts
  })
}

/**
 * The names of the backups: loose refs under `refs/cairn/backups/` and packed ones. Read by
 * `refNames` rather than isomorphic-git's `listRefs`, which takes any failure to list the folder
 * or read `packed-refs` for "no backups": a disk that fails (EIO, a denied read) or a file where
 * one of the folders goes is thrown on, so the Sync panel can say the list cannot be read. Only
 * a folder never made is "none".
 */
export async function backupNames(gitdir: string): Promise<ReadonlyArray<string>> {
  return (await refNames(gitdir, BACKUP_PREFIX, false)).map((ref) =>
    ref.slice(BACKUP_PREFIX.length),
  )
}
