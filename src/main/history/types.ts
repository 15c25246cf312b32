import type { ValidPayload } from '../../shared/contract'
import type {
  BlameLine,
  ChangeResult,
  CommitCommand,
  CommitDetail,
  CommitSummary,
  Comparison,
  CreateExistingPolicy,
  FileChange,
  FollowProgress,
  HistorySearchPage,
  LogPage,
  MemoryNotice,
  MemoryEntry,
  RecoveryReport,
  ReviewMark,
  WriteFlag,
} from '../../shared/types'
import type { HistoryErrorCode, MemoryErrorCode } from '../../shared/errors'
import type {
  MadeChange,
  MemoryExecution,
  MemoryLimits,
  MemoryPolicy,
  PlannedChange,
} from '../memory'
import type { CairnCommitMeta } from './commit-message'
import type { ObjectStore } from './object-store'
import type { RepackReport, RepackStep } from './objects/repack'

/**
 * Who asked for a change: Claude (in a conversation, for a tool_use), the user in the UI, or
 * Cairn itself (an expiry it proposed and the person approved).
 */
export type Origin =
  | { readonly actor: 'claude'; readonly conversationId: string; readonly toolUseId: string }
  | { readonly actor: 'user' }
  | { readonly actor: 'system' }

/** Facts a caller adds to a command's commit: review flags, the person's review. */
export interface RunFacts {
  readonly flags?: ReadonlyArray<WriteFlag>
  readonly review?: ReviewMark
}

/** What `beforeRun` decides: run the command (with facts for its commit), or not. */
export type RunVerdict = ({ readonly run: true } & RunFacts) | { readonly run: false }

/** Per-call choices of `execute` beyond the command itself. */
export interface ExecuteOptions {
  /** Overrides the `createExisting` policy for this one command (the user's "New file"). */
  readonly createExisting?: CreateExistingPolicy
  /** The timeline's name for the commit (the user's save is a `write`, not a `create`). */
  readonly commitAs?: CommitCommand
  /**
   * The person's delete or rename names the entry as the folder spells it (the memory tool's
   * `spelledAsOnDisk`): never set for Claude.
   */
  readonly spelledAsOnDisk?: boolean
  /** The commit's subject instead of `<command> <path>` (an expiry is a delete named "expire"). */
  readonly subject?: string
  /**
   * Called in the queue, after a dry run of the command succeeded and before it runs, with
   * what it would change; nothing else changes memory in between. It decides whether the
   * command runs and adds facts (review flags, the person's review) to its commit. It must not
   * wait on another change to memory (that change would wait for it). A command the dry run
   * refuses is not run and this is not called: the outcome is the refusal.
   */
  readonly beforeRun?: (planned: PlannedChange) => RunVerdict | Promise<RunVerdict>
  /**
   * Asked in the queue, where `beforeRun` would be: false means the caller has nothing to
   * decide this time (a review gate that holds nothing), so there is no dry run and no
   * `beforeRun`; the command runs at once and `afterRun` gives its commit's facts. Default:
   * true.
   */
  readonly needsDryRun?: () => boolean
  /**
   * Called in the queue after a command ran without a dry run (see `needsDryRun`) and changed
   * memory, before its commit, with what it changed; adds facts (review flags) to the commit.
   * The change has happened: if this fails, it is logged and the commit made without them.
   */
  readonly afterRun?: (made: MadeChange) => RunFacts | Promise<RunFacts>
  /**
   * The turn's stop signal. Checked when the command's turn in the queue comes: a command
   * still waiting there behind other work when the person pressed Stop does not run (the
   * outcome says `stopped`); one already running, or handed to an idle queue, completes.
   */
  readonly signal?: AbortSignal
}

