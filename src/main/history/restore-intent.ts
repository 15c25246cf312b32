/**
 * A restore's intent, kept on disk while it writes: a kill half-way through a restore of many
 * files left a folder neither before nor after it, which the next open saved as "changes made
 * outside Cairn" (the restore's own commit and its `Restored-From` lost). The restore writes
 * `history.git/cairn-restore` first (the commit it started from, its commit's facts, and the
 * file changes, each with the blob before and after), `fsync`ed; it is removed once the
 * restore's commit is made (or the restore failed and put everything back). An open that
 * finds it, with `main` still where the restore started, finishes the restore from history
 * (every blob it writes is there) and makes its commit, before anything else is saved.
 */

import path from 'node:path'
import { writeJsonAtomic } from '../lib/atomic-json'
import { errorCode, isDenied, unlinkQuietly } from '../lib/disk'
import { readOwnRecord } from './objects/damaged-folder'
import { isDiskProblem, isLastingRefusal } from '../lib/disk-errors'
import { FolderTree, readFileIn } from '../lib/folders'
import type { Logger } from '../lib/logger'
import { entryNameProblem } from './damage'
import { isOid } from './main-ref'
import { toVirtual } from './paths'
import type { IndexEntry } from './side-index'
import type { CommitIntent, Repo } from './repo'
import { applyDeltas, type Committer } from './restore-common'
import type { FileDelta } from './tree-state'
import { keepsNoCopy, MAX_VERSIONED_BYTES } from './work-tree'

/** The intent file's name in the git directory. */
export const RESTORE_INTENT_FILE = 'cairn-restore'

/**
 * The git directory's note of a restore given up at open (`{ "version": 1, "path": … }`, the
 * relative path the system refused): kept until an open has raised its notice, so that a kill
 * after the intent went still ends in the person being told (review13-story R6).
 */
export const GIVEN_UP_FILE = 'cairn-restore-given-up'

interface RestoreIntent {
  readonly version: 1
  /** `main` when the restore started: the restore is unfinished only while it still is. */
  readonly base: string | null
  readonly intent: CommitIntent
  readonly deltas: ReadonlyArray<FileDelta>
  /** The paths its commit covers (a folder brought back is committed as the folder). */
  readonly paths: ReadonlyArray<string>
}

/** The written intent of one restore; `done` removes it. */
export interface RecordedRestore {
  done(): void
}

/** Writes (and makes durable) the intent of a restore about to apply `deltas`. */
export async function recordRestore(
  repo: Pick<Repo, 'store' | 'head'>,
  deltas: ReadonlyArray<FileDelta>,
  paths: ReadonlyArray<string>,
  intent: CommitIntent,
): Promise<RecordedRestore> {
  const file = intentFileOf(repo.store.gitdir)
  const record: RestoreIntent = { version: 1, base: repo.head(), intent, deltas, paths }
  await writeJsonAtomic(file, record)
  return { done: () => unlinkQuietly(file) }
}

/**
 * A restore's writes and commit with its intent on disk meanwhile: `apply` (which writes
 * `deltas`, all or nothing) then `commit` of `paths`. The intent goes once the commit is
 * made, or once `apply` failed (it put everything back) or the commit did (the next change
 * saves the files); a commit owed for a full disk keeps it, so that a kill before it is made
 * still ends in this restore's commit.
 */
export async function applyAndCommit<K>(
  repo: Pick<Repo, 'store' | 'head'>,
  deltas: ReadonlyArray<FileDelta>,
  paths: ReadonlyArray<string>,
  intent: CommitIntent,
  apply: () => Promise<K>,
  commit: Committer,
): Promise<{ readonly kept: K; readonly made: IndexEntry | null | 'pending' }> {
  const recorded = await recordRestore(repo, deltas, paths, intent)
  let kept: K
  let made: IndexEntry | null | 'pending'
  try {
    kept = await apply()
    made = await commit(paths, intent)
  } catch (error) {
    recorded.done()
    throw error
  }
  if (made !== 'pending') recorded.done()
  return { kept, made }
}

/** What became of an interrupted restore at open. */
export interface FinishedRestore {
  /** Its commit, when it was finished (null: nothing to finish, or it was given up). */
  readonly entry: IndexEntry | null
  /**
   * The file or folder (relative) the system refused the restore to change, when that gave
   * it up: named to the person, who can grant access and restore again.
   */
  readonly refused: string | null
}

/**
 * At open, before changes found in the folder are saved: finishes a restore a kill
 * interrupted and commits it with its own facts (`entry`). A restore that cannot be finished
 * as it was meant (a file changed since to something neither side of it, a damaged blob, a
 * file or folder the system will not let Cairn change) is given up, the folder left as it
 * holds it for the open's own commit to save; a disk that fails fails the open and keeps the
 * intent.
 */
