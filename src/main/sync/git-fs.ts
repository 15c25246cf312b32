/**
 * The file system isomorphic-git's fetch and push get: the disk seam (lib/disk.ts, which
 * fault injection wraps), with every file it writes (a pack, its index, a ref) written
 * atomically and durably — temp file, fsync, rename, fsync of the folder — so an interrupted
 * sync never leaves half a pack or a torn ref in the repository, and a power cut cannot
 * un-write a backup ref the person was promised.
 */
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import git from 'isomorphic-git'
import {
  closeQuietly,
  disk,
  isCode,
  isMissing,
  listOwnFolderNames,
  makeFolders,
  isNotPlainFile,
  OPEN,
  readPlainFileAsync,
  readPlainFileOrNull,
  syncFolder,
  unlinkQuietly,
} from '../lib/disk'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import type { Logger } from '../lib/logger'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { MAX_VERSIONED_BYTES, moveIntoDamaged } from '../history'
import { packRefused, packSizeProblem } from './pack-sizes'

type Encoding = { readonly encoding?: string; readonly mode?: number } | string | undefined

const wantsText = (options: Encoding): boolean =>
  options === 'utf8' || (typeof options === 'object' && options?.encoding === 'utf8')

async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options?: Encoding,
): Promise<void> {
  const dir = path.dirname(file)
  const temp = path.join(dir, `${TEMP_FILE_PREFIX}${randomUUID()}`)
  const mode = typeof options === 'object' ? options.mode : undefined
  const fd = disk.openSync(temp, OPEN.WRITE_NEW, mode ?? 0o644)
  try {
    try {
      disk.writeFileSync(fd, data)
      await disk.fsync(fd)
    } finally {
      // After the fsync (its close reports nothing the write relies on), or after the error
      // that is passed on, which it must not hide.
      closeQuietly(fd)
    }
    disk.renameSync(temp, file)
  } catch (error) {
    unlinkQuietly(temp)
    throw error
  }
  // The rename is durable once the folder is (`syncFolder` closes the folder quietly: it was
  // only fsynced).
  await syncFolder(dir)
}

/**
 * The most of a pack isomorphic-git reads whole: node's own limit for a read into one buffer
 * (2 GiB less a byte), so no pack that synced before is refused now; a pack is what a sync
 * brings, of any size the history reached.
 */
const PACK_CAP = 2 ** 31 - 1

/**
 * How large each file isomorphic-git reads may be (`OWN_FILE_CAP`): a ref or `HEAD` a few
 * bytes, `packed-refs` records, `config` and `shallow` small, an object or a pack index
 * `OBJECTS`, a pack its own cap. A ref of 2 GB is damage, never read into memory.
 */
function capOf(file: string): number {
  const name = path.basename(file)
  const parts = file.split(/[\\/]/)
  if (name.endsWith('.pack')) return PACK_CAP
  if (parts.includes('objects')) return OWN_FILE_CAP.OBJECTS
  if (name === 'packed-refs') return OWN_FILE_CAP.RECORDS
  if (parts.includes('refs') || /^[A-Z_]*HEAD$/.test(name)) return OWN_FILE_CAP.TINY
  return OWN_FILE_CAP.SMALL
}

/**
 * Reads `file` as a plain file within its cap (`readPlainFileAsync`: never through a link, never
 * a fifo). A folder reads as EISDIR, as node's `readFile` says it, which isomorphic-git takes
 * for "no such ref" when it tries a name (`refs/remotes/cairn-sync` for `cairn-sync`); any other
 * failure (EIO, a denied read, a file past its cap) is thrown on, never "not there".
 */
async function readFile(file: string, options?: Encoding): Promise<Buffer | string> {
  const bytes = await readPlainFileAsync(file, capOf(file))
  return wantsText(options) ? bytes.toString('utf8') : bytes
}

