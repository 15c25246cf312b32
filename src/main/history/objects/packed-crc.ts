/**
 * Checks packed records against the CRC-32 their pack's index holds for each (git's index
 * version 2 and Cairn's own keep one per object, over the record's header and compressed
 * bytes), without inflating them: open's check of HEAD's packed trees. Reading those 73 trees
 * (inflate and hash each) cost open some 6-10 ms at 10k commits; this costs about one: the
 * index's two tables in one read, one pass over the offsets for where each record ends, and
 * the records in one read when they lie close together (git gc and Cairn both write a
 * version's trees side by side).
 *
 * Only a record that holds its object whole is vouched for: a delta's CRC says nothing of its
 * base, so it (and anything this cannot tell) is left to a full read.
 */
import { crc32 } from './crc32'
import type { PackFile } from './pack-file'
import { positionsIn, type PackIndex } from './pack-index'

/** Records further apart than this are read one by one. */
const MAX_SPAN = 8 * 1024 * 1024

/**
 * Where an object's record lies in a pack: the pack (its checksum, hex: what names its
 * content), the record's first byte and the first byte past it (where the next object starts,
 * or the pack's trailer). A fact of the pack's bytes, so one found once holds for as long as
 * the pack is that pack.
 */
export interface PackedExtent {
  readonly pack: string
  readonly start: number
  readonly end: number
}

/**
 * Extents from an earlier check (by object id) to use instead of working out where records
 * end, and where to put those of the records found sound now (see `packedRecordsSound`).
 */
export interface Extents {
  readonly known: ReadonlyMap<string, PackedExtent>
  readonly found: Map<string, PackedExtent>
}

/**
 * For each of `oids` this pack holds: true when its record is whole and matches its CRC-32,
 * false when it does not match, null when this check cannot tell (a delta, an index without
 * CRC-32s). Objects the pack does not hold are left out.
 *
 * A record ends where the next object in the pack starts, which only the whole offset table
 * tells (51k offsets at 10k commits: read and passed over, 5-7 ms of an open's CPU). With
 * `extents`, a record whose extent is known for this pack (its checksum) and starts where the
 * index says it does now is taken to end where it ended then: the same bytes are checked
 * against the same CRC-32 as the pass would have them (a pack with that checksum is the same
 * bytes, so its next object starts where it did). Only when every record's is known is the
 * pass left out; the extents of records found sound are put in `extents.found`. `looked`:
 * the position of each of `oids` in `index` (-1 for none), when the caller has it already.
 */
export function packedRecordsSound(
  index: PackIndex,
  pack: PackFile,
  oids: ReadonlyArray<string>,
  extents?: Extents,
  looked?: Int32Array,
): Map<string, boolean | null> {
  const result = new Map<string, boolean | null>()
  const records: Array<{ oid: string; position: number }> = []
  // All at once: each slice of the index's names read once (see `PackIndex.positionsEach`),
  // unless the caller has looked them up already.
  const positions = looked ?? positionsIn([index], oids).byIndex.get(index)!
  for (let at = 0; at < oids.length; at++) {
    const position = positions[at]!
    if (position >= 0) records.push({ oid: oids[at]!, position })
  }
  if (records.length === 0) return result
  if (!index.hasCrcTables()) {
    for (const { oid } of records) result.set(oid, null)
    return result
  }
  const packId = extents ? index.packId() : ''
  const knownEnds = extents ? knownRecords(index, pack, packId, records, extents.known) : null
  let checked: Checked | null = null
  if (knownEnds) {
    // Kept ends only save work: one that fails to read, or a record that does not match its
    // CRC-32 with it (a wrong end as much as damage), is left to the full pass to judge.
    try {
      checked = checkExtents(pack, knownEnds)
    } catch {
      checked = null
    }
    if (checked && [...checked.sound.values()].includes(false)) checked = null
  }
  if (!checked) {
    const tables = index.crcAndOffsets()
    if (!tables) {
      for (const { oid } of records) result.set(oid, null)
      return result
    }
    checked = checkRecords(pack, tables, records)
  }
  for (const { oid, position } of records) {
    const code = checked.codes.get(position) ?? 0
    const sound = checked.sound.get(position)!
    // Object types 1-4 are whole objects; 6 and 7 are deltas.
    result.set(oid, code < 1 || code > 4 ? null : sound)
    const extent = checked.extents.get(position)
    if (extents && sound && extent) extents.found.set(oid, { pack: packId, ...extent })
  }
  return result
}

/**
 * Each of `records` with its start and CRC-32 as the index has them now and its end as
 * `known` has it, or null unless every one's extent is known for this pack, starts there and
 * ends after it within the pack's objects.
 */
