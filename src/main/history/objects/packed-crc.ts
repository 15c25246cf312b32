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
  const { crcs, offsets } = tables
  records.sort((a, b) => (offsets[a.position] as number) - (offsets[b.position] as number))
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
    const { oid, position } = records[r]!
    const start = starts[r] as number
    const end = ends[r] as number
    const bytes = span
      ? span.subarray(start - first, end - first)
      : pack.readStored(start, end - start)
    // Object types 1-4 are whole objects; 6 and 7 are deltas.
    const code = bytes.length > 0 ? ((bytes[0] as number) >> 4) & 7 : 0
    if (code < 1 || code > 4) result.set(oid, null)
    else result.set(oid, crc32(bytes) === crcs[position])
  }
  return result
}