/** The `fs` to hand to isomorphic-git for fetch and push. */
export const gitFs = {
  promises: {
    readFile,
    writeFile: writeFileAtomic,
    async unlink(file: string) {
      disk.unlinkSync(file)
    },
    async readdir(dir: string): Promise<string[]> {
      return (await disk.promises.readdir(dir)).map((dirent) => dirent.name)
    },
    async mkdir(dir: string, options?: { mode?: number } | number) {
      disk.mkdirSync(dir, typeof options === 'number' ? options : (options?.mode ?? 0o755))
    },
    async rmdir(dir: string) {
      disk.rmdirSync(dir)
    },
    stat: (file: string) => disk.promises.stat(file),
    lstat: (file: string) => disk.promises.lstat(file),
    readlink: (file: string) => disk.promises.readlink(file),
    symlink: (target: string, file: string) => disk.promises.symlink(target, file),
    chmod: (file: string, mode: number) => disk.promises.chmod(file, mode),
  },
}

/**
 * A `gitFs` for one fetch that holds back writes of refs until `flush`: isomorphic-git
 * writes the remote's ref before the pack it points into, and a fetch cut in between must
 * not leave a ref to objects that never arrived.
 */
export function fetchFs(
  gitdir: string,
  onPack?: (name: string) => void,
  since: ReadonlyArray<string> = [],
): { fs: typeof gitFs; flush(): Promise<void> } {
  const refs = path.join(gitdir, 'refs') + path.sep
  const packs = path.join(gitdir, 'objects', 'pack') + path.sep
  const held = new Map<string, string | Uint8Array>()
  return {
    fs: {
      promises: {
        ...gitFs.promises,
        async writeFile(file: string, data: string | Uint8Array, options?: Encoding) {
          const name = String(file)
          if (name.startsWith(refs)) {
            held.set(name, data)
            return
          }
          // Sizes checked before the pack is written or indexed: the indexer inflates every
          // object whole, a file of some GB (packed to a few MB) among them. Up to a few times
          // what the history versions it may: the sync's own check then refuses it by name.
          if (name.startsWith(packs) && name.endsWith('.pack') && typeof data !== 'string') {
            const problem = packSizeProblem(data, PACK_OBJECT_CAP, PACK_CHAIN_BUDGET)
            if (problem) throw packRefused(problem, MAX_VERSIONED_BYTES)
          }
          // A pack this fetch brings (`onPack`), told only when it was not there before: the same
          // objects packed the same way by an earlier fetch make the same name, and are not its.
          const fresh =
            onPack !== undefined &&
            name.startsWith(packs) &&
            name.endsWith('.pack') &&
            !disk.lstatIfThere(name)
          // Kept out of maintenance's folds until the sync that fetched it is done with it (as
          // `git fetch` keeps its pack from `git gc`): folded first, a refused fetch's objects
          // stayed in the new pack, where its removal could no longer reach them. Written
          // before the pack, so that no pass sees the pack (whole once its index comes) without.
          // It notes the commits every ref named before the fetch (`since`): should the sync
          // never judge the pack (a kill, a Stop, a failure after the fetch), the next one does,
          // and its removal's walk stops there as this sync's would.
          const keep = `${name.slice(0, -'.pack'.length)}${FETCH_KEEP}`
          if (fresh) await writeFileAtomic(keep, keepNote(since))
          await writeFileAtomic(file, data, options)
          if (fresh) {
            // Told to the sync, which releases it (`releaseFetchedPacks`); one whose pack never
            // came whole is a kill's, for the next fetch's clean-up.
            keptInUse.add(path.resolve(keep))
            onPack(path.basename(name, '.pack'))
          }
        },
        async readFile(file: string, options?: Encoding) {
          const pending = held.get(String(file))
          if (pending === undefined) return readFile(file, options)
          return typeof pending === 'string' || options ? String(pending) : Buffer.from(pending)
        },
      },
    },
    async flush() {
      for (const [file, data] of held) {
        makeFolders(path.dirname(file), 0o755)
        await writeFileAtomic(file, data)
      }
      held.clear()
    },
  }
}

