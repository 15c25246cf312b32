/**
 * Conflicts as the person sees them, and what each choice writes. A conflict stays open while
 * its file still holds conflict blocks (or, for a binary file, while both copies exist): it
 * closes however the file gets settled — the dialog, Claude, or an editor.
 */
import type { SyncConflict } from '../../shared/types'
import { conflictBlocks, replaceConflicts } from './conflict-markers'
import type { ConflictRecord } from './store'

/** How the dialog settles a conflict. */
export type ConflictChoice = 'ours' | 'theirs' | 'both' | 'edit'

/**
 * The conflict as shown, or null when it is settled. `read` gives a file's current text (null
 * when absent). "Ours" is always this machine's side, whichever machine made the merge.
 */
export async function viewConflict(
  record: ConflictRecord,
  machine: string,
  read: (path: string) => Promise<string | null>,
): Promise<SyncConflict | null> {
  const text = await read(record.path)
  if (text === null) return null
  if (record.kind === 'binary') {
    if (!record.otherPath || (await read(record.otherPath)) === null) return null
    return {
      path: record.path,
      kind: 'binary',
      oursLabel: machine,
      theirsLabel: 'the other machine',
      blocks: [],
      otherPath: record.otherPath,
      since: record.since,
    }
  }
  const blocks = conflictBlocks(text)
  const [first] = blocks
  if (!first) return null
  const swapped = isTheirs(first.theirsLabel, first.oursLabel, machine)
  return {
    path: record.path,
    kind: 'text',
    oursLabel: swapped ? first.theirsLabel : first.oursLabel,
    theirsLabel: swapped ? first.oursLabel : first.theirsLabel,
    blocks: blocks.map((block) =>
      swapped
        ? { ours: block.theirs, theirs: block.ours }
        : { ours: block.ours, theirs: block.theirs },
    ),
    otherPath: null,
    since: record.since,
  }
}

/** The text a choice makes of the conflicted file (`edit` takes the person's text as it is). */
export function resolvedText(
  text: string,
  machine: string,
  choice: ConflictChoice,
  edited?: string,
): string {
  if (choice === 'edit') return edited ?? text
  return replaceConflicts(text, (block) => {
    const swapped = isTheirs(block.theirsLabel, block.oursLabel, machine)
    const mine = swapped ? block.theirs : block.ours
    const other = swapped ? block.ours : block.theirs
    if (choice === 'ours') return mine
    if (choice === 'theirs') return other
    // Both, this machine's version first.
    return mine + other
  })
}

// The markers name machines: the block's second side is this machine's when it carries this
// machine's name (the merge was made on the other machine).
function isTheirs(theirsLabel: string, oursLabel: string, machine: string): boolean {
  return theirsLabel === machine && oursLabel !== machine
}
