import fs from 'node:fs'
import path from 'node:path'
import { parseCommitMessage, reviewFactsOf } from './commit-message'
import {
  IndexDamagedError,
  IndexFile,
  type IndexEntry,
  indexDirOf,
  removeIndexLeftovers,
  replaceIndexDir,
  writeIndex,
} from './index-file'
import type { ObjectStore } from './object-store'
import { toVirtual } from './paths'
import { diffNodes, treeFromOid } from './tree-state'

export { indexDirOf, writeIndex } from './index-file'

export type { IndexEntry } from './index-file'

/** Builds an index entry from a commit object (used when catching up or rebuilding). */
export async function entryFromCommit(store: ObjectStore, oid: string): Promise<IndexEntry> {
  const commit = await store.readCommit(oid)
  const before = commit.parent ? (await store.readCommit(commit.parent)).tree : null
  const deltas = await diffNodes(
    store,
    before ? treeFromOid(before) : null,
    treeFromOid(commit.tree),
  )
  const files = deltas.map((delta) => toVirtual(delta.path))
  const meta = parseCommitMessage(commit.authorName, commit.message)
  return {
    oid,
    parent: commit.parent,
    time: commit.timestamp * 1000,
    actor: meta.actor,
    command: meta.command,
    subject: meta.subject,
    paths: meta.paths.length > 0 ? meta.paths : files,
    conversationId: meta.conversationId,
    toolUseId: meta.toolUseId,
    overwrite: meta.overwrite,
    restoredFrom: meta.restoredFrom,
    ...reviewFactsOf(meta),
    files,
  }
}

/** How `openIndex` found the index. */
export type IndexState = 'trusted' | 'caught-up' | 'migrated' | 'rebuilt'

/**
 * Opens the side index of `gitdir` and makes it match `head`:
 * - trusted as it is when its structure holds and its newest entry is `head`, equal to the
 *   entry rebuilt from that commit (entries spread over the history are compared in the
 *   background later: `spotCheck`);
 * - caught up from the commits when it lags behind (a crash between commit and append);
 * - migrated from the JSON-lines index of earlier versions;
 * - rebuilt from the commits when missing, damaged or from another history.
 */
export async function openIndex(
  store: ObjectStore,
  gitdir: string,
  head: string | null,
): Promise<{ index: IndexFile; state: IndexState }> {
  const dir = indexDirOf(gitdir)
  removeIndexLeftovers(dir)
  let index: IndexFile | null = null
  let state: IndexState = 'trusted'
  try {
    index = IndexFile.open(dir)
  } catch (error) {
    if (!(error instanceof IndexDamagedError)) throw error
  }
  if (!index) {
    const legacy = await readLegacyIndex(legacyIndexOf(gitdir))
    if (legacy) {
      writeIndex(dir, legacy)
      index = IndexFile.open(dir)
      state = 'migrated'
    }
  }
  if (index) {
    const lagged = index.head() !== head
    if ((await catchUp(store, index, head)) && (await spotCheck(store, index, [index.size - 1]))) {
      if (lagged && state === 'trusted') state = 'caught-up'
      fs.rmSync(legacyIndexOf(gitdir), { force: true })
      return { index, state }
    }
    index.close()
  }
  const building = await buildIndex(store, dir, head)
  building.close()
  replaceIndexDir(building.dir, dir)
  fs.rmSync(legacyIndexOf(gitdir), { force: true })
  return { index: IndexFile.open(dir), state: 'rebuilt' }
}

/**
 * Brings `index` up to `head` when it lags behind (appending entries rebuilt from the
 * commits). False when it cannot be made to fit: another history, or `head` moved back.
 */
export async function catchUp(
  store: ObjectStore,
  index: IndexFile,
  head: string | null,
): Promise<boolean> {
  if (head === null) return index.size === 0
  if (index.head() === head) return true
  const missing: IndexEntry[] = []
  let cursor: string | null = head
  try {
    while (cursor !== null && index.positionOf(cursor) < 0) {
      const entry = await entryFromCommit(store, cursor)
      missing.push(entry)
      cursor = entry.parent
    }
  } catch {
    return false
  }
  // Only a plain lag can be caught up: the commits must continue the index's newest entry.
  if (cursor !== index.head()) return false
  index.beginBatch()
  try {
    for (const entry of missing.reverse()) index.append(entry)
  } finally {
    index.endBatch()
  }
  return true
}

