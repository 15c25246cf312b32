import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import git from 'isomorphic-git'

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
 * Reads go through isomorphic-git (loose objects and packs alike, with a shared cache).
 * Writes produce git's loose object format directly: hash, deflate, temp file, rename —
 * so a crash never leaves a half-written object under its final name, and no tree is
 * rebuilt that did not change.
 */
export interface ObjectStore {
  readonly gitdir: string
  hash(type: ObjectType, content: Uint8Array): string
  write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string>
  readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>>
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

/** Opens the object store of `gitdir` (which must exist). */
export function createObjectStore(gitdir: string): ObjectStore {
  const cache = {}
  const knownDirs = new Set<string>()
  const commits = new Map<string, RawCommit>()

  function hash(type: ObjectType, content: Uint8Array): string {
    return createHash('sha1')
      .update(`${type} ${content.byteLength}\0`)
      .update(content)
      .digest('hex')
  }

  // Synchronous on purpose: a handful of small writes per commit, and going through the
  // thread pool for each costs more than the writes themselves.
  async function write(type: ObjectType, content: Uint8Array, knownOid?: string): Promise<string> {
    const oid = knownOid ?? hash(type, content)
    const dir = path.join(gitdir, 'objects', oid.slice(0, 2))
    const file = path.join(dir, oid.slice(2))
    if (fs.existsSync(file)) return oid
    if (!knownDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true })
      knownDirs.add(dir)
    }
    const header = Buffer.from(`${type} ${content.byteLength}\0`)
    const data = deflateSync(Buffer.concat([header, content]), { level: 1 })
    const temp = path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`)
    fs.writeFileSync(temp, data, { flag: 'wx', mode: 0o444 })
    try {
      fs.renameSync(temp, file)
    } catch (error) {
      fs.rmSync(temp, { force: true })
      throw error
    }
    return oid
  }

  async function readTree(oid: string): Promise<ReadonlyArray<RawTreeEntry>> {
    const result = await git.readTree({ fs, gitdir, oid, cache })
    const entries: RawTreeEntry[] = []
    for (const entry of result.tree) {
      if (entry.type !== 'blob' && entry.type !== 'tree') continue
      entries.push({ name: entry.path, kind: entry.type, oid: entry.oid, mode: entry.mode })
    }
    return entries
  }

  async function readBlob(oid: string): Promise<Uint8Array> {
    const result = await git.readBlob({ fs, gitdir, oid, cache })
    return result.blob
  }

  async function readCommit(oid: string): Promise<RawCommit> {
    const known = commits.get(oid)
    if (known) return known
    const { commit } = await git.readCommit({ fs, gitdir, oid, cache })
    const raw: RawCommit = {
      oid,
      tree: commit.tree,
      parent: commit.parent[0] ?? null,
      parents: commit.parent,
      authorName: commit.author.name,
      timestamp: commit.author.timestamp,
      message: commit.message,
    }
    if (commits.size > COMMIT_CACHE_SIZE) commits.clear()
    commits.set(oid, raw)
    return raw
  }

  async function readRaw(oid: string, type: ObjectType): Promise<Uint8Array> {
    const result = await git.readObject({ fs, gitdir, oid, cache, format: 'content' })
    if (result.type !== type) throw new Error(`object ${oid} is a ${result.type}, not a ${type}`)
    return result.object as Uint8Array
  }

  return { gitdir, hash, write, readTree, readBlob, readCommit, readRaw }
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
  await mkdir(gitdir, { recursive: true, mode: 0o700 })
  await git.init({ fs, gitdir, bare: true, defaultBranch: 'main' })
}

export const MAIN_REF = 'refs/heads/main'

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
  try {
    return await git.resolveRef({ fs, gitdir, ref: MAIN_REF })
  } catch (error) {
    if ((error as { code?: string }).code === 'NotFoundError') return null
    throw error
  }
}

/** Points `main` at `oid` atomically (temp file + rename). */
export async function writeMainRef(gitdir: string, oid: string): Promise<void> {
  const file = path.join(gitdir, MAIN_REF)
  const temp = `${file}.${randomBytes(6).toString('hex')}.lock`
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(temp, `${oid}\n`)
  try {
    fs.renameSync(temp, file)
  } catch (error) {
    fs.rmSync(temp, { force: true })
    throw error
  }
}
