import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { ChangeResult, CommitCommand, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import {
  createMemoryTool,
  type MemoryLimits,
  type MemoryMutation,
  type MemoryPolicy,
} from '../memory'
import { listTree, readMemoryFile, searchMemories } from '../memory-browser/browser'
import { diffFile, readAt, showCommit } from './inspect'
import { openRepo } from './open-repo'
import { toRelative, toVirtual } from './paths'
import { fileHistoryOf, queryLog, toSummary } from './queries'
import {
  commitOutsideChanges,
  touchedByCommand,
  touchedByRevert,
  type TouchedPaths,
} from './outside-changes'
import { createSerialQueue } from '../lib/serial-queue'
import { watchFolder } from './watcher'
import { systemIntent, type CommitIntent } from './repo'
import { restoreAll, restoreDeleted, restoreFile, revert } from './restores'
import type { ExecuteOutcome, Origin, VersionedMemory } from './types'

/** Options of `openVersionedMemory`; everything but `dataDir` has a default. */
export interface VersionedMemoryOptions {
  /** Memory files live in `<dataDir>/memories`, their history in `<dataDir>/history.git`. */
  readonly dataDir: string
  /** Initial Memory tool policies (settings may change them later with `setPolicy`). */
  readonly policy?: Partial<MemoryPolicy>
  readonly limits?: Partial<MemoryLimits>
  /** Clock for commit times (tests). */
  readonly now?: () => number
  /**
   * Watch the folder and commit edits made outside Cairn as they happen (default on, after
   * 400 ms of quiet). Off, they are still committed before Cairn touches the same paths.
   */
  readonly watch?: boolean | { readonly debounceMs: number }
}

/** A Memory tool command as the user edit API sends it, with the timeline's name for it. */
interface CommandRun {
  readonly input: Record<string, unknown>
  readonly origin: Origin | undefined
  readonly createExisting?: 'overwrite' | 'error'
  readonly command?: CommitCommand
}

/**
 * Opens the memory folder of `dataDir` under version control, repairing what an interrupted
 * run left behind (see `recovery`). Every successful change is one commit, made before the
 * call resolves; all changes run through one serial queue.
 */
export async function openVersionedMemory(
  options: VersionedMemoryOptions,
): Promise<VersionedMemory> {
  const dataDir = path.resolve(options.dataDir)
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const now = options.now ?? Date.now
  const { repo, recovery } = await openRepo({ dataDir, now })
  const tool = createMemoryTool({
    root: repo.workRoot,
    createExisting: options.policy?.createExisting,
    secretScanning: options.policy?.secretScanning,
    limits: options.limits,
  })
  const queue = createSerialQueue()
  const listeners = new Set<(commit: CommitSummary) => void>()
  let closed = false
  // Set when a change reached the disk but its commit failed: the next change first saves
  // whatever the folder holds, so HEAD and the folder agree again.
  let resync = false
  // Changes that reached the folder but whose commit failed: retried, with their own author
  // and trailers, before anything else runs.
  let unrecorded: Array<{ readonly paths: ReadonlyArray<string>; readonly intent: CommitIntent }> =
    []

  function announce(commit: CommitSummary | null): void {
    if (!commit) return
    for (const listener of listeners) {
      try {
        listener(commit)
      } catch {
        // A listener's failure must not undo or hide a commit that happened.
      }
    }
  }

  /**
   * Runs `task` alone in the queue. `touched` names what it will change: edits made there
   * outside Cairn are committed first, on their own, so the task's commit holds only its
   * own change (and undoing it never undoes someone else's edit).
   */
  function exclusive<T>(
    task: () => Promise<T>,
    touched: () => TouchedPaths = () => [],
  ): Promise<T> {
    if (closed) return Promise.reject(new CairnError('closed', 'The memory folder is closed.'))
    return queue.run(async () => {
      while (unrecorded.length > 0) {
        const [first] = unrecorded
        announce(toSummaryOrNull(await repo.commit(first!.paths, first!.intent)))
        unrecorded = unrecorded.slice(1)
      }
      if (resync) {
        const entry = await repo.commit(
          'all',
          systemIntent('recovery', 'Save changes whose commit was interrupted'),
        )
        resync = false
        announce(toSummaryOrNull(entry))
      }
      try {
        await saveOutsideChanges(touched())
        return await task()
      } catch (error) {
        // Whatever failed may have failed half-way (a restore that wrote some files): the
        // next change first re-reads the whole folder, which commits nothing if all is well.
        resync = true
        tool.invalidateUsage()
        throw error
      }
    })
  }

  function toSummaryOrNull(entry: Awaited<ReturnType<typeof repo.commit>>): CommitSummary | null {
    return entry ? toSummary(entry) : null
  }

  async function saveOutsideChanges(touched: TouchedPaths): Promise<void> {
    const entry = await commitOutsideChanges(repo, touched)
    if (!entry) return
    // The tool's running total of the folder's size no longer holds.
    tool.invalidateUsage()
    announce(toSummary(entry))
  }

  async function run(request: CommandRun): Promise<ExecuteOutcome> {
    const result = await tool.execute(request.input, { createExisting: request.createExisting })
    if (result.isError || !result.mutation) return { ...result, commit: null }
    const paths = result.mutation.paths.map(toRelative)
    const intent = intentFor(result.mutation, request.origin, request.command)
    let entry: Awaited<ReturnType<typeof repo.commit>>
    try {
      entry = await repo.commit(paths, intent)
    } catch {
      // The command did change the folder, so Claude (or the user) is told the truth; its
      // commit is made, with the same author and trailers, before the next change runs.
      unrecorded = [...unrecorded, { paths, intent }]
      resync = true
      return { ...result, commit: null, commitPending: true }
    }
    const commit = toSummaryOrNull(entry)
    announce(commit)
    return { ...result, commit }
  }

  async function userChange(request: CommandRun, done: string): Promise<ChangeResult> {
    const outcome = await exclusive(
      () => run(request),
      () => touchedByCommand(request.input),
    )
    if (outcome.isError) throw toUserError(outcome.content)
    if (outcome.commitPending) {
      return { commit: null, message: `${done} It will appear in History with the next change.` }
    }
    return { commit: outcome.commit, message: outcome.commit ? done : 'Nothing changed.' }
  }

  function restoring(
    touched: () => TouchedPaths,
    task: () => Promise<ChangeResult>,
  ): Promise<ChangeResult> {
    return exclusive(async () => {
      const result = await task()
      tool.invalidateUsage()
      announce(result.commit)
      return result
    }, touched)
  }

  // Events for Cairn's own writes come too, after their commit: the rescan of those paths
  // finds them equal to HEAD and commits nothing.
  const watcher =
    options.watch === false
      ? null
      : watchFolder(repo.workRoot, {
          debounceMs: typeof options.watch === 'object' ? options.watch.debounceMs : 400,
          onChanges: (touched) => {
            if (closed) return
            exclusive(
              async () => undefined,
              () => touched,
            ).catch(() => {
              // Nothing to report to: the next change or the next open saves them.
            })
          },
        })

  const user: Origin = { actor: 'user' }
  return {
    recovery,
    execute: (input, origin) =>
      exclusive(
        () => run({ input: input as Record<string, unknown>, origin }),
        () => touchedByCommand(input),
      ),
    setPolicy: (policy) => tool.configure(policy),

    writeFile: (file, content, writeOptions) =>
      userChange(
        {
          input: { command: 'create', path: file, file_text: content },
          origin: user,
          createExisting: writeOptions?.mustNotExist ? 'error' : 'overwrite',
          command: 'write',
        },
        `Saved ${file}.`,
      ),
    renameFile: (from, to) =>
      userChange(
        { input: { command: 'rename', old_path: from, new_path: to }, origin: user },
        `Renamed ${from} to ${to}.`,
      ),
    deleteFile: (file) =>
      userChange({ input: { command: 'delete', path: file }, origin: user }, `Deleted ${file}.`),

    tree: () => listTree(repo.workRoot),
    readFile: (file) => readMemoryFile(repo.workRoot, file),
    search: (query) => searchMemories(repo.workRoot, query),

    log: async (query) =>
      queryLog(repo.entries(), query.path ? { ...query, path: normalize(query.path) } : query),
    fileHistory: async (file) => fileHistoryOf(repo.entries(), normalize(file)),
    show: (oid) => showCommit(repo, oid),
    readAt: (file, oid) => readAt(repo, file, oid),
    diff: (file, from, to) => diffFile(repo, file, from, to),

    restoreFile: (file, oid) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreFile(repo, file, oid),
      ),
    restoreDeleted: (file) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreDeleted(repo, file),
      ),
    revert: (oid) =>
      restoring(
        () => touchedByRevert(repo.entry(oid)),
        () => revert(repo, oid),
      ),
    // Its commit covers only the paths that differ from the target: anything else the folder
    // gained outside Cairn must be saved before, or it would stay out of HEAD.
    restoreAll: (oid) =>
      restoring(
        () => 'all',
        () => restoreAll(repo, oid),
      ),

    onCommit(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      closed = true
      watcher?.close()
      await queue.idle()
      listeners.clear()
    },
  }
}

