import type { CommitCommand } from '../../../../shared/types'

const COMMAND_LABELS: Readonly<Record<CommitCommand, string>> = {
  create: 'Claude’s create: a new file, or one replaced whole',
  str_replace: 'Claude’s str_replace: one passage replaced',
  insert: 'Claude’s insert: lines added at a line number',
  delete: 'a file or folder deleted',
  rename: 'a file or folder renamed or moved',
  write: 'your edit in the memory browser',
  'restore-file': 'one file restored to an earlier version',
  'restore-deleted': 'a deleted file brought back',
  revert: 'an earlier change undone',
  'restore-all': 'all memory restored to an earlier point',
  recovery: 'changes saved after an interruption',
  outside: 'edits made outside Cairn, saved',
  init: 'the start of the history',
  merge: 'two histories joined: changes made on another machine brought in',
  resolve: 'a sync conflict settled',
  import: 'memory brought in from a bundle, a repository, files or pasted text',
}

/** What a commit's command means, for the change's details (beside the command itself). */
export function commandLabel(command: CommitCommand): string {
  return COMMAND_LABELS[command]
}