/** True when the entries at `positions` equal the entries rebuilt from their commits. */
export async function spotCheck(
  store: ObjectStore,
  index: IndexFile,
  positions: Iterable<number>,
): Promise<boolean> {
  try {
    for (const i of positions) {
      if (i < 0 || i >= index.size) continue
      if (!sameEntry(index.at(i), await entryFromCommit(store, index.oidAt(i)))) return false
    }
    return true
  } catch {
    return false
  }
}

/**
 * The background check of an index opened as trusted: every entry's structure and checksum,
 * then entries spread over the history against their commits. False when anything is off.
 */
export async function checkIndex(
  store: ObjectStore,
  index: IndexFile,
  pause: () => Promise<void> = async () => undefined,
): Promise<boolean> {
  const size = index.size
  for (let from = 0; from < size; from += 2048) {
    const to = Math.min(size, from + 2048)
    try {
      index.checkStructure(from, to)
    } catch {
      return false
    }
    if (index.firstDamaged(from, to) >= 0) return false
    await pause()
  }
  for (const i of spreadPositions(size, 16)) {
    if (!(await spotCheck(store, index, [i]))) return false
    await pause()
  }
  return true
}

/** `count` positions spread evenly over an index of `size` entries (newest included). */
export function spreadPositions(size: number, count: number): number[] {
  const positions = new Set<number>([size - 1])
  for (let k = 0; k < count && size > 1; k++) {
    positions.add(Math.floor(((k + 0.5) * (size - 1)) / count))
  }
  return [...positions]
}

/**
 * Builds a fresh index of the history ending at `head` from its commits, beside `dir` (in
 * `<dir>.tmp-…`); the caller moves it into place (`replaceIndexDir`). `pause` is awaited
 * between commits (background rebuilds).
 */
export async function buildIndex(
  store: ObjectStore,
  dir: string,
  head: string | null,
  pause: () => Promise<void> = async () => undefined,
): Promise<IndexFile> {
  // Newest first to find them, oldest first to write them.
  const oids: string[] = []
  for (let cursor = head; cursor !== null; cursor = (await store.readCommit(cursor)).parent) {
    oids.push(cursor)
    await pause()
  }
  const temp = `${dir}.tmp-${process.pid}-${Date.now()}`
  fs.rmSync(temp, { recursive: true, force: true })
  const building = IndexFile.create(temp)
  try {
    building.beginBatch()
    for (let i = oids.length - 1; i >= 0; i--) {
      building.append(await entryFromCommit(store, oids[i] as string))
      if (i % 4096 === 0) {
        building.endBatch()
        building.beginBatch()
      }
      await pause()
    }
    building.endBatch()
    building.sync()
  } catch (error) {
    building.close()
    fs.rmSync(temp, { recursive: true, force: true })
    throw error
  }
  return building
}

/** Rebuilds the index of the history ending at `head` from its commits, into `dir`. */
export async function rebuildIndex(
  store: ObjectStore,
  dir: string,
  head: string | null,
): Promise<IndexFile> {
  const building = await buildIndex(store, dir, head)
  building.close()
  replaceIndexDir(building.dir, dir)
  return IndexFile.open(dir)
}

function sameEntry(a: IndexEntry, b: IndexEntry): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** The JSON-lines index Cairn kept before the binary one. */
function legacyIndexOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-index.jsonl')
}

/**
 * Reads a JSON-lines index of earlier versions, oldest first, or null when it is missing or
 * unreadable (a torn last line is dropped).
 */
async function readLegacyIndex(file: string): Promise<IndexEntry[] | null> {
  let text: string
  try {
    text = await fs.promises.readFile(file, 'utf8')
  } catch {
    return null
  }
  const lines = text.split('\n')
  lines.pop()
  let entries: IndexEntry[]
  try {
    entries = JSON.parse(`[${lines.filter(Boolean).join(',')}]`) as IndexEntry[]
  } catch {
    return null
  }
  let parent: string | null = null
  for (const entry of entries) {
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof entry.oid !== 'string' ||
      !Array.isArray(entry.files) ||
      !Array.isArray(entry.paths) ||
      entry.parent !== parent
    ) {
      return null
    }
    parent = entry.oid
  }
  return entries
}
