import type { CommitCommand } from '../../shared/types'
import { AUTHORS, formatCommitMessage, reviewFactsOf, type CommitMeta } from './commit-message'
import { settleFolderSyncs } from '../lib/folders'
import { prepareMainRef, serializeCommit, type ObjectStore } from './object-store'
import { segmentsOf, toVirtual } from './paths'
import type { CommitFacts } from './types'
import type { RepoView } from './read'
import { appendIndexEntries, writeIndexFile, type IndexEntry } from './side-index'
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
import { scanPath, type ScanReport } from './work-tree'

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
 * The bytes of the commit object Cairn writes for `meta` (time in seconds); `otherParents`
 * only for a merge commit.
 */
export function commitBody(
  meta: CommitMeta,
  tree: string,
  parent: string | null,
  time: number,
  otherParents: ReadonlyArray<string> = [],
): Buffer {
  return serializeCommit({
    tree,
    parent,
    otherParents,
    author: AUTHORS[meta.actor],
    timestamp: time,
    message: formatCommitMessage(meta),
  })
}

/** Options of one `Repo.commit`. */
export interface CommitOptions {
  /** Filled in with what the scan skipped or repaired. */
  readonly report?: ScanReport
  /** Check that the history's copy of every unchanged file is intact (at open). */
  readonly verify?: boolean
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
  commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    options?: CommitOptions,
  ): Promise<IndexEntry | null>
  /**
   * Takes `head` as the new `main` after the ref and the folder were moved to it (see
   * `checkout.ts`): `added` are its commits the index lacked, oldest first; `replace` drops
   * every entry first (the history was switched, not grown). Records them in the index file
   * like a commit does (a failure there is caught up later, never reported).
   */
  adopt(
    head: string,
    tree: string,
    added: ReadonlyArray<IndexEntry>,
    replace?: boolean,
  ): Promise<void>
}

export interface RepoState {
  readonly head: string | null
  /** HEAD's tree, loaded; an empty tree (with `treeOid` set) when HEAD's tree is damaged. */
  readonly root: TreeNode
  /** The tree id HEAD's commit names (the empty tree's id for no commit). */
  readonly treeOid: string
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
  let root = head ? options.state.root : emptyTree()
  let treeOid = head ? options.state.treeOid : EMPTY_TREE_OID
  const entries = options.state.entries
  const byOid = new Map(entries.map((entry) => [entry.oid, entry]))
  // Set when an append to the index file failed: the next commit rewrites the whole file.
  let indexBehind = false

  async function commit(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
    commitOptions: CommitOptions = {},
  ): Promise<IndexEntry | null> {
    const { report, verify = false } = commitOptions
    try {
      return await commitScanned(await scan(paths, report, verify), intent)
    } catch (error) {
      // Objects already written are complete files; make them durable or at least release them.
      await store.flush().catch(() => {})
      throw error
    }
  }

  async function scan(
    paths: ReadonlyArray<string> | 'all',
    report: ScanReport | undefined,
    verify: boolean,
  ): Promise<TreeNode> {
    if (paths === 'all') {
      const scanned = await scanPath(store, workRoot, [], root, { report, verify })
      return scanned?.kind === 'tree' ? scanned : emptyTree()
    }
    let next = root
    for (const relative of paths) {
      const segments = segmentsOf(relative)
      const previous = await nodeAt(store, next, segments)
      const scanned = await scanPath(store, workRoot, segments, previous, { report })
      if (scanned !== previous) next = await setAt(store, next, segments, scanned)
    }
    return next
  }

  async function commitScanned(next: TreeNode, intent: CommitIntent): Promise<IndexEntry | null> {
    const nextTree = await flushTree(store, next)
    if (nextTree === treeOid) {
      // Nothing to commit; objects rewritten by a repair still have to be made durable.
      await store.flush()
      root = next
      return null
    }
    const deltas: FileDelta[] = await diffNodes(store, head ? root : null, next)
    const files = deltas.map((delta) => toVirtual(delta.path))
    const meta: CommitMeta = {
      ...intent,
      paths: intent.paths ?? files,
      machine: intent.machine ?? machine(),
    }
    const time = Math.floor(now() / 1000)
    const body = commitBody(meta, nextTree, head, time)
    const oid = await store.write('commit', body)
    // Every object the commit reaches, and the change it records, are durable before the ref
    // makes them reachable; the ref's temp file is flushed meanwhile.
    const ref = prepareMainRef(store.gitdir, oid)
    try {
      await Promise.all([store.flush(), ref.flush(), settleFolderSyncs()])
    } catch (error) {
      ref.abandon()
      throw error
    }
    await ref.publish()
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
    await persistIndex([entry])
    return entry
  }

  // The commit has happened once the ref moved: a failure to record it in the index (which
  // open catches up from the commits anyway) must not report it as failed.
  async function persistIndex(added: ReadonlyArray<IndexEntry>, whole = false): Promise<void> {
    try {
      if (indexBehind || whole) await writeIndexFile(indexFile, entries)
      else appendIndexEntries(indexFile, added)
      indexBehind = false
    } catch {
      indexBehind = true
    }
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
    async adopt(nextHead, tree, added, replace = false) {
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
      await persistIndex(added, replace)
    },
  }
}
