/**
 * Packs loose objects (and small packs, geometrically) into one new pack with deltas, then
 * removes what the new pack now holds.
 *
 * Deltas follow paths: walking the commits newest first from every ref (`main` first, then
 * the remote's `main` and backups; every parent of a merge), each tree and blob is stored as
 * a delta against the next newer version at the same path (commits against the next newer
 * commit), so the newest version of everything is whole and older ones are short chains —
 * what `git gc` achieves with its window search, found here in one pass.
 *
 * Safe at every point: nothing is removed until the new pack and its index are fsynced and
 * renamed into place, and every object removed is checked to be in it. Killed anywhere, the
 * repository holds every object at least once (see pack-writer.ts for the files left over).
 */
import { disk, exists, listNames, listNamesAsync, syncFolder } from '../../lib/disk'
import type { UnlinkBatch } from '../../lib/unlink-worker'
import path from 'node:path'
import { parseCommit, parseTree, type RawCommit, type RawTreeEntry } from '../object-store'
import { isFormatError, type ObjectDatabase, type OpenPack } from './object-database'
import type { ObjectKind, RawObject } from './pack-file'
import { ByteLru } from './byte-lru'
import type { Logger } from '../../lib/logger'
import { reindexPacks } from './index-pack'
import { OidSet } from './oid-set'
import { PackIndex } from './pack-index'
import { SortedTree, TreeCursor, treeShape } from './tree-bytes'
import {
  removePack,
  PackWriter,
  removePackLeftovers,
  type DeltaBase,
  type PackedEntry,
} from './pack-writer'

/** The points a crash test can stop at (`onStep`), in the order they happen. */
export type RepackStep =
  | 'listed'
  | 'writing'
  | 'index-durable'
  | 'pack-renamed'
  | 'pack-durable'
  | 'removing-loose'
  /** A batch of loose files handed to `removeBatch`'s thread, which unlinks them meanwhile. */
  | 'batch-sent'
  /** That batch answered (all of it tried, or halted part-way). */
  | 'batch-done'
  | 'removing-packs'
  /** A folded pack's index removed, its pack not yet (as after each folded pack). */
  | 'pack-unindexed'
  | 'done'

export interface RepackOptions {
  /**
   * Called between small units of work: returns nothing when the work may go on at once (most
   * calls: a pass makes tens of thousands, and a promise for each is garbage), or a promise
   * that resolves when it is fine to go on.
   */
  readonly pause?: () => Promise<void> | undefined
  /** True once the caller wants the work dropped (checked at each pause). */
  readonly aborted?: () => boolean
  /** Called at each step (crash tests kill the process there). */
  readonly onStep?: (step: RepackStep) => void
  /** Told of each pack whose lost index was built again. */
  readonly logger?: Logger
  /** Fold every pack into the new one instead of only the small ones. */
  readonly mergeAll?: boolean
  /**
   * Walks every tree parsed into entries, as the walk did before it read trees in place
   * (stop 18): for tests, which hold the two to the same pack.
   */
  readonly parseTrees?: boolean
  /**
   * Runs a step that changes what the pack folder holds (clearing leftovers, putting the new
   * pack in place, removing what it holds) while nothing else writes or reads the folders
   * whole: a sync's fetch or push (see `PackFolderGate`). Default: runs it at once.
   */
  readonly exclusive?: <T>(step: () => Promise<T>) => Promise<T>
  /**
   * Awaited before each removal (a loose file or, with `removeBatch`, a batch of them, an
   * emptied folder, a folded pack's file), one in flight at a time: resolves once it is fine
   * to free space on the disk (the maintainer waits until no command has run for a while, see
   * maintainer.ts), with false to stop removing for this pass (a transfer waits for the pack
   * folder). Throwing `RepackAborted` there ends the pass. Either way, what the new pack holds
   * and is still loose goes at the next pass. Default: `pause`, then true.
   */
  readonly beforeRemoval?: () => Promise<boolean>
  /**
   * Unlinks loose files a batch at a time off the thread pool (`UnlinkWorker`), each batch
   * after `beforeRemoval`: resolves with how many of `paths` it tried (fewer when it was
   * halted: a command came) and which of those failed. Used when at least a batch's worth
   * (`REMOVAL_BATCH`) was loose; otherwise, and by default, one `unlink` on the thread pool
   * per file, each after `beforeRemoval`.
   */
  readonly removeBatch?: (paths: ReadonlyArray<string>) => Promise<UnlinkBatch>
}

