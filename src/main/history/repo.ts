import type { CommitCommand } from '../../shared/types'
import { AUTHORS, formatCommitMessage, reviewFactsOf, type CommitMeta } from './commit-message'
import { serializeCommit, writeMainRef, type ObjectStore } from './object-store'
import { segmentsOf, toVirtual } from './paths'
import type { CommitFacts } from './types'
import type { RepoView } from './read'
import { appendIndexEntry, type IndexEntry } from './side-index'
import {
  diffNodes,
  emptyTree,
  flushTree,
  nodeAt,
  setAt,
  treeFromOid,
  type FileDelta,
  type TreeNode,
} from './tree-state'
import { scanNode, scanPath } from './work-tree'

/** The id of git's empty tree. */
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** Facts of a commit to make; `paths` defaults to the files it changed. */
export type CommitIntent = CommitFacts

/** The intent of a commit Cairn makes on its own (no conversation, no overwrite, no restore). */
export function systemIntent(command: CommitCommand, subject: string): CommitIntent {
  return {
    actor: 'system',
    command,
    subject,
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
  }
}

/**
 * The history of one memory folder: the commit `main` points at, its tree kept in memory,
 * and the side index (the read side, `RepoView`), plus `commit`. Only the serial queue
 * calls `commit`.
 */
export interface Repo extends RepoView {
  readonly gitdir: string
  readonly indexFile: string
  /**
   * Reads `paths` (relative; `'all'` for the whole folder) from disk into the tree and, when
   * the tree changed, commits it. Returns the new entry, or null when nothing changed.
   */
  commit(paths: ReadonlyArray<string> | 'all', intent: CommitIntent): Promise<IndexEntry | null>
  /**
   * Takes `head` as the new `main` after the ref and the folder were moved to it (see
   * `checkout.ts`): `added` are its commits the index lacked, oldest first; `replace` drops
   * every entry first (the history was switched, not grown).
   */
  adopt(head: string, tree: string, added: ReadonlyArray<IndexEntry>, replace?: boolean): void
}

export interface RepoState {
  readonly head: string | null
  readonly root: TreeNode
  readonly entries: IndexEntry[]
}

export function createRepo(options: {
  store: ObjectStore
  workRoot: string
  indexFile: string
  state: RepoState
  now: () => number
  /** The machine named in every commit's `Machine:` trailer (null: none). */
  machine?: () => string | null
}): Repo {
  const { store, workRoot, indexFile, now } = options
  const machine = options.machine ?? (() => null)
  let head = options.state.head
  let root = options.state.root
  const entries = options.state.entries
  const byOid = new Map(entries.map((entry) => [entry.oid, entry]))
  let treeOid = head ? (root.oid ?? EMPTY_TREE_OID) : EMPTY_TREE_OID
  if (!head) root = emptyTree()

  async function commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
  ): Promise<IndexEntry | null> {
    let next = root
    if (paths === 'all') {
      const scanned = await scanNode(store, workRoot, root)
      next = scanned?.kind === 'tree' ? scanned : emptyTree()
    } else {
      for (const relative of paths) {
        const segments = segmentsOf(relative)
        const previous = await nodeAt(store, next, segments)
        const scanned = await scanPath(store, workRoot, segments, previous)
        if (scanned !== previous) next = await setAt(store, next, segments, scanned)
      }
    }
    const nextTree = await flushTree(store, next)
    if (nextTree === treeOid) return null
    const deltas: FileDelta[] = await diffNodes(store, head ? root : null, next)
    const files = deltas.map((delta) => toVirtual(delta.path))
    const meta: CommitMeta = {
      ...intent,
      paths: intent.paths ?? files,
      machine: intent.machine ?? machine(),
    }
    const time = Math.floor(now() / 1000)
    const body = serializeCommit({
      tree: nextTree,
      parent: head,
      author: AUTHORS[meta.actor],
      timestamp: time,
      message: formatCommitMessage(meta),
    })
    const oid = await store.write('commit', body)
    await writeMainRef(store.gitdir, oid)
    const entry: IndexEntry = {
      oid,
      parent: head,
      time: time * 1000,
      actor: meta.actor,
      command: meta.command,
      subject: meta.subject,
      paths: meta.paths,
      conversationId: meta.conversationId,
      toolUseId: meta.toolUseId,
      overwrite: meta.overwrite,
      restoredFrom: meta.restoredFrom,
      ...(meta.machine ? { machine: meta.machine } : {}),
      ...reviewFactsOf(meta),
      files,
    }
    head = oid
    root = next
    treeOid = nextTree
    entries.push(entry)
    byOid.set(oid, entry)
    await appendIndexEntry(indexFile, entry)
    return entry
  }

  return {
    store,
    gitdir: store.gitdir,
    workRoot,
    indexFile,
    head: () => head,
    root: () => root,
    entries: () => entries,
    entry: (oid) => byOid.get(oid),
    commit,
    adopt(nextHead, tree, added, replace = false) {
      if (replace) {
        entries.length = 0
        byOid.clear()
      }
      for (const entry of added) {
        entries.push(entry)
        byOid.set(entry.oid, entry)
      }
      head = nextHead
      root =
        tree === EMPTY_TREE_OID
          ? { kind: 'tree', oid: EMPTY_TREE_OID, children: new Map() }
          : treeFromOid(tree)
      treeOid = tree
    },
  }
}
