import type {
  ChangeResult,
  CommitDetail,
  CommitSummary,
  FileChange,
  LogPage,
  MemoryEntry,
  MemoryFile,
  MemoryNotice,
  MemorySearchHit,
  RecoveryReport,
} from '../../shared/types'
import type { MemoryMutation, MemoryPolicy, MemoryResult } from '../memory/types'

/** Who asked for a change: Claude (in a conversation, for a tool_use) or the user in the UI. */
export type Origin =
  | { readonly actor: 'claude'; readonly conversationId: string; readonly toolUseId: string }
  | { readonly actor: 'user' }

export interface ExecuteOutcome extends MemoryResult {
  readonly mutation: MemoryMutation | null
  /** The commit made for this command; null for reads, failures and no-op changes. */
  readonly commit: CommitSummary | null
  /** True when the command changed the folder but its commit failed; it is retried first thing. */
  readonly commitPending?: boolean
}

export interface LogQuery {
  readonly offset: number
  readonly limit: number
  readonly path?: string
  readonly conversationId?: string
  readonly actor?: 'claude' | 'user' | 'system'
}

/**
 * The memory folder under version control: every mutation is one commit, all changes go
 * through one serial queue. Paths are virtual (`/memories/...`) everywhere.
 */
export interface VersionedMemory {
  /** What start-up recovery did (null when nothing needed repair). */
  readonly recovery: RecoveryReport | null

  /** Runs one Memory tool command (untrusted input); commits when it changed something. */
  execute(input: unknown, origin?: Origin): Promise<ExecuteOutcome>
  setPolicy(policy: Partial<MemoryPolicy>): void

  // User edits from the UI: same rules and queue, author "You".
  writeFile(
    path: string,
    content: string,
    options?: { mustNotExist?: boolean },
  ): Promise<ChangeResult>
  renameFile(from: string, to: string): Promise<ChangeResult>
  deleteFile(path: string): Promise<ChangeResult>
  /** Takes every secret out of the file (as it is now), as a user commit; history keeps the past. */
  removeSecrets(path: string): Promise<ChangeResult>

  // The memory browser.
  tree(): Promise<ReadonlyArray<MemoryEntry>>
  readFile(path: string): Promise<MemoryFile>
  search(query: string): Promise<ReadonlyArray<MemorySearchHit>>
  /** Notices raised so far this session (too-large files, secrets from outside edits). */
  notices(): ReadonlyArray<MemoryNotice>
  onNotice(listener: (notice: MemoryNotice) => void): () => void

  // History.
  log(query: LogQuery): Promise<LogPage>
  fileHistory(path: string): Promise<ReadonlyArray<CommitSummary>>
  show(oid: string): Promise<CommitDetail>
  readAt(path: string, oid: string): Promise<string | null>
  diff(path: string, from: string, to: string): Promise<FileChange>

  // Restores: each one is a new commit, never a rewrite.
  restoreFile(path: string, oid: string): Promise<ChangeResult>
  restoreDeleted(path: string): Promise<ChangeResult>
  revert(oid: string): Promise<ChangeResult>
  restoreAll(oid: string): Promise<ChangeResult>

  onCommit(listener: (commit: CommitSummary) => void): () => void
  /** Waits for queued work and releases resources. */
  close(): Promise<void>
}