export interface RepackReport {
  /** Loose objects found at the start. */
  readonly loose: number
  /** Objects written into the new pack (0: no pack was written). */
  readonly packed: number
  /** Packs folded into the new one and removed. */
  readonly mergedPacks: number
  /** Loose files removed (their objects are in a pack). */
  readonly removedLoose: number
  /** The new pack, or null. */
  readonly pack: { readonly name: string; readonly bytes: number } | null
  /** Objects that could not be read: left where they are. */
  readonly unreadable: ReadonlyArray<string>
}

/**
 * Thrown out of `repack` when `aborted()` turned true: nothing was removed, or (stopped while
 * removing what the new, durable pack holds) only part of it; the rest goes at the next pass.
 */
export class RepackAborted extends Error {}

const LOOSE_NAME = /^[0-9a-f]{38}$/
/**
 * Loose files per `removeBatch` call: a few tens of milliseconds of unlinks, what a transfer
 * waiting for the pack folder waits for at most (a command halts a batch at once).
 */
const REMOVAL_BATCH = 256
/** Bytes of recent versions kept as delta bases while packing. */
const BASE_BUDGET = 48 * 1024 * 1024

/**
 * Packs the loose objects of `db` (reachable or not: nothing is ever dropped) into one new
 * pack, folding in packs smaller than twice what is being packed, and removes what the new
 * pack holds. `tips` (the commits refs name, `main` first) are where the path walk starts.
 */
export async function repack(
  db: ObjectDatabase,
  tips: ReadonlyArray<string>,
  options: RepackOptions = {},
): Promise<RepackReport> {
  const goOn = () => {
    if (options.aborted?.()) throw new RepackAborted('maintenance stopped')
  }
  const pause = (): Promise<void> | undefined => {
    const waiting = options.pause?.()
    if (waiting) return waiting.then(goOn)
    goOn()
    return undefined
  }
  const step = (name: RepackStep) => options.onStep?.(name)
  const exclusive = options.exclusive ?? (<T>(task: () => Promise<T>) => task())
  // A pack without its index may be a fetch's, half-way: only cleared while none runs. One
  // whose index went (lost since open, say) gets it built again from the pack, as open does
  // (`reindexPack`); only a pack nothing can index (not whole) is kept aside in cairn-damaged/,
  // and one gone since it was listed (a person's `git gc` deleting it) is passed over.
  await exclusive(async () => {
    const unindexed: string[] = []
    removePackLeftovers(db.packDir, 0, Date.now(), unindexed)
    await reindexPacks(path.join(db.packDir, '..', '..'), unindexed, {
      keepAside: new Set(unindexed),
      by: 'History maintenance',
      logger: options.logger,
      pause,
    })
  })
  db.refresh()

  const loose = await listLoose(db, pause)
  // Loose objects some pack already holds (a crash after the last pack was made) are only
  // removed below; the rest are packed.
  const toPack = new OidSet()
  let seen = 0
  for (const oid of loose) {
    // A loose copy standing in for a damaged packed one is packed too, whole this time. (A
    // loose object a pack holds too is rare: its packed copy is checked before it counts.)
    if (!db.inPack(oid) || db.packedCopyDamaged(oid) || !db.checkPackedCopy(oid)) {
      toPack.add(oid)
    }
    if (++seen % 512 === 0) await pause()
  }
  const merged = withDamagedPacks(
    db,
    packsToMerge(db, toPack.size, options.mergeAll ?? false),
    loose,
  )
  for (const open of merged) {
    let n = 0
    for (const entry of open.index.entries()) {
      const oid = entry.oid.toString('hex')
      toPack.add(oid)
      if (++n % 1024 === 0) await pause()
    }
  }
  step('listed')

  const unreadable: string[] = []
  const packed = new OidSet()
  const writer = toPack.size > 0 ? PackWriter.create(db.packDir) : null
  try {
    if (writer) {
      await writeObjects(
        db,
        tips,
        toPack,
        writer,
        packed,
        unreadable,
        pause,
        () => step('writing'),
        options.parseTrees === true,
      )
    }
  } catch (error) {
    await writer?.abort()
    throw error
  }
  // Putting the pack in place and removing what it holds change the folders a fetch or push
  // reads and writes: they wait for one to end, and one waits for them.
  try {
    return await exclusive(() =>
      install(db, writer, loose, merged, options, pause, step, unreadable),
    )
  } catch (error) {
    // Stopped while waiting for a transfer to end: the unfinished pack goes (no-op once done).
    await writer?.abort()
    throw error
  }
}