export interface ExecuteOutcome extends Omit<MemoryExecution, 'errorCode'> {
  /**
   * Which refusal it was, when `isError`: the Memory tool's, or the history's own when the
   * command could not run at all (`closed`, `locked`, `history-damaged`).
   */
  readonly errorCode: MemoryErrorCode | HistoryErrorCode | null
  /** The commit made for this command; null for reads, failures and no-op changes. */
  readonly commit: CommitSummary | null
  /** True when the command changed the folder but its commit failed; it is retried first thing. */
  readonly commitPending?: boolean
  /**
   * True when `beforeRun` kept the command from running: nothing changed, and `planned`
   * says what it would have done.
   */
  readonly held?: boolean
  /**
   * True when the command never ran because `signal` was aborted while it waited in the
   * queue: nothing changed and nothing was committed.
   */
  readonly stopped?: boolean
  /**
   * For a view, a `str_replace` or an `insert` that ran: the commit whose tree holds what it
   * read (null: memory was empty): for an edit, the memory just before its own commit. Edits
   * made outside Cairn to the path are committed before the command reads it, so what Claude
   * is shown is a version in history. Absent for a view when they could not be committed (a
   * full disk): it then read a version history may not hold.
   */
  readonly readAt?: string | null
}

/** One page of a history search (`history:search`, plus a time budget for tests). */
export interface SearchQuery {
  readonly text: string
  readonly matchCase: boolean
  /** Continue with the commits older than this one (from a previous page's `next`). */
  readonly before?: string
  /** How long this page may scan (default: search.ts's `SEARCH_PAGE_MS`). */
  readonly budgetMs?: number
}

/** A page request of the timeline: exactly what the `history:log` channel accepts. */
export type LogQuery = ValidPayload<'history:log'>

/**
 * The memory folder under version control: every mutation is one commit, all changes go
 * through one serial queue. Paths are virtual (`/memories/...`) everywhere.
 */
export interface VersionedMemory {
  /** The real memory folder (`<dataDir>/memories`), for rooms that read it directly. */
  readonly folder: string
  /** What start-up recovery did (null when nothing needed repair). */
  readonly recovery: RecoveryReport | null
  /** The Memory tool's size limits in force (the memory browser reads within them too). */
  readonly limits: MemoryLimits

  /** Runs one Memory tool command (untrusted input); commits when it changed something. */
  execute(input: unknown, origin: Origin, options?: ExecuteOptions): Promise<ExecuteOutcome>
  setPolicy(policy: Partial<MemoryPolicy>): void
  /**
   * Takes every secret out of the file as it is now, as a commit by the person; the history
   * keeps the past (it is never rewritten).
   */
  removeSecrets(path: string): Promise<ChangeResult>
  /**
   * Notices raised so far this session (too-large files, secrets from outside edits), less
   * those the person dismissed.
   */
  notices(): ReadonlyArray<MemoryNotice>
  /**
   * Hides the notice raised with `id`, dismissed by the person: `notices` no longer answers
   * it, so a window that opens later does not show it again, until it is resolved and raised
   * anew (a secret found again after it was removed), or a different one is raised for its
   * file (a new secret from a later outside edit). One that follows its file to a new name
   * keeps its id there, and stays dismissed (or is, by a dismissal sent before the move). An id given to a notice no longer raised changes nothing (the one raised
   * since in its place, even one that reads the same, stays); an id never given is refused
   * (`not-found`).
   */
  dismissNotice(id: string): void
  onNotice(listener: (notice: MemoryNotice) => void): () => void
  /**
   * Told the id of a notice no longer kept because its file went: deleted (outside Cairn, by
   * the tool or the Memory tab), or replaced by a file moved onto its name.
   */
  onNoticeCleared(listener: (id: string) => void): () => void

