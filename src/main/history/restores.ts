import type { ChangeResult, CommitSummary } from '../../shared/types'
import { CairnError } from '../errors'
import { FolderTree } from '../lib/folders'
import { DamagedHistoryError, readingVersion } from './damage'
import { segmentsOf, toRelative, toVirtual } from './paths'
import { toSummary, touches } from './queries'
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

/**
 * Commits what a restore wrote. Returns the new entry, null when nothing changed, or
 * `'pending'` when the files were written but their commit has to wait (a full disk): it is
 * made, with this intent, before the next change.
 */
export type Committer = (
  paths: ReadonlyArray<string>,
  intent: CommitIntent,
) => Promise<IndexEntry | null | 'pending'>

/** Commits at once, failing the restore when the commit fails. */
export function commitNow(repo: Repo): Committer {
  return (paths, intent) => repo.commit(paths, intent)
}

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
export async function restoreFile(
  repo: Repo,
  path: string,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  requireEntry(repo, oid)
  const relative = requireFilePath(path)
  // Normalized, so the commit's paths match the index (no trailing slash).
  const virtual = toVirtual(relative)
  const segments = segmentsOf(relative)
  const { then, content } = await readingVersion(
    oid,
    async () => {
      const node = await nodeAt(repo.store, await treeOf(repo, oid), segments)
      if (node?.kind !== 'blob') return { then: null, content: null }
      return { then: node, content: await repo.store.readBlob(node.oid) }
    },
    true,
  )
  if (!then || !content) {
    throw new CairnError('not-found', `${virtual} was not a file in version ${short(oid)}.`)
  }
  const now = await nodeAt(repo.store, repo.root(), segments)
  if (now?.kind === 'blob' && now.oid === then.oid) {
    return { commit: null, message: `${virtual} already matches version ${short(oid)}.` }
  }
  await inWorkTree(repo, (tree) => writeFileSafely(tree, relative, content))
  return done(
    await commit([relative], {
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
export async function restoreDeleted(
  repo: Repo,
  path: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
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
    const from = entry.parent
    const deltas = await readingVersion(
      from,
      async () => {
        const before = await nodeAt(repo.store, await treeOf(repo, from), segments)
        if (!before) return null
        const files = await listFiles(repo.store, before, relative)
        return [...files].map(([file, blob]) => ({ path: file, before: null, after: blob }))
      },
      true,
    )
    if (!deltas) continue
    await readingVersion(from, () => apply(repo, deltas), true)
    return done(
      await commit([relative], {
        ...userIntent,
        command: 'restore-deleted',
        subject: `restore deleted ${virtual} from ${short(from)}`,
        paths: [virtual],
        restoredFrom: from,
      }),
      `Restored ${virtual} from version ${short(from)}.`,
    )
  }
  throw new CairnError('not-found', `No earlier version of ${virtual} is in the history.`)
}

/**
 * Undoes one commit with a new commit. Refuses, changing nothing, when a file it touched
 * has changed since.
 */
export async function revert(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  const entry = requireEntry(repo, oid)
  const deltas = await readingVersion(
    oid,
    async () => diffNodes(repo.store, await treeOf(repo, entry.parent), await treeOf(repo, oid)),
    true,
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
  await readingVersion(oid, () => apply(repo, inverse), true)
  return done(
    await commit(
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
export async function restoreAll(
  repo: Repo,
  oid: string,
  commit: Committer = commitNow(repo),
): Promise<ChangeResult> {
  requireEntry(repo, oid)
  const deltas = await readingVersion(
    oid,
    async () => diffNodes(repo.store, repo.root(), await treeOf(repo, oid)),
    true,
  )
  if (deltas.length === 0) {
    return { commit: null, message: `The memory folder already matches version ${short(oid)}.` }
  }
  await readingVersion(oid, () => apply(repo, deltas), true)
  const intent: CommitIntent = {
    ...userIntent,
    command: 'restore-all',
    subject: `restore all memories to ${short(oid)}`,
    restoredFrom: oid,
  }
  return done(
    await commit(
      deltas.map((delta) => delta.path),
      intent,
    ),
    `Restored the memory folder to version ${short(oid)}.`,
  )
}

/**
 * Applies file-level deltas to the folder: all or nothing. Every blob is read before the
 * folder is touched (a damaged one refuses the restore, changing nothing); a write that fails
 * half-way puts back what was already changed. Deletions go first, so that a file and a
 * folder of the same name can trade places.
 */
async function apply(repo: Repo, deltas: ReadonlyArray<FileDelta>): Promise<void> {
  const contents = new Map<string, Uint8Array>()
  for (const delta of deltas) {
    if (delta.after !== null && !contents.has(delta.after)) {
      contents.set(delta.after, await repo.store.readBlob(delta.after))
    }
  }
  // What is there now, to put back on failure (a damaged copy only means it cannot be).
  for (const delta of deltas) {
    if (delta.before === null || contents.has(delta.before)) continue
    try {
      contents.set(delta.before, await repo.store.readBlob(delta.before))
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
    }
  }
  const ordered = [
    ...deltas.filter((delta) => delta.after === null),
    ...deltas.filter((delta) => delta.after !== null),
  ]
  await inWorkTree(repo, async (tree) => {
    const done: FileDelta[] = []
    try {
      for (const delta of ordered) {
        done.push(delta)
        if (delta.after === null) deleteFileAndPrune(tree, delta.path)
        else await writeFileSafely(tree, delta.path, contents.get(delta.after)!)
      }
    } catch (error) {
      await putBack(tree, done, contents)
      throw error
    }
  })
}

// Best effort: what cannot be put back is saved by the next change's full rescan.
async function putBack(
  tree: FolderTree,
  done: ReadonlyArray<FileDelta>,
  contents: ReadonlyMap<string, Uint8Array>,
): Promise<void> {
  for (const delta of [...done].reverse()) {
    try {
      const before = delta.before === null ? null : contents.get(delta.before)
      if (before === undefined) continue
      if (before === null) deleteFileAndPrune(tree, delta.path)
      else await writeFileSafely(tree, delta.path, before)
    } catch {
      // Keep putting back the others.
    }
  }
}

// One restore's writes share the open folders of the memory folder.
async function inWorkTree<T>(repo: Repo, task: (tree: FolderTree) => Promise<T>): Promise<T> {
  const tree = new FolderTree(repo.workRoot)
  try {
    return await task(tree)
  } finally {
    tree.close()
  }
}

function done(entry: IndexEntry | null | 'pending', message: string): ChangeResult {
  if (entry === 'pending') {
    return { commit: null, message: `${message} It will appear in History with the next change.` }
  }
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