/** The file beside a pack a sync's fetch brought, until a sync has judged it. */
const FETCH_KEEP = '.keep'

/** The largest object a fetched pack may hold before it is indexed (`packSizeProblem`). */
export const PACK_OBJECT_CAP = 4 * MAX_VERSIONED_BYTES

/**
 * The most a fetched pack's delta chain may add up to (its objects' whole sizes), since the
 * indexer keeps every result along a deep chain: a 1 MiB file's chain 250 deep (`git gc
 * --aggressive`) is 250 MiB and passes; a 32 MiB file's passes 8 deep.
 */
export const PACK_CHAIN_BUDGET = 8 * MAX_VERSIONED_BYTES

/**
 * What such a file begins with: told apart from a `.keep` a person made with git, which stays.
 * Then one `since <commit>` line for each commit a ref named before the fetch began.
 */
const KEPT_BY = 'cairn: a sync is checking what its fetch brought\n'

/** A fetch's `.keep`: `KEPT_BY`, then the commits its removal's walk may stop at. */
function keepNote(since: ReadonlyArray<string>): string {
  return KEPT_BY + since.map((oid) => `since ${oid}\n`).join('')
}

/**
 * A pack a fetch brought that no sync has judged yet (taken in, or removed as refused): the
 * sync that fetched it was killed, stopped or failed after the fetch, or it was a Test
 * connection's. `since`: the commits every ref named before that fetch began (null when its
 * `.keep` does not say: an older Cairn's, which wrote none).
 */
export interface UnjudgedPack {
  readonly name: string
  readonly since: ReadonlyArray<string> | null
}

/**
 * The `.keep`s (full paths) of syncs not yet done with their packs, which the next fetch's
 * clean-up leaves: a Test connection's fetch may run while a sync merges what it fetched (the
 * sync has left the fetch queue), and took them away, so that a maintenance pass before the
 * refusal folded the packs and the refused objects stayed.
 */
const keptInUse = new Set<string>()

/**
 * Lets maintenance fold the packs `names` (`pack-<checksum>`) a sync's fetch brought, once that
 * sync is done with them (taken in, or removed as refused): their `.keep` goes.
 */
export function releaseFetchedPacks(gitdir: string, names: ReadonlyArray<string>): void {
  const packs = path.join(gitdir, 'objects', 'pack')
  // Out of use, each of them, whatever an unlink does: one failing left the rest held until a
  // restart. A `.keep` the disk keeps is judged again by the next sync; the first failure is
  // thrown once every other one is gone.
  leaveFetchedPacks(gitdir, names)
  let failure: unknown = null
  for (const name of names) {
    try {
      unlinkIfThere(path.join(packs, `${name}${FETCH_KEEP}`))
    } catch (error) {
      failure ??= error
    }
  }
  if (failure !== null) throw failure
}

/**
 * Leaves the packs `names` unjudged: a sync that stopped or failed between its fetch and its
 * judgement of what the fetch brought (the tracking ref may already name it). Their `.keep`s
 * stay, for the next sync to take (`takeUnjudgedPacks`) and judge; released here, a refused
 * commit's objects stayed for good, since that sync's fetch brought nothing new to remove.
 */
export function leaveFetchedPacks(gitdir: string, names: ReadonlyArray<string>): void {
  const packs = path.join(gitdir, 'objects', 'pack')
  for (const name of names) keptInUse.delete(path.resolve(packs, `${name}${FETCH_KEEP}`))
}

/**
 * The packs (whole: pack and index) whose `.keep` a fetch wrote and no sync still running holds:
 * each is then held by the caller, a sync, which judges it with what it fetches itself and
 * releases or leaves it. Only with no fetch or push running in the repository.
 */
