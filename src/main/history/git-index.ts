/**
 * git's own index (`history.git/index`), kept equal to `main` for a person who uses the git CLI
 * on the history with the memory folder as its work tree
 * (`git --git-dir=<data>/history.git --work-tree=<data>/memories status`). Cairn itself never
 * reads it; without it git took every memory file for deleted, and a person's
 * `git add notes.md && git commit` committed a tree holding only that file.
 *
 * Written off the commit path: a moment after the last change, while the commands' queue is idle,
 * at open when missing, damaged or not `main`'s, and at close. Taken with git's own lock
 * protocol: `index.lock` made exclusively, written, renamed over `index`; a lock already there
 * (git at work) is never waited on nor removed: the write is tried later. One a git that is
 * gone left (a minute old, no git running on the data folder: git-lock-left.ts) is removed.
 * An index that already lists exactly `main`'s files (git's own, after a person's commit, with
 * its refreshed stat data and extensions) is left as it is.
 *
 * Format (Documentation/gitformat-index.txt), version 2, all numbers big-endian:
 *   "DIRC" | version u32 | entry count u32
 *   per entry, sorted by path bytes: ctime s, ns | mtime s, ns | dev | ino | mode | uid | gid |
 *     size (u32 each) | 20-byte blob id | flags u16 (name length, 0xFFF when longer) | path |
 *     1 to 8 NULs, so the entry's length is a multiple of 8
 *   SHA-1 of everything before it
 */
import { createHash } from 'node:crypto'
import type { BigIntStats, Stats } from 'node:fs'
import path from 'node:path'
import {
  disk,
  isCode,
  readPlainFile,
  readPlainFileOrNull,
  unlinkQuietly,
  writeOwnFile,
} from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { hashObject } from './objects/object-database'
import type { ObjectStore } from './object-store'
import { forgetIndexLock, gitLockLeft, ownIndexLockLeft, takeIndexLock } from './git-lock-left'
import type { StatCache } from './stat-cache'
import { childrenOf, treeFromOid, type Node } from './tree-state'
import { timeSlices, type Breather } from '../lib/time-slices'

/** One file of an index: its path (UTF-8 bytes), blob id, mode and stage. */
export interface GitIndexEntry {
  readonly path: Buffer
  readonly oid: string
  readonly mode: number
  readonly stage: number
  /** Intent-to-add or skip-worktree set (version 3 and on): never an index of `main` alone. */
  readonly extended: boolean
}

/** What a file looked like when its content was found equal to its blob (git's stat data). */
export interface IndexStat {
  readonly ctimeNs: bigint
  readonly mtimeNs: bigint
  readonly dev: bigint
  readonly ino: bigint
  readonly uid: bigint
  readonly gid: bigint
  readonly size: bigint
}

const ENTRY_FIXED = 62
const NAME_MASK = 0xfff
const BILLION = 1_000_000_000n
const U32 = 0xffffffffn

/**
 * The files of `root` (HEAD's tree), as git's index lists them: sorted by path bytes. Listed in
 * slices (`breathe`), the loop given back between them: a tree held in memory answers at once,
 * so listing 20,000 files held the loop for 0.2 to 0.9 s.
 */
export async function filesOf(
  store: ObjectStore,
  root: Node,
  breathe: Breather = timeSlices(),
): Promise<Array<{ path: Buffer; oid: string; mode: number }>> {
  const files: Array<{ path: Buffer; oid: string; mode: number }> = []
  const walk = async (node: Node, prefix: string): Promise<void> => {
    if (node.kind === 'blob') {
      files.push({ path: Buffer.from(prefix, 'utf8'), oid: node.oid, mode: parseInt(node.mode, 8) })
      return
    }
    for (const [name, child] of await childrenOf(store, node)) {
      const pause = breathe()
      if (pause) await pause
      await walk(child, prefix ? `${prefix}/${name}` : name)
    }
  }
  await walk(root, '')
  return files.sort((a, b) => Buffer.compare(a.path, b.path))
}

type IndexFile = ReadonlyArray<{ path: Buffer; oid: string; mode: number; stat: IndexStat | null }>

