import { appendFileSync } from 'node:fs'
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { CommitSummary } from '../../shared/types'
import { parseCommitMessage, reviewFactsOf } from './commit-message'
import type { ObjectStore } from './object-store'
import { toVirtual } from './paths'
import { diffNodes, treeFromOid } from './tree-state'

/** One commit in the side index: its summary plus every file (virtual path) it changed. */
export interface IndexEntry extends CommitSummary {
  readonly files: ReadonlyArray<string>
}

/** Where the side index lives: inside the git directory, never inside the memory folder. */
export function indexFileOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-index.jsonl')
}

/** Appends one entry (one JSON line). */
export async function appendIndexEntry(file: string, entry: IndexEntry): Promise<void> {
  appendFileSync(file, `${JSON.stringify(entry)}\n`, { mode: 0o600 })
}

/** Replaces the whole index atomically. */
export async function writeIndexFile(
  file: string,
  entries: ReadonlyArray<IndexEntry>,
): Promise<void> {
  const temp = `${file}.tmp`
  await writeFile(temp, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), {
    mode: 0o600,
  })
  await rename(temp, file)
}

/**
 * Reads the index, oldest first. A torn last line (a crash mid-append) is dropped; anything
 * else unreadable makes the whole file untrusted (null), and the caller rebuilds it.
 */
export async function readIndexFile(
  file: string,
): Promise<{ entries: IndexEntry[]; torn: boolean } | null> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch {
    // Missing or unreadable: the caller rebuilds it from the commits.
    return null
  }
  const lines = text.split('\n')
  const last = lines.pop() ?? ''
  let entries: IndexEntry[]
  try {
    // One parse of the whole file is several times faster than one per line.
    entries = JSON.parse(`[${lines.filter(Boolean).join(',')}]`) as IndexEntry[]
  } catch {
    return null
  }
  // Oldest first: every parent of an entry comes before it (a merge brings in the commits it
  // joined before itself), and the first entry is a root commit.
  const seen = new Set<string>()
  for (const entry of entries) {
    if (!isEntry(entry)) return null
    for (const parent of parentsOf(entry)) if (!seen.has(parent)) return null
    seen.add(entry.oid)
  }
  // Text after the last newline is an append a crash cut short.
  return { entries, torn: last !== '' }
}

/** Every parent of an entry, first parent first (none for a root commit). */
export function parentsOf(entry: Pick<IndexEntry, 'parent' | 'otherParents'>): string[] {
  return entry.parent ? [entry.parent, ...(entry.otherParents ?? [])] : []
}

function isEntry(value: unknown): value is IndexEntry {
  const entry = value as IndexEntry
  return (
    typeof entry === 'object' &&
    entry !== null &&
    typeof entry.oid === 'string' &&
    Array.isArray(entry.files) &&
    Array.isArray(entry.paths)
  )
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
  const otherParents = commit.parents.slice(1)
  return {
    oid,
    parent: commit.parent,
    ...(otherParents.length > 0 ? { otherParents } : {}),
    time: commit.timestamp * 1000,
    actor: meta.actor,
    command: meta.command,
    subject: meta.subject,
    paths: meta.paths.length > 0 ? meta.paths : files,
    conversationId: meta.conversationId,
    toolUseId: meta.toolUseId,
    overwrite: meta.overwrite,
    restoredFrom: meta.restoredFrom,
    ...(meta.machine ? { machine: meta.machine } : {}),
    ...reviewFactsOf(meta),
    files,
  }
}

/**
 * Makes the index match `head`: trusted as is when its last entry is `head`; caught up
 * from the commits when it lags behind (a crash between commit and append, or between a
 * sync moving `main` forward and its append); rebuilt from the commits' trailers when
 * missing, unreadable or from another history.
 */
export async function reconcileIndex(
  store: ObjectStore,
  file: string,
  head: string | null,
): Promise<IndexEntry[]> {
  const read = await readIndexFile(file)
  const loaded = read?.entries ?? null
  if (read && loaded && (loaded.at(-1)?.oid ?? null) === head) {
    if (read.torn || !loaded.length) await writeIndexFile(file, loaded)
    return loaded
  }
  const last = loaded?.at(-1)?.oid ?? null
  let entries: IndexEntry[] = []
  if (head && loaded && last) {
    const known = new Set(loaded.map((entry) => entry.oid))
    const missing = await entriesSince(store, head, (oid) => known.has(oid))
    // Only a history that grew from the indexed one keeps its entries.
    if (missing.some((entry) => parentsOf(entry).includes(last))) entries = [...loaded, ...missing]
  }
  if (head && entries.length === 0) entries = await entriesSince(store, head, () => false)
  await writeIndexFile(file, entries)
  return entries
}

/**
 * Index entries for the commits reachable from `head` that `known` does not hold, oldest
 * first with every parent before its child (a merge's joined history before the merge).
 */
export async function entriesSince(
  store: ObjectStore,
  head: string,
  known: (oid: string) => boolean,
): Promise<IndexEntry[]> {
  const built = new Map<string, IndexEntry>()
  const ordered: IndexEntry[] = []
  // Depth-first without recursion: histories can be far deeper than the call stack.
  const stack: Array<{ oid: string; expanded: boolean }> = [{ oid: head, expanded: false }]
  while (stack.length > 0) {
    const top = stack.pop() as { oid: string; expanded: boolean }
    if (known(top.oid) || (built.has(top.oid) && !top.expanded)) continue
    if (top.expanded) {
      ordered.push(built.get(top.oid) as IndexEntry)
      continue
    }
    const entry = await entryFromCommit(store, top.oid)
    built.set(top.oid, entry)
    stack.push({ oid: top.oid, expanded: true })
    // Pushed in reverse, so the first parent's history comes out first.
    for (const parent of parentsOf(entry).reverse()) {
      if (!known(parent) && !built.has(parent)) stack.push({ oid: parent, expanded: false })
    }
  }
  return ordered
}
