import { createHash, randomBytes } from 'node:crypto'
import path from 'node:path'
import { deflateSync, inflateSync } from 'node:zlib'
import git from 'isomorphic-git'
import { disk, isCode, listNames, makeFolders, OPEN } from '../lib/disk'
import { isDiskProblem } from '../lib/disk-errors'
import { DamagedHistoryError, entryNameProblem } from './damage'
import { gitFs } from './git-fs'

/** One entry of a git tree as Cairn stores it: regular files and directories only. */
export interface RawTreeEntry {
  readonly name: string
  readonly kind: 'blob' | 'tree'
  readonly oid: string
  /**
   * `100644` / `100755` for files, `40000` for directories (`120000` for a link and `160000`
   * for a submodule only from `readForeignTree`).
   */
  readonly mode: string
}

export interface RawCommit {
  readonly oid: string
  readonly tree: string
  /** The first parent (the history this commit continued); null for a root commit. */
  readonly parent: string | null
  /** Every parent in order: more than one for a merge commit. */
  readonly parents: ReadonlyArray<string>
  readonly authorName: string
  /** Seconds since the epoch, as git stores it. */
  readonly timestamp: number
  readonly message: string
}

export type ObjectType = 'blob' | 'tree' | 'commit'

/**
 * Reads and writes the objects of one bare repository, through the disk seam.
 *
 * Loose objects are read, inflated and checked against their id here; packed ones through
 * isomorphic-git. Anything that is missing, does not inflate, does not hash to its id or does
 * not parse is reported as a `DamagedHistoryError` (never as an internal error); an I/O error
 * (full disk, EIO, EACCES, EMFILE) is passed on as it is, never taken for damage.
 *
 * Writes produce git's loose object format directly: hash, deflate, temp file, rename — so a
 * crash never leaves a half-written object under its final name. A file already there is kept
 * only if it holds what its name says; a damaged one is replaced. Written objects are made
 * durable by `flush` (file contents, then their folders), which the caller runs before the
 * ref that makes them reachable moves.
 */
export interface ObjectStore {
  readonly gitdir: string
  hash(type: ObjectType, content: Uint8Array): string
  write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string>
  /** fsyncs every object written since the last flush, then their folders. */
  flush(): Promise<void>
  /** True when the object `oid` can be read and holds what its id says. */
  isIntact(oid: string): Promise<boolean>
  /** A tree of this history: an entry Cairn would never write is damage. */
  readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
  /**
   * A tree as it is stored, for content from elsewhere (sync) that its reader judges itself:
   * links and submodules come as `blob` entries with their own mode (`120000`, `160000`),
   * and names are not checked (only that they are UTF-8).
   */
  readForeignTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
  readBlob(oid: string): Promise<Uint8Array>
  readCommit(oid: string): Promise<RawCommit>
  /** An object's stored content (what its id hashes, without the header), checked for `type`. */
  readRaw(oid: string, type: ObjectType): Promise<Uint8Array>
}

/**
 * Most parsed commits kept in memory; past it the cache starts over (a commit costs a few
 * hundred bytes, so this bounds it to a few MB while a timeline page stays warm).
 */
export const COMMIT_CACHE_SIZE = 10_000

// More written objects than this are flushed at once, so a large restore never holds
// thousands of descriptors open.
const MAX_UNFLUSHED = 64

