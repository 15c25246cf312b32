/**
 * Types of the Memory tool handler that other main-process domains rely on.
 * (Shared between memory/, history/ and agent/; the handler itself lives in this folder.)
 */
import type { MemoryErrorCode } from '../../shared/errors'
import type { ChangePreview, CreateExistingPolicy, KeptAsideEntry } from '../../shared/types'
import type { Stats } from 'node:fs'
import type { FolderTree, StagedWrite } from '../lib/folders'

/**
 * True for an entry of the memory folder (its name and `lstat`) that the host keeps no copy
 * of, so deleting it would lose it for good. A folder `delete` moves such entries, with their
 * place inside the folder, to `<folder> (not in history)` beside it instead of removing them,
 * and says so; what is kept in a copy is removed.
 */
export type KeepsNoCopy = (name: string, stats: Stats, at?: string) => boolean

/** A content block of a tool result, in the Messages API's shape. */
export type MemoryContentBlock =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image'
      readonly source: {
        readonly type: 'base64'
        readonly media_type: 'image/png' | 'image/jpeg'
        readonly data: string
      }
    }

/** What Claude receives for one command. */
export interface MemoryResult {
  readonly content: string | ReadonlyArray<MemoryContentBlock>
  readonly isError: boolean
}

export type MutatingCommand = 'create' | 'str_replace' | 'insert' | 'delete' | 'rename'

/** What a successful mutating command touched, so history can commit exactly that. */
export interface MemoryMutation {
  readonly command: MutatingCommand
  /** Virtual, normalized paths (`/memories/...`): `[path]`, or `[old_path, new_path]` for rename. */
  readonly paths: ReadonlyArray<string>
  /** True when `create` replaced an existing file. */
  readonly overwrite: boolean
}

/**
 * What a mutating command changes: the file's text before and after, or the folder it deletes
 * or moves. Paths are virtual; a folder lists its first `PLAN_FILE_LIST` files.
 */
export interface MadeChange extends ChangePreview {
  readonly command: MutatingCommand
}

/**
 * What a mutating command would do, from a dry run (`MemoryTool.preview`): the same checks and
 * the same answer as the command itself, without touching the disk.
 */
export interface PlannedChange extends MadeChange {
  /**
   * The state of the paths the plan was made against (content hashes, or a folder's listing):
   * a later plan with the same fingerprint would do exactly the same.
   */
  readonly fingerprint: string
}

/** `MemoryResult` plus the mutation it made (null for `view` and for failures). */
export interface MemoryExecution extends MemoryResult {
  readonly mutation: MemoryMutation | null
  /** Which refusal it was, when `isError` (null for a success). */
  readonly errorCode: MemoryErrorCode | null
  /** From `preview` only: what the command would change (null for `view` and refusals). */
  readonly planned?: PlannedChange | null
  /** From `execute` with `describe` only: what the command changed (absent otherwise). */
  readonly made?: MadeChange
  /** What the command moved aside rather than destroy, History holding no copy of it. */
  readonly keptAside?: ReadonlyArray<KeptAsideEntry>
}

/** Policies that settings may change while the app runs. */
export interface MemoryPolicy {
  readonly createExisting: CreateExistingPolicy
  readonly secretScanning: boolean
}

/** Size limits a write must respect; a write that would break one is refused and changes nothing. */
export interface MemoryLimits {
  /** Largest file a write may produce, in bytes (UTF-8). */
  readonly maxFileBytes: number
  /** Largest total of all memory files after a write, in bytes. */
  readonly maxTotalBytes: number
  /** Most memory files the folder may hold after a write. */
  readonly maxFiles: number
  /** Largest `.png`/`.jpg` file `view` returns as an image, in bytes. */
  readonly maxImageBytes: number
}

/** Per-call options of `MemoryTool.execute`. */
export interface MemoryExecuteOptions {
  /** Overrides the tool's `createExisting` policy for this one call. */
  readonly createExisting?: CreateExistingPolicy
  /**
   * `execute` only: a success also says what it changed (`made`), read as the command runs
   * (no dry run, no fingerprint), for facts about the change that need its text.
   */
  readonly describe?: boolean
  /** Given a file write before it is flushed and renamed into place (see `WriteStager`). */
  readonly stage?: WriteStager
  /**
   * Told, for a `delete` or `rename` that passed every check, just before it first touches the
   * folder, and for a `create` into new folders before they are renamed into place (`text`) (the history notes the command in flight there, see command-intent.ts).
   */
  readonly beforeMove?: (mutation: MemoryMutation, text?: string) => void
  /**
   * The memory folder's open folders for this one call, from a caller that walked them just
   * before for the same command (the history's check of the paths it touches): the command
   * uses them instead of opening its own, and leaves them open (the caller closes them).
   */
  readonly tree?: FolderTree
  /**
   * The existing entry a `delete` or a `rename` (its source) names is taken as spelled, not
   * made NFC: the person's own edits name what the Memory tab lists, a decomposed `café.md`
   * put there outside Cairn too. Never set for Claude, whose paths are always made NFC (D18);
   * a rename's destination is made NFC whoever asks, so such a name is renamed into memory.
   */
  readonly spelledAsOnDisk?: boolean
}

/**
 * Takes over a command's file write (one file, in a folder that already exists) before its
 * temp file is flushed: the history commits it in the same rounds of fsyncs as the file itself.
 * It publishes the write, or throws with the write unpublished (then the command fails and
 * nothing changed). `mutation` is what the command's result will carry, `made` what it changed
 * (with `describe` only).
 */
export type WriteStager = (
  write: StagedWrite,
  relative: string,
  mutation: MemoryMutation,
  made: MadeChange | undefined,
) => Promise<void>

/** The Memory tool handler: runs Claude's commands on the real memory folder. */
export interface MemoryTool {
  /**
   * Runs one command exactly as Claude sent it (untrusted JSON). Never throws for bad input;
   * rejects with the `locked` CairnError a host's `stage` or `beforeMove` threw (another Cairn
   * took the data folder over), the folder as it was.
   */
  execute(input: unknown, options?: MemoryExecuteOptions): Promise<MemoryExecution>
  /**
   * A dry run of one command: every check the command makes (paths, limits, secrets), and on
   * success its answer and `planned`, what it would change. Nothing is written.
   */
  preview(input: unknown, options?: MemoryExecuteOptions): Promise<MemoryExecution>
  /** Changes run-time policies (settings). */
  configure(policy: Partial<MemoryPolicy>): void
  /** The policies in force. */
  policy(): MemoryPolicy
  /** Forgets cached folder usage, after something other than this tool changed the folder. */
  invalidateUsage(): void
}