  // History.
  log(query: LogQuery): Promise<LogPage>
  fileHistory(path: string): Promise<ReadonlyArray<CommitSummary>>
  /**
   * The commits made at `since` (ms) or later that changed `path` or anything under it,
   * newest first, following it back through renames; its cost is that of the recent commits
   * only.
   */
  changesSince(path: string, since: number): Promise<ReadonlyArray<CommitSummary>>
  /**
   * The commits made for Claude's calls `toolUseIds` in conversation `conversationId` (their
   * `Tool-Use-Id` and `Conversation-Id` trailers), by tool use id; a call that made no commit is
   * absent. For a conversation whose saved results stop short (Cairn was killed mid-turn). The
   * calls were made at `since` (ms) or later: the cost is one fixed-record read per commit made
   * since then (and 1,000 more), plus that conversation's own entries among them.
   */
  toolUseCommits(
    conversationId: string,
    toolUseIds: ReadonlyArray<string>,
    since?: number,
  ): Promise<ReadonlyMap<string, CommitSummary>>
  show(oid: string): Promise<CommitDetail>
  readAt(path: string, oid: string): Promise<string | null>
  diff(path: string, from: string, to: string): Promise<FileChange>
  /** The newest commit (null for an empty history): what memory holds right now. */
  head(): string | null
  /**
   * Odd while a change to the memory folder runs in the queue (a command, a restore, a sync,
   * outside edits saved), one more each time one starts or ends, two more when the watcher
   * sees an edit made outside Cairn (before it is saved): a read of the whole folder
   * made in slices (`consistentRead`) knows by it whether a change ran between its slices.
   */
  changeStamp(): number
  /**
   * Settles when the change running now (`changeStamp` odd) has ended, at once when none runs:
   * a whole-folder read asked meanwhile waits for it rather than see it half-made.
   */
  changeEnded(): Promise<void>
  /**
   * The newest commit once edits made outside Cairn that are not saved yet (the watcher's
   * debounce still running) are committed: what a turn starting now can see. `head()` when
   * they cannot be saved.
   */
  settledHead(): Promise<string | null>
  /**
   * For each line of the file at `at` (default: now), the commit that last changed it,
   * following renames and plain-copy restores (see blame.ts).
   */
  blame(path: string, at?: string): Promise<ReadonlyArray<BlameLine>>
  /** One page of the commits whose diff adds or removes a text (like `git log -S`). */
  searchHistory(query: SearchQuery): Promise<HistorySearchPage>
  /** How memory at `from` differs from memory at `to` (default now). */
  compare(from: string, to?: string): Promise<Comparison>
  /** The summaries of the commits of this history among `oids`, in that order. */
  summaries(oids: ReadonlyArray<string>): ReadonlyArray<CommitSummary>
  /** Every file and folder of memory after commit `oid` (sizes, last change times). */
  listAt(oid: string): Promise<ReadonlyArray<MemoryEntry>>
  /** A file's bytes after commit `oid` (null when it was not a file there). */
  readBytesAt(path: string, oid: string): Promise<Uint8Array | null>

  // Restores: each one is a new commit, never a rewrite.
  restoreFile(path: string, oid: string): Promise<ChangeResult>
  /** From the version before `deletedIn` (the change that removed it), or the last one. */
  restoreDeleted(path: string, deletedIn?: string): Promise<ChangeResult>
  revert(oid: string): Promise<ChangeResult>
  restoreAll(oid: string): Promise<ChangeResult>

  /**
   * Runs history maintenance now (packing loose objects; `mergeAll` folds every pack into
   * one) instead of waiting for the background trigger. Commands keep running meanwhile.
   * `onStep` marks each durable step (crash tests stop the process there). Refused as
   * `closed` after the close, and when the close ends the pass.
   */
  maintain(options?: {
    readonly mergeAll?: boolean
    readonly onStep?: (step: RepackStep) => void
  }): Promise<RepackReport>

  /** Names this machine in every commit's `Machine:` trailer from now on (null: none). */
  setMachine(name: string | null): void
  /** The repository itself, for sync, export and import (see `HistoryGit`). */
  readonly git: HistoryGit

  onCommit(listener: (commit: CommitSummary) => void): () => void
  /**
   * How far taking in a `main` moved outside Cairn is (the commits git added read, a few times a
   * second at most), then its end, also when it failed; told only when `main` had moved.
   */
  onFollowing(listener: (progress: FollowProgress) => void): () => void
  /**
   * Reports repairs made after start-up (edits made outside Cairn saved as their own commit,
   * a change whose commit had failed saved at last); start-up's own is `recovery`.
   */
  onRecovery(listener: (report: RecoveryReport) => void): () => void
  /**
   * Every recovery report of this session, start-up's first, only the latest of each kind
   * (a later one replaces an earlier), in the order they were told: what `onRecovery` told
   * before anyone listened is still here.
   */
  recoveries(): ReadonlyArray<RecoveryReport>
  /**
   * Forgets the report told with `id`, dismissed by the person: `recoveries` no longer answers
   * it, so a window that opens later does not show it again. An id given to a report no longer
   * kept (replaced by a later one of its kind) changes nothing; an id never given is refused
   * (`not-found`).
   */
  dismissRecovery(id: string): void
  /** Waits for queued work and releases resources. */
  close(): Promise<void>
}