async function install(
  db: ObjectDatabase,
  writer: PackWriter | null,
  loose: OidSet,
  merged: ReadonlyArray<OpenPack>,
  options: RepackOptions,
  pause: () => Promise<void> | undefined,
  step: (name: RepackStep) => void,
  unreadable: ReadonlyArray<string>,
): Promise<RepackReport> {
  let written: WrittenPack | null = null
  if (writer) {
    try {
      if (writer.count === 0) {
        await writer.abort()
      } else {
        const pack = await writer.finish(pause, step)
        written = { name: pack.name, bytes: pack.bytes, objects: pack.objects }
        step('pack-durable')
      }
    } catch (error) {
      await writer.abort()
      throw error
    }
  }

  // From here on, only removals of what a durable pack holds.
  db.refresh()
  const check = written ? PackIndex.open(path.join(db.packDir, `${written.name}.idx`)) : null
  const inNewPack = (oid: string) => check !== null && check.has(Buffer.from(oid, 'hex'))
  let removedLoose = 0
  // One removal in flight at a time (a file on the thread pool, or a batch on the thread),
  // each when the caller says the moment is quiet: an unlink waits for the disk to discard
  // what it frees (0.7 s once on the bench machine), and a command's own rename over a file,
  // which frees the old one, queues its discard behind every one in flight. With two always
  // in flight, a command's file creation was once blocked 1.3 s in the removals (a CPU
  // profile of commands run during a pass).
  const beforeRemoval =
    options.beforeRemoval ??
    (async () => {
      await pause()
      return true
    })
  let removing = true
  step('removing-loose')
  try {
    const emptied = new Set<string>()
    // One routine for every loose file: a batch at a time, each part after `beforeRemoval`
    // (no await between the two: no command can be queued in between), until all of it was
    // tried. On the thread (`removeBatch`), a batch of `REMOVAL_BATCH`, halted by a command;
    // otherwise one file per batch, unlinked on the thread pool. A thread of its own only for
    // a pass with at least a batch to remove: starting one costs tens of milliseconds of CPU
    // (more on a loaded machine), and a pass after a few commands (an idle moment's) has only
    // a handful of requests to save.
    const threaded = loose.size >= REMOVAL_BATCH ? options.removeBatch : undefined
    const batchSize = threaded ? REMOVAL_BATCH : 1
    let batch: string[] = []
    const removeQueued = async (): Promise<void> => {
      let from = 0
      while (from < batch.length) {
        if (!(removing &&= await beforeRemoval())) return
        const part = from === 0 ? batch : batch.slice(from)
        const paths = part.map((oid) => db.loosePath(oid))
        let answer: UnlinkBatch
        if (threaded) {
          const sent = threaded(paths)
          step('batch-sent')
          answer = await sent
          step('batch-done')
        } else {
          answer = await unlinkEach(paths)
        }
        const { done, failed } = answer
        let next = 0
        for (let i = 0; i < done; i++) {
          // Already gone (or never loose), or the disk refused: the next pass tries again.
          if (failed[next] === i) {
            next++
            continue
          }
          removedLoose++
          emptied.add(part[i]!.slice(0, 2))
        }
        from += done
      }
      batch = []
    }
    let visited = 0
    for (const oid of loose) {
      if (++visited % 16 === 0) await options.pause?.()
      // Every loose object some durable pack holds goes (packed now, or before a crash);
      // never one whose only packed copy is damaged.
      if (!inNewPack(oid) && (!db.inPack(oid) || db.packedCopyDamaged(oid))) continue
      batch.push(oid)
      if (batch.length < batchSize) continue
      await removeQueued()
      if (!removing) break
    }
    if (removing) await removeQueued()
    if (removing) removing = await renewFolders(db, emptied, beforeRemoval)

    let mergedPacks = 0
    step('removing-packs')
    for (const open of merged) {
      if (!removing) break
      // Repacking the same objects the same way makes the same pack, under the same name.
      if (open.name === written?.name) continue
      let complete = check !== null
      let n = 0
      for (const entry of open.index.entries()) {
        if (!complete) break
        if (!check?.has(entry.oid)) complete = false
        if (++n % 1024 === 0) await options.pause?.()
      }
      if (!complete) continue
      if (!(removing &&= await beforeRemoval())) break
      await removePack(db, open.name, () => step('pack-unindexed'))
      mergedPacks++
    }
    step('done')
    return {
      loose: loose.size,
      packed: written?.objects ?? 0,
      mergedPacks,
      removedLoose,
      pack: written ? { name: written.name, bytes: written.bytes } : null,
      unreadable: [...new Set(unreadable)],
    }
  } finally {
    check?.close()
    db.refresh()
  }
}

