/**
 * Conflicts as the person sees them, and what each choice writes. A conflict stays open while
 * its file still holds conflict blocks (or, for a binary file, while both copies exist): it
 * closes however the file gets settled — the dialog, Claude, or an editor.
 */
import type { SyncConflict } from '../../shared/types'
import { cutWithEllipsis } from '../lib/text'
import {
  replaceConflicts,
  sizedBlocks,
  type ConflictBlock,
  type MarkerSizes,
  type SizedBlock,
} from './conflict-markers'
import type { ConflictRecord, LaterMerge } from './store'

/**
 * What the status shows of a text conflict: the first blocks, each side cut. The status goes
 * to the window on every change, and a conflict of 6 MiB a side made it 12 MiB of JSON; the
 * dialog shows the versions to choose between, and the file (or "Edit") holds everything.
 */
const MAX_SHOWN_BLOCKS = 20
const MAX_SIDE_CHARS = 8_000

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
  machineId?: string,
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
      blockCount: 0,
      cut: false,
      otherPath: record.otherPath,
      since: record.since,
    }
  }
  const blocks = sizedBlocks(text, markerSizesOf(record))
  const [first] = blocks
  if (!first) return null
  const here = mergedHere(record, machineId)
  // Block by block: each merge put its own machine's side first, and a later merge over the
  // open conflict may have been made on the other machine.
  const swapped = (block: SizedBlock) => isTheirs(block, machine, here(block.size))
  const firstSwapped = swapped(first)
  // Two machines with one name: the merge labelled its other side "the other machine".
  const sameName = firstSwapped && first.oursLabel === machine
  return {
    path: record.path,
    kind: 'text',
    oursLabel: firstSwapped ? (sameName ? machine : first.theirsLabel) : first.oursLabel,
    theirsLabel: firstSwapped
      ? sameName
        ? 'the other machine'
        : first.oursLabel
      : first.theirsLabel,
    blocks: blocks.slice(0, MAX_SHOWN_BLOCKS).map((block) => {
      const [ours, theirs] = swapped(block)
        ? [block.theirs, block.ours]
        : [block.ours, block.theirs]
      return {
        ours: cutWithEllipsis(ours, MAX_SIDE_CHARS),
        theirs: cutWithEllipsis(theirs, MAX_SIDE_CHARS),
      }
    }),
    blockCount: blocks.length,
    cut:
      blocks.length > MAX_SHOWN_BLOCKS ||
      blocks
        .slice(0, MAX_SHOWN_BLOCKS)
        .some(
          (block) => block.ours.length > MAX_SIDE_CHARS || block.theirs.length > MAX_SIDE_CHARS,
        ),
    otherPath: null,
    since: record.since,
  }
}

/** The marker sizes whose blocks are the record's; undefined for any (an older merge). */
export function markerSizesOf(record: ConflictRecord): MarkerSizes | undefined {
  if (record.markerSize === undefined) return undefined
  return record.markerSizes ? [record.markerSize, ...record.markerSizes] : record.markerSize
}

/**
 * A record for a file that already has one open: a later merge over the file's unsettled
 * blocks. One record stays, and it now reads the later merge's blocks too (the later merge
 * counted the earlier blocks as marker-like lines and took longer markers), knowing which
 * machine made each merge by its marker size.
 */
export function withLaterConflict(
  kept: ConflictRecord,
  later: ConflictRecord,
  position: (oid: string) => number = () => -1,
  onOneLine: (a: string, b: string) => boolean = () => true,
): ConflictRecord {
  if (kept.kind !== 'text' || later.kind !== 'text') return kept
  const merges = laterMergesOf(kept, later, position, onOneLine)
  const gathered = merges.length > 0 ? { ...kept, laterMerges: merges } : kept
  // A merge recorded without marker sizes (an older build) left blocks whose size nobody
  // knows: made on another machine than the other merge (or either unknown), no one machine
  // stands for every block, and the markers' names decide.
  const sizeless = kept.markerSize === undefined || later.markerSize === undefined
  const { mergedOn: _mergedOn, ...anyMachine } = gathered
  const known = sizeless && kept.mergedOn !== later.mergedOn ? anyMachine : gathered
  const keptSizes = markerSizesOf(kept)
  const laterSizes = markerSizesOf(later)
  if (keptSizes === undefined) return known
  if (laterSizes === undefined) {
    // Either side without a size reads blocks of any size.
    const { markerSize: _size, markerSizes: _sizes, ...anySize } = known
    return anySize
  }
  const all = new Set([keptSizes, laterSizes].flat())
  all.delete(kept.markerSize as number)
  if (all.size === 0) return known
  return { ...known, markerSizes: [...all].slice(0, 100) }
}