function knownRecords(
  index: PackIndex,
  pack: PackFile,
  packId: string,
  records: ReadonlyArray<{ readonly oid: string; readonly position: number }>,
  known: ReadonlyMap<string, PackedExtent>,
): Extent[] | null {
  const spans: Extent[] = []
  for (const { oid, position } of records) {
    const extent = known.get(oid)
    if (!extent || extent.pack !== packId) return null
    const read = index.crcAndOffsetAt(position)
    if (!read || read.offset !== extent.start) return null
    if (!(extent.end > read.offset) || !(extent.end <= pack.entriesEnd())) return null
    spans.push({ position, start: read.offset, end: extent.end, crc: read.crc })
  }
  return spans
}

/**
 * For each record starting at one of `offsets` (a delta's as much as a whole object's): true
 * when its stored bytes match the CRC-32 the index holds for it, false when they do not or
 * no object starts there. Null when the index holds no CRC-32s (version 1, or too large to
 * read its tables whole). What "Memory at this reply" checks a packed version by: the records
 * of a delta chain, each as written, without inflating any.
 */
export function recordsSoundAt(
  index: PackIndex,
  pack: PackFile,
  offsets: ReadonlyArray<number>,
): Map<number, boolean> | null {
  const tables = index.crcAndOffsets()
  if (!tables) return null
  const wanted = new Set(offsets)
  const records: Array<{ position: number }> = []
  const positionOf = new Map<number, number>()
  for (let position = 0; position < tables.offsets.length; position++) {
    const offset = tables.offsets[position] as number
    if (wanted.has(offset) && !positionOf.has(offset)) {
      positionOf.set(offset, position)
      records.push({ position })
    }
  }
  const checked = records.length > 0 ? checkRecords(pack, tables, records) : null
  const result = new Map<number, boolean>()
  for (const offset of wanted) {
    const position = positionOf.get(offset)
    result.set(offset, position !== undefined && checked!.sound.get(position) === true)
  }
  return result
}

/** A record to check: its index position, where it starts and ends, and its CRC-32. */
interface Extent {
  readonly position: number
  readonly start: number
  readonly end: number
  readonly crc: number
}

/** Per index position: sound or not, the type code (from its first byte), start and end. */
interface Checked {
  readonly sound: Map<number, boolean>
  readonly codes: Map<number, number>
  readonly extents: Map<number, { readonly start: number; readonly end: number }>
}

// Checks the records at `records`' index positions against their CRC-32s: whether each is
// sound, and its type code (from its first byte), by position.
function checkRecords(
  pack: PackFile,
  tables: { readonly crcs: Uint32Array; readonly offsets: Uint32Array },
  unsorted: ReadonlyArray<{ readonly position: number }>,
): Checked {
  const { crcs, offsets } = tables
  const records = [...unsorted].sort(
    (a, b) => (offsets[a.position] as number) - (offsets[b.position] as number),
  )
  const count = records.length
  const starts = new Float64Array(count)
  const ends = new Float64Array(count).fill(pack.entriesEnd())
  for (let r = 0; r < count; r++) starts[r] = offsets[records[r]!.position] as number
  // Each record ends where the next object in the pack starts: one pass over every offset
  // (51k at 10k commits), each placed after the nearest record start below it. Kept to typed
  // arrays and two comparisons for an offset past the records, as most are: this runs once,
  // cold, at open.
  const first = starts[0] as number
  const lastStart = starts[count - 1] as number
  for (let i = 0; i < offsets.length; i++) {
    const offset = offsets[i] as number
    if (offset <= first) continue
    if (offset > lastStart) {
      if (offset < (ends[count - 1] as number)) ends[count - 1] = offset
      continue
    }
    let low = 0
    let high = count - 1
    while (low < high) {
      const mid = (low + high + 1) >>> 1
      if ((starts[mid] as number) < offset) low = mid
      else high = mid - 1
    }
    if (offset < (ends[low] as number)) ends[low] = offset
  }
  return checkExtents(
    pack,
    records.map(({ position }, r) => ({
      position,
      start: starts[r] as number,
      end: ends[r] as number,
      crc: crcs[position] as number,
    })),
  )
}

// Checks each record's bytes, from its start to its end, against its CRC-32 (the records in
// one read when they lie close together).
function checkExtents(pack: PackFile, records: ReadonlyArray<Extent>): Checked {
  const sound = new Map<number, boolean>()
  const codes = new Map<number, number>()
  const extents = new Map<number, { readonly start: number; readonly end: number }>()
  let first = Number.POSITIVE_INFINITY
  let spanEnd = 0
  for (const { start, end } of records) {
    first = Math.min(first, start)
    spanEnd = Math.max(spanEnd, end)
  }
  const span = spanEnd - first <= MAX_SPAN ? pack.readStored(first, spanEnd - first) : null
  for (const { position, start, end, crc } of records) {
    const bytes = span
      ? span.subarray(start - first, end - first)
      : pack.readStored(start, end - start)
    codes.set(position, bytes.length > 0 ? ((bytes[0] as number) >> 4) & 7 : 0)
    sound.set(position, crc32(bytes) === crc)
    extents.set(position, { start, end })
  }
  return { sound, codes, extents }
}
