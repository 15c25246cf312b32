import path from 'node:path'
import type { ChangeResult, CommitCommand, CommitSummary } from '../../shared/types'
import { CairnError } from '../errors'
import { makeFolders } from '../lib/disk'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { acquireInstanceLock, type InstanceLock } from '../lib/instance-lock'
import {
  createMemoryTool,
  unexpectedMessage,
  DEFAULT_LIMITS,
  maxEditableBytes,
  type MemoryLimits,
  type MemoryMutation,
  type MemoryPolicy,
} from '../memory'
import { removeSecrets } from '../memory/secrets'
import { listTree, readMemoryFile, searchMemories, type BrowserLimits } from './browser'
import { DamagedHistoryError } from './damage'
import { createNotices, secretNotices, tooLargeNotice } from './notices'
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
import { createSerialQueue } from './queue'
import { watchFolder } from './watcher'
import { systemIntent, type CommitIntent } from './repo'
import { restoreAll, restoreDeleted, restoreFile, revert, type Committer } from './restores'
import type { IndexEntry } from './side-index'
import { newScanReport } from './work-tree'
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
  /** The commit's subject, when not the command's usual one. */
  readonly subject?: string
}

/**
 * Opens the memory folder of `dataDir` under version control, repairing what an interrupted
 * run left behind (see `recovery`). Every successful change is one commit, made before the
 * call resolves; all changes run through one serial queue. Only one instance may have a data
 * folder open: a second one is refused with a `locked` CairnError.
 */
export async function openVersionedMemory(
  options: VersionedMemoryOptions,
): Promise<VersionedMemory> {
  const dataDir = path.resolve(options.dataDir)
  let lock: InstanceLock | null = null
  try {
    makeFolders(dataDir)
    lock = acquireInstanceLock(dataDir)
    return await openLocked(dataDir, lock, options)
  } catch (error) {
    lock?.release()
    const problem = diskProblem(error)
    if (!problem || error instanceof CairnError) throw error
    throw new CairnError(
      problem.code,
      `Cairn could not open your memory because ${problem.reason}. Nothing was changed; ${
        problem.code === 'disk-full' ? 'free some space' : 'fix the problem'
      } and open Cairn again.`,
    )
  }
}

