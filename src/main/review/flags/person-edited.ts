/**
 * The `person-edited` rule: Claude writes to (or deletes) a file the person edited themselves
 * in the last 24 hours, in the memory browser, by a restore, or in another editor. Their
 * recent words are the ones most worth a second look before Claude changes them.
 */
import type { CommitSummary, WriteFlag } from '../../../shared/types'
import type { VersionedMemory } from '../../history'
import { escapeInvisible } from '../../lib/text'

/** How recent an edit of the person's counts. */
export const PERSON_EDIT_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * True for a commit that holds the person's own words: their edit, one made in another editor
 * (while Cairn ran: `outside`; while it was closed: the `recovery` commit made at start-up),
 * or Claude's change they rewrote before approving it. A recovery commit may also hold a write
 * of Claude's whose commit was interrupted: counting it errs towards asking.
 */
export function isPersonEdit(commit: CommitSummary): boolean {
  return (
    commit.actor === 'user' ||
    commit.command === 'outside' ||
    commit.command === 'recovery' ||
    commit.review === 'edited'
  )
}

/** A recent edit of the person's: when, and by whom when git names someone else. */
export interface PersonEdit {
  readonly at: number
  /** The author of a commit made with git ("Ann Smith"), as History names it; null: the person. */
  readonly by: string | null
}

/** The person's last edit of `path` (or anything under it) within the window before `now`, or null. */
export async function lastPersonEditOf(
  history: Pick<VersionedMemory, 'changesSince'>,
  path: string,
  now: number,
): Promise<PersonEdit | null> {
  const recent = await history.changesSince(path, now - PERSON_EDIT_WINDOW_MS)
  const commit = recent.find(isPersonEdit)
  if (!commit) return null
  return { at: commit.time, by: commit.actor === 'outside' ? (commit.author ?? null) : null }
}

/** When the person last edited `path` (or anything under it) within the window before `now`, or null. */
export async function lastPersonEdit(
  history: Pick<VersionedMemory, 'changesSince'>,
  path: string,
  now: number,
): Promise<number | null> {
  return (await lastPersonEditOf(history, path, now))?.at ?? null
}

/**
 * The flag for a change to a file the person edited at `editedAt` (null: not recently). An
 * edit made with git by a named author says whose it was, as History does: "Ann Smith edited
 * this outside Cairn 3 hours before this change" (the name's invisible characters escaped).
 */
export function personEditedFlags(
  path: string,
  editedAt: number | null,
  now: number,
  by: string | null = null,
): ReadonlyArray<WriteFlag> {
  if (editedAt === null || now - editedAt > PERSON_EDIT_WINDOW_MS) return []
  const when = `${ago(now - editedAt)} before this change`
  return [
    {
      rule: 'person-edited',
      path,
      line: null,
      message:
        by === null
          ? `You edited this yourself ${when}`
          : `${escapeInvisible(by)} edited this outside Cairn ${when}`,
    },
  ]
}

function ago(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000))
  if (minutes < 1) return 'moments'
  if (minutes < 60) return minutes === 1 ? '1 minute' : `${minutes} minutes`
  const hours = Math.round(minutes / 60)
  return hours === 1 ? '1 hour' : `${hours} hours`
}