/**
 * An index of `files` (sorted), each with its stat data when known, else zeros, made in slices
 * (`breathe`; `inOneGo` for none): the loop is given back between entries.
 */
export async function serializeGitIndexInSlices(
  files: IndexFile,
  breathe: Breather,
): Promise<Buffer> {
  const out = indexHeader(files)
  let at = 12
  for (const file of files) {
    const pause = breathe()
    if (pause) await pause
    at = writeEntry(out, at, file)
  }
  return withChecksum(out, at)
}

function indexHeader(files: IndexFile): Buffer {
  let length = 12 + 20
  for (const file of files) length += entryLength(file.path.byteLength)
  const out = Buffer.alloc(length)
  out.write('DIRC', 0, 'latin1')
  out.writeUInt32BE(2, 4)
  out.writeUInt32BE(files.length, 8)
  return out
}

function writeEntry(out: Buffer, at: number, file: IndexFile[number]): number {
  const { path: name, oid, mode, stat } = file
  if (stat) {
    const u32 = (value: bigint, offset: number): void => {
      out.writeUInt32BE(Number(value & U32), at + offset)
    }
    u32(stat.ctimeNs / BILLION, 0)
    u32(stat.ctimeNs % BILLION, 4)
    u32(stat.mtimeNs / BILLION, 8)
    u32(stat.mtimeNs % BILLION, 12)
    u32(stat.dev, 16)
    u32(stat.ino, 20)
    u32(stat.uid, 28)
    u32(stat.gid, 32)
    u32(stat.size, 36)
  }
  out.writeUInt32BE(mode, at + 24)
  out.write(oid, at + 40, 'hex')
  out.writeUInt16BE(Math.min(name.byteLength, NAME_MASK), at + 60)
  name.copy(out, at + ENTRY_FIXED)
  return at + entryLength(name.byteLength)
}

function withChecksum(out: Buffer, at: number): Buffer {
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at)
  return out
}

function entryLength(nameLength: number): number {
  return (ENTRY_FIXED + nameLength + 8) & ~7
}

/**
 * The entries of an index git or Cairn wrote (versions 2, 3 and 4), or null when it is not
 * one: too short, another signature or version, a checksum that does not match (git's
 * `index.skipHash` writes zeros there, taken as it does), an entry running past the end.
 * Extensions are not read.
 */
export function parseGitIndex(bytes: Buffer): GitIndexEntry[] | null {
  return parseWhole(bytes)?.entries ?? null
}

/**
 * The tree a parsed index lists whole, by git's cache-tree extension (`TREE`): the root's
 * entry, valid (git writes it when it makes a commit or reads a tree, and invalidates it with
 * every `git add` or `git rm`), names it; null when there is none or it is invalidated.
 * Sample: `TREE` | size u32 | "" NUL "5 1\n" | 20-byte tree id | "people" NUL "2 0\n" | id …
 */
function rootTreeOf(bytes: Buffer, at: number): string | null {
  const end = bytes.byteLength - 20
  while (at + 8 <= end) {
    const signature = bytes.toString('latin1', at, at + 4)
    const size = bytes.readUInt32BE(at + 4)
    const data = at + 8
    if (data + size > end) return null
    if (signature === 'TREE') {
      if (bytes[data] !== 0) return null
      const newline = bytes.indexOf(0x0a, data + 1)
      if (newline < 0 || newline + 21 > data + size) return null
      const count = Number(bytes.toString('latin1', data + 1, newline).split(' ')[0])
      return count >= 0 ? bytes.toString('hex', newline + 1, newline + 21) : null
    }
    at = data + size
  }
  return null
}

