/**
 * Commits as people read them: who made a change and a sentence saying what it did ("Claude
 * edited trailhead.md", "You restored preferences.md to its version of 3 Nov, 14:02").
 * Restores name what they went back to by its time, never by a commit id. Pure.
 */
import type { CommitSummary } from '../../../shared/types'
import { displayPath, shortDateTime } from './format'

/** Who made a change: Claude, You, an edit made outside Cairn, or Cairn itself. */
export type Who = 'claude' | 'user' | 'outside' | 'system'

export function whoOf(commit: Pick<CommitSummary, 'actor' | 'command'>): Who {
  if (commit.command === 'outside') return 'outside'
  return commit.actor
}

const WHO_LABELS: Readonly<Record<Who, string>> = {
  claude: 'Claude',
  user: 'You',
  outside: 'Outside Cairn',
  system: 'Cairn',
}

/** "Claude", "You", "Outside Cairn" or "Cairn". */
export function whoLabel(who: Who): string {
  return WHO_LABELS[who]
}

/** `a.md`, `a.md and b.md`, `a.md and 3 other files`. */
export function namesOf(paths: ReadonlyArray<string>): string {
  const names = paths.map(displayPath)
  if (names.length === 0) return 'memory'
  if (names.length === 1) return names[0] as string
  if (names.length === 2) return `${names[0]} and ${names[1]}`
  return `${names[0]} and ${names.length - 1} other files`
}

/**
 * What a commit did, as one sentence. `target` is the commit a restore or a revert went back
 * to (when known), named by its time; `now` decides whether the year is worth saying.
 */
export function sentence(
  commit: CommitSummary,
  target: CommitSummary | null = null,
  now = Date.now(),
): string {
  const actor = whoLabel(commit.actor)
  const names = namesOf(commit.paths)
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
        ? `${actor} undid “${sentence(target, null, now)}” of ${when}`
        : `${actor} undid an earlier change`
    case 'restore-all':
      return when
        ? `${actor} restored all memory to how it was on ${when}`
        : `${actor} restored all memory to an earlier point`
    case 'recovery':
      return `Cairn saved ${names} after an interrupted change`
    case 'outside':
      return `${names} ${commit.paths.length === 1 ? 'was' : 'were'} edited outside Cairn`
    case 'init':
      return commit.paths.length > 0
        ? `Cairn started the history with ${commit.paths.length} ${commit.paths.length === 1 ? 'file' : 'files'}`
        : 'Cairn started the history'
  }
}