/** The facts of the commit for one successful Memory tool mutation. */
export function intentFor(
  mutation: MemoryMutation,
  origin: Origin | undefined,
  command: CommitCommand = mutation.command,
): CommitIntent {
  const [first = '/memories', second] = mutation.paths
  const subject =
    mutation.command === 'rename' && second ? `rename ${first} -> ${second}` : `${command} ${first}`
  const claude = origin?.actor === 'claude' ? origin : null
  return {
    actor: origin?.actor ?? 'claude',
    command,
    subject,
    paths: mutation.paths,
    conversationId: claude?.conversationId ?? null,
    toolUseId: claude?.toolUseId ?? null,
    overwrite: command === 'create' && mutation.overwrite,
    restoredFrom: null,
  }
}

// A path the restore will refuse touches nothing.
function touchedByUserPath(virtual: string): ReadonlyArray<string> {
  try {
    const relative = toRelative(virtual)
    return relative === '' ? [] : [relative]
  } catch {
    return []
  }
}

function normalize(virtual: string): string {
  return toVirtual(toRelative(virtual))
}

// The tool's messages are written for Claude ("Error: …"); people get the same words
// without the prefix, and a code the UI can act on.
function toUserError(content: ExecuteOutcome['content']): CairnError {
  const text = typeof content === 'string' ? content : 'The change was refused.'
  const message = text.replace(/^Error:\s*/, '')
  const code = /already exists/.test(message)
    ? 'exists'
    : /does not exist/.test(message)
      ? 'not-found'
      : 'refused'
  return new CairnError(code, message)
}