function parseWhole(bytes: Buffer): { entries: GitIndexEntry[]; rootTree: string | null } | null {
  if (bytes.byteLength < 32 || bytes.toString('latin1', 0, 4) !== 'DIRC') return null
  const version = bytes.readUInt32BE(4)
  if (version < 2 || version > 4) return null
  const end = bytes.byteLength - 20
  const trailer = bytes.subarray(end)
  if (!trailer.equals(Buffer.alloc(20))) {
    if (!createHash('sha1').update(bytes.subarray(0, end)).digest().equals(trailer)) return null
  }
  const count = bytes.readUInt32BE(8)
  const entries: GitIndexEntry[] = []
  let at = 12
  let previous: Buffer = Buffer.alloc(0)
  for (let i = 0; i < count; i++) {
    if (at + ENTRY_FIXED > end) return null
    const mode = bytes.readUInt32BE(at + 24)
    const oid = bytes.toString('hex', at + 40, at + 60)
    const flags = bytes.readUInt16BE(at + 60)
    let nameAt = at + ENTRY_FIXED
    // An extended entry (version 3 and on): intent-to-add or skip-worktree, two bytes more.
    const extended = (flags & 0x4000) !== 0
    if (extended) {
      if (version < 3) return null
      nameAt += 2
    }
    let name: Buffer
    if (version === 4) {
      // The name as the previous one less N bytes, then a NUL-terminated suffix; no padding.
      let c = bytes[nameAt++]
      if (c === undefined) return null
      let strip = c & 127
      while (c & 128) {
        c = bytes[nameAt++]
        if (c === undefined) return null
        strip = ((strip + 1) << 7) + (c & 127)
      }
      const nul = bytes.indexOf(0, nameAt)
      if (nul < 0 || nul >= end || strip > previous.byteLength) return null
      name = Buffer.concat([
        previous.subarray(0, previous.byteLength - strip),
        bytes.subarray(nameAt, nul),
      ])
      at = nul + 1
    } else {
      const nul = bytes.indexOf(0, nameAt)
      if (nul < 0 || nul >= end) return null
      name = bytes.subarray(nameAt, nul)
      at += (nameAt - at + name.byteLength + 8) & ~7
      if (at > end) return null
    }
    previous = name
    entries.push({ path: name, oid, mode, stage: (flags >> 12) & 3, extended })
  }
  return { entries, rootTree: rootTreeOf(bytes, at) }
}

/** Whether `entries` (a parsed index) list exactly `files`: same paths, ids and modes, stage 0. */
export function listsExactly(
  entries: ReadonlyArray<GitIndexEntry>,
  files: ReadonlyArray<{ path: Buffer; oid: string; mode: number }>,
): boolean {
  if (entries.length !== files.length) return false
  return entries.every((entry, i) => {
    const file = files[i]!
    return (
      entry.stage === 0 &&
      !entry.extended &&
      entry.oid === file.oid &&
      entry.mode === file.mode &&
      entry.path.equals(file.path)
    )
  })
}

/** What a sync of the index did: left a matching one, wrote one, or met a lock held. */
export type GitIndexOutcome = 'kept' | 'written' | 'locked'

/**
 * An index made ready off the queue: `main`'s files with their stat data (and the person's
 * staged changes `carryStaged` keeps), or none needed. `head`: the `main` it lists, noted as the
 * next sync's base (`INDEX_BASE`). `found`: the checksum of the index it was made from (null for
 * none that parsed), which must still be there when it is written. `bare`: for one kept, its
 * checksum when it lists `head`'s files alone; for one to write, whether it will.
 */
export type PreparedIndex =
  | {
      readonly kind: 'kept'
      readonly head: string
      readonly bare: string | null
      readonly noted: IndexBase | null
    }
  | {
      readonly kind: 'write'
      /** The note (`INDEX_BASE`) as it was read then: written again only when it changes. */
      readonly noted: IndexBase | null
      readonly files: ReadonlyArray<{
        path: Buffer
        oid: string
        mode: number
        stat: IndexStat | null
      }>
      /** Files read and hashed now, for the stat cache once the index is written. */
      readonly hashed: ReadonlyArray<{ relative: string; stats: Stats; oid: string }>
      readonly head: string
      readonly found: string | null
      readonly bare: boolean
    }

/**
 * A note beside the index, `history.git/cairn-index-base`: the `main` (a commit id) the index
 * was last made or found to list. A sync compares the index with that commit's files to tell
 * what the person staged with git (`git add`, `git rm --cached`) from what only lags `main`.
 * A second line, when there is one, is the checksum of the index as it then stood, noted only
 * when that index listed exactly that commit's files (nothing staged): an index still bearing
 * it is untouched since, so nothing is staged in it and the commit's files need not be read.
 * Sample: "3f2a…c1\n9b0e…47\n".
 */