/**
 * Largest size a folder has before it ever grew: ext4 (and most file systems) start a folder
 * at one 4 KB block and never shrink it, however many names leave it.
 */
const FRESH_FOLDER_BYTES = 4096

/**
 * The object folders a pass emptied. One that grew while it held many names keeps its size
 * after they are gone (and every lookup in it pays for that), so it is replaced by a fresh
 * one in the same step; one that never grew stays. Either way the next commits find their
 * folder: one made anew costs the commit that needs it a mkdir and an fsync of `objects/`,
 * and maintenance runs every ~2,000 loose objects, so that would be most of the 256 after
 * every pass. Killed between the rmdir and the mkdir, the folder is missing, which the object
 * writer has always handled (it makes the folder on ENOENT). Every call runs on the thread
 * pool, each after `beforeRemoval`: a folder that held thousands of names takes a while to go,
 * and making one allocates an inode, which on this disk first skips every inode freed in the
 * last seconds (docs/durability.md) — the pass has just freed thousands.
 */
async function renewFolders(
  db: ObjectDatabase,
  emptied: ReadonlySet<string>,
  beforeRemoval: () => Promise<boolean>,
): Promise<boolean> {
  let made = false
  let removing = true
  for (const prefix of emptied) {
    const dir = path.join(db.objectsDir, prefix)
    try {
      if ((await disk.promises.lstat(dir)).size <= FRESH_FOLDER_BYTES) continue
      if (!(removing = await beforeRemoval())) break
      await disk.promises.rmdir(dir)
    } catch (error) {
      if (error instanceof RepackAborted) throw error
      // Not empty (an object written meanwhile), or gone: left as it is.
      continue
    }
    // Until objects/ is fsynced below, the name of a folder made here may not survive a power
    // cut. A commit's logged objects are safe meanwhile (open writes them again, folder and
    // all, from the log, whose checkpoint fsyncs objects/ before emptying it); a larger batch,
    // flushed file by file, fsyncs objects/ itself while this flag is set.
    db.foldersUnsynced = true
    made = true
    try {
      await disk.promises.mkdir(dir, 0o755)
    } catch {
      // A commit meanwhile made it (its objects are logged, or flushed with objects/), or the
      // disk refused: left missing, which the writer handles.
    }
  }
  if (made) {
    try {
      await syncFolder(db.objectsDir)
      db.foldersUnsynced = false
    } catch {
      // Commits go on fsyncing objects/ until a later pass manages to.
    }
  }
  return removing
}

