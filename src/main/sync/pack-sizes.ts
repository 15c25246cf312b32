/**
 * What a fetched pack says of its objects' sizes, read before anything inflates them whole: a
 * hostile remote's file of 200 MB of one byte packs to 200 KB, and isomorphic-git's index of
 * the pack inflated it into memory (410 MB more for the process) before the sync's own checks
 * refused it as too large; one of a few GB stopped Cairn. Each object's header says how large
 * it is, and a delta's data says how large its result is.
 *
 * Sample: `PACK` `00000002` `<count>`, then per object `<type and size varint>` (`<base
 * offset varint>` for an ofs-delta, `<20-byte id>` for a ref-delta) and its zlib data.
 */
import { inflateSync } from 'node:zlib'
import { CairnError } from '../lib/errors'

/**
 * Why a pack may not be indexed, or null: `too-large`, its largest object (`size`); `chain`, a
 * delta chain whose results add up past the budget (`size`: their sum).
 */
export type PackSizeProblem =
  | { readonly kind: 'too-large'; readonly size: number }
  | { readonly kind: 'chain'; readonly size: number; readonly budget: number }
  | { readonly kind: 'unreadable' }
  | null

const OFS_DELTA = 6
const REF_DELTA = 7

/**
 * The first object of `pack` whose size is over `cap` (a whole object, or a delta's result),
 * or one that inflates past the size its header gives. Inflates each object once, never past
 * that size; a pack it cannot walk (cut short) is left to the indexer, which says so. A size
 * longer than git ever writes is refused as unreadable.
 *
 * Then each object's delta chain, its result and every base's down to a whole object, whose
 * sizes add up past `chainBudget`: isomorphic-git's indexer resolves a chain deeper than 3 by
 * keeping every result along it until the pack is indexed, so a pack of 8 KB (an 8 MiB blob,
 * then deltas of 128 MiB results each) took 551 MB more of the process at one delta, 1.45 GB at
 * eight; some thirty stopped Cairn. An ofs-delta's base is the object at its offset; a
 * ref-delta's is named by id, which the headers do not give, so it counts as every object the
 * pack holds (a fetch asks for ofs-deltas: git sends ref-deltas only when asked not to).
 */
export function packSizeProblem(
  pack: Uint8Array,
  cap: number,
  chainBudget = Infinity,
): PackSizeProblem {
  const bytes = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength)
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'PACK') return null
  const count = bytes.readUInt32BE(8)
  // By offset: the sizes along each object's chain, and whether a ref-delta is among them.
  const chains = new Map<number, { sum: number; viaRef: boolean }>()
  let total = 0
  const chainProblem = (): PackSizeProblem => {
    for (const { sum, viaRef } of chains.values()) {
      const size = viaRef ? sum + total : sum
      if (size > chainBudget) return { kind: 'chain', size, budget: chainBudget }
    }
    return null
  }
  let at = 12
  for (let n = 0; n < count; n++) {
    if (at >= bytes.length) return chainProblem()
    const start = at
    let byte = bytes[at++] as number
    const type = (byte >> 4) & 7
    let size = byte & 15
    let shift = 4
    while (byte & 0x80) {
      if (at >= bytes.length) return chainProblem()
      // Longer than any size git writes (53 bits): the indexer reads it 32 bits at a time
      // (`<<` wraps), so a padded header passed here while it inflated the data whole.
      if (shift > 49) return { kind: 'unreadable' }
      byte = bytes[at++] as number
      size += (byte & 0x7f) * 2 ** shift
      shift += 7
    }
    if (size > cap) return { kind: 'too-large', size }
    // What this object's chain holds before its own result: its base's chain.
    let below: { sum: number; viaRef: boolean } = { sum: 0, viaRef: false }
    if (type === OFS_DELTA) {
      // git's offset varint (each further byte adds one before the shift).
      let back = 0
      let first = true
      do {
        if (at >= bytes.length) return chainProblem()
        byte = bytes[at++] as number
        back = (first ? 0 : (back + 1) * 128) + (byte & 0x7f)
        first = false
      } while (byte & 0x80)
      // A base at no object's offset is the indexer's to refuse.
      below = chains.get(start - back) ?? below
    } else if (type === REF_DELTA) {
      below = { sum: 0, viaRef: true }
      at += 20
    }
    let data: Buffer
    let used: number
    try {
      const inflated = inflateSync(bytes.subarray(at), {
        info: true,
        maxOutputLength: Math.max(size, 1),
      }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } }
      data = inflated.buffer
      used = inflated.engine.bytesWritten
    } catch (error) {
      // More than its header said: what a bomb would do to pass the check above. Anything
      // else (a pack cut short) is the indexer's to say, as before.
      return (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
        ? { kind: 'unreadable' }
        : chainProblem()
    }
    let result = size
    if (type === OFS_DELTA || type === REF_DELTA) {
      // A delta's data begins with its base's size, then its result's (git's varints).
      let pos = 0
      for (const which of ['base', 'result'] as const) {
        let value = 0
        let step = 0
        let b: number
        do {
          if (pos >= data.length) return chainProblem()
          // As the header's: the indexer would read a padded one as another size.
          if (step > 49) return { kind: 'unreadable' }
          b = data[pos++] as number
          value += (b & 0x7f) * 2 ** step
          step += 7
        } while (b & 0x80)
        if (which === 'result' && value > cap) return { kind: 'too-large', size: value }
        result = value
      }
    }
    chains.set(start, { sum: below.sum + result, viaRef: below.viaRef })
    total += result
    at += used
  }
  return chainProblem()
}

/** The refusal of a fetched pack `packSizeProblem` found a problem in: nothing was written. */
export function packRefused(problem: NonNullable<PackSizeProblem>, cap: number): CairnError {
  const mb = (bytes: number) => `${Math.ceil(bytes / 2 ** 20)} MB`
  return new CairnError(
    'sync-unsafe-content',
    problem.kind === 'too-large'
      ? `The remote holds a file Cairn will not put in your memory folder: one of ${mb(problem.size)} (too large; Cairn versions files up to ${mb(cap)}). Nothing was changed; remove it from the remote to sync.`
      : problem.kind === 'chain'
        ? `The remote holds versions of a file stacked on one another that would take ${mb(problem.size)} to unpack (Cairn unpacks up to ${mb(problem.budget)} at once). Nothing was changed.`
        : 'The remote sent a file larger than it said it was, which Cairn will not unpack. Nothing was changed.',
  )
}