export const INDEX_BASE = 'cairn-index-base'

/** What `INDEX_BASE` notes. */
export interface IndexBase {
  readonly head: string
  /** The index's checksum when it listed `head`'s files alone, else null. */
  readonly bare: string | null
}

function readIndexBase(gitdir: string): IndexBase | null {
  try {
    const text = readPlainFileOrNull(path.join(gitdir, INDEX_BASE), OWN_FILE_CAP.TINY)
    const [head = '', bare = '', ...rest] = (text?.toString('latin1') ?? '').trim().split('\n')
    if (!/^[0-9a-f]{40}$/.test(head) || rest.length > 0) return null
    return { head, bare: /^[0-9a-f]{40}$/.test(bare) ? bare : null }
  } catch {
    return null
  }
}

// git's `index.skipHash` writes zeros for the checksum: such an index tells no change by it.
const NO_SUM = '0'.repeat(40)

// `noted`: the note as the sync read it, which nothing but the sync writes.
function noteIndexBase(
  gitdir: string,
  noted: IndexBase | null,
  head: string,
  bare: string | null,
): void {
  const kept = bare === NO_SUM ? null : bare
  if (noted?.head === head && noted.bare === kept) return
  try {
    const text = kept === null ? `${head}\n` : `${head}\n${kept}\n`
    writeOwnFile(path.join(gitdir, INDEX_BASE), text)
  } catch {
    // Without it the next sync keeps no staged change (as before stop 31); nothing else.
  }
}

type Listed = { path: Buffer; oid: string; mode: number; stat: IndexStat | null }

/**
 * git's own rule when a command moves `HEAD` and updates the index (`git checkout`'s two-way
 * merge, `git read-tree -m <base> <main>`), for Cairn's moves of `main`: a path whose entry the
 * person changed in the index (staged an edit, added or unstaged a file) and that `main`'s move
 * left as it was (`base` and `main` agree) keeps the person's entry; every other path takes
 * `main`'s. git refuses a move that changed a path the person staged too; Cairn's move is made
 * already and holds the folder's content of that path, so `main`'s entry is taken (the staged
 * blob stays among the objects until a `git gc`). An index holding conflicts or
 * intent-to-add entries keeps nothing (`main`'s files alone, as before).
 */
export function carryStaged(
  index: ReadonlyArray<GitIndexEntry> | null,
  base: ReadonlyArray<{ path: Buffer; oid: string; mode: number }> | null,
  main: ReadonlyArray<Listed>,
): Listed[] {
  if (index === null || base === null || index.some((e) => e.stage !== 0 || e.extended)) {
    return [...main]
  }
  const key = (name: Buffer) => name.toString('latin1')
  const inBase = new Map(base.map((file) => [key(file.path), file]))
  const inMain = new Map(main.map((file) => [key(file.path), file]))
  const inIndex = new Map(index.map((entry) => [key(entry.path), entry]))
  const same = (
    a: { oid: string; mode: number } | undefined,
    b: { oid: string; mode: number } | undefined,
  ) => (a === undefined ? b === undefined : b !== undefined && a.oid === b.oid && a.mode === b.mode)
  const out: Listed[] = []
  for (const name of new Set([...inMain.keys(), ...inIndex.keys(), ...inBase.keys()])) {
    const was = inBase.get(name)
    const now = inMain.get(name)
    const staged = inIndex.get(name)
    if (same(was, now) && !same(staged, was)) {
      // Staged by the person on a path the move left alone: theirs stays.
      if (staged) out.push({ path: staged.path, oid: staged.oid, mode: staged.mode, stat: null })
    } else if (now) {
      out.push(now)
    }
  }
  return out.sort((a, b) => Buffer.compare(a.path, b.path))
}

/**
 * The first half of a sync, made OFF the commands' queue (it reads only: `root` is a tree
 * the history no longer changes in place once committed): `main`'s files, and unless the
 * index on disk already lists them, each file's stat data (see `statIfSame`). Gives the
 * event loop back every few milliseconds (`timeSlices`), so a window's requests are not held up by it. Each
 * file's stat data is written only when its content is known to be its blob's (the stat cache
 * trusts it, or it was read and hashed now, unchanged across the read); otherwise zeros, which
 * git takes as "look at the content".
 */
