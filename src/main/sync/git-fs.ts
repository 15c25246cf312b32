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
            const problem = packSizeProblem(data, PACK_OBJECT_CAP)
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
          const keep = `${name.slice(0, -'.pack'.length)}${FETCH_KEEP}`
          if (fresh) await writeFileAtomic(keep, KEPT_BY)
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

/** The file beside a pack a sync's fetch brought, until that sync is done with it. */
const FETCH_KEEP = '.keep'

/** The largest object a fetched pack may hold before it is indexed (`packSizeProblem`). */
export const PACK_OBJECT_CAP = 4 * MAX_VERSIONED_BYTES

/** What such a file says: told apart from a `.keep` a person made with git, which stays. */
const KEPT_BY = 'cairn: a sync is checking what its fetch brought\n'

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
  for (const name of names) {
    const keep = path.join(packs, `${name}${FETCH_KEEP}`)
    // Left to the next fetch's clean-up should the unlink fail.
    keptInUse.delete(path.resolve(keep))
    unlinkIfThere(keep)
  }
}

/** Whether `file` is a `.keep` a sync's fetch wrote (and a kill left). */
function keptByFetch(file: string): boolean {
  try {
    return disk.readFileSync(file).toString('utf8') === KEPT_BY
  } catch (error) {
    if (isMissing(error)) return false
    throw error
  }
}

/**
 * Removes what a killed fetch or push can leave: temp files of unfinished writes, a pack
 * whose index was never written (nothing reads such a pack; the next fetch brings it again),
 * an index whose pack is gone, and the `.keep` a fetch put beside its packs (a kill's: not
 * one of a sync still checking its packs, `keptInUse`). Only with no
 * other fetch or push running in this repository (`oneAtATime` in transport.ts): a running
 * one's pack looks just like that.
 */
export function cleanInterruptedFetch(gitdir: string): void {
  const packs = path.join(gitdir, 'objects', 'pack')
  // Never through a link at objects/pack (to another repository's packs, say).
  const names = listOwnFolderNames(packs)
  for (const name of names) {
    const orphan =
      (name.endsWith('.pack') && !names.includes(name.replace(/\.pack$/, '.idx'))) ||
      (name.endsWith('.idx') && !names.includes(name.replace(/\.idx$/, '.pack')))
    const kept =
      name.endsWith(FETCH_KEEP) &&
      !keptInUse.has(path.resolve(packs, name)) &&
      keptByFetch(path.join(packs, name))
    if (name.startsWith(TEMP_FILE_PREFIX) || orphan || kept) {
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
  const names = new Set<string>()
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
      if (!entry.isDirectory()) names.add(`${ref}${entry.name}`)
      else if (deep) await walk(`${ref}${entry.name}/`)
    }
  }
  await walk(prefix)
  let packed = ''
  try {
    packed = (
      await readPlainFileAsync(path.join(gitdir, 'packed-refs'), OWN_FILE_CAP.RECORDS)
    ).toString('utf8')
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
  // `<oid> <ref>` lines; `#` and `^` lines are not refs.
  for (const line of packed.split('\n')) {
    const ref = line.slice(41).trimEnd()
    if (/^[0-9a-f]{40} /.test(line) && ref.startsWith(prefix)) {
      if (deep || !ref.slice(prefix.length).includes('/')) names.add(ref)
    }
  }
  return [...names].sort()
}
