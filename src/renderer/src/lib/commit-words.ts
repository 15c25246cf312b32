/**
 * Commits as people read them: who made a change and a sentence saying what it did ("Claude
 * edited trailhead.md", "You restored preferences.md to its version of 3 Nov, 14:02").
 * Restores name what they went back to by its time, never by a commit id; a change that came
 * from another machine says where it was made ("Claude on laptop edited notes.md"), a
 * merge says whose memory it joined ("Cairn merged the memory of laptop"), and a commit
 * Cairn did not write (made with git) names its author ("Ann Smith edited notes.md outside
 * Cairn"). Pure.
 */
import type { CommitSummary } from '../../../shared/types'
import { displayPath, shortDateTime, visibleName } from './format'

/** The subject of the recovery commit made when a change's own commit had failed. */
const INTERRUPTED_SUBJECT = 'Save changes whose commit was interrupted'
const KEPT_SUBJECT_START = 'Kept after main was'

/**
 * Who made a change: Claude, You, an edit made outside Cairn (one Cairn saved, or a commit
 * someone made with git), or Cairn itself.
 */
export type Who = 'claude' | 'user' | 'outside' | 'system'

export function whoOf(commit: Pick<CommitSummary, 'actor' | 'command'>): Who {
  if (commit.command === 'outside' || commit.actor === 'outside') return 'outside'
  return commit.actor
}

const WHO_LABELS: Readonly<Record<Who, string>> = {
  claude: 'Claude',
  user: 'You',
  outside: 'Outside Cairn',
  system: 'Cairn',
}

/**
 * "Claude", "You", "Outside Cairn" or "Cairn"; for a commit made with git, its author:
 * "Ann Smith (outside Cairn)".
 */
export function whoLabel(commit: Pick<CommitSummary, 'actor' | 'command' | 'author'>): string {
  if (commit.actor === 'outside' && commit.author)
    return `${authorName(commit.author)} (outside Cairn)`
  return WHO_LABELS[whoOf(commit)]
}

/**
 * The author of a commit made with git as drawn: git keeps any name, and a bidi override in it
 * would reorder the words after it (`\u202EedualC` drawn as "Claude"), so each character that
 * draws as nothing is written as its escape, as a path's is.
 */
function authorName(author: string): string {
  return visibleName(author)
}

/** `a.md`, `a.md and b.md`, `a.md and 3 other files`. */
export function namesOf(paths: ReadonlyArray<string>): string {
  const names = paths.map(displayPath)
  if (names.length === 0) return 'memory'
  if (names.length === 1) return names[0] as string
  if (names.length === 2) return `${names[0]} and ${names[1]}`
  return `${names[0]} and ${names.length - 1} other files`
}

/** Where a change is read: which machine is this one, and what a merge joined. */
export interface Whereabouts {
  /** This machine's name (its commits' `Machine:`); null when not known yet. */
  readonly thisMachine?: string | null
  /** The commit a merge joined (its second parent), when known. */
  readonly joined?: CommitSummary | null
}

/** The machine a change was made on when it is not this one (null: here, or unknown). */
export function madeElsewhere(
  commit: Pick<CommitSummary, 'machine'>,
  thisMachine: string | null | undefined,
): string | null {
  if (!commit.machine || !thisMachine || commit.machine === thisMachine) return null
  return commit.machine
}

/** "this machine’s memory", "the memory of laptop", "the memory of another machine". */
function memoryOf(machine: string | null | undefined, thisMachine: string | null | undefined) {
  if (machine && thisMachine && machine === thisMachine) return 'this machine’s memory'
  return `the memory of ${machine || 'another machine'}`
}

/**
 * What a commit did, as one sentence. `target` is the commit a restore or a revert went back
 * to (when known), named by its time; `now` decides whether the year is worth saying; `where`
 * tells changes made on other machines apart and names what a merge joined.
 */