/**
 * `paths` unlinked one after the other on the thread pool, as `removeBatch` answers: every one
 * tried, those that could not be removed (gone, or the disk refused) listed by index.
 */
async function unlinkEach(paths: ReadonlyArray<string>): Promise<UnlinkBatch> {
  const failed: number[] = []
  for (const [i, file] of paths.entries()) {
    try {
      await disk.promises.unlink(file)
    } catch {
      failed.push(i)
    }
  }
  return { done: paths.length, failed }
}

interface WrittenPack {
  readonly name: string
  readonly bytes: number
  readonly objects: number
}

/**
 * Every loose object id, one folder at a time. Temp files of object writes a crash left behind
 * (a minute old: never one being written) go on the way; open leaves them to this pass unless
 * the instance before was killed (its lock taken over).
 */
export async function listLoose(
  db: ObjectDatabase,
  pause: () => Promise<void> | undefined,
): Promise<OidSet> {
  const found = new OidSet()
  const now = Date.now()
  for (let i = 0; i < 256; i++) {
    const prefix = i.toString(16).padStart(2, '0')
    // On the thread pool: a folder that grew to thousands of names takes milliseconds to read.
    for (const name of await listNamesAsync(path.join(db.objectsDir, prefix))) {
      if (LOOSE_NAME.test(name)) found.add(prefix + name)
      else if (name.startsWith('tmp_obj_'))
        await removeStaleTemp(path.join(db.objectsDir, prefix, name), now)
    }
    await pause()
  }
  return found
}

/**
 * Counts loose objects the way `git gc --auto` does: one folder of 256, times 256. Cheap
 * enough for every start.
 */
export function estimateLoose(db: ObjectDatabase): number {
  try {
    const names = listNames(path.join(db.objectsDir, '17'))
    return names.filter((name) => LOOSE_NAME.test(name)).length * 256
  } catch {
    // A failing disk: the next pass tries again.
    return 0
  }
}

/**
 * The packs to fold into the new one: smallest first, each while it holds fewer than twice
 * the objects gathered so far, so pack sizes grow geometrically and an object is rewritten
 * O(log n) times over its life. `.keep` packs stay as they are.
 */
export function packsToMerge(db: ObjectDatabase, loose: number, all: boolean): OpenPack[] {
  const candidates = db
    .packs()
    .filter((open) => !exists(path.join(db.packDir, `${open.name}.keep`)))
    .sort((a, b) => a.index.count - b.index.count)
  if (all) return candidates.length === 1 && loose === 0 ? [] : candidates
  const merged: OpenPack[] = []
  let total = loose
  for (const open of candidates) {
    if (open.index.count >= 2 * total) break
    merged.push(open)
    total += open.index.count
  }
  // A single pack and nothing loose: already as packed as it gets.
  return merged.length === 1 && loose === 0 ? [] : merged
}

/**
 * `merged` plus every pack holding a damaged copy of an object that is now loose (written
 * again): merged, the pack is rewritten from sound copies and its damaged bytes go, so that
 * `git fsck` is clean again. A damaged object with no other copy keeps its pack (the pass
 * reports it as unreadable and removes a merged pack only when the new one holds everything).
 */