/** Opens the object store of `gitdir` (which must exist). */
export function createObjectStore(gitdir: string): ObjectStore {
  const cache = {}
  const knownDirs = new Set<string>()
  const commits = new Map<string, RawCommit>()
  // Written objects whose fsync is running (started at once, so it overlaps with the work of
  // building the rest of the commit) and whose folder still has to be synced.
  let unflushed: Array<{
    readonly fd: number
    readonly dir: string
    readonly synced: Promise<unknown>
  }> = []
  // Object folders made since the last flush: objects/ itself must be synced for them.
  let newDirs = false

  function hash(type: ObjectType, content: Uint8Array): string {
    return createHash('sha1')
      .update(`${type} ${content.byteLength}\0`)
      .update(content)
      .digest('hex')
  }

  const looseFile = (oid: string) => path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))

  async function write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string> {
    const oid = knownOid ?? hash(type, content)
    const dir = path.join(gitdir, 'objects', oid.slice(0, 2))
    const file = looseFile(oid)
    const existing = readLooseOrNull(oid)
    if (existing !== null && intactLoose(oid, existing)) return oid
    if (!knownDirs.has(dir)) {
      try {
        disk.mkdirSync(dir, 0o755)
        newDirs = true
      } catch (error) {
        if (!isCode(error, 'EEXIST')) throw error
      }
      knownDirs.add(dir)
    }
    const header = Buffer.from(`${type} ${content.byteLength}\0`)
    const data = deflateSync(Buffer.concat([header, content]), { level: 1 })
    const temp = path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`)
    let fd: number | null = null
    try {
      fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o444)
      disk.writeFileSync(fd, data)
      // Renamed over a damaged file of the same name, if there is one.
      disk.renameSync(temp, file)
    } catch (error) {
      if (fd !== null) closeQuietly(fd)
      unlinkQuietly(temp)
      throw error
    }
    // Settled here, so a failure waits for `flush` instead of going unhandled.
    const synced = disk.fsync(fd).then(
      () => null,
      (error: unknown) => error ?? new Error('fsync failed'),
    )
    unflushed.push({ fd, dir, synced })
    if (unflushed.length >= MAX_UNFLUSHED) await flush()
    return oid
  }

  // Files and folders are fsynced all at once: the order among them does not matter, only
  // that all are done before the ref moves.
  async function flush(): Promise<void> {
    const pending = unflushed
    unflushed = []
    if (pending.length === 0) return
    const dirs = new Set(pending.map(({ dir }) => dir))
    if (newDirs) dirs.add(path.join(gitdir, 'objects'))
    newDirs = false
    try {
      const [failures] = await Promise.all([
        Promise.all(pending.map(({ synced }) => synced)),
        Promise.all([...dirs].map((dir) => syncDir(dir))),
      ])
      const failure = failures.find((result) => result !== null)
      if (failure) throw failure
    } finally {
      for (const { fd } of pending) closeQuietly(fd)
    }
  }

  // The loose file's bytes, or null when there is none (an I/O error is thrown).
  function readLooseOrNull(oid: string): Buffer | null {
    try {
      return disk.readFileSync(looseFile(oid))
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return null
      throw error
    }
  }

  // A loose object is checked whole (inflated, length, hash); a packed one only for being
  // listed in a pack index: a pack carries checksums of its own, and reading every packed
  // blob at open would cost what a pack is there to save.
  async function isIntact(oid: string): Promise<boolean> {
    const loose = readLooseOrNull(oid)
    if (loose !== null) return intactLoose(oid, loose)
    return packs.has(oid)
  }

  const packs = packIndexes(gitdir)

  async function readObject(oid: string): Promise<{ type: string; object: Buffer }> {
    const loose = readLooseOrNull(oid)
    if (loose !== null) {
      const object = unwrapLoose(oid, loose)
      if (object === null) throw new DamagedHistoryError(oid, 'corrupt')
      return object
    }
    try {
      const result = await git.readObject({ fs: gitFs, gitdir, oid, format: 'content', cache })
      return { type: result.type, object: Buffer.from(result.object as Uint8Array) }
    } catch (error) {
      if (isDiskProblem(error)) throw error
      throw new DamagedHistoryError(oid, isCode(error, 'NotFoundError') ? 'missing' : 'corrupt')
    }
  }

  async function readTyped(oid: string, type: ObjectType): Promise<Buffer> {
    const { type: actual, object } = await readObject(oid)
    if (actual !== type) throw new DamagedHistoryError(oid, `not a ${type}`)
    return object
  }

  async function readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    return parseTree(oid, await readTyped(oid, 'tree'))
  }

  async function readBlob(oid: string): Promise<Uint8Array> {
    return readTyped(oid, 'blob')
  }

  async function readCommit(oid: string): Promise<RawCommit> {
    const known = commits.get(oid)
    if (known) return known
    const raw = parseCommit(oid, await readTyped(oid, 'commit'))
    if (commits.size > COMMIT_CACHE_SIZE) commits.clear()
    commits.set(oid, raw)
    return raw
  }

  function intactLoose(oid: string, loose: Buffer): boolean {
    return unwrapLoose(oid, loose) !== null
  }

  async function readForeignTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    return parseTree(oid, await readTyped(oid, 'tree'), { foreign: true })
  }

  return {
    gitdir,
    hash,
    write,
    flush,
    isIntact,
    readTree,
    readForeignTree,
    readBlob,
    readCommit,
    readRaw: readTyped,
  }
}

/**
 * Which ids the pack indexes (v2) of `gitdir` list, looked up by binary search in the
 * indexes themselves (read once; read again when an id is not found, in case a pack was
 * added since).
 */
function packIndexes(gitdir: string): { has(oid: string): boolean } {
  const packDir = path.join(gitdir, 'objects', 'pack')
  let loaded: Map<string, Buffer> | null = null
  const load = () => {
    const next = new Map<string, Buffer>()
    for (const name of listNames(packDir)) {
      if (!name.endsWith('.idx')) continue
      const known = loaded?.get(name)
      if (known) {
        next.set(name, known)
        continue
      }
      const idx = disk.readFileSync(path.join(packDir, name))
      if (
        idx.length >= 8 + 1024 &&
        idx.readUInt32BE(0) === 0xff744f63 &&
        idx.readUInt32BE(4) === 2
      ) {
        next.set(name, idx)
      }
    }
    loaded = next
  }
  const lookup = (oid: string) => {
    const wanted = Buffer.from(oid, 'hex')
    for (const idx of loaded!.values()) if (indexHas(idx, wanted)) return true
    return false
  }
  return {
    has(oid) {
      if (loaded === null) load()
      if (lookup(oid)) return true
      load()
      return lookup(oid)
    },
  }
}

// Binary search among the ids of one index: the fan-out table bounds the range.
function indexHas(idx: Buffer, wanted: Buffer): boolean {
  const first = wanted[0]!
  let low = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4)
  let high = idx.readUInt32BE(8 + first * 4)
  const start = 8 + 1024
  while (low < high) {
    const middle = (low + high) >>> 1
    const at = start + middle * 20
    if (at + 20 > idx.length) return false
    const order = Buffer.compare(idx.subarray(at, at + 20), wanted)
    if (order === 0) return true
    if (order < 0) low = middle + 1
    else high = middle
  }
  return false
}

// A loose object: zlib of `<type> <size>\0<content>`. Null when it does not inflate, its header
// does not match its length, or it does not hash to `oid`.
function unwrapLoose(oid: string, loose: Buffer): { type: string; object: Buffer } | null {
  let raw: Buffer
  try {
    raw = inflateSync(loose)
  } catch {
    return null
  }
  const nul = raw.indexOf(0)
  if (nul < 0) return null
  const match = /^(blob|tree|commit|tag) (\d+)$/.exec(raw.subarray(0, nul).toString('latin1'))
  if (!match || Number(match[2]) !== raw.length - nul - 1) return null
  if (createHash('sha1').update(raw).digest('hex') !== oid) return null
  return { type: match[1]!, object: raw.subarray(nul + 1) }
}

/**
 * Parses a tree object, checking every entry as Cairn would write it: a mode for a file or a
 * folder, and a name that is safe to put in the memory folder (never `.`, `..`, `.git`, a
 * temp-file name, a path separator or a control character). With `foreign`, links and
 * submodules are returned (as blobs with their mode) and names are left to the caller.
 *
 * Sample entry: `100644 notes.md\0<20 bytes of id>`
 */
export function parseTree(
  oid: string,
  buffer: Buffer,
  options: { readonly foreign?: boolean } = {},
): ReadonlyArray<RawTreeEntry> {
  const foreign = options.foreign === true
  const entries: RawTreeEntry[] = []
  const names = new Set<string>()
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let cursor = 0
  while (cursor < buffer.length) {
    const space = buffer.indexOf(0x20, cursor)
    const nul = buffer.indexOf(0, cursor)
    if (space < 0 || nul < 0 || space > nul || nul + 21 > buffer.length) {
      throw new DamagedHistoryError(oid, 'a folder listing that cannot be read')
    }
    const mode = buffer.subarray(cursor, space).toString('latin1')
    let name: string
    try {
      name = decoder.decode(buffer.subarray(space + 1, nul))
    } catch {
      throw new DamagedHistoryError(oid, 'a file name that is not UTF-8')
    }
    const problem = foreign ? null : entryNameProblem(name)
    if (problem) throw new DamagedHistoryError(oid, problem)
    if (names.has(name)) throw new DamagedHistoryError(oid, `the name "${name}" twice`)
    names.add(name)
    const entryOid = buffer.subarray(nul + 1, nul + 21).toString('hex')
    cursor = nul + 21
    if (mode === '40000' || mode === '040000') {
      entries.push({ name, kind: 'tree', oid: entryOid, mode: '40000' })
    } else if (mode === '100644' || mode === '100755') {
      entries.push({ name, kind: 'blob', oid: entryOid, mode })
    } else if (foreign && (mode === '120000' || mode === '160000')) {
      entries.push({ name, kind: 'blob', oid: entryOid, mode })
    } else {
      throw new DamagedHistoryError(oid, 'a link or submodule, which Cairn never writes')
    }
  }
  return entries
}

/**
 * Parses a commit object: its tree, every parent in order (two or more for a merge), the
 * author's name and time, and the message.
 *
 * Sample: `tree <id>\nparent <id>\nauthor Claude <claude@cairn.invalid> 1700000000 +0000\n…\n\nsubject`
 */
export function parseCommit(oid: string, buffer: Buffer): RawCommit {
  const text = buffer.toString('utf8')
  const split = text.indexOf('\n\n')
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n')
  const message = split < 0 ? '' : text.slice(split + 2)
  let tree: string | null = null
  const parents: string[] = []
  let author: RegExpExecArray | null = null
  for (const line of headers) {
    if (line.startsWith('tree ') && tree === null) tree = line.slice(5)
    else if (line.startsWith('parent ')) parents.push(line.slice(7))
    else if (line.startsWith('author ') && author === null) {
      author = /^author (.*) <[^>]*> (\d+) [+-]\d{4}$/.exec(line)
    }
  }
  const isId = (value: string | null) => value !== null && /^[0-9a-f]{40}$/.test(value)
  if (!isId(tree) || !parents.every(isId) || !author) {
    throw new DamagedHistoryError(oid, 'a version record that cannot be read')
  }
  return {
    oid,
    tree: tree!,
    parent: parents[0] ?? null,
    parents,
    authorName: author[1]!,
    timestamp: Number(author[2]),
    message,
  }
}

/** Serializes tree entries in git's canonical form (byte order, directories as `name/`). */
export function serializeTree(entries: ReadonlyArray<RawTreeEntry>): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)))
  const parts: Buffer[] = []
  for (const entry of sorted) {
    parts.push(Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.oid, 'hex'))
  }
  return Buffer.concat(parts)
}

function sortKey(entry: RawTreeEntry): Buffer {
  return Buffer.from(entry.kind === 'tree' ? `${entry.name}/` : entry.name)
}

export interface CommitFields {
  readonly tree: string
  readonly parent: string | null
  /** Further parents, for a merge commit (after `parent`). */
  readonly otherParents?: ReadonlyArray<string>
  readonly author: { readonly name: string; readonly email: string }
  readonly timestamp: number
  readonly message: string
}

/** Serializes a commit object (UTC offset; the committer is the author). */
export function serializeCommit(fields: CommitFields): Buffer {
  const person = `${fields.author.name} <${fields.author.email}> ${fields.timestamp} +0000`
  const lines = [`tree ${fields.tree}`]
  if (fields.parent) lines.push(`parent ${fields.parent}`)
  for (const other of fields.otherParents ?? []) lines.push(`parent ${other}`)
  lines.push(`author ${person}`, `committer ${person}`, '', fields.message)
  return Buffer.from(lines.join('\n'))
}

/** Creates an empty bare repository whose HEAD points at `main`. */
export async function initRepository(gitdir: string): Promise<void> {
  makeFolders(gitdir)
  await git.init({ fs: gitFs, gitdir, bare: true, defaultBranch: 'main' })
}

export const MAIN_REF = 'refs/heads/main'

/** A new value of `main`, written to a temp file, not yet in place. */
export interface PendingRef {
  /** fsyncs the temp file (may run while the objects it names are flushed). */
  flush(): Promise<void>
  /**
   * Renames it over `main`, then fsyncs the folder. Once the rename has happened the ref has
   * moved, so a failing folder fsync after it is not reported (the caller must not believe
   * the commit failed when it did not).
   */
  publish(): Promise<void>
  /** Drops it (the commit failed). */
  abandon(): void
}

/** Writes the next value of `main` to a temp file beside it (see `PendingRef`). */
export function prepareMainRef(gitdir: string, oid: string): PendingRef {
  const dir = path.join(gitdir, 'refs', 'heads')
  const file = path.join(dir, 'main')
  const temp = `${file}.${randomBytes(6).toString('hex')}.lock`
  let fd: number | null = null
  const abandon = () => {
    if (fd !== null) closeQuietly(fd)
    fd = null
    unlinkQuietly(temp)
  }
  try {
    try {
      fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o644)
    } catch (error) {
      if (!isCode(error, 'ENOENT')) throw error
      // refs/heads went missing: make it again.
      makeFolders(dir, 0o755)
      fd = disk.openSync(temp, OPEN.WRITE_NEW, 0o644)
    }
    disk.writeFileSync(fd, `${oid}\n`)
  } catch (error) {
    abandon()
    throw error
  }
  return {
    async flush() {
      if (fd !== null) await disk.fsync(fd)
    },
    async publish() {
      try {
        const closing = fd
        fd = null
        if (closing !== null) disk.closeSync(closing)
        disk.renameSync(temp, file)
      } catch (error) {
        abandon()
        throw error
      }
      await syncDir(dir).catch(() => {})
    },
    abandon,
  }
}

/** Points `main` at `oid` durably: temp file, fsync, rename, fsync the folder. */
export async function writeMainRef(gitdir: string, oid: string): Promise<void> {
  const ref = prepareMainRef(gitdir, oid)
  try {
    await ref.flush()
  } catch (error) {
    ref.abandon()
    throw error
  }
  await ref.publish()
}

/** fsyncs a folder of the git directory (its entries: a rename is durable once it is). */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  const fd = disk.openSync(dir, OPEN.READ | OPEN.DIRECTORY)
  try {
    await disk.fsync(fd)
  } finally {
    closeQuietly(fd)
  }
}

function closeQuietly(fd: number): void {
  try {
    disk.closeSync(fd)
  } catch {
    // Already closed.
  }
}

function unlinkQuietly(file: string): void {
  try {
    disk.unlinkSync(file)
  } catch {
    // Never created, or already gone.
  }
}
