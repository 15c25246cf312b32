import type { Actor, CommitCommand, CommitSummary } from '../../../../shared/types'
import { displayPath } from '../../lib/format'

/** Who made a commit, as people read it. */
export function actorLabel(actor: Actor): string {
  if (actor === 'claude') return 'Claude'
  if (actor === 'user') return 'You'
  return 'Cairn'
}

const COMMAND_LABELS: Readonly<Record<CommitCommand, string>> = {
  create: 'create',
  str_replace: 'str_replace',
  insert: 'insert',
  delete: 'delete',
  rename: 'rename',
  write: 'edit',
  'restore-file': 'restore file',
  'restore-deleted': 'bring back',
  revert: 'revert',
  'restore-all': 'restore all',
  recovery: 'recovery',
  outside: 'edited outside Cairn',
  init: 'start of history',
  merge: 'merge',
  resolve: 'resolve conflict',
  import: 'import',
}

/** The command of a commit, short: `str_replace`, `edit`, `restore file`. */
export function commandLabel(command: CommitCommand): string {
  return COMMAND_LABELS[command]
}

/** The first 7 characters of a commit id, as git shows them. */
export function shortOid(oid: string): string {
  return oid.slice(0, 7)
}

/** The note under a restore or a revert: what it restored from or undid; null otherwise. */
export function restoreNote(commit: CommitSummary): string | null {
  if (!commit.restoredFrom) return null
  const from = shortOid(commit.restoredFrom)
  if (commit.command === 'revert') return `Reverted ${from}`
  if (commit.command === 'restore-all') return `Restored all memory to ${from}`
  if (commit.command === 'restore-deleted') return `Brought back from ${from}`
  return `Restored from ${from}`
}

/** The paths of a commit in one line: `a.md`, `a.md → b.md`, `a.md +2 more`. */
export function pathsLabel(paths: ReadonlyArray<string>, command: CommitCommand): string {
  const names = paths.map(displayPath)
  if (names.length === 0) return '/memories'
  if (command === 'rename' && names.length === 2) return `${names[0]} → ${names[1]}`
  if (names.length === 1) return names[0]!
  return `${names[0]} +${names.length - 1} more`
}