/** How `main` moves: `forward` keeps every commit it had (refused otherwise); `switch` does not. */
export type MoveKind = 'forward' | 'switch'

/**
 * The facts of a commit to make (its paths default to the files it changed), always as one of
 * Cairn's actors: Cairn never writes a commit as made outside it.
 */
export type CommitFacts = Omit<CairnCommitMeta, 'paths'> & {
  readonly paths?: ReadonlyArray<string>
}

/**
 * What sync, export and import may do with the repository: read and write objects, and, alone
 * in the serial queue, move `main` or commit files. Nothing here rewrites history.
 */
export interface HistoryGit {
  /** The bare repository (`<dataDir>/history.git`), for git transports. */
  readonly gitdir: string
  /**
   * Its objects (reads, and writes of new objects; writing an object changes no history).
   * Trees are read as stored (`readForeignTree`): links and odd names come through, for sync
   * to refuse in its own words.
   */
  readonly objects: Pick<
    ObjectStore,
    'hash' | 'write' | 'readTree' | 'readBlob' | 'readCommit' | 'readRaw'
  >
  /** The commit `main` points at now (null for an empty history). */
  head(): string | null
  /**
   * Throws a `locked` CairnError when another Cairn took this data folder over (its lock):
   * sync checks it before it writes to the repository outside the queue (fetch, push).
   */
  assertWriter(): void
  /**
   * Where `oid` sits in the history of `main`, oldest first: every commit comes after its
   * parents. -1 for a commit that is not part of it.
   */
  position(oid: string): number
  /**
   * Runs `task` alone in the serial queue, after edits made outside Cairn were saved, so the
   * folder equals `main`'s tree while it runs.
   */
  exclusive<T>(task: (session: HistorySession) => Promise<T>): Promise<T>
  /**
   * Runs a fetch or push (isomorphic-git writing a pack and its index, or reading objects
   * loose or packed) outside the queue: background maintenance clears, installs and removes
   * nothing in the object folders meanwhile, and a transfer waits for such a step in progress.
   */
  transfer<T>(task: () => Promise<T>): Promise<T>
}

/** What a task of `HistoryGit.exclusive` may change. */
export interface HistorySession {
  head(): string | null
  /**
   * Moves `main`, with the folder, to `target` (all its objects stored already): `forward`
   * refuses a target that does not contain `main`; `switch` replaces the history (the caller
   * keeps the old one under a ref first). Returns the commits added, oldest first; the last
   * (the new head) is announced like any other commit.
   */
  moveMain(target: string, kind: MoveKind): Promise<ReadonlyArray<CommitSummary>>
  /**
   * Writes files (relative path -> content, null deletes) into the folder and commits them as
   * one commit; null when nothing changed.
   */
  commitFiles(
    files: ReadonlyMap<string, Uint8Array | null>,
    intent: CommitFacts,
  ): Promise<CommitSummary | null>
  /**
   * Removes the packs `names` (`pack-<checksum>`) a fetch wrote, when the sync refused what it
   * brought: each one whose objects stored nowhere else no commit of `heads` (every ref the
   * caller keeps) or `main` reaches. `since`: every ref's commit (`main`'s too) read before the
   * fetch began; the walk stops at them (what they reach was stored before the fetch). Waits
   * for the pack folder as a transfer does. Returns the names removed.
   */
  dropFetchedPacks(
    names: ReadonlyArray<string>,
    heads: ReadonlyArray<string>,
    since?: ReadonlyArray<string>,
  ): Promise<ReadonlyArray<string>>
}