export async function prepareGitIndex(options: {
  readonly gitdir: string
  readonly workRoot: string
  readonly store: ObjectStore
  readonly root: Node
  readonly stats?: StatCache
  /** The commit `root` is the tree of: noted as the next sync's base. */
  readonly head: string
}): Promise<PreparedIndex> {
  const { head } = options
  const breathe = timeSlices()
  const files = await filesOf(options.store, options.root, breathe)
  const found = readIndex(path.join(options.gitdir, 'index'))
  const noted = readIndexBase(options.gitdir)
  if (found && listsExactly(found.entries, files)) {
    return { kind: 'kept', head, bare: found.sum, noted }
  }
  const hashed: Array<{ relative: string; stats: Stats; oid: string }> = []
  const withStats: Listed[] = []
  for (const file of files) {
    const pause = breathe()
    if (pause) await pause
    const relative = file.path.toString('utf8')
    const stat = statIfSame(options.workRoot, relative, file.oid, options.stats, hashed)
    withStats.push({ ...file, stat })
  }
  // An index git made whole from a tree (its commit, a `read-tree`) holds nothing staged; nor
  // does one untouched since it was noted listing the base's files alone (its checksum the
  // note's), which spares reading the base's whole tree after each of Cairn's own commits.
  const untouched = found !== null && noted?.bare != null && found.sum === noted.bare
  const staged = found && found.rootTree === null && !untouched ? found.entries : null
  const listed = carryStaged(
    staged,
    staged && noted && (await baseFiles(options.store, noted.head, head, breathe)),
    withStats,
  )
  // `carryStaged` hands `main`'s own entries back when it keeps nothing of the person's.
  const bare = listed.length === withStats.length && listed.every((f, i) => f === withStats[i])
  if (found && listsExactly(found.entries, listed)) {
    return { kind: 'kept', head, bare: bare ? found.sum : null, noted }
  }
  return { kind: 'write', files: listed, hashed, head, found: found?.sum ?? null, bare, noted }
}

// The files of the commit the index was last made to list (`INDEX_BASE`), or null when there is
// none to compare with (no note, `main` itself, a commit that cannot be read).
async function baseFiles(
  store: ObjectStore,
  base: string,
  head: string,
  breathe: Breather,
): Promise<Array<{ path: Buffer; oid: string; mode: number }> | null> {
  if (base === head) return null
  try {
    return await filesOf(store, treeFromOid((await store.readCommit(base)).tree), breathe)
  } catch {
    return null
  }
}

// The index at `file`, parsed, with its checksum; null when missing, unreadable or damaged.
function readIndex(
  file: string,
): { entries: GitIndexEntry[]; rootTree: string | null; sum: string } | null {
  let bytes: Buffer
  try {
    bytes = readPlainFile(file, OWN_FILE_CAP.RECORDS)
  } catch {
    return null
  }
  const parsed = parseWhole(bytes)
  return parsed === null ? null : { ...parsed, sum: bytes.toString('hex', bytes.byteLength - 20) }
}

/**
 * The second half, started while the queue is idle (`main` as it was prepared for): makes the
 * bytes in slices (20,000 files held the loop for a second), then takes git's lock, looks at
 * the index once more under it (git may have written one meanwhile: one that lists `main` is
 * kept, any other change waits for the next try) and writes and renames the prepared one with
 * async I/O. git does not wait on its lock: a person's git command fails while Cairn holds
 * it, so it is not held while the slices give the loop back. A command that moves `main`
 * meanwhile only leaves the index lagging until the next sync. Throws what the disk throws;
 * the lock it took is then removed.
 */
