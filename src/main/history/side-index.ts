import path from 'node:path'
import { randomBytes } from 'node:crypto'
import type { CommitSummary } from '../../shared/types'
import { disk, isCode } from '../lib/disk'
import { parseCommitMessage, reviewFactsOf } from './commit-message'
import { DamagedHistoryError } from './damage'
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

/**
 * Appends entries (one JSON line each). Not fsynced: the index can always be caught up or
 * rebuilt from the commits, which are.
 */
export function appendIndexEntries(file: string, entries: ReadonlyArray<IndexEntry>): void {
  disk.appendFileSync(file, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), {
    mode: 0o600,
  })
}

/** Replaces the whole index atomically; the temp file never survives a failure. */
export async function writeIndexFile(
  file: string,
  entries: ReadonlyArray<IndexEntry>,
): Promise<void> {
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`
  try {
    disk.writeFileSync(temp, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), {
      mode: 0o600,
    })
    disk.renameSync(temp, file)
  } catch (error) {
    try {
      disk.unlinkSync(temp)
    } catch {
      // Never created.
    }
    throw error
  }
}

/**
 * Reads the index, oldest first. A torn last line (a crash mid-append) is dropped; anything
 * else unreadable makes the whole file untrusted (null), and the caller rebuilds it. An I/O
 * error is thrown, never taken for an unreadable index.
 */
export async function readIndexFile(
  file: string,
): Promise<{ entries: IndexEntry[]; torn: boolean } | null> {
  let text: string
  try {
    text = disk.readFileSync(file).toString('utf8')
  } catch (error) {
    // Missing: the caller rebuilds it from the commits. An I/O error is not "missing".
    if (isCode(error, 'ENOENT') || isCode(error, 'EISDIR')) return null
    throw error
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
  // joined before itself). The first entry's parents are not checked: when older commits are
  // damaged, the index starts after them.
  const seen = new Set<string>()
  for (const [i, entry] of entries.entries()) {
    if (!isEntry(entry)) return null
    if (i > 0) for (const parent of parentsOf(entry)) if (!seen.has(parent)) return null
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

/**
 * Builds an index entry from a commit object (used when catching up or rebuilding). A commit
 * whose trees are damaged still gets its entry, with the files it changed left empty: reading
 * that version later says it is damaged.
 */
export async function entryFromCommit(store: ObjectStore, oid: string): Promise<IndexEntry> {
  const commit = await store.readCommit(oid)
  let files: string[] = []
  try {
    const before = commit.parent ? (await store.readCommit(commit.parent)).tree : null
    const deltas = await diffNodes(
      store,
      before ? treeFromOid(before) : null,
      treeFromOid(commit.tree),
    )
    files = deltas.map((delta) => toVirtual(delta.path))
  } catch (error) {
    if (!(error instanceof DamagedHistoryError)) throw error
  }
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
 * Makes the index match `head`: trusted as is when its last entry is `head`; cut back when
 * `head` is an earlier entry (the newer ones are not in this history); caught up from the
 * commits when it lags behind (a crash between commit and append, or between a sync moving
 * `main` forward and its append), keeping the entries of the history `head` grew from;
 * rebuilt from the commits' trailers when missing, unreadable or from another history. A
 * commit that cannot be read is where the rebuilt part starts. `read` is the index as read
 * (null when missing or unreadable).
 */
export async function reconcileIndex(
  store: ObjectStore,
  file: string,
  head: string | null,
  read: { entries: IndexEntry[]; torn: boolean } | null,
): Promise<IndexEntry[]> {
  const loaded = read?.entries ?? null
  if (read && loaded && (loaded.at(-1)?.oid ?? null) === head) {
    if (read.torn || !loaded.length) await writeIndexFile(file, loaded)
    return loaded
  }
  const position = new Map(loaded?.map((entry, i) => [entry.oid, i]))
  let entries: IndexEntry[]
  const at = head === null ? undefined : position.get(head)
  if (at !== undefined && loaded) {
    entries = loaded.slice(0, at + 1)
  } else if (head === null) {
    entries = []
  } else {
    const missing = await entriesSince(store, head, (oid) => position.has(oid), {
      tolerateDamage: true,
    })
    // The index, up to its newest entry the new commits grew from, is that entry's history
    // (it only ever grew along `main`): kept. Anything indexed after it is not in this history.
    let grewFrom = -1
    for (const entry of missing) {
      for (const parent of parentsOf(entry))
        grewFrom = Math.max(grewFrom, position.get(parent) ?? -1)
    }
    entries = grewFrom >= 0 && loaded ? [...loaded.slice(0, grewFrom + 1), ...missing] : missing
  }
  await writeIndexFile(file, entries)
  return entries
}

/**
 * Index entries for the commits reachable from `head` that `known` does not hold, oldest
 * first with every parent before its child (a merge's joined history before the merge). A
 * commit that cannot be read throws a `DamagedHistoryError`, unless `tolerateDamage`: then
 * it is left out, like a known one (what is older than it on that path is out of reach).
 */
export async function entriesSince(
  store: ObjectStore,
  head: string,
  known: (oid: string) => boolean,
  options: { readonly tolerateDamage?: boolean } = {},
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
    let entry: IndexEntry
    try {
      entry = await entryFromCommit(store, top.oid)
    } catch (error) {
      if (!options.tolerateDamage || !(error instanceof DamagedHistoryError)) throw error
      continue
    }
    built.set(top.oid, entry)
    stack.push({ oid: top.oid, expanded: true })
    // Pushed in reverse, so the first parent's history comes out first.
    for (const parent of parentsOf(entry).reverse()) {
      if (!known(parent) && !built.has(parent)) stack.push({ oid: parent, expanded: false })
    }
  }
  return ordered
}