export async function finishInterruptedRestore(
  repo: Repo,
  logger?: Logger,
): Promise<FinishedRestore> {
  const none: FinishedRestore = { entry: null, refused: null }
  const file = intentFileOf(repo.store.gitdir)
  // A restore that happened (finished here, or committed before a kill) takes with it the
  // give-up note a kill left beside its intent (between writing the note and removing the
  // intent): raised, it would say a restore that happened could not be, and ask for it again
  // (review14-story R1). One that did not happen keeps the note, which stays true. The note
  // goes first: a kill between the two leaves the intent, which the next open settles again.
  const settle = (): void => {
    forgetGivenUpRestore(repo.store.gitdir)
    unlinkQuietly(file)
  }
  let record: RestoreIntent | null
  try {
    // A fifo, a link or a folder in its place is kept aside and read as no intent.
    const bytes = readOwnRecord(repo.store.gitdir, file)
    if (bytes === null) return none
    record = JSON.parse(bytes.toString('utf8')) as RestoreIntent
  } catch (error) {
    if (isDiskProblem(error)) throw error
    // Cut short by a kill while it was written (its restore had not begun), or not ours.
    unlinkQuietly(file)
    return none
  }
  try {
    if (record?.version !== 1 || record.base !== repo.head() || !Array.isArray(record.deltas)) {
      // Committed before the kill (or a history that moved on): nothing is unfinished.
      settle()
      return none
    }
    // The file is only data: a crafted one must not name anything outside the folder (a `..`
    // once deleted and wrote files beside it) nor hand git a name it would refuse.
    const problem = intentProblem(record)
    if (problem) {
      logger?.warn(`An interrupted restore's record was dropped: ${problem}`)
      unlinkQuietly(file)
      return none
    }
    if (!(await eachFileOnEitherSide(repo, record.deltas))) {
      logger?.warn('An interrupted restore was not finished: files it touched changed since')
      unlinkQuietly(file)
      return none
    }
    let refused: string | null = null
    try {
      await applyDeltas(repo, record.deltas, (failure) => {
        refused = failure.folder ?? failure.path
      })
    } catch (error) {
      // Denied, and denied at every later start (a folder at 555 holding a file at 000: the
      // file cannot be moved aside): kept, the intent failed every open (review12, item 2).
      // `applyDeltas` put back what it wrote; the open saves the folder as it is, and each
      // file's last version stays in history.
      if (!isLastingRefusal(error) || refused === null) throw error
      logger?.warn(
        `An interrupted restore was given up: Cairn may not change ${toVirtual(refused)}`,
      )
      // Noted, durably, before the intent goes: the notice outlives a kill until it is raised.
      await writeJsonAtomic(givenUpFileOf(repo.store.gitdir), { version: 1, path: refused })
      unlinkQuietly(file)
      return { entry: null, refused }
    }
    const paths = record.paths ?? record.deltas.map((delta) => delta.path)
    const entry = await repo.commit(paths, record.intent)
    settle()
    return { entry, refused: null }
  } catch (error) {
    if (isDiskProblem(error)) throw error
    logger?.warn(
      'An interrupted restore could not be finished; the folder is saved as it is',
      error,
    )
    unlinkQuietly(file)
    return none
  }
}

/**
 * Why a restore record read from disk cannot be trusted, or null: each change's path must be
 * a path the history may hold (every name as `entryNameProblem` allows), each blob id 40 hex
 * digits; the commit's paths the same (the root, `''`, allowed); its facts an object.
 */
function intentProblem(record: RestoreIntent): string | null {
  for (const delta of record.deltas as ReadonlyArray<unknown>) {
    if (typeof delta !== 'object' || delta === null) return 'a change that is not one'
    const { path: where, before, after } = delta as Record<string, unknown>
    if (!isHistoryPath(where, false)) return 'a change with a path the history may not hold'
    if (!isBlobId(before) || !isBlobId(after) || (before === null && after === null)) {
      return 'a change without valid versions'
    }
  }
  if (record.paths !== undefined) {
    if (!Array.isArray(record.paths)) return 'paths that are not a list'
    if (!record.paths.every((where) => isHistoryPath(where, true))) {
      return 'a path the history may not hold'
    }
  }
  if (typeof record.intent !== 'object' || record.intent === null) return 'no commit facts'
  if (record.base !== null && !isOid(record.base)) return 'a base that is not a commit id'
  return null
}

function isHistoryPath(value: unknown, rootAllowed: boolean): boolean {
  if (typeof value !== 'string') return false
  if (value === '') return rootAllowed
  return value.split('/').every((name) => entryNameProblem(name) === null)
}

function isBlobId(value: unknown): boolean {
  return value === null || (typeof value === 'string' && isOid(value))
}