export async function writeGitIndex(
  gitdir: string,
  prepared: PreparedIndex,
  stats?: StatCache,
  /** Told when a lock a gone git left was removed (git-lock-left.ts), to log it. */
  removedLeftLock?: () => void,
  breathe: Breather = timeSlices(),
): Promise<GitIndexOutcome> {
  if (prepared.kind === 'kept') {
    noteIndexBase(gitdir, prepared.noted, prepared.head, prepared.bare)
    return 'kept'
  }
  // Recorded before the first await, as the queue left them: a command may write the same
  // files while the bytes are made and written.
  for (const { relative, stats: seen, oid } of prepared.hashed) stats?.record(relative, seen, oid)
  // Made before git's lock is taken: git does not wait on its lock (a person's `git add` while
  // Cairn holds it fails), so it is held only while the bytes are written, not while the loop
  // is given back between the slices that make them.
  const bytes = await serializeGitIndexInSlices(prepared.files, breathe)
  const indexFile = path.join(gitdir, 'index')
  const lockFile = `${indexFile}.lock`
  let fd = -1
  for (let tries = 0; fd < 0; tries++) {
    try {
      fd = takeIndexLock(gitdir, lockFile)
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
      // A running git's (or one that cannot be told from it) is never removed nor waited on.
      // Cairn's own, left by a kill, goes once its holder is gone for sure, where git's cannot
      // be told (Flatpak, a container: git-lock-left.ts).
      const left =
        tries === 0 &&
        (ownIndexLockLeft(gitdir, lockFile) || gitLockLeft(lockFile, path.dirname(gitdir)))
      if (!left) return 'locked'
      unlinkQuietly(lockFile)
      removedLeftLock?.()
    }
  }
  let renamed = false
  try {
    const now = readIndex(indexFile)
    if (now && listsExactly(now.entries, prepared.files)) {
      noteIndexBase(gitdir, prepared.noted, prepared.head, prepared.bare ? now.sum : null)
      return 'kept'
    }
    // git changed the index since it was read (a `git add` meanwhile): what the person staged
    // then would be written over. Made again from it at the next try.
    if ((now?.sum ?? null) !== prepared.found) return 'locked'
    for (let at = 0; at < bytes.byteLength;) {
      at += await disk.write(fd, bytes.subarray(at), at)
    }
    const closing = fd
    fd = -1
    await disk.promises.close(closing)
    await disk.promises.rename(lockFile, indexFile)
    renamed = true
    const sum = bytes.toString('hex', bytes.byteLength - 20)
    noteIndexBase(gitdir, prepared.noted, prepared.head, prepared.bare ? sum : null)
    return 'written'
  } finally {
    if (fd >= 0) disk.closeSync(fd)
    // Ours, and maybe gone already: nothing else to undo.
    if (!renamed) unlinkQuietly(lockFile)
    forgetIndexLock(gitdir)
  }
}

// Files larger than this are left for git to hash: their stat data is written as zeros.
const HASH_AT_MOST = 64 * 1024 * 1024

function statIfSame(
  workRoot: string,
  relative: string,
  oid: string,
  stats: StatCache | undefined,
  hashed: Array<{ relative: string; stats: Stats; oid: string }>,
): IndexStat | null {
  const file = path.join(workRoot, relative)
  let before: BigIntStats
  try {
    before = disk.lstatExactSync(file)
  } catch {
    return null
  }
  if (!before.isFile()) return null
  const asNumbers = numberStats(before)
  if (stats?.lookup(relative, asNumbers) === oid) return indexStat(before)
  if (before.size > HASH_AT_MOST) return null
  let content: Buffer
  let after: BigIntStats
  try {
    content = readPlainFile(file, HASH_AT_MOST)
    after = disk.lstatExactSync(file)
  } catch {
    return null
  }
  if (!sameStat(before, after) || hashObject('blob', content) !== oid) return null
  hashed.push({ relative, stats: asNumbers, oid })
  return indexStat(before)
}

function sameStat(a: BigIntStats, b: BigIntStats): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino
}

function indexStat(stat: BigIntStats): IndexStat {
  return {
    ctimeNs: stat.ctimeNs,
    mtimeNs: stat.mtimeNs,
    dev: stat.dev,
    ino: stat.ino,
    uid: stat.uid,
    gid: stat.gid,
    size: stat.size,
  }
}

