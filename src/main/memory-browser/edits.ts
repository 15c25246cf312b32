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

// The person names what the Memory tab lists, as the folder spells it: a name put there in
// another Unicode spelling (a decomposed `café.md`) can be renamed, into memory, or deleted.
const AS_LISTED: ExecuteOptions = { spelledAsOnDisk: true }

/**
 * Moves a file or folder. `from` is taken as spelled (see AS_LISTED); `to` is a memory path
 * (composed, NFC), so a name in another spelling renamed to itself becomes part of memory.
 */
export async function renameFile(
  execute: Execute,
  from: string,
  to: string,
): Promise<ChangeResult> {
  return change(
    execute,
    { command: 'rename', old_path: from, new_path: to },
    AS_LISTED,
    `Renamed ${from} to ${to}.`,
  )
}

/** Deletes a file or folder, named as spelled (see AS_LISTED). */
export async function deleteFile(execute: Execute, path: string): Promise<ChangeResult> {
  return change(execute, { command: 'delete', path }, AS_LISTED, `Deleted ${path}.`)
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
