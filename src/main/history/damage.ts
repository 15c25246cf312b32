/**
 * Damage in the history: objects that are missing, do not hash to their id, do not parse, or
 * name entries Cairn would never write. Reported as "history is damaged at <commit>", never as
 * an internal error; never confused with an I/O error (see lib/disk-errors.ts).
 */

import { CairnError } from '../lib/errors'
import { TEMP_FILE_PREFIX } from '../lib/folders'

/**
 * The `detail` of an object read as a kind it is not (a folder's id naming a commit's record,
 * the remote's `main` naming a tree): one wording, which callers tell apart by.
 */
export function wrongKindDetail(kind: 'blob' | 'tree' | 'commit'): string {
  return `not a ${kind}`
}

/** An object of the history that cannot be used; `detail` completes "…: <detail>". */
export class DamagedHistoryError extends Error {
  readonly code = 'EDAMAGED'
  constructor(
    readonly oid: string,
    readonly detail: string,
  ) {
    super(`damaged object ${oid}: ${detail}`)
    this.name = 'DamagedHistoryError'
  }
}

/**
 * Damage met reading a folder's tree while two versions were compared (`diffNodes`): which
 * folder (relative, `''` for the memory folder itself) and on which side, so that a caller can
 * name the folder of the version that is damaged instead of the version it was asked about.
 */
export class DamagedFolderError extends DamagedHistoryError {
  constructor(
    cause: DamagedHistoryError,
    readonly folder: string,
    readonly side: 'before' | 'after',
  ) {
    super(cause.oid, cause.detail)
  }
}

// Control (Cc) characters: newlines, tabs, NUL, escape sequences.
const CONTROL = /\p{Cc}/u

/**
 * Why a name may not be an entry of the history (a tree entry, or a file the scan would
 * record), or null when it may. Refused: `.` and `..`, path separators, control characters
 * such as a newline, `.git` in any spelling a file system may fold to it, and the names of
 * Cairn's own temp files.
 */
export function entryNameProblem(name: string): string | null {
  // Asked of every entry of every folder the scan at open walks and of every tree entry read
  // (a few thousand at open): a name that plainly passes skips the regexes and the folding.
  if (plainlyFine(name)) return null
  if (name === '') return 'an entry without a name'
  if (name === '.' || name === '..') return `an entry named "${name}"`
  if (name.includes('/') || name.includes('\\')) return 'an entry whose name holds a path separator'
  if (CONTROL.test(name)) return 'an entry whose name holds a control character'
  const folded = name.toLowerCase().replace(/[. ]+$/, '')
  if (folded === '.git' || /^git~\d+$/.test(folded)) return 'an entry named ".git"'
  if (name.startsWith(TEMP_FILE_PREFIX)) return "an entry named like one of Cairn's temp files"
  return null
}

/**
 * True when `name` passes every check of `entryNameProblem` by its characters alone (false
 * says nothing: the full check decides). Every refused name is empty, holds a separator or a
 * control character, or begins with `.` (`.`, `..`, `.git…`, the temp prefix) or with `g`/`G`
 * and then `i`/`I` (`git~1`); the first character is required to be ASCII, whose lower case
 * is itself, so no case folding can turn a name passed here into one of those.
 */
function plainlyFine(name: string): boolean {
  const length = name.length
  if (length === 0) return false
  const first = name.charCodeAt(0)
  // Not ASCII, a control character, or `.` (0x2e).
  if (first < 0x20 || first >= 0x7f || first === 0x2e) return false
  if (first === 0x67 || first === 0x47) {
    const second = length > 1 ? name.charCodeAt(1) : 0
    if (second === 0x69 || second === 0x49 || second >= 0x80) return false
  }
  for (let i = 0; i < length; i++) {
    const code = name.charCodeAt(i)
    // C0 controls, DEL and the C1 controls (all of \p{Cc}); `/` and `\`.
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2f || code === 0x5c) {
      return false
    }
  }
  return true
}

/** The error people see for damage found while working with version `commit`. */
export function damagedAt(
  commit: string,
  error: DamagedHistoryError,
  changedNothing = false,
): CairnError {
  const detail =
    error.detail === 'missing'
      ? 'part of that version is missing from the history folder'
      : error.detail === 'corrupt'
        ? 'part of that version is corrupt'
        : `it holds ${error.detail}`
  return new CairnError(
    'history-damaged',
    `The history is damaged at ${commit.slice(0, 7)}: ${detail}.${changedNothing ? ' Nothing was changed.' : ''}`,
  )
}

/** Runs `task` (which reads version `commit`), turning damage into `damagedAt`. */
export async function readingVersion<T>(
  commit: string,
  task: () => Promise<T>,
  changedNothing = false,
): Promise<T> {
  try {
    return await task()
  } catch (error) {
    if (error instanceof DamagedHistoryError) throw damagedAt(commit, error, changedNothing)
    throw error
  }
}