function withDamagedPacks(
  db: ObjectDatabase,
  merged: ReadonlyArray<OpenPack>,
  loose: OidSet,
): OpenPack[] {
  const out = [...merged]
  const mended = db.packedDamage().filter((oid) => loose.has(oid))
  if (mended.length === 0) return out
  for (const open of db.packs()) {
    if (out.includes(open)) continue
    if (exists(path.join(db.packDir, `${open.name}.keep`))) continue
    if (mended.some((oid) => open.index.has(Buffer.from(oid, 'hex')))) out.push(open)
  }
  return out
}

/**
 * `content` in a buffer of its own size. What zlib's sync calls return is a slice of a 16 KB
 * chunk: kept as a delta base, a 300-byte tree would hold all 16 KB, outlive two scavenges
 * and reach the old generation, which then filled (and was collected whole) every ~100 ms.
 */
function ownCopy(content: Buffer): Buffer {
  if (content.length * 2 >= content.buffer.byteLength) return content
  const copy = Buffer.allocUnsafeSlow(content.length)
  content.copy(copy)
  return copy
}

async function writeObjects(
  db: ObjectDatabase,
  tips: ReadonlyArray<string>,
  toPack: OidSet,
  writer: PackWriter,
  packed: OidSet,
  unreadable: string[],
  pause: () => Promise<void> | undefined,
  onFirst: () => void,
  parseTrees: boolean,
): Promise<void> {
  // Delta bases by path: the last version written at each, bounded in bytes.
  const bases = new ByteLru<DeltaBase>(BASE_BUDGET, (base) => base.content.length)
  let first = true
  // A damaged object is left where it is (and reported); an I/O error ends the pass, which
  // then removes nothing, to be tried again later.
  //
  // Reading, writing an entry and pausing each return their result at once when nothing had
  // to wait (most objects: a file in the page cache, an entry that fits the write buffer, a
  // slice not yet over), and a promise only when something did; the walk awaits only those.
  // A chain of async calls that waited for nothing cost about 1.4 KB of garbage an object.
  const reader = new WalkReader(db)
  const damaged = (error: unknown, oid: string, report: boolean): null => {
    if (!isFormatError(error)) throw error
    if (report) unreadable.push(oid)
    return null
  }
  const readObject = (
    oid: string,
    report: boolean,
  ): RawObject | null | Promise<RawObject | null> => {
    try {
      const got = reader.read(oid)
      return got instanceof Promise ? got.catch((error) => damaged(error, oid, report)) : got
    } catch (error) {
      return damaged(error, oid, report)
    }
  }
  const read = (oid: string) => readObject(oid, true)
  const quietRead = (oid: string) => readObject(oid, false)
  const emit = (
    oid: string,
    type: ObjectKind,
    content: Buffer,
    key: string,
  ): Promise<void> | undefined => {
    const base = bases.get(key)
    const added = writer.add(oid, type, content, base, content.length > 1024 * 1024 ? 10 : 50)
    if (added instanceof Promise) return added.then((entry) => emitted(oid, content, key, entry))
    return emitted(oid, content, key, added)
  }
  const emitted = (
    oid: string,
    content: Buffer,
    key: string,
    entry: PackedEntry,
  ): Promise<void> | undefined => {
    packed.add(oid)
    bases.set(key, { content: ownCopy(content), offset: entry.offset, depth: entry.depth })
    if (first) {
      first = false
      onFirst()
    }
    return pause()
  }

  // Trees read as the parent's side of one commit are the current side of the next one.
  interface Tree {
    readonly content: Buffer
    /** In git's order: read in place (`TreeCursor`). Otherwise parsed, into `entries`. */
    readonly sorted: boolean
    entries: RawTreeEntry[] | null
  }
  let previousTrees = new Map<string, Tree>()
  let nextTrees = new Map<string, Tree>()
  // Null for what `parseTree` refuses (`treeShape` tells without parsing a sorted tree).
  const readTree = (oid: string, report: boolean): Tree | null | Promise<Tree | null> => {
    const known = previousTrees.get(oid) ?? nextTrees.get(oid)
    if (known) return known
    const object = readObject(oid, report)
    return object instanceof Promise ? object.then((got) => treeOf(oid, got)) : treeOf(oid, object)
  }
  const treeOf = (oid: string, object: RawObject | null): Tree | null => {
    if (!object || object.type !== 'tree') return null
    const shape = parseTrees ? 'unsorted' : treeShape(object.content)
    if (shape === 'invalid') return null
    let entries: RawTreeEntry[] | null = null
    if (shape === 'unsorted') {
      try {
        entries = parseTree(oid, object.content, { foreign: true })
      } catch {
        return null
      }
    }
    const tree: Tree = { content: object.content, sorted: shape === 'sorted', entries }
    nextTrees.set(oid, tree)
    return tree
  }
  const entriesOf = (oid: string, tree: Tree): RawTreeEntry[] =>
    (tree.entries ??= parseTree(oid, tree.content, { foreign: true }))

  const visitTree = async (oid: string, baseOid: string | null, prefix: string): Promise<void> => {
    if (oid === baseOid || !toPack.has(oid) || packed.has(oid)) return
    const reading = readTree(oid, true)
    const tree = reading instanceof Promise ? await reading : reading
    if (!tree) return
    const emitting = emit(oid, 'tree', tree.content, `tree:${prefix}`)
    if (emitting) await emitting
    const basing = baseOid ? readTree(baseOid, false) : null
    const base = basing instanceof Promise ? await basing : basing
    if (tree.sorted && (base === null || base.sorted)) {
      await visitSorted(tree.content, base?.content ?? null, prefix)
      return
    }
    // A tree in another order (made elsewhere): its entries and its base's, by name.
    const before = new Map<string, RawTreeEntry>()
    for (const entry of base && baseOid ? entriesOf(baseOid, base) : []) {
      before.set(entry.name, entry)
    }
    for (const entry of entriesOf(oid, tree)) {
      const old = before.get(entry.name)
      if (old && old.oid === entry.oid) continue
      if (entry.kind === 'tree') {
        await visitTree(entry.oid, old?.kind === 'tree' ? old.oid : null, `${prefix}${entry.name}/`)
      } else if (toPack.has(entry.oid) && !packed.has(entry.oid)) {
        const reading = read(entry.oid)
        const blob = reading instanceof Promise ? await reading : reading
        const emitting =
          blob && emit(entry.oid, blob.type, blob.content, `blob:${prefix}${entry.name}`)
        if (emitting) await emitting
      }
    }
  }

  // The same, for a tree and its base (if any) both in git's order, read in place side by
  // side: an entry whose name and id the base has too (most of them) costs no allocation.
  const visitSorted = async (tree: Buffer, base: Buffer | null, prefix: string): Promise<void> => {
    const entry = new TreeCursor(tree)
    const old = base ? new TreeCursor(base) : null
    let oldLeft = old?.next() ?? false
    // The base searched by name, made when an entry first needs it.
    let baseByName: SortedTree | null = null
    while (entry.next()) {
      let match: TreeCursor | null = null
      if (old && base) {
        while (oldLeft && old.compare(entry) < 0) oldLeft = old.next()
        // The same name as the other kind (a file become a folder) sorts elsewhere.
        match =
          oldLeft && old.compare(entry) === 0
            ? old
            : (baseByName ??= new SortedTree(base)).otherKindNamed(entry)
      }
      if (match && match.sameId(entry)) continue
      if (entry.folder) {
        const baseId = match?.folder ? match.id() : null
        await visitTree(entry.id(), baseId, `${prefix}${entry.name()}/`)
      } else if (toPack.hasAt(tree, entry.idAt) && !packed.hasAt(tree, entry.idAt)) {
        const id = entry.id()
        const reading = read(id)
        const blob = reading instanceof Promise ? await reading : reading
        const emitting = blob && emit(id, blob.type, blob.content, `blob:${prefix}${entry.name()}`)
        if (emitting) await emitting
      }
    }
  }

  // Depth-first from each tip, first parents first; a commit some pack not being folded holds
  // ends the walk there (everything older was packed before).
  const stack = [...tips].reverse()
  const walked = new OidSet()
  // The parent a commit was read with (for its tree) is most often the next commit walked:
  // kept, read and parsed, rather than read from the disk and parsed again.
  let parentOid: string | null = null
  let parentObject: RawObject | null = null
  let parentCommit: RawCommit | null = null
  while (stack.length > 0) {
    const cursor = stack.pop() as string
    if (walked.has(cursor)) continue
    walked.add(cursor)
    if (!toPack.has(cursor) || packed.has(cursor)) continue
    const known = cursor === parentOid
    const reading = known ? parentObject : quietRead(cursor)
    const object = reading instanceof Promise ? await reading : reading
    if (object?.type !== 'commit') continue
    let commit: RawCommit
    try {
      commit = known && parentCommit ? parentCommit : parseCommit(cursor, object.content)
    } catch {
      continue
    }
    const emitting = emit(cursor, 'commit', object.content, 'commit')
    if (emitting) await emitting
    const parentReading = commit.parent ? quietRead(commit.parent) : null
    const parent = parentReading instanceof Promise ? await parentReading : parentReading
    let parentTree: string | null = null
    parentOid = commit.parent
    parentObject = parent
    parentCommit = null
    if (parent?.type === 'commit' && commit.parent) {
      try {
        parentCommit = parseCommit(commit.parent, parent.content)
        parentTree = parentCommit.tree
      } catch {
        parentTree = null
      }
    }
    await visitTree(commit.tree, parentTree, '')
    previousTrees = nextTrees
    nextTrees = new Map()
    for (let k = commit.parents.length - 1; k >= 0; k--) {
      const next = commit.parents[k] as string
      if (!walked.has(next)) stack.push(next)
    }
  }

  // Whatever the walk did not reach (unreachable objects, history beyond the walk): each type
  // in one chain of attempts, which costs little when the objects are unrelated.
  let visited = 0
  for (const oid of toPack) {
    if (++visited % 1024 === 0) await pause()
    if (packed.has(oid)) continue
    const reading = read(oid)
    const object = reading instanceof Promise ? await reading : reading
    if (!object) continue
    const emitting = emit(oid, object.type, object.content, `other:${object.type}`)
    if (emitting) await emitting
  }
}

