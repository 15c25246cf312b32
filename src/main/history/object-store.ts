import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { hashObject, ObjectDatabase } from './objects/object-database'

/** One entry of a git tree as Cairn stores it: regular files and directories only. */
export interface RawTreeEntry {
  readonly name: string
  readonly kind: 'blob' | 'tree'
  readonly oid: string
  /** `100644` / `100755` for files, `40000` for directories. */
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
 * Reads and writes the objects of one bare repository.
 *
 * Reads go through the object database (loose files and packs, read by index lookup and
 * positioned reads, never whole). Writes produce git's loose object format directly: hash,
 * deflate, temp file, rename — so a crash never leaves a half-written object under its final
 * name, and no tree is rebuilt that did not change. Background maintenance later moves loose
 * objects into packs.
 */
export interface ObjectStore {
  readonly gitdir: string
  readonly db: ObjectDatabase
  hash(type: ObjectType, content: Uint8Array): string
  write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string>
  readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
  /** A tree's entries with its bytes, and where each id sits when it is in canonical form. */
  readTreeEncoded(oid: string): Promise<EncodedTree>
  readBlob(oid: string): Promise<Uint8Array>
  readCommit(oid: string): Promise<RawCommit>
  /** An object's stored content (what its id hashes, without the header), checked for `type`. */
  readRaw(oid: string, type: ObjectType): Promise<Uint8Array>
  /** Loose objects written through this store since it opened (maintenance's trigger). */
  looseWritten(): number
  /** Releases the open pack files. */
  close(): void
}

/**
 * Most parsed commits kept in memory; past it the cache starts over (a commit costs a few
 * hundred bytes, so this bounds it to a few MB while a timeline page stays warm).
 */
export const COMMIT_CACHE_SIZE = 10_000

/** Opens the object store of `gitdir` (which must exist). */
export function createObjectStore(gitdir: string): ObjectStore {
  const db = new ObjectDatabase(gitdir)
  const knownDirs = new Set<string>()
  const commits = new Map<string, RawCommit>()
  let written = 0

  function hash(type: ObjectType, content: Uint8Array): string {
    return hashObject(type, content)
  }

  // Synchronous on purpose: a handful of small writes per commit, and going through the
  // thread pool for each costs more than the writes themselves.
  async function write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string> {
    const oid = knownOid ?? hash(type, content)
    const dir = path.join(gitdir, 'objects', oid.slice(0, 2))
    const file = path.join(dir, oid.slice(2))
    // No stat for a loose copy: a commit's trees and commit are always new, and writing an
    // object again only renames the same bytes over it (mending a damaged copy as it goes).
    if (db.inPack(oid)) return oid
    if (!knownDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true })
      knownDirs.add(dir)
    }
    const header = Buffer.from(`${type} ${content.byteLength}\0`)
    // Loose objects are short-lived (maintenance packs them, compressing properly), so large
    // ones are stored rather than compressed: a 40 KB tree costs 60 µs instead of 500.
    const level = content.byteLength > 8192 ? 0 : 1
    const data = deflateSync(Buffer.concat([header, content]), { level })
    const temp = path.join(dir, `tmp_obj_${tempSuffix()}`)
    try {
      fs.writeFileSync(temp, data, { flag: 'wx', mode: 0o444 })
    } catch (error) {
      // Maintenance removes object folders it emptied; make this one again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(temp, data, { flag: 'wx', mode: 0o444 })
    }
    try {
      fs.renameSync(temp, file)
    } catch (error) {
      fs.rmSync(temp, { force: true })
      throw error
    }
    written++
    return oid
  }

  function readTyped(oid: string, type: ObjectType): Buffer {
    const object = db.read(oid)
    if (object.type !== type) throw new Error(`object ${oid} is a ${object.type}, not a ${type}`)
    return object.content
  }

  async function readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    return parseTree(readTyped(oid, 'tree'))
  }

  async function readTreeEncoded(oid: string): Promise<EncodedTree> {
    return parseTreeEncoded(readTyped(oid, 'tree'))
  }

  async function readBlob(oid: string): Promise<Uint8Array> {
    return readTyped(oid, 'blob')
  }

  async function readRaw(oid: string, type: ObjectType): Promise<Uint8Array> {
    return readTyped(oid, type)
  }

  async function readCommit(oid: string): Promise<RawCommit> {
    const known = commits.get(oid)
    if (known) return known
    const raw = parseCommit(oid, readTyped(oid, 'commit'))
    if (commits.size > COMMIT_CACHE_SIZE) commits.clear()
    commits.set(oid, raw)
    return raw
  }

  return {
    gitdir,
    db,
    hash,
    write,
    readTree,
    readTreeEncoded,
    readBlob,
    readCommit,
    readRaw,
    looseWritten: () => written,
    close: () => db.close(),
  }
}

