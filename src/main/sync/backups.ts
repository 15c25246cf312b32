/**
 * Histories kept aside when the person chose "Use the remote's memory": each under
 * `refs/cairn/backups/<machine>-<time>`, and brought back as a merge commit by You that joins
 * it to the current history (both memories kept; files both hold are handled as conflicts).
 */
import path from 'node:path'
import type { HistoryGit } from '../history'
import { disk, isCode, readPlainFileAsync } from '../lib/disk'
import { CairnError } from '../lib/errors'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { BACKUP_PREFIX, checkSafe, graphOf, mergeCommit } from './engine'
import { readRef } from './git-fs'
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
 * The names of the backups: loose refs under `refs/cairn/backups/` and packed ones. Read here
 * rather than by isomorphic-git's `listRefs`, which takes any failure to list the folder or read
 * `packed-refs` for "no backups": a disk that fails (EIO, a denied read) or a file where one of
 * the folders goes is thrown on, so the Sync panel can say the list cannot be read. Only a
 * folder never made is "none".
 */
export async function backupNames(gitdir: string): Promise<ReadonlyArray<string>> {
  const names = new Set<string>()
  try {
    for (const entry of await disk.promises.readdir(path.join(gitdir, ...BACKUP_DIR))) {
      if (!entry.isDirectory() && !entry.name.startsWith(TEMP_FILE_PREFIX)) names.add(entry.name)
    }
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
  let packed = ''
  try {
    packed = (
      await readPlainFileAsync(path.join(gitdir, 'packed-refs'), OWN_FILE_CAP.RECORDS)
    ).toString('utf8')
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
  // `<oid> refs/cairn/backups/<name>` lines; `#` and `^` lines are not refs.
  for (const line of packed.split('\n')) {
    const ref = line.slice(41).trimEnd()
    if (/^[0-9a-f]{40} /.test(line) && ref.startsWith(BACKUP_PREFIX)) {
      names.add(ref.slice(BACKUP_PREFIX.length))
    }
  }
  return [...names].sort()
}

const BACKUP_DIR = BACKUP_PREFIX.slice(0, -1).split('/')