export function sentence(
  commit: CommitSummary,
  target: CommitSummary | null = null,
  now = Date.now(),
  where: Whereabouts = {},
): string {
  const names = namesOf(commit.paths)
  if (commit.actor === 'outside') return madeWithGit(commit, names)
  const elsewhere = madeElsewhere(commit, where.thisMachine)
  const on = elsewhere ? ` on ${elsewhere}` : ''
  const actor = `${WHO_LABELS[commit.actor]}${on}`
  const when = target ? shortDateTime(target.time, now) : null
  switch (commit.command) {
    case 'create':
      return `${actor} ${commit.overwrite ? 'replaced' : 'created'} ${names}`
    case 'str_replace':
      return `${actor} edited ${names}`
    case 'insert':
      return `${actor} added to ${names}`
    case 'delete':
      return `${actor} deleted ${names}`
    case 'rename': {
      const [from, to] = commit.paths
      if (!from || !to) return `${actor} renamed ${names}`
      const folder = (path: string) => path.slice(0, path.lastIndexOf('/'))
      const verb = folder(from) === folder(to) ? 'renamed' : 'moved'
      return `${actor} ${verb} ${displayPath(from)} to ${displayPath(to)}`
    }
    case 'write':
      return `${actor} edited ${names}`
    case 'restore-file':
      return when
        ? `${actor} restored ${names} to its version of ${when}`
        : `${actor} restored ${names} to an earlier version`
    case 'restore-deleted':
      return when
        ? `${actor} brought back ${names} as of ${when}`
        : `${actor} brought back ${names}`
    case 'revert':
      return target
        ? `${actor} undid “${sentence(target, null, now, { thisMachine: where.thisMachine })}” of ${when}`
        : `${actor} undid an earlier change`
    case 'restore-all':
      return when
        ? `${actor} restored all memory to how it was on ${when}`
        : `${actor} restored all memory to an earlier point`
    case 'recovery':
      // Made at run time when a commit had failed; at start-up (or by earlier versions, whose
      // subject said "made outside Cairn" whatever the cause) when changes were found then.
      // Since stop 30 also what the folder still held of Cairn's commits that a reset made
      // with git left out of main: Cairn's and Claude's work, kept, never an outside edit.
      if (commit.subject.startsWith(KEPT_SUBJECT_START)) {
        return `Cairn${on} kept ${names}, left out when main was moved outside Cairn`
      }
      return commit.subject === INTERRUPTED_SUBJECT
        ? `Cairn${on} saved ${names} after an interrupted change`
        : `Cairn${on} saved ${names}, found changed when it started`
    case 'outside':
      return `${names} ${commit.paths.length === 1 ? 'was' : 'were'} edited outside Cairn${on}`
    case 'init':
      return commit.paths.length > 0
        ? `Cairn${on} started the history with ${commit.paths.length} ${commit.paths.length === 1 ? 'file' : 'files'}`
        : `Cairn${on} started the history`
    case 'merge':
      return mergeSentence(commit, actor, elsewhere, where)
    case 'resolve':
      // A file that is not text is resolved with its other version (`photo (desktop).png`).
      return `${actor} resolved the conflict in ${namesOf(commit.paths.slice(0, 1))}`
    case 'import':
      return commit.paths.length > 0 ? `${actor} imported ${names}` : `${actor} imported memory`
  }
}

/**
 * A commit Cairn did not write (made with git): by its author, whatever its message claims.
 * Unnamed (git refuses an empty name, other tools may not), it reads as Cairn's own outside
 * commits do.
 */
function madeWithGit(commit: CommitSummary, names: string): string {
  const merge = (commit.otherParents?.length ?? 0) > 0
  if (commit.author) {
    const author = authorName(commit.author)
    return merge
      ? `${author} merged changes outside Cairn`
      : `${author} edited ${names} outside Cairn`
  }
  if (merge) return 'Changes were merged outside Cairn'
  return `${names} ${commit.paths.length === 1 ? 'was' : 'were'} edited outside Cairn`
}

/**
 * A merge commit: by Cairn when a sync joined two machines' changes; by You when the person
 * chose to join this machine's memory with a remote's, or to bring back a backup.
 */
function mergeSentence(
  commit: CommitSummary,
  actor: string,
  elsewhere: string | null,
  where: Whereabouts,
): string {
  const joined = where.joined ?? null
  if (commit.actor === 'system') {
    return `${actor} merged ${memoryOf(joined?.machine, where.thisMachine)}`
  }
  // Sync's own subject for bringing a backup back (sync/engine.ts, `restore-backup`).
  if (commit.subject.startsWith('Bring back')) return `${actor} brought back memory from a backup`
  const theirs = memoryOf(joined?.machine, where.thisMachine)
  return elsewhere
    ? `${actor} joined its memory with ${theirs}`
    : `${actor} joined this machine’s memory with ${theirs}`
}