async function openLocked(
  dataDir: string,
  lock: InstanceLock,
  options: VersionedMemoryOptions,
): Promise<VersionedMemory> {
  const now = options.now ?? Date.now
  const { repo, recovery, tooLarge } = await openRepo({ dataDir, now })
  const tool = createMemoryTool({
    root: repo.workRoot,
    createExisting: options.policy?.createExisting,
    secretScanning: options.policy?.secretScanning,
    limits: options.limits,
  })
  const limits: MemoryLimits = { ...DEFAULT_LIMITS, ...options.limits }
  const browserLimits: BrowserLimits = {
    maxTextBytes: maxEditableBytes(limits),
    maxImageBytes: limits.maxImageBytes,
    maxSearchBytes: limits.maxTotalBytes,
  }
  const queue = createSerialQueue()
  const listeners = new Set<(commit: CommitSummary) => void>()
  const notices = createNotices()
  let closed = false
  // Set when a change reached the disk but its commit failed: the next change first saves
  // whatever the folder holds, so HEAD and the folder agree again.
  let resync = false
  // Changes that reached the folder but whose commit failed: retried, with their own author
  // and trailers, before anything else runs.
  let unrecorded: Array<{ readonly paths: ReadonlyArray<string>; readonly intent: CommitIntent }> =
    []

  for (const relative of tooLarge) notices.raise(tooLargeNotice(relative))
  const opened = recovery?.commitOid ? repo.entry(recovery.commitOid) : undefined
  if (opened && opened.actor === 'system') await raiseSecretNotices(opened)

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
   * Every commit goes through here: it is made, what the scan skipped is reported, what an
   * outside edit brought in is scanned for secrets, and listeners hear of it.
   */
  async function record(
    paths: ReadonlyArray<string> | 'all',
    intent: CommitIntent,
  ): Promise<IndexEntry | null> {
    lock.assertHeld()
    const report = newScanReport()
    const entry = await repo.commit(paths, intent, { report })
    for (const relative of report.tooLarge) notices.raise(tooLargeNotice(relative))
    if (!entry) return null
    announce(toSummary(entry))
    if (entry.actor === 'system') await raiseSecretNotices(entry)
    return entry
  }

  async function raiseSecretNotices(entry: IndexEntry): Promise<void> {
    if (!tool.policy().secretScanning) return
    try {
      for (const notice of await secretNotices(repo, entry)) notices.raise(notice)
    } catch {
      // The commit stands; a scan that could not read it only means no warning.
    }
  }

  // What the queue owes before the next change: commits that failed, then a full rescan.
  async function catchUp(): Promise<void> {
    while (unrecorded.length > 0) {
      const [first] = unrecorded
      await record(first!.paths, first!.intent)
      unrecorded = unrecorded.slice(1)
    }
    if (resync) {
      await record('all', systemIntent('recovery', 'Save changes whose commit was interrupted'))
      resync = false
    }
  }

  /**
   * Runs `task` alone in the queue. `touched` names what it will change: edits made there
   * outside Cairn are committed first, on their own, so the task's commit holds only its
   * own change (and undoing it never undoes someone else's edit). A task that only `reads`
   * runs even when the commits owed cannot be made (a full disk): reads keep working.
   */
  function exclusive<T>(
    task: () => Promise<T>,
    touched: () => TouchedPaths = () => [],
    mode: 'reads' | 'writes' = 'writes',
  ): Promise<T> {
    if (closed) return Promise.reject(new CairnError('closed', 'The memory folder is closed.'))
    return queue.run(async () => {
      try {
        await catchUp()
      } catch (error) {
        if (mode === 'writes') throw error
      }
      try {
        if (mode === 'writes') {
          const report = newScanReport()
          await commitOutsideChanges(repo, touched(), record, report)
          for (const relative of report.tooLarge) notices.raise(tooLargeNotice(relative))
        }
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

  async function run(request: CommandRun): Promise<ExecuteOutcome> {
    const result = await tool.execute(request.input, { createExisting: request.createExisting })
    if (result.isError || !result.mutation) return { ...result, commit: null }
    const paths = result.mutation.paths.map(toRelative)
    const intent = {
      ...intentFor(result.mutation, request.origin, request.command),
      ...(request.subject ? { subject: request.subject } : {}),
    }
    let entry: IndexEntry | null
    try {
      entry = await record(paths, intent)
    } catch {
      // The command did change the folder, so Claude (or the user) is told the truth; its
      // commit is made, with the same author and trailers, before the next change runs.
      unrecorded = [...unrecorded, { paths, intent }]
      resync = true
      return { ...result, commit: null, commitPending: true }
    }
    return { ...result, commit: entry ? toSummary(entry) : null }
  }

  // Restores commit through here: when the files are written but the commit fails, the
  // commit is owed (made, with this intent, before the next change) instead of lost.
  const commitOrOwe: Committer = async (paths, intent) => {
    try {
      return await record(paths, intent)
    } catch (error) {
      if (!isDiskProblem(error)) throw error
      unrecorded = [...unrecorded, { paths, intent }]
      resync = true
      return 'pending'
    }
  }

  async function userChange(request: CommandRun, done: string): Promise<ChangeResult> {
    const outcome = await forPeople(
      exclusive(
        () => run(request),
        () => touchedByCommand(request.input),
      ),
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
    return forPeople(
      exclusive(async () => {
        const result = await task()
        tool.invalidateUsage()
        return result
      }, touched),
    )
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
        isView(input) ? 'reads' : 'writes',
      ).catch(toolFailure),
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
    removeSecrets: (file) =>
      forPeople(
        exclusive(
          async () => {
            const virtual = normalize(file)
            const current = await readMemoryFile(repo.workRoot, virtual, browserLimits)
            if (current.kind !== 'text' || current.text === null) {
              throw new CairnError('refused', `${virtual} is not a text file Cairn can edit.`)
            }
            const { text, removed } = await removeSecrets(current.text, virtual)
            if (removed === 0) {
              notices.resolve('secret', virtual)
              return { commit: null, message: `No secret was found in ${virtual}.` }
            }
            const outcome = await run({
              input: { command: 'create', path: virtual, file_text: text },
              origin: user,
              command: 'write',
              subject: `remove secrets from ${virtual}`,
            })
            if (outcome.isError) throw toUserError(outcome.content)
            notices.resolve('secret', virtual)
            const message = `Removed ${removed === 1 ? 'the secret' : `${removed} secrets`} from ${virtual}. Earlier versions in the history still hold it.`
            return outcome.commitPending
              ? {
                  commit: null,
                  message: `${message} It will appear in History with the next change.`,
                }
              : { commit: outcome.commit, message }
          },
          () => touchedByUserPath(file),
        ),
      ),

    tree: () => forPeople(listTree(repo.workRoot)),
    readFile: (file) => forPeople(readMemoryFile(repo.workRoot, file, browserLimits)),
    search: (query) => forPeople(searchMemories(repo.workRoot, query, browserLimits)),
    notices: () => notices.list(),
    onNotice: (listener) => notices.onNotice(listener),

    log: async (query) =>
      queryLog(repo.entries(), query.path ? { ...query, path: normalize(query.path) } : query),
    fileHistory: async (file) => fileHistoryOf(repo.entries(), normalize(file)),
    show: (oid) => forPeople(showCommit(repo, oid)),
    readAt: (file, oid) => forPeople(readAt(repo, file, oid)),
    diff: (file, from, to) => forPeople(diffFile(repo, file, from, to)),

    restoreFile: (file, oid) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreFile(repo, file, oid, commitOrOwe),
      ),
    restoreDeleted: (file) =>
      restoring(
        () => touchedByUserPath(file),
        () => restoreDeleted(repo, file, commitOrOwe),
      ),
    revert: (oid) =>
      restoring(
        () => touchedByRevert(repo.entry(oid)),
        () => revert(repo, oid, commitOrOwe),
      ),
    // Its commit covers only the paths that differ from the target: anything else the folder
    // gained outside Cairn must be saved before, or it would stay out of HEAD.
    restoreAll: (oid) =>
      restoring(
        () => 'all',
        () => restoreAll(repo, oid, commitOrOwe),
      ),

    onCommit(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      if (closed) return
      closed = true
      watcher?.close()
      await queue.idle()
      listeners.clear()
      lock.release()
    },
  }
}

function isView(input: unknown): boolean {
  return (
    typeof input === 'object' &&
    input !== null &&
    (input as { command?: unknown }).command === 'view'
  )
}

/**
 * What Claude gets when a command could not run at all: never a rejected promise, a raw
 * errno or a host path.
 */
function toolFailure(error: unknown): ExecuteOutcome {
  const content =
    error instanceof CairnError
      ? `Error: ${error.message}`
      : error instanceof DamagedHistoryError
        ? 'Error: The memory command failed because the memory history is damaged. Nothing was changed.'
        : unexpectedMessage(error)
  return { content, isError: true, mutation: null, commit: null }
}

/** Passes CairnErrors on; a disk problem becomes one, in plain words; damage likewise. */
async function forPeople<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof CairnError) throw error
    const problem = diskProblem(error)
    if (problem) {
      throw new CairnError(
        problem.code,
        `That did not work because ${problem.reason}. Nothing was changed.`,
      )
    }
    if (error instanceof DamagedHistoryError) {
      throw new CairnError(
        'history-damaged',
        'The memory history is damaged; that version cannot be read.',
      )
    }
    throw error
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
  const code = /^The memory command failed because the disk is full/.test(message)
    ? 'disk-full'
    : /^The memory command failed because/.test(message)
      ? 'disk-error'
      : /already exists/.test(message)
        ? 'exists'
        : /does not exist/.test(message)
          ? 'not-found'
          : 'refused'
  return new CairnError(code, message)
}