// The numbers the stat cache keeps, worked out as Node's own `lstat` works them out from the
// seconds and nanoseconds, so one `lstat` serves both.
function numberStats(stat: BigIntStats): Stats {
  const ms = (ns: bigint): number => Number(ns / BILLION) * 1e3 + Number(ns % BILLION) / 1e6
  return {
    size: Number(stat.size),
    mtimeMs: ms(stat.mtimeNs),
    ctimeMs: ms(stat.ctimeNs),
    ino: Number(stat.ino),
  } as Stats
}

/** Keeps git's index following `main`, a moment after the changes (see the top of this file). */
export interface GitIndexKeeper {
  /** `main` moved (or Cairn opened): the index is synced once the queue has been idle a while. */
  changed(): void
  /** Syncs now (the queue idle) if `main` moved since the last sync; stops the timers. */
  close(): Promise<void>
}

/** How long the queue stays idle before the index is synced (and between tries when locked). */
export const GIT_INDEX_IDLE_MS = 500
const LOCKED_RETRY_MAX_MS = 60_000

export function createGitIndexKeeper(options: {
  readonly queue: {
    busy(): boolean
    lastActive(): number
  }
  readonly head: () => string | null
  /**
   * `prepareGitIndex` on `head` (read by the keeper just before) and HEAD's tree as it is at
   * the call (taken at once, before any await), run off the queue.
   */
  readonly prepare: (head: string) => Promise<PreparedIndex>
  /** `writeGitIndex` of what `prepare` made; with the queue idle, `main` unchanged since. */
  readonly write: (prepared: PreparedIndex) => Promise<GitIndexOutcome>
  readonly warn: (message: string, error: unknown) => void
  readonly idleMs?: number
}): GitIndexKeeper {
  const idleMs = options.idleMs ?? GIT_INDEX_IDLE_MS
  // The head the index on disk was last found or made equal to; undefined: not looked at yet.
  let synced: string | null | undefined
  let timer: NodeJS.Timeout | null = null
  let retryMs = idleMs
  let closed = false
  let running: Promise<unknown> = Promise.resolve()

  const schedule = (ms: number): void => {
    if (closed) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(fire, Math.max(0, ms))
    timer.unref()
  }

  // Called with the queue idle, so `main` and its tree are not mid-commit: they are read
  // together, the files' stat data gathered off the queue, and the index written only if
  // `main` did not move meanwhile. The write starts while the queue is idle; a change that runs
  // while its bytes are made and written leaves it lagging, and that change's `changed()` syncs
  // again after it. It is not queued, which would stop maintenance's removal of loose files (it
  // yields to every queued task). A busy queue puts it off.
  async function attempt(): Promise<GitIndexOutcome | 'same' | 'moved'> {
    const head = options.head()
    if (head === null || head === synced) return 'same'
    const prepared = await options.prepare(head)
    if (options.queue.busy() || options.head() !== head) return 'moved'
    if (head === synced) return 'same'
    const outcome = await options.write(prepared)
    if (outcome !== 'locked') synced = head
    return outcome
  }

  let inFlight = false
  function fire(): void {
    timer = null
    if (closed) return
    // One sync at a time: a second would meet the first's lock and take it for git's.
    if (inFlight) {
      schedule(idleMs)
      return
    }
    const quietFor = performance.now() - options.queue.lastActive()
    if (options.queue.busy() || quietFor < idleMs) {
      schedule(options.queue.busy() ? idleMs : idleMs - quietFor)
      return
    }
    inFlight = true
    const done = attempt()
      .finally(() => (inFlight = false))
      .then(
        (outcome) => {
          if (outcome === 'locked') {
            // git holds its lock (or left it a moment ago): tried again, less and less often.
            schedule(retryMs)
            retryMs = Math.min(retryMs * 2, LOCKED_RETRY_MAX_MS)
          } else {
            retryMs = idleMs
            // Moved while the stat data was gathered: the change that moved it scheduled the next.
            if (outcome === 'moved') schedule(idleMs)
          }
        },
        (error: unknown) => options.warn('Could not update the git index of the history', error),
      )
    running = done
  }

  return {
    changed() {
      retryMs = idleMs
      schedule(idleMs)
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = null
      await running
      // The close waited for the queue: nothing moves `main` now.
      await attempt().catch((error: unknown) =>
        options.warn('Could not update the git index of the history', error),
      )
    },
  }
}