/** A read slower than this says the disk is busy: the next ones go through the thread pool. */
const SLOW_READ_MS = 10
/** Reads that then go through the thread pool before the main thread is tried again. */
const OFF_THREAD_READS = 64

/**
 * Reads the objects of the pack walk. Loose files are read on the main thread while that
 * takes microseconds (the page cache: freshly written objects); once one read took longer (a
 * disk busy discarding, or files long out of the cache), the next ones go through the thread
 * pool (`readOffThread`) for a while. Always there would cost a thread hop per object — tens
 * of thousands per pass, each waiting for a CPU on a loaded machine: a pass took four times as
 * long for it.
 */
class WalkReader {
  private offThread = 0

  constructor(private readonly db: ObjectDatabase) {}

  /** The object, at once when read on the main thread; a promise when on the thread pool. */
  read(oid: string): RawObject | Promise<RawObject> {
    if (this.offThread > 0) {
      this.offThread--
      return this.db.readOffThread(oid)
    }
    const start = performance.now()
    const object = this.db.read(oid)
    if (performance.now() - start > SLOW_READ_MS) this.offThread = OFF_THREAD_READS
    return object
  }
}

async function removeStaleTemp(file: string, now: number): Promise<void> {
  try {
    const stats = await disk.promises.lstat(file)
    if (now - stats.mtimeMs > 60_000) await disk.promises.unlink(file)
  } catch {
    // Gone meanwhile, or the disk failing: the next pass tries again.
  }
}