// True when every file the restore changes holds what it held before the restore or what the
// restore writes: the restore then only goes on. A file history did not hold (where the old
// side has none, one too large to version, or one Cairn may not read) counts as before: the
// restore keeps it aside, as a restore does. An unreadable file was read here, and its refusal
// failed every open until someone guessed which file it was (review hunt12-story D7).
async function eachFileOnEitherSide(
  repo: Pick<Repo, 'store' | 'workRoot'>,
  deltas: ReadonlyArray<FileDelta>,
): Promise<boolean> {
  const writes = new Set(deltas.filter((d) => d.after !== null).map((d) => d.path))
  // Every folder a written file is in, at any depth: made once (before, each check went through
  // every written path).
  const parents = new Set<string>()
  for (const p of writes) {
    for (let at = p.lastIndexOf('/'); at > 0; at = p.lastIndexOf('/', at - 1)) {
      const folder = p.slice(0, at)
      // Its own folders were added with it.
      if (parents.has(folder)) break
      parents.add(folder)
    }
  }
  const tree = new FolderTree(repo.workRoot)
  try {
    for (const delta of deltas) {
      if (delta.before === null) continue
      let found: ReturnType<typeof tree.find>
      try {
        found = tree.find(delta.path)
      } catch (error) {
        // In a folder Cairn may not enter: neither side is known, so the restore is not
        // finished; the open's scan names the folder (review12-story R2).
        if (isDenied(error)) return false
        throw error
      }
      if (found.kind !== 'file') {
        if (delta.after === null && found.kind === 'missing') continue
        // A file and a folder trading places: the restore removes the one before it writes
        // the other, so a kill between leaves a removed file's name a folder the restore
        // writes into, or a removed folder's file under a file the restore writes.
        if (delta.after === null && found.kind === 'directory' && parents.has(delta.path)) continue
        if (delta.after === null && found.kind === 'under-file' && writes.has(found.at)) continue
        return false
      }
      if (keepsNoCopy(found.name, found.stats, found.parent.entry(found.name))) continue
      let bytes: ReturnType<typeof readFileIn>
      try {
        bytes = readFileIn(found.parent, found.name, found.stats, MAX_VERSIONED_BYTES)
      } catch (error) {
        // Refused although its permission bits allow it (an ACL, a sandbox): neither side is
        // known, so the restore is not finished; the open's scan names the file.
        if (isDenied(error)) return false
        throw error
      }
      const oid = repo.store.hash('blob', bytes)
      if (oid !== delta.before && oid !== delta.after) return false
    }
    return true
  } finally {
    tree.close()
  }
}

export function intentFileOf(gitdir: string): string {
  return path.join(gitdir, RESTORE_INTENT_FILE)
}

function givenUpFileOf(gitdir: string): string {
  return path.join(gitdir, GIVEN_UP_FILE)
}

/**
 * The file or folder (relative) a restore was given up over whose notice no open has raised
 * yet, or null. A note that cannot be trusted (cut short, not ours, a path the history may not
 * hold) is dropped: it names nothing worth a notice. One the disk will not read now is kept
 * for the next open and null returned: the note is advisory, and open has made its commit by
 * the time it reads it (failing there once failed an open that had changed history). One the
 * disk refuses lastingly (a denied permission, a file held open) is dropped with a warning,
 * not warned about at every start.
 */
export function givenUpRestore(gitdir: string, logger?: Logger): string | null {
  const file = givenUpFileOf(gitdir)
  let note: unknown
  try {
    // A fifo, a link or a folder in its place is kept aside and read as no note.
    const bytes = readOwnRecord(gitdir, file)
    if (bytes === null) return null
    note = JSON.parse(bytes.toString('utf8'))
  } catch (error) {
    if (isLastingRefusal(error)) {
      // Refused until someone changes the folder: kept, it would be warned about at every
      // start and never told. Its notice is advisory; the history is whole without it.
      logger?.warn(
        `the note of a given-up restore could not be read (${errorCode(error)}); dropped`,
      )
      unlinkQuietly(file)
      return null
    }
    if (isDiskProblem(error)) {
      logger?.warn(
        `the note of a given-up restore could not be read (${errorCode(error)}); kept for the next start`,
      )
      return null
    }
    unlinkQuietly(file)
    return null
  }
  const where = (note as { path?: unknown } | null)?.path
  if ((note as { version?: unknown } | null)?.version !== 1 || !isHistoryPath(where, false)) {
    unlinkQuietly(file)
    return null
  }
  return where as string
}

/** Drops the note of a given-up restore, once its notice was raised. */
export function forgetGivenUpRestore(gitdir: string): void {
  unlinkQuietly(givenUpFileOf(gitdir))
}