export function takeUnjudgedPacks(gitdir: string): UnjudgedPack[] {
  const packs = path.join(gitdir, 'objects', 'pack')
  const names = listOwnFolderNames(packs)
  const found: UnjudgedPack[] = []
  for (const name of names) {
    if (!name.endsWith(FETCH_KEEP)) continue
    const pack = name.slice(0, -FETCH_KEEP.length)
    const keep = path.resolve(packs, name)
    if (keptInUse.has(keep) || !names.includes(`${pack}.pack`) || !names.includes(`${pack}.idx`))
      continue
    const note = fetchNote(keep)
    if (note === undefined) continue
    keptInUse.add(keep)
    found.push({ name: pack, since: note })
  }
  return found
}

/**
 * What a `.keep` a fetch wrote says (the commits of its `since` lines; null for an older
 * Cairn's, which has none), or undefined when the file is not one (a person's, made with git).
 */
function fetchNote(file: string): ReadonlyArray<string> | null | undefined {
  // Gone, or not a plain file (a folder, a link, past its cap): not one. A disk that fails the
  // read is thrown on.
  const text = readPlainFileOrNull(file, OWN_FILE_CAP.SMALL)?.toString('utf8')
  if (text === undefined || !text.startsWith(KEPT_BY)) return undefined
  const lines = text.slice(KEPT_BY.length).split('\n')
  if (lines.pop() !== '') return undefined
  const since: string[] = []
  for (const line of lines) {
    const oid = /^since ([0-9a-f]{40})$/.exec(line)?.[1]
    if (oid === undefined) return undefined
    since.push(oid)
  }
  return text === KEPT_BY ? null : since
}

/**
 * Removes what a killed fetch or push can leave: temp files of unfinished writes, a pack
 * whose index was never written (nothing reads such a pack; the next fetch brings it again),
 * an index whose pack is gone, and a `.keep` a fetch wrote whose pack never came whole. A
 * whole pack's `.keep` stays until a sync has judged the pack (`takeUnjudgedPacks`). Only with
 * no other fetch or push running in this repository (`oneAtATime` in transport.ts): a running
 * one's pack looks just like that.
 */
export function cleanInterruptedFetch(gitdir: string): void {
  const packs = path.join(gitdir, 'objects', 'pack')
  // Never through a link at objects/pack (to another repository's packs, say).
  const names = listOwnFolderNames(packs)
  const orphan = (name: string) =>
    (name.endsWith('.pack') && !names.includes(name.replace(/\.pack$/, '.idx'))) ||
    (name.endsWith('.idx') && !names.includes(name.replace(/\.idx$/, '.pack')))
  for (const name of names) {
    const pack = name.slice(0, -FETCH_KEEP.length)
    const kept =
      name.endsWith(FETCH_KEEP) &&
      !keptInUse.has(path.resolve(packs, name)) &&
      (!names.includes(`${pack}.pack`) || orphan(`${pack}.pack`)) &&
      fetchNote(path.join(packs, name)) !== undefined
    if (name.startsWith(TEMP_FILE_PREFIX) || orphan(name) || kept) {
      unlinkIfThere(path.join(packs, name))
    }
  }
  removeTempFiles(path.join(gitdir, 'refs'))
}

function removeTempFiles(dir: string): void {
  let dirents
  try {
    dirents = disk.readdirSync(dir)
  } catch (error) {
    // Gone or never made: nothing to clean.
    if (isMissing(error)) return
    throw error
  }
  for (const dirent of dirents) {
    const child = path.join(dir, dirent.name)
    if (dirent.name.startsWith(TEMP_FILE_PREFIX)) unlinkIfThere(child)
    else if (dirent.isDirectory()) removeTempFiles(child)
  }
}

