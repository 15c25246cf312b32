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
import type { PackIndex } from './pack-index'

/** Records further apart than this are read one by one. */
const MAX_SPAN = 8 * 1024 * 1024

/**
 * For each of `oids` this pack holds: true when its record is whole and matches its CRC-32,
 * false when it does not match, null when this check cannot tell (a delta, an index without
 * CRC-32s). Objects the pack does not hold are left out.
 */
export function packedRecordsSound(
  index: PackIndex,
  pack: PackFile,
  oids: ReadonlyArray<string>,
): Map<string, boolean | null> {
  const result = new Map<string, boolean | null>()
  const records: Array<{ oid: string; position: number }> = []
  for (const oid of oids) {
    const position = index.position(Buffer.from(oid, 'hex'))
    if (position >= 0) records.push({ oid, position })
  }
  if (records.length === 0) return result
  const tables = index.crcAndOffsets()
  if (!tables) {
    for (const { oid } of records) result.set(oid, null)
    return result
  }
  const checked = checkRecords(pack, tables, records)
  for (const { oid, position } of records) {
    const code = checked.codes.get(position) ?? 0
    // Object types 1-4 are whole objects; 6 and 7 are deltas.
    result.set(oid, code < 1 || code > 4 ? null : checked.sound.get(position)!)
  }
  return result
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

// Checks the records at `records`' index positions against their CRC-32s: whether each is
// sound, and its type code (from its first byte), by position.
function checkRecords(
  pack: PackFile,
  tables: { readonly crcs: Uint32Array; readonly offsets: Uint32Array },
  unsorted: ReadonlyArray<{ readonly position: number }>,
): { readonly sound: Map<number, boolean>; readonly codes: Map<number, number> } {
  const { crcs, offsets } = tables
  const records = [...unsorted].sort(
    (a, b) => (offsets[a.position] as number) - (offsets[b.position] as number),
  )
  const sound = new Map<number, boolean>()
  const codes = new Map<number, number>()
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
  let spanEnd = 0
  for (let r = 0; r < count; r++) spanEnd = Math.max(spanEnd, ends[r] as number)
  const span = spanEnd - first <= MAX_SPAN ? pack.readStored(first, spanEnd - first) : null
  for (let r = 0; r < count; r++) {
    const { position } = records[r]!
    const start = starts[r] as number
    const end = ends[r] as number
    const bytes = span
      ? span.subarray(start - first, end - first)
      : pack.readStored(start, end - start)
    codes.set(position, bytes.length > 0 ? ((bytes[0] as number) >> 4) & 7 : 0)
    sound.set(position, crc32(bytes) === crcs[position])
  }
  return { sound, codes }
}
