/**
 * The read side of the history: what inspecting a commit needs, and nothing that writes.
 * `Repo` (repo.ts) adds `commit` on top of this view; the inspectors and queries take only
 * the view, so reading the history can never change it.
 */
import { CairnError } from '../lib/errors'
import type { IndexFile } from './index-file'
import type { ObjectStore } from './object-store'
import type { IndexEntry } from './side-index'
import { emptyTree, treeFromOid, type TreeNode } from './tree-state'

/** The history of one memory folder as readers see it. */
export interface RepoView {
  readonly store: ObjectStore
  readonly workRoot: string
  /** The commit `main` points at (null for an empty history). */
  head(): string | null
  /** The tree of `head`, kept in memory. */
  root(): TreeNode
  /** The side index: one entry per commit, oldest first (replaced when rebuilt). */
  readonly index: IndexFile
  entry(oid: string): IndexEntry | undefined
}

/** The commit `oid` of this history, or a `not-found` error. */
export function requireEntry(repo: RepoView, oid: string): IndexEntry {
  const entry = repo.entry(oid)
  if (!entry) throw new CairnError('not-found', `Version ${shortOid(oid)} is not in the history.`)
  return entry
}

/** The tree of a commit of this history (empty for "before the first commit"). */
export async function treeOf(repo: RepoView, oid: string | null): Promise<TreeNode> {
  if (!oid) return emptyTree()
  return treeFromOid((await repo.store.readCommit(oid)).tree)
}

/** The first 7 characters of a commit id, as git shows them. */
export function shortOid(oid: string): string {
  return oid.slice(0, 7)
}