/** A parsed tree, its bytes, and where each entry's id starts — null unless canonical. */
export interface EncodedTree {
  readonly entries: RawTreeEntry[]
  readonly bytes: Buffer
  readonly idAt: ReadonlyMap<string, number> | null
}

/**
 * Parses a tree object: entries of `<octal mode> <name>\0<20-byte id>`. Directories and files
 * are kept (symlinks count as files, as git's own tree walk has them); submodules are skipped.
 */
export function parseTree(content: Buffer): RawTreeEntry[] {
  return parseTreeEncoded(content).entries
}

const CANONICAL_MODES: ReadonlySet<string> = new Set(['100644', '100755', '120000', '40000'])

/** `parseTree`, also locating each id when the tree is written as Cairn would write it. */
export function parseTreeEncoded(content: Buffer): EncodedTree {
  const entries: RawTreeEntry[] = []
  let idAt: Map<string, number> | null = new Map()
  let at = 0
  while (at < content.length) {
    const space = content.indexOf(0x20, at)
    const nul = content.indexOf(0, space + 1)
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object')
    const rawMode = content.toString('latin1', at, space)
    const name = content.toString('utf8', space + 1, nul)
    const oid = content.toString('hex', nul + 1, nul + 21)
    if (!CANONICAL_MODES.has(rawMode)) idAt = null
    idAt?.set(name, nul + 1)
    at = nul + 21
    if (rawMode === '40000' || rawMode === '040000') {
      entries.push({ name, kind: 'tree', oid, mode: '40000' })
    } else if (rawMode !== '160000') {
      const mode = rawMode === '100755' || rawMode === '120000' ? rawMode : '100644'
      entries.push({ name, kind: 'blob', oid, mode })
    }
  }
  return { entries, bytes: content, idAt }
}

/**
 * Parses a commit object:
 *
 *   tree <id>\nparent <id>\nparent <id>\nauthor <name> <<email>> <seconds> <zone>\ncommitter …\n\n<message>
 *
 * Every parent is kept in order (a merge commit made by sync has two); headers git may add
 * (gpgsig, encoding, continuation lines) are skipped.
 */
export function parseCommit(oid: string, content: Buffer): RawCommit {
  const text = content.toString('utf8')
  const split = text.indexOf('\n\n')
  const head = split < 0 ? text : text.slice(0, split)
  const message = split < 0 ? '' : text.slice(split + 2)
  let tree: string | null = null
  const parents: string[] = []
  let authorName = ''
  let timestamp = 0
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5)
    else if (line.startsWith('parent ')) parents.push(line.slice(7))
    else if (line.startsWith('author ')) {
      const match = /^author (.*?) <[^>]*> (-?\d+) [+-]\d{4}$/.exec(line)
      if (match) {
        authorName = match[1] as string
        timestamp = Number(match[2])
      }
    }
  }
  if (
    !tree ||
    !/^[0-9a-f]{40}$/.test(tree) ||
    parents.some((parent) => !/^[0-9a-f]{40}$/.test(parent))
  ) {
    throw new Error(`malformed commit object ${oid}`)
  }
  return { oid, tree, parent: parents[0] ?? null, parents, authorName, timestamp, message }
}

/** Serializes tree entries in git's canonical form (byte order, directories as `name/`). */
export function serializeTree(entries: ReadonlyArray<RawTreeEntry>): Buffer {
  const keyed = entries.map((entry) => ({
    entry,
    key: entry.kind === 'tree' ? `${entry.name}/` : entry.name,
    head: `${entry.mode} ${entry.name}\0`,
  }))
  keyed.sort((a, b) => compareTreeKeys(a.key, b.key))
  let total = 0
  for (const item of keyed) total += Buffer.byteLength(item.head) + 20
  const out = Buffer.allocUnsafe(total)
  let at = 0
  for (const item of keyed) {
    at += out.write(item.head, at, 'utf8')
    out.write(item.entry.oid, at, 20, 'hex')
    at += 20
  }
  return out
}

/**
 * Orders tree sort keys as git does: by their UTF-8 bytes. UTF-16 order agrees except from a
 * surrogate or U+E000 upwards, where the rest is compared as bytes.
 */
