/**
 * The person's own edits from the memory browser: the Memory tool's commands, run through
 * the versioned memory (same rules, same queue, one commit each) with the author "You".
 */
import type { ChangeResult, KeptAsideEntry } from '../../shared/types'
import type { ExecuteOptions, ExecuteOutcome, Origin, VersionedMemory } from '../history'
import { CairnError } from '../lib/errors'
import { twinRefusalForPerson } from '../memory'

type Execute = VersionedMemory['execute']

const USER: Origin = { actor: 'user' }

/**
 * Saves `content` to `path` (a timeline `write`). With `mustNotExist` ("New file") an existing
 * file is refused rather than replaced.
 */
export function writeFile(
  execute: Execute,
  path: string,
  content: string,
  options: { readonly mustNotExist?: boolean } = {},
): Promise<ChangeResult> {
  return change(
    execute,
    { command: 'create', path, file_text: content },
    { createExisting: options.mustNotExist ? 'error' : 'overwrite', commitAs: 'write' },
    `Saved ${path}.`,
  )
}

/** Moves a file or folder. */
export async function renameFile(
  execute: Execute,
  from: string,
  to: string,
): Promise<ChangeResult> {
  refuseOtherSpelling(from, 'renamed')
  return change(
    execute,
    { command: 'rename', old_path: from, new_path: to },
    {},
    `Renamed ${from} to ${to}.`,
  )
}

/** Deletes a file or folder. */
export async function deleteFile(execute: Execute, path: string): Promise<ChangeResult> {
  refuseOtherSpelling(path, 'deleted')
  return change(execute, { command: 'delete', path }, {}, `Deleted ${path}.`)
}

async function change(
  execute: Execute,
  input: Record<string, unknown>,
  options: ExecuteOptions,
  done: string,
): Promise<ChangeResult> {
  const outcome = await execute(input, USER, options)
  if (outcome.isError) throw refusal(outcome)
  // What was moved aside rather than destroyed is said, and named, with the result.
  const kept = outcome.keptAside ?? []
  const keptAside = kept.length > 0 ? { keptAside: kept } : {}
  // A file delete that kept the file aside deleted nothing: it is not said to have.
  const keptInstead =
    input.command === 'delete' && kept.some((k) => k.path === input.path && k.reason !== 'folder')
  const said = keptInstead
    ? kept
        .map((k) =>
          k.reason === 'unreadable'
            ? `Cairn may not read ${k.path} (permission denied), so instead of being deleted it was kept as ${k.keptAs}; ${historyOfUnreadable(k)}.`
            : `History has no copy of ${k.path}, so instead of being deleted it was kept as ${k.keptAs}.`,
        )
        .join(' ')
    : done + kept.map(keptSentence).join('')
  if (outcome.commitPending) {
    return {
      commit: null,
      message: `${said} It will appear in History with the next change.`,
      ...keptAside,
    }
  }
  if (outcome.commit) return { commit: outcome.commit, message: said, ...keptAside }
  if (kept.length > 0) return { commit: null, message: said, ...keptAside }
  // No commit though the folder changed: a file History keeps no copy of was moved.
  if (outcome.mutation?.command === 'rename') {
    return {
      commit: null,
      message: `${done} History keeps no copy of it, so the change is not in History and cannot be undone.`,
    }
  }
  return { commit: null, message: 'Nothing changed.' }
}

// Whether History holds a last version of a file Cairn may not read (never "no copy").
function historyOfUnreadable({ versioned }: Pick<KeptAsideEntry, 'versioned'>): string {
  return versioned
    ? 'History keeps its last version Cairn could read'
    : 'History has no version of it'
}

function keptSentence({ path, keptAs, reason, versioned }: KeptAsideEntry): string {
  if (reason === 'folder') {
    return ` It held files History has no copy of; they were kept in ${keptAs}.`
  }
  if (reason === 'unreadable') {
    return ` Cairn may not read ${path} (permission denied), so it was kept as ${keptAs}; ${historyOfUnreadable({ versioned })}.`
  }
  if (reason === 'changed') {
    return ` ${path} had been changed outside Cairn since History saw it, so that version was kept as ${keptAs}.`
  }
  return ` History has no copy of ${path}, so it was kept as ${keptAs}.`
}

// The tool's messages are written for Claude ("Error: …"); people get the same words
// without the prefix (and a step Claude would ask of them said to them), and the refusal's
// code for the UI to act on.
function refusal(outcome: ExecuteOutcome): CairnError {
  const text = typeof outcome.content === 'string' ? outcome.content : 'The change was refused.'
  return new CairnError(
    outcome.errorCode ?? 'io-error',
    twinRefusalForPerson(text.replace(/^Error:\s*/, '')),
  )
}

/**
 * Refuses, in the person's words, to change an entry the Memory tab lists under a name in
 * another spelling than memory paths use (a decomposed `café.md` put there outside Cairn): no
 * memory path can name it, so the Memory tool would answer Claude's way, about another path.
 */
function refuseOtherSpelling(path: string, done: 'renamed' | 'deleted'): void {
  if (path === path.normalize('NFC')) return
  throw new CairnError(
    'invalid-path',
    `${path} cannot be ${done} in Cairn: its name is written with other Unicode characters than memory paths use (such as an accent stored apart from its letter, as macOS writes names), so Cairn cannot change it. Rename it outside Cairn, in your file manager, retyping its name: it then becomes part of memory. Nothing was changed.`,
  )
}
