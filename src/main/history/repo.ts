import type { CommitCommand } from '../../shared/types'
import { AUTHORS, formatCommitMessage, reviewFactsOf, type CommitMeta } from './commit-message'
import { serializeCommit, writeMainRef, type ObjectStore } from './object-store'
import { segmentsOf, toVirtual } from './paths'
import type { IndexFile } from './index-file'
import type { RepoView } from './read'
import { catchUp, type IndexEntry } from './side-index'
import {
  diffNodes,
  emptyTree,
  flushTree,
  nodeAt,
  setAt,
  type FileDelta,
  type TreeNode,
} from './tree-state'
import type { StatCache } from './stat-cache'
import { scanNode, scanPath } from './work-tree'

/** The id of git's empty tree. */
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** Facts of a commit to make; `paths` defaults to the files it changed. */
export type CommitIntent = Omit<CommitMeta, 'paths'> & { readonly paths?: ReadonlyArray<string> }

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
  /** What the folder's files looked like when last hashed (and the folder's totals). */
  readonly stats: StatCache
  /**
   * Reads `paths` (relative; `'all'` for the whole folder) from disk into the tree and, when
   * the tree changed, commits it. Returns the new entry, or null when nothing changed.
   */
  commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    options?: { readonly removeTemp?: boolean },
  ): Promise<IndexEntry | null>
  /** Swaps in a rebuilt side index (which must end at `head()`); closes the old one. */
  replaceIndex(next: IndexFile): void
}

export interface RepoState {
  readonly head: string | null
  readonly root: TreeNode
  readonly index: IndexFile
  readonly stats: StatCache
}

export function createRepo(options: {
  store: ObjectStore
  workRoot: string
  state: RepoState
  now: () => number
}): Repo {
  const { store, workRoot, now } = options
  let index = options.state.index
  // Set when an index append failed: the next commit first catches the index up.
  let indexBehind = false
  const stats = options.state.stats
  let head = options.state.head
  let root = options.state.root
  let treeOid = head ? (root.oid ?? EMPTY_TREE_OID) : EMPTY_TREE_OID
  if (!head) root = emptyTree()

  async function commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    options: { readonly removeTemp?: boolean } = {},
  ): Promise<IndexEntry | null> {
    let next = root
    if (paths === 'all') {
      const visited = new Set<string>()
      const scanned = await scanNode(store, workRoot, root, '', {
        stats,
        visited,
        removeTemp: options.removeTemp,
      })
      stats.retainOnly(visited)
      next = scanned?.kind === 'tree' ? scanned : emptyTree()
    } else {
      // One owner for the whole commit: a folder several paths go through is copied once.
      const owner = {}
      for (const relative of paths) {
        const segments = segmentsOf(relative)
        const previous = await nodeAt(store, next, segments)
        const scanned = await scanPath(store, workRoot, segments, previous, { stats })
        if (scanned !== previous) next = await setAt(store, next, segments, scanned, owner)
      }
    }
    const nextTree = await flushTree(store, next)
    if (nextTree === treeOid) return null
    const deltas: FileDelta[] = await diffNodes(store, head ? root : null, next)
    const files = deltas.map((delta) => toVirtual(delta.path))
    const meta: CommitMeta = { ...intent, paths: intent.paths ?? files }
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
      // As a rebuild from the commit reads it back: no Path trailer means "the files".
      paths: meta.paths.length > 0 ? meta.paths : files,
      conversationId: meta.conversationId,
      toolUseId: meta.toolUseId,
      overwrite: meta.overwrite,
      restoredFrom: meta.restoredFrom,
      ...reviewFactsOf(meta),
      files,
    }
    head = oid
    root = next
    treeOid = nextTree
    // The commit has happened once the ref moved: failing to record it in the index (a full
    // disk) must not undo it. The entries missed are rebuilt from their commits next time.
    try {
      if (indexBehind) indexBehind = !(await catchUp(store, index, oid))
      else index.append(entry)
    } catch {
      indexBehind = true
    }
    return entry
  }

  return {
    store,
    gitdir: store.gitdir,
    workRoot,
    get index() {
      return index
    },
    stats,
    head: () => head,
    root: () => root,
    entry: (oid) => index.find(oid),
    commit,
    replaceIndex(next) {
      if (next.head() !== head) throw new Error('the new index does not end at HEAD')
      indexBehind = false
      const old = index
      index = next
      old.close()
    },
  }
}
