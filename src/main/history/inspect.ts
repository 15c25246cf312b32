import type { CommitDetail, FileChange } from '../../shared/types'
import { CairnError } from '../errors'
import { decodeUtf8 } from './browser'
import { segmentsOf, toRelative, toVirtual } from './paths'
import { toSummary } from './queries'
import type { Repo } from './repo'
import { requireEntry, treeOf } from './restores'
import { diffNodes, nodeAt } from './tree-state'

/** The content of a file at a commit (null when it did not exist there or was a folder). */
export async function readAt(repo: Repo, virtual: string, oid: string): Promise<string | null> {
  requireEntry(repo, oid)
  const node = await nodeAt(repo.store, await treeOf(repo, oid), segmentsOf(toRelative(virtual)))
  if (node?.kind !== 'blob') return null
  return new TextDecoder().decode(await repo.store.readBlob(node.oid))
}

/** What one commit changed, file by file, with both sides (renamed files paired up). */
export async function showCommit(repo: Repo, oid: string): Promise<CommitDetail> {
  const entry = requireEntry(repo, oid)
  const deltas = await diffNodes(
    repo.store,
    await treeOf(repo, entry.parent),
    await treeOf(repo, oid),
  )
  const added = new Map<string, string>()
  for (const delta of deltas) if (!delta.before && delta.after) added.set(delta.path, delta.after)
  // A rename commit's deleted source files map onto the added files under the new name.
  const renamedTo = new Map<string, string>()
  const [from, to] = entry.command === 'rename' ? entry.paths : []
  if (from && to) {
    const source = toRelative(from)
    const target = toRelative(to)
    for (const delta of deltas) {
      if (delta.after || !(delta.path === source || delta.path.startsWith(`${source}/`))) continue
      const moved = target + delta.path.slice(source.length)
      if (added.has(moved)) renamedTo.set(delta.path, moved)
    }
  }
  const pairedTargets = new Set(renamedTo.values())
  const changes: FileChange[] = []
  for (const delta of deltas) {
    if (pairedTargets.has(delta.path)) continue
    const moved = renamedTo.get(delta.path)
    if (moved) {
      const after = added.get(moved) ?? null
      changes.push(
        await change(repo, toVirtual(moved), toVirtual(delta.path), delta.before, after, 'renamed'),
      )
      continue
    }
    const status = !delta.before ? 'added' : !delta.after ? 'deleted' : 'modified'
    changes.push(await change(repo, toVirtual(delta.path), null, delta.before, delta.after, status))
  }
  return { commit: toSummary(entry), changes }
}

/** One file compared between two commits of this history. */
export async function diffFile(
  repo: Repo,
  virtual: string,
  from: string,
  to: string,
): Promise<FileChange> {
  requireEntry(repo, from)
  requireEntry(repo, to)
  const segments = segmentsOf(toRelative(virtual))
  const before = await nodeAt(repo.store, await treeOf(repo, from), segments)
  const after = await nodeAt(repo.store, await treeOf(repo, to), segments)
  const beforeOid = before?.kind === 'blob' ? before.oid : null
  const afterOid = after?.kind === 'blob' ? after.oid : null
  if (!beforeOid && !afterOid) {
    throw new CairnError('not-found', `${virtual} is not a file in either version.`)
  }
  const status = !beforeOid ? 'added' : !afterOid ? 'deleted' : 'modified'
  return change(repo, virtual, null, beforeOid, afterOid, status)
}

async function change(
  repo: Repo,
  path: string,
  oldPath: string | null,
  beforeOid: string | null,
  afterOid: string | null,
  status: FileChange['status'],
): Promise<FileChange> {
  const before = beforeOid ? decodeUtf8(await repo.store.readBlob(beforeOid)) : null
  const after = afterOid ? decodeUtf8(await repo.store.readBlob(afterOid)) : null
  const binary = (beforeOid !== null && before === null) || (afterOid !== null && after === null)
  return { path, oldPath, status, before, after, binary }
}
