import fs from 'node:fs'
import path from 'node:path'
import type { CommitSummary } from '../../shared/types'
import { parseCommitMessage } from './commit-message'
import {
  IndexDamagedError,
  IndexFile,
  indexDirOf,
  removeIndexLeftovers,
  replaceIndexDir,
  writeIndex,
} from './index-file'
import type { ObjectStore } from './object-store'
import { toVirtual } from './paths'
import { diffNodes, treeFromOid } from './tree-state'

export { indexDirOf, writeIndex } from './index-file'

/** One commit in the side index: its summary plus every file (virtual path) it changed. */
export interface IndexEntry extends CommitSummary {
  readonly files: ReadonlyArray<string>
}

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
    files,
  }
}

/** How `openIndex` found the index. */
export type IndexState = 'trusted' | 'caught-up' | 'migrated' | 'rebuilt'

/** Entries checked against their commits at every open, besides the newest. */
const SPOT_CHECKS = 4

/**
 * Opens the side index of `gitdir` and makes it match `head`:
 * - trusted as it is when its newest entry is `head` and it passes the checks against the
 *   commits (the newest entry and a few spread over the history are rebuilt and compared);
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
  if (index && (await fitsHead(store, index, head))) {
    if (index.head() !== head) state = state === 'migrated' ? state : 'caught-up'
    fs.rmSync(legacyIndexOf(gitdir), { force: true })
    return { index, state }
  }
  index?.close()
  index = await rebuildIndex(store, dir, head)
  fs.rmSync(legacyIndexOf(gitdir), { force: true })
  return { index, state: 'rebuilt' }
}

/**
 * Brings `index` up to `head` when it lags behind, and checks it against the commits. False
 * when it cannot be made to fit (another history, `head` moved back, damage).
 */
async function fitsHead(
  store: ObjectStore,
  index: IndexFile,
  head: string | null,
): Promise<boolean> {
  if (head === null) return index.size === 0
  if (index.head() !== head) {
    const missing: IndexEntry[] = []
    let cursor: string | null = head
    while (cursor !== null && index.positionOf(cursor) < 0) {
      const entry = await entryFromCommit(store, cursor)
      missing.push(entry)
      cursor = entry.parent
    }
    // Only a plain lag can be caught up: the commits must continue the index's newest entry.
    if (cursor !== index.head()) return false
    index.beginBatch()
    try {
      for (const entry of missing.reverse()) index.append(entry)
    } finally {
      index.endBatch()
    }
  }
  try {
    const last = index.size - 1
    const positions = new Set([last])
    for (let k = 0; k < SPOT_CHECKS && index.size > 1; k++) {
      positions.add(Math.floor(((k + 0.5) * (index.size - 1)) / SPOT_CHECKS))
    }
    for (const i of positions) {
      if (!sameEntry(index.at(i), await entryFromCommit(store, index.oidAt(i)))) return false
    }
  } catch {
    return false
  }
  return true
}

/** Rebuilds the index of the history ending at `head` from its commits, into `dir`. */
export async function rebuildIndex(
  store: ObjectStore,
  dir: string,
  head: string | null,
): Promise<IndexFile> {
  // Newest first to find them, oldest first to write them.
  const oids: string[] = []
  for (let cursor = head; cursor !== null; cursor = (await store.readCommit(cursor)).parent) {
    oids.push(cursor)
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
    }
    building.endBatch()
    building.sync()
  } finally {
    building.close()
  }
  replaceIndexDir(temp, dir)
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
