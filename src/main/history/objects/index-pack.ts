/**
 * Builds a pack's index again from the pack itself, as `git index-pack` would, for a pack
 * whose `.idx` was lost or damaged (zeroed, cut short, missing): without an index every object
 * of the pack read as missing and the whole history was set aside, though the pack held it all.
 *
 * The pack must be whole (its bytes hash to its trailer). Each entry is walked from the first
 * (its header, then its zlib stream inflated to find where it ends), its stored bytes summed
 * (CRC-32), and its object built (OFS_DELTA and REF_DELTA resolved within the pack) and hashed
 * for its name. The index is written as a pack writer writes its own (`buildIndex`: version 2,
 * with CRC-32s), under a temp name, fsynced, renamed into place, the folder synced; a damaged
 * index in its place is first kept in `cairn-damaged/`, never deleted.
 */
import path from 'node:path'
import { disk, isMissing, syncFolder } from '../../lib/disk'
import type { Logger } from '../../lib/logger'
import { crc32 } from './crc32'
import { moveIntoDamaged } from './damaged-folder'
import { hashObject, isFormatError } from './object-database'
import { ObjectCache, PackError, PackFile, type RawObject } from './pack-file'
import { buildIndex, EntryLog, writeDurableIndex } from './pack-writer'

/** Entries walked or built between two `pause`s (a maintenance pass yields to commands). */
const PAUSE_EVERY = 256

/** A REF_DELTA whose base has not been named yet (a later entry of the pack, perhaps). */
class BaseNotYetNamed extends Error {}

/**
 * The version 2 index of the pack `file`, built from its entries. Throws a `PackError` (or
 * another format error, `isFormatError`) for a pack that is not whole: its trailer does not
 * hold, an entry does not inflate, the entries do not end where the trailer starts, a delta's
 * base is not in it. I/O errors pass through.
 */
export async function indexFromPack(
  file: string,
  pause: () => Promise<void> | undefined = () => undefined,
): Promise<Buffer> {
  const pack = PackFile.open(file, new ObjectCache())
  try {
    const checksum = pack.checksum()
    if (!pack.contentHash().equals(checksum)) {
      throw new PackError('the pack does not hash to its checksum (torn or damaged)')
    }
    const count = pack.objectCount
    // Each entry takes at least two bytes (a header byte, a zlib stream of some bytes).
    if (count * 2 > pack.entriesEnd() - 12) throw new PackError('more objects than the pack holds')
    const offsets = new Float64Array(count)
    const crcs = new Uint32Array(count)
    let at = 12
    for (let i = 0; i < count; i++) {
      if (at >= pack.entriesEnd()) throw new PackError('the pack ends before its last object')
      const { end } = pack.walkEntry(at)
      offsets[i] = at
      crcs[i] = crc32(pack.readStored(at, end - at))
      at = end
      if (i % PAUSE_EVERY === PAUSE_EVERY - 1) await pause()
    }
    if (at !== pack.entriesEnd()) {
      throw new PackError('the entries do not end where the pack checksum begins')
    }
    const named = new Map<string, number>()
    const resolve = (base: Buffer): RawObject => {
      const offset = named.get(base.toString('hex'))
      if (offset === undefined) throw new BaseNotYetNamed()
      return pack.read(offset, resolve)
    }
    const entries = new EntryLog()
    // Whole objects and OFS_DELTA chains first; a REF_DELTA waits for its base's name, a round
    // at a time, until a round names none (a base outside the pack: not indexable alone).
    let waiting: number[] = []
    for (let i = 0; i < count; i++) waiting.push(i)
    while (waiting.length > 0) {
      const next: number[] = []
      for (const i of waiting) {
        let object: RawObject
        try {
          object = pack.read(offsets[i]!, resolve)
        } catch (error) {
          if (!(error instanceof BaseNotYetNamed)) throw error
          next.push(i)
          continue
        }
        const oid = hashObject(object.type, object.content)
        named.set(oid, offsets[i]!)
        entries.push(oid, offsets[i]!, crcs[i]!)
        if (named.size % PAUSE_EVERY === 0) await pause()
      }
      if (next.length === waiting.length) {
        throw new PackError(`${next.length} delta(s) whose base is not in the pack`)
      }
      waiting = next
    }
    if (named.size !== count) throw new PackError('an object is in the pack twice')
    return await buildIndex(entries, checksum, pause)
  } finally {
    pack.close()
  }
}

/**
 * Builds the index of the pack `name` (`pack-<checksum>`) in `gitdir` again from the pack and
 * puts it in place, keeping whatever index was there in `cairn-damaged/`: `rebuilt`. With
 * nothing changed, `not-whole` when the pack itself is not whole (then nothing can index it) or
 * is not named by its checksum, and `gone` when the pack is no longer there (a person's `git
 * gc` deleted it since it was listed: nothing to index, nothing to keep aside). Other I/O
 * errors pass through, and so does what `pause` (awaited between chunks of the work) throws,
 * nothing changed then.
 */
export async function reindexPack(
  gitdir: string,
  name: string,
  pause: () => Promise<void> | undefined = () => undefined,
): Promise<'rebuilt' | 'not-whole' | 'gone'> {
  const packDir = path.join(gitdir, 'objects', 'pack')
  let bytes: Buffer
  try {
    bytes = await indexFromPack(path.join(packDir, `${name}.pack`), pause)
  } catch (error) {
    if (isFormatError(error)) return 'not-whole'
    if (isMissing(error)) return 'gone'
    throw error
  }
  // A pack is named by its checksum (the index's second-last 20 bytes): one named otherwise is
  // not one git or Cairn wrote there, and is kept aside rather than taken in.
  if (bytes.toString('hex', bytes.length - 40, bytes.length - 20) !== name.slice('pack-'.length)) {
    return 'not-whole'
  }
  const final = path.join(packDir, `${name}.idx`)
  try {
    disk.lstatSync(final)
    moveIntoDamaged(gitdir, final, `${name}.idx`)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
  const temp = await writeDurableIndex(packDir, bytes, pause)
  disk.renameSync(temp, final)
  await syncFolder(packDir).catch(() => undefined)
  return 'rebuilt'
}

/**
 * `reindexPack` for each of `names` in turn, each rebuilt told to `logger` (`by` says who asks:
 * "History open", "History maintenance"). A pack of `keepAside` that nothing can index (not
 * whole) is moved into `cairn-damaged/`; one gone since it was listed needs nothing. Returns
 * the names whose index was built again.
 */
export async function reindexPacks(
  gitdir: string,
  names: Iterable<string>,
  options: {
    readonly keepAside: ReadonlySet<string>
    readonly by: string
    readonly logger?: Logger
    readonly pause?: () => Promise<void> | undefined
  },
): Promise<string[]> {
  const rebuilt: string[] = []
  for (const name of names) {
    const outcome = await reindexPack(gitdir, name, options.pause)
    if (outcome === 'rebuilt') {
      rebuilt.push(name)
      options.logger?.warn(`${options.by}: the index of ${name} was built again from its pack`)
    } else if (outcome === 'not-whole' && options.keepAside.has(name)) {
      moveIntoDamaged(gitdir, path.join(gitdir, 'objects', 'pack', `${name}.pack`), `${name}.pack`)
    }
  }
  return rebuilt
}
