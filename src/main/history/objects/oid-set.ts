/**
 * A set of object ids held as 20-byte records in typed arrays rather than as strings.
 *
 * Maintenance tracks every object it packs (half a million at 100,000 commits); as a `Set` of
 * hex strings that is ~100 bytes of small objects per id on the JavaScript heap, which every
 * major garbage collection has to trace — the pauses of 20–90 ms that commands waited for
 * while a large history was packed. Here the ids live outside the traced heap, in 256
 * independent tables (one per first byte), so growing one rehashes a few thousand ids at
 * most and no single step is proportional to the whole set.
 */

const TABLES = 256
const FIRST_CAPACITY = 8

class Table {
  /** The ids, in insertion order, 20 bytes each. */
  ids: Buffer = Buffer.allocUnsafe(FIRST_CAPACITY * 20)
  /** Open addressing, linear probing: index + 1 of the id in `ids`, 0 when empty. */
  slots = new Int32Array(FIRST_CAPACITY * 2)
  count = 0
}

/** Where in `table.slots` the id at `at` in `bytes` is (or would go). */
function find(table: Table, bytes: Uint8Array, at: number): number {
  const mask = table.slots.length - 1
  // Ids are SHA-1 digests: bytes 1-4 are as good a hash as any (the first picks the table).
  let slot =
    ((bytes[at + 1]! << 24) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 8) | bytes[at + 4]!) &
    mask
  const ids = table.ids
  for (;;) {
    const held = table.slots[slot]!
    if (held === 0) return slot
    const base = (held - 1) * 20
    let k = 0
    while (k < 20 && ids[base + k] === bytes[at + k]) k++
    if (k === 20) return slot
    slot = (slot + 1) & mask
  }
}

function grow(table: Table): void {
  const ids = Buffer.allocUnsafe(table.ids.length * 2)
  table.ids.copy(ids, 0, 0, table.count * 20)
  table.ids = ids
  table.slots = new Int32Array(table.slots.length * 2)
  for (let i = 0; i < table.count; i++) {
    table.slots[find(table, ids, i * 20)] = i + 1
  }
}

export class OidSet implements Iterable<string> {
  private readonly tables: Array<Table | undefined> = new Array<Table | undefined>(TABLES)
  private readonly scratch = Buffer.allocUnsafe(20)
  private total = 0

  /** How many ids the set holds. */
  get size(): number {
    return this.total
  }

  /** Adds `oid` (40 hex digits); false when it was already there. */
  add(oid: string): boolean {
    const bytes = this.bytesOf(oid)
    const first = bytes[0]!
    const table = (this.tables[first] ??= new Table())
    let slot = find(table, bytes, 0)
    if (table.slots[slot] !== 0) return false
    // Full (half the slots used): twice the room, the ids placed again.
    if (table.count * 20 === table.ids.length) {
      grow(table)
      slot = find(table, bytes, 0)
    }
    bytes.copy(table.ids, table.count * 20)
    table.count++
    table.slots[slot] = table.count
    this.total++
    return true
  }

  has(oid: string): boolean {
    const bytes = this.bytesOf(oid)
    const table = this.tables[bytes[0]!]
    return table !== undefined && table.slots[find(table, bytes, 0)] !== 0
  }

  /** `has` for the id held as 20 bytes at `at` in `bytes` (a tree entry's: no hex made). */
  hasAt(bytes: Uint8Array, at: number): boolean {
    if (at < 0 || at + 20 > bytes.length) throw new RangeError('not a whole object id')
    const table = this.tables[bytes[at]!]
    return table !== undefined && table.slots[find(table, bytes, at)] !== 0
  }

  /** The ids as hex, ordered by first byte, then in the order they were added. */
  *[Symbol.iterator](): IterableIterator<string> {
    for (const table of this.tables) {
      if (!table) continue
      for (let i = 0; i < table.count; i++) yield table.ids.toString('hex', i * 20, i * 20 + 20)
    }
  }

  private bytesOf(oid: string): Buffer {
    if (oid.length !== 40 || this.scratch.write(oid, 0, 20, 'hex') !== 20) {
      throw new TypeError(`not an object id: ${oid}`)
    }
    return this.scratch
  }
}
