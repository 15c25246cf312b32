import type { ChangeResult, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { toSummary, touches } from './queries'
import { segmentsOf, toRelative, toVirtual } from './paths'
import type { CommitIntent, Repo } from './repo'
import type { IndexEntry } from './side-index'
import {
  diffNodes,
  emptyTree,
  listFiles,
  nodeAt,
  treeFromOid,
  type FileDelta,
  type TreeNode,
} from './tree-state'
import { deleteFileAndPrune, writeFileSafely } from './work-tree'

const userIntent = {
  actor: 'user',
  conversationId: null,
  toolUseId: null,
  overwrite: false,
} as const

/** The commit `oid` of this history, or a `not-found` error. */
export function requireEntry(repo: Repo, oid: string): IndexEntry {
  const entry = repo.entry(oid)
  if (!entry) throw new CairnError('not-found', `Version ${oid.slice(0, 7)} is not in the history.`)
  return entry
}

/** The tree of a commit of this history (empty for "before the first commit"). */
export async function treeOf(repo: Repo, oid: string | null): Promise<TreeNode> {
  if (!oid) return emptyTree()
  return treeFromOid((await repo.store.readCommit(oid)).tree)
}

/** Puts one file back to its content at `oid` (the undo for an overwrite or a bad edit). */
export async function restoreFile(repo: Repo, path: string, oid: string): Promise<ChangeResult> {
  requireEntry(repo, oid)
  const relative = requireFilePath(path)
  // Normalized, so the commit's paths match the index (no trailing slash).
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  const then = await nodeAt(repo.store, await treeOf(repo, oid), segments)
  if (then?.kind !== 'blob') {
    throw new CairnError('not-found', `${virtual} was not a file in version ${short(oid)}.`)
  }
  const now = await nodeAt(repo.store, repo.root(), segments)
  if (now?.kind === 'blob' && now.oid === then.oid) {
    return { commit: null, message: `${virtual} already matches version ${short(oid)}.` }
  }
  await writeFileSafely(repo.workRoot, relative, await repo.store.readBlob(then.oid))
  return done(
    await repo.commit([relative], {
      ...userIntent,
      command: 'restore-file',
      subject: `restore ${virtual} from ${short(oid)}`,
      paths: [virtual],
      restoredFrom: oid,
    }),
    `Restored ${virtual} from version ${short(oid)}.`,
  )
}

/** Brings back a deleted file or folder from the last version that had it. */
export async function restoreDeleted(repo: Repo, path: string): Promise<ChangeResult> {
  const relative = requireFilePath(path)
  // The index stores normalized paths: `/memories/d/` must find the commits of `/memories/d`.
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  if (await nodeAt(repo.store, repo.root(), segments)) {
    throw new CairnError('exists', `${virtual} exists; restore one of its versions instead.`)
  }
  const entries = repo.entries()
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as IndexEntry
    if (!entry.parent || !touches(entry, virtual)) continue
    const before = await nodeAt(repo.store, await treeOf(repo, entry.parent), segments)
    if (!before) continue
    const files = await listFiles(repo.store, before, relative)
    for (const [file, blob] of files) {
      await writeFileSafely(repo.workRoot, file, await repo.store.readBlob(blob))
    }
    return done(
      await repo.commit([relative], {
        ...userIntent,
        command: 'restore-deleted',
        subject: `restore deleted ${virtual} from ${short(entry.parent)}`,
        paths: [virtual],
        restoredFrom: entry.parent,
      }),
      `Restored ${virtual} from version ${short(entry.parent)}.`,
    )
  }
  throw new CairnError('not-found', `No earlier version of ${virtual} is in the history.`)
}

/**
 * Undoes one commit with a new commit. Refuses, changing nothing, when a file it touched
 * has changed since.
 */
export async function revert(repo: Repo, oid: string): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await diffNodes(
    repo.store,
    await treeOf(repo, entry.parent),
    await treeOf(repo, oid),
  )
  const conflicts: string[] = []
  for (const delta of deltas) {
    const current = await nodeAt(repo.store, repo.root(), segmentsOf(delta.path))
    const currentOid = current?.kind === 'blob' ? current.oid : current ? 'folder' : null
    if (currentOid !== delta.after) conflicts.push(toVirtual(delta.path))
  }
  if (conflicts.length > 0) {
    const listed = conflicts.slice(0, 5).join(', ') + (conflicts.length > 5 ? ', …' : '')
    throw new CairnError(
      'conflict',
      `Cannot revert ${short(oid)}: ${listed} changed since. Nothing was changed; restore a version of the file instead.`,
    )
  }
  const inverse = deltas.map((delta) => ({ ...delta, before: delta.after, after: delta.before }))
  if (inverse.length === 0) return { commit: null, message: `${short(oid)} changed nothing.` }
  await apply(repo, inverse)
  return done(
    await repo.commit(
      inverse.map((delta) => delta.path),
      {
        ...userIntent,
        command: 'revert',
        subject: `revert ${short(oid)}: ${entry.subject}`,
        paths: inverse.map((delta) => toVirtual(delta.path)),
        restoredFrom: oid,
      },
    ),
    `Reverted ${short(oid)}.`,
  )
}

/** Makes the whole memory folder what it was at `oid`, in one commit. */
export async function restoreAll(repo: Repo, oid: string): Promise<ChangeResult> {
  requireEntry(repo, oid)
  const deltas = await diffNodes(repo.store, repo.root(), await treeOf(repo, oid))
  if (deltas.length === 0) {
    return { commit: null, message: `The memory folder already matches version ${short(oid)}.` }
  }
  await apply(repo, deltas)
  const intent: CommitIntent = {
    ...userIntent,
    command: 'restore-all',
    subject: `restore all memories to ${short(oid)}`,
    restoredFrom: oid,
  }
  return done(
    await repo.commit(
      deltas.map((delta) => delta.path),
      intent,
    ),
    `Restored the memory folder to version ${short(oid)}.`,
  )
}

// Deletions first, so that a file and a folder of the same name can trade places.
async function apply(repo: Repo, deltas: ReadonlyArray<FileDelta>): Promise<void> {
  for (const delta of deltas) {
    if (delta.after === null) await deleteFileAndPrune(repo.workRoot, delta.path)
  }
  for (const delta of deltas) {
    if (delta.after !== null) {
      await writeFileSafely(repo.workRoot, delta.path, await repo.store.readBlob(delta.after))
    }
  }
}

function done(entry: IndexEntry | null, message: string): ChangeResult {
  const commit: CommitSummary | null = entry ? toSummary(entry) : null
  return { commit, message: commit ? message : 'Nothing changed.' }
}

function requireFilePath(virtual: string): string {
  const relative = toRelative(virtual)
  if (relative === '')
    throw new CairnError('invalid-path', 'Choose a file or folder inside /memories.')
  return relative
}

function short(oid: string): string {
  return oid.slice(0, 7)
}
