/** Every flag rule run on one change (planned, or made): what the review checks found. */
import type { WriteFlag } from '../../shared/types'
import type { VersionedMemory } from '../history'
import type { MadeChange } from '../memory'
import { deletionFlags } from './flags/deletions'
import { hiddenUnicodeFlags } from './flags/hidden-unicode'
import { instructionFlags } from './flags/instructions'
import { lastPersonEdit, personEditedFlags } from './flags/person-edited'

export interface CheckContext {
  /** The history, to find the person's recent edits. */
  readonly history: Pick<VersionedMemory, 'changesSince'>
  readonly now: number
}

/**
 * The flags of a change: the text rules on what it adds, the deletion rules, and whether the
 * person edited the file in the last day. A rename moves text without changing it: only
 * whether the person edited what it moves (else a rename, an edit and a rename back would
 * change their fresh words with nobody asked; the lookup follows renames back for the same
 * reason).
 */
export async function flagsFor(
  planned: MadeChange,
  context: CheckContext,
): Promise<ReadonlyArray<WriteFlag>> {
  const flags: WriteFlag[] = []
  if (planned.command === 'rename') {
    const edited = await lastPersonEdit(context.history, planned.path, context.now)
    return personEditedFlags(planned.path, edited, context.now)
  }
  if (planned.after !== null) {
    flags.push(...instructionFlags(planned.path, planned.before, planned.after))
    flags.push(...hiddenUnicodeFlags(planned.path, planned.before, planned.after))
  }
  flags.push(...deletionFlags(planned))
  const edited = await lastPersonEdit(context.history, planned.path, context.now)
  flags.push(...personEditedFlags(planned.path, edited, context.now))
  return flags
}