function unlinkIfThere(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

/**
 * Moves what is in the way of writing `ref` (`refs/remotes/cairn-sync/main`, a backup's
 * `refs/cairn/backups/<name>`) into `cairn-damaged/`: a folder where its file goes (it reads
 * as "no ref", and every write of it failed with EISDIR: every sync stopped part-way, for
 * good, reffold31), or a file or a link where one of its folders goes (ENOTDIR, the same).
 * Only for the refs sync owns and writes afresh; never deleted (a folder may hold refs
 * someone made by hand), and logged. A move that fails throws `NotKeptAsideError`, and
 * nothing is changed.
 */
export function clearRefWay(gitdir: string, ref: string, logger: Logger | undefined): void {
  const parts = ref.split('/')
  for (let n = 2; n <= parts.length; n++) {
    const relative = parts.slice(0, n).join('/')
    const file = path.join(gitdir, ...parts.slice(0, n))
    const stats = disk.lstatIfThere(file)
    if (!stats) return
    const last = n === parts.length
    if (last ? !stats.isDirectory() : stats.isDirectory()) continue
    const kept = moveIntoDamaged(gitdir, file, `${relative.replaceAll('/', '-')}-${Date.now()}`)
    logger?.warn(
      `${relative} was in the way of the ref ${ref}: kept aside as cairn-damaged/${kept}`,
    )
    return
  }
}

/**
 * How many refs a read goes through: the one named and the symbolic refs it leads to, as git's
 * `SYMREF_MAXDEPTH` (`git rev-parse` resolves a chain of 4 symbolic refs, not one of 5).
 */
const SYMREF_DEPTH = 5

/**
 * The same as isomorphic-git's `depth`, which counts each symbolic ref twice (its `ref: `
 * text, then the name in it) and the commit once: `depth: SYMREF_DEPTH` followed only 2.
 */
const RESOLVE_DEPTH = 2 * (SYMREF_DEPTH - 1) + 1

/**
 * The commit a ref of the repository points at, or null when there is no such ref, or what has
 * its name is damage (`isNotPlainFile`: a folder, a link, a file past its cap), which the next
 * write of the ref replaces (a folder only once `clearRefWay` has moved it aside). A disk that fails the read (EIO, a denied read) is thrown on: read
 * as "no such ref", it had a Test connection delete the remote's `main` last seen, and a
 * backup's restore say there was no such backup.
 */
export async function readRef(gitdir: string, ref: string): Promise<string | null> {
  try {
    // A chain of symbolic refs ends within git's depth (longer, it reads as a name here, which
    // is no commit: null, as git takes it for a broken ref), or names nothing (the same):
    // a loop (`ref: refs/x` in refs/x) failed the read, and a refused fetch's removal, which
    // reads every ref, kept every pack it brought (a loop is said below).
    const oid = await git.resolveRef({ fs: gitFs, gitdir, ref, depth: RESOLVE_DEPTH })
    return /^[0-9a-f]{40}$/.test(oid) ? oid : null
  } catch (error) {
    // No such ref (never fetched, no backup by that name), or a loop of symbolic refs.
    if (isCode(error, 'NotFoundError') || isNotPlainFile(error) || isRefLoop(error)) return null
    throw error
  }
}

/** isomorphic-git's refusal of symbolic refs that lead back to themselves. */
function isRefLoop(error: unknown): boolean {
  const data = (error as { data?: { message?: unknown } } | null)?.data
  return isCode(error, 'InternalError') && /^Circular reference/.test(String(data?.message))
}

/**
 * The refs under `prefix` (`refs/`, `refs/cairn/backups/`), loose and packed, by full name:
 * `deep` walks the loose folders below it too. Read through the disk seam, never
 * isomorphic-git's `listRefs`, which takes any failure to list a folder or read `packed-refs`
 * for "none": a disk that fails, or a file where a folder goes, is thrown on. Only a folder
 * never made is none.
 */
export async function refNames(
  gitdir: string,
  prefix: string,
  deep: boolean,
): Promise<ReadonlyArray<string>> {
  const { loose, packed } = await refList(gitdir, prefix, deep)
  return [...new Set([...loose, ...packed.keys()])].sort()
}

/** The loose refs' names under `prefix`, and the packed ones' with the id `packed-refs` gives. */
async function refList(
  gitdir: string,
  prefix: string,
  deep: boolean,
): Promise<{ loose: ReadonlySet<string>; packed: ReadonlyMap<string, string> }> {
  const loose = new Set<string>()
  const walk = async (ref: string): Promise<void> => {
    let entries
    try {
      entries = await disk.promises.readdir(path.join(gitdir, ...ref.split('/').filter(Boolean)))
    } catch (error) {
      if (isCode(error, 'ENOENT')) return
      throw error
    }
    for (const entry of entries) {
      if (entry.name.startsWith(TEMP_FILE_PREFIX)) continue
      if (!entry.isDirectory()) loose.add(`${ref}${entry.name}`)
      else if (deep) await walk(`${ref}${entry.name}/`)
    }
  }
  await walk(prefix)
  let text = ''
  try {
    text = (
      await readPlainFileAsync(path.join(gitdir, 'packed-refs'), OWN_FILE_CAP.RECORDS)
    ).toString('utf8')
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
  const packed = new Map<string, string>()
  // `<oid> <ref>` lines; `#` and `^` lines are not refs.
  for (const line of text.split('\n')) {
    const ref = line.slice(41).trimEnd()
    if (/^[0-9a-f]{40} /.test(line) && ref.startsWith(prefix)) {
      if (deep || !ref.slice(prefix.length).includes('/')) packed.set(ref, line.slice(0, 40))
    }
  }
  return { loose, packed }
}

/**
 * The commit of `main` (`head`) and of every ref under `refs/` now (the tracking ref's too). A
 * ref that cannot be read leaves only `main`'s: the fetch goes on, and a refusal's removal then
 * walks further back (never less safe).
 */
export async function refCommits(
  gitdir: string,
  head: string | null,
): Promise<ReadonlyArray<string>> {
  const oids = head === null ? [] : [head]
  try {
    return [...oids, ...(await refTips(gitdir, null))]
  } catch {
    return oids
  }
}

/**
 * The commit each ref under `refs/` names, but `skip`'s (the tracking ref, which a refusal sets
 * back); a ref gone or damaged is left out. Throws when a ref cannot be read.
 *
 * As `readRef` reads each, but cheaper, since every sync reads them all before it fetches: a
 * packed ref's id comes from the one read of `packed-refs` that listed it, and a loose ref
 * holding an id is read once as a plain file. Only what else a loose ref holds (a symbolic
 * ref, damage) goes through `readRef`, which reads `packed-refs` again for each ref it tries
 * (27.9 ms for 22 refs at load 21, every sync).
 */
export async function refTips(gitdir: string, skip: string | null): Promise<string[]> {
  const { loose, packed } = await refList(gitdir, 'refs/', true)
  const oids: string[] = []
  for (const ref of [...new Set([...loose, ...packed.keys()])].sort()) {
    if (ref === skip) continue
    const oid = loose.has(ref) ? await looseRef(gitdir, ref) : (packed.get(ref) ?? null)
    if (oid !== null) oids.push(oid)
  }
  return oids
}

/** The id a loose ref's file holds, or, when it holds anything else, what `readRef` makes of it. */
async function looseRef(gitdir: string, ref: string): Promise<string | null> {
  let text: string
  try {
    text = (
      await readPlainFileAsync(path.join(gitdir, ...ref.split('/')), OWN_FILE_CAP.TINY)
    ).toString('utf8')
  } catch (error) {
    // Gone since it was listed (packed meanwhile), or damage: read as `readRef` reads it.
    if (isMissing(error) || isNotPlainFile(error)) return readRef(gitdir, ref)
    throw error
  }
  return /^[0-9a-f]{40}\n?$/.exec(text)?.[0].slice(0, 40) ?? readRef(gitdir, ref)
}