// The kept record's later merges, and the later record's own (its first merge, and any it
// gathered), one per size. A size comes back in a later merge only once every block of that
// size left the file (a merge's markers are longer than any marker-like line it met), so of two
// merges with one size the newer one (further along `main`: `position`) made the blocks there.
// That holds only for merges on one line of history: two merges that did not know of each
// other (three machines, neither merge an ancestor of the other: `onOneLine`) can both pick a
// size, and both their blocks stay; then the markers' names decide that size's blocks.
// Records arrive oldest first from a sync, newest first when read back from history after a
// kill: the order they come in decides nothing.
function laterMergesOf(
  kept: ConflictRecord,
  later: ConflictRecord,
  position: (oid: string) => number,
  onOneLine: (a: string, b: string) => boolean,
): LaterMerge[] {
  const merges = [...(kept.laterMerges ?? [])]
  const sizes =
    later.markerSize === undefined ? [] : [later.markerSize, ...(later.markerSizes ?? [])]
  for (const size of sizes) {
    const mergedOn = mergedOnFor(later, size)
    if (mergedOn === undefined) continue
    const since = sinceFor(later, size)
    const merge: LaterMerge = since === undefined ? { size, mergedOn } : { size, mergedOn, since }
    const at = merges.findIndex((known) => known.size === size)
    const known = at >= 0 ? merges[at] : size === kept.markerSize ? kept : undefined
    if (known === undefined) merges.push(merge)
    else if (
      since !== undefined &&
      known.since !== undefined &&
      since !== known.since &&
      !onOneLine(since, known.since)
    ) {
      const newest = newer(since, known.since, position) ? since : known.since
      const both: LaterMerge = { size, mergedOn, since: newest, byNames: true }
      if (at >= 0) merges[at] = both
      else merges.push(both)
    } else if (newer(since, known.since, position)) {
      // The kept record's own size: an entry here wins over its `mergedOn` (`mergedOnFor`).
      if (at >= 0) merges[at] = merge
      else merges.push(merge)
    }
  }
  return merges.slice(0, 100)
}

// Whether the merge `candidate` came after `known`. A record an older build saved has no
// commit for a later merge: anything recorded since is newer. Commits `main` does not hold
// (-1) tell nothing: what is known stays.
function newer(
  candidate: string | undefined,
  known: string | undefined,
  position: (oid: string) => number,
): boolean {
  if (candidate === undefined) return false
  if (known === undefined) return true
  return position(candidate) > position(known)
}

// The merge commit that left blocks of marker size `size`.
function sinceFor(record: ConflictRecord, size: number): string | undefined {
  const later = record.laterMerges?.find((merge) => merge.size === size)
  if (later) return later.since
  return record.since
}

/**
 * Whether the merge that left a block of marker size `size` was made on this machine, by the
 * machine id its commit carries (`Merged-On:`); null for a merge made before machines had
 * ids, or a later merge recorded by an older build (then the markers' names decide).
 */
export function mergedHere(
  record: ConflictRecord,
  machineId: string | undefined,
): (size: number) => boolean | null {
  return (size) => {
    const mergedOn = mergedOnFor(record, size)
    if (!mergedOn || !machineId) return null
    return mergedOn === machineId
  }
}

// The machine that made the merge whose blocks have markers of `size`.
function mergedOnFor(record: ConflictRecord, size: number): string | undefined {
  const later = record.laterMerges?.find((merge) => merge.size === size)
  if (later) return later.byNames ? undefined : later.mergedOn
  // The first merge's blocks (any block, for a record that reads blocks of any size).
  if (record.markerSize === undefined || record.markerSize === size) return record.mergedOn
  return undefined
}

/**
 * The text a choice makes of the conflicted file (`edit` takes the person's text as it is).
 * `here`: whether the merge that left a block of a marker size was made on this machine
 * (`mergedHere`); null, or its answer null, when unknown.
 */
export function resolvedText(
  text: string,
  machine: string,
  choice: ConflictChoice,
  edited?: string,
  here: ((size: number) => boolean | null) | null = null,
  markerSize?: MarkerSizes,
): string {
  if (choice === 'edit') return edited ?? text
  return replaceConflicts(
    text,
    (block) => {
      const swapped = isTheirs(block, machine, here?.(block.size) ?? null)
      const mine = swapped ? block.theirs : block.ours
      const other = swapped ? block.ours : block.theirs
      if (choice === 'ours') return mine
      if (choice === 'theirs') return other
      // Both, this machine's version first.
      return mine + other
    },
    markerSize,
  )
}

// The block's first side is the merging machine's. Made here: this machine's. Made on a
// machine with the same name: not this machine's, though its label says so. Otherwise the
// markers' names tell (this machine's name on the second side: the merge was made elsewhere).
function isTheirs(
  block: Pick<ConflictBlock, 'oursLabel' | 'theirsLabel'>,
  machine: string,
  here: boolean | null,
): boolean {
  if (here === true) return false
  if (here === false && block.oursLabel === machine) return true
  return block.theirsLabel === machine && block.oursLabel !== machine
}
