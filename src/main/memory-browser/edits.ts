/**
 * The person's own edits from the memory browser: the Memory tool's commands, run through
 * the versioned memory (same rules, same queue, one commit each) with the author "You".
 */
import type { ChangeResult } from '../../shared/types'
import type { ExecuteOptions, ExecuteOutcome, Origin, VersionedMemory } from '../history'
import { CairnError } from '../lib/errors'

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
export function renameFile(execute: Execute, from: string, to: string): Promise<ChangeResult> {
  return change(
    execute,
    { command: 'rename', old_path: from, new_path: to },
    {},
    `Renamed ${from} to ${to}.`,
  )
}

/** Deletes a file or folder. */
export function deleteFile(execute: Execute, path: string): Promise<ChangeResult> {
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
  if (outcome.commitPending) {
    return { commit: null, message: `${done} It will appear in History with the next change.` }
  }
  return { commit: outcome.commit, message: outcome.commit ? done : 'Nothing changed.' }
}

// The tool's messages are written for Claude ("Error: …"); people get the same words
// without the prefix, and the refusal's code for the UI to act on.
function refusal(outcome: ExecuteOutcome): CairnError {
  const text = typeof outcome.content === 'string' ? outcome.content : 'The change was refused.'
  return new CairnError(outcome.errorCode ?? 'io-error', text.replace(/^Error:\s*/, ''))
}