export function compareTreeKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 0xd800 && y < 0xd800) return x - y
    // Start at the whole character (a pair's high half may be the common unit before).
    const from = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i
    return Buffer.compare(Buffer.from(a.slice(from)), Buffer.from(b.slice(from)))
  }
  return a.length - b.length
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

/** Creates an empty bare repository whose HEAD points at `main` (an existing one is kept). */
export async function initRepository(gitdir: string): Promise<void> {
  await mkdir(gitdir, { recursive: true, mode: 0o700 })
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) {
    await mkdir(path.join(gitdir, dir), { recursive: true })
  }
  const config = '[core]\n\trepositoryformatversion = 0\n\tfilemode = false\n\tbare = true\n'
  await writeIfMissing(path.join(gitdir, 'config'), config)
  await writeIfMissing(path.join(gitdir, 'HEAD'), `ref: ${MAIN_REF}\n`)
}

async function writeIfMissing(file: string, content: string): Promise<void> {
  try {
    await writeFile(file, content, { flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
}

export const MAIN_REF = 'refs/heads/main'

const tempPrefix = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`
let tempCounter = 0

/** A name part no other temp file of this process or another one has. */
function tempSuffix(): string {
  return `${tempPrefix}${(tempCounter++).toString(36)}`
}

/** The commit `main` points at, or null for an empty history. Throws when the ref is unreadable. */
export async function readMainRef(gitdir: string): Promise<string | null> {
  const head = (await readFile(path.join(gitdir, 'HEAD'), 'utf8')).trim()
  if (head !== `ref: ${MAIN_REF}`) throw new Error('HEAD does not point at main')
  try {
    const value = (await readFile(path.join(gitdir, MAIN_REF), 'utf8')).trim()
    if (!/^[0-9a-f]{40}$/.test(value)) throw new Error('main is not a commit id')
    return value
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  // `git gc` / `git pack-refs` move refs into packed-refs: `<id> <ref>` lines, `^<id>` peels.
  let packed: string
  try {
    packed = await readFile(path.join(gitdir, 'packed-refs'), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  for (const line of packed.split('\n')) {
    const match = /^([0-9a-f]{40}) (.+)$/.exec(line.trim())
    if (match && match[2] === MAIN_REF) return match[1] as string
  }
  return null
}

/**
 * Every commit a ref of the repository names: `main` first, then the others (the remote's
 * `main` as sync last saw it, backups of switched-away histories under `refs/cairn/backups/`,
 * anything `git` made), from loose ref files and `packed-refs`. Maintenance walks from all of
 * them so their histories are packed with deltas; nothing unreachable is dropped either way.
 */
export function readRefTips(gitdir: string): string[] {
  const tips = new Map<string, string>()
  const walk = (dir: string, name: string): void => {
    let dirents: fs.Dirent[]
    try {
      dirents = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      // No such folder (no refs of that kind yet).
      return
    }
    for (const dirent of dirents) {
      const ref = `${name}/${dirent.name}`
      const file = path.join(dir, dirent.name)
      if (dirent.isDirectory()) walk(file, ref)
      else if (dirent.isFile()) {
        try {
          const value = fs.readFileSync(file, 'utf8').trim()
          if (/^[0-9a-f]{40}$/.test(value)) tips.set(ref, value)
        } catch {
          // Removed meanwhile, or a temp file of a ref being written.
        }
      }
    }
  }
  try {
    for (const line of fs.readFileSync(path.join(gitdir, 'packed-refs'), 'utf8').split('\n')) {
      const match = /^([0-9a-f]{40}) (refs\/.+)$/.exec(line.trim())
      if (match) tips.set(match[2] as string, match[1] as string)
    }
  } catch {
    // No packed refs: the usual case.
  }
  // Loose ref files win over packed ones, as in git.
  walk(path.join(gitdir, 'refs'), 'refs')
  const main = tips.get(MAIN_REF)
  tips.delete(MAIN_REF)
  return [...new Set([...(main ? [main] : []), ...tips.values()])]
}

const refDirs = new Set<string>()

/** Points `main` at `oid` atomically (temp file + rename). */
export async function writeMainRef(gitdir: string, oid: string): Promise<void> {
  const file = path.join(gitdir, MAIN_REF)
  const temp = `${file}.${tempSuffix()}.lock`
  if (!refDirs.has(gitdir)) {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    refDirs.add(gitdir)
  }
  try {
    fs.writeFileSync(temp, `${oid}\n`)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(temp, `${oid}\n`)
  }
  try {
    fs.renameSync(temp, file)
  } catch (error) {
    fs.rmSync(temp, { force: true })
    throw error
  }
}
