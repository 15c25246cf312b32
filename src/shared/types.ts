/**
 * Data types shared by main and renderer. Plain, serializable, readonly.
 * Imports nothing from node, electron or the DOM.
 */
import type { ErrorCode } from './errors'

/** An error as it crosses the process boundary: a stable code and a message for people. */
export interface ApiErrorData {
  readonly code: ErrorCode
  readonly message: string
}

/** What every request resolves to on the renderer side: never a thrown stack. */
export type ApiResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiErrorData }

export interface AppInfo {
  readonly name: string
  readonly version: string
  /** The user's data folder, shown in settings so they can find their files. */
  readonly dataDir: string
  /** What start-up recovery did, if anything (null when the history was clean). */
  readonly recovery: RecoveryReport | null
}

/**
 * A step of opening the memory at start, as the opening screen names it:
 * - `checking`: reading the history and comparing the folder with it (usually all there is);
 * - `recovering`: the Cairn before did not close cleanly; what it left is looked for everywhere;
 * - `rebuilding-index`: the history's index is missing or damaged and is built from the commits;
 * - `updating-index`: the index of an earlier version is brought to this version's format;
 * - `starting`: the memory is open; settings, conversations and sync start.
 */
export type OpeningStep =
  'checking' | 'recovering' | 'rebuilding-index' | 'updating-index' | 'starting'

/**
 * How far the opening is. `done` of `total` for the steps that walk every commit (the index's
 * rebuild and its update); `total` is null while it is not known yet (the commits being found).
 */
export interface OpeningProgress {
  readonly step: OpeningStep
  readonly done: number
  readonly total: number | null
}

/**
 * How far Cairn is in taking in a history `main` was moved to outside it (a `git reset`, a
 * history of thousands of commits put in place with git): `done` of the `total` commits git
 * added read so far; `total` is null while they are being found. `ended` once the follow is
 * over, whether it succeeded or failed (the `history:following` event, a few a second at most).
 */
export interface FollowProgress {
  readonly done: number
  readonly total: number | null
  readonly ended: boolean
}

/**
 * How far the opening is, as the shell tells its window (`app:opening`); `closing` once the
 * person quit meanwhile: Cairn closes as soon as the memory is open (its lock then released).
 */
export interface OpeningUpdate {
  readonly progress: OpeningProgress
  readonly closing: boolean
}

/** What `app:opening` answers: still opening (and how far), or ready. */
export type OpeningState =
  ({ readonly state: 'opening' } & OpeningUpdate) | { readonly state: 'ready' }

/**
 * What the application menu asks the window to do (New chat, Settings, Show memory, Show
 * history). Main sends it as the `app:command` event; the renderer reacts as it would to the
 * same keyboard shortcut.
 */
export type AppCommand =
  'new-chat' | 'open-settings' | 'show-memory' | 'show-history' | 'show-full-history'

/** The kinds of recovery report (`RecoveryReport.kind`). */
export const RECOVERY_KINDS = [
  'uncommitted-changes',
  'outside-changes',
  'history-repaired',
  'history-rebuilt',
] as const

/**
 * What the versioned memory repaired: at start-up (`app:info`), or later (`app:recovery`):
 * changes no commit held yet, a history that had to be started again, or edits made to the
 * memory folder outside Cairn, saved as their own commit.
 */
export interface RecoveryReport {
  /**
   * Given by the core when it tells the report, once per telling and never again in the run
   * (`recovery-3`): a dismissal names this, so it takes that report and no other that reads
   * the same.
   */
  readonly id: string
  /**
   * `uncommitted-changes`: changes no commit held yet were saved as a recovery commit;
   * `outside-changes`: edits made outside Cairn were saved as their own commit;
   * `history-repaired`: damage to the history was repaired in place (a lost newest-version
   * pointer found again, damaged stored copies rewritten from the files), history kept;
   * `history-rebuilt`: no usable history was found (or it was set aside) and a new one began.
   */
  readonly kind: (typeof RECOVERY_KINDS)[number]
  /** A sentence for people, without host paths. */
  readonly message: string
  readonly commitOid: string | null
}

/** A recovery report as it is made, before the core gives it its `id`. */
export type RecoveryTelling = Omit<RecoveryReport, 'id'>

// ---------------------------------------------------------------- memory browser

export interface MemoryEntry {
  /** Virtual path, e.g. `/memories/notes.md`. */
  readonly path: string
  readonly kind: 'file' | 'dir'
  /** Bytes for files; for directories the sum of what they contain. */
  readonly size: number
  readonly modifiedAt: number
  /**
   * Set for a file History keeps no copy of, saying why: too large to version, a name it cannot
   * track, or one Cairn may not read. Deleting or replacing it keeps it aside (`keptAsideAs`).
   */
  readonly notInHistory?: 'too-large' | 'name-not-allowed' | 'unreadable'
  /**
   * Where a delete would keep it, by the core's own rule asked of the disk when the tree was
   * listed (`big (not in history).log`; numbered where that name is taken, which on a disk
   * that ignores case includes the file's own name in other letters): for a file History keeps
   * no copy of, and for a folder holding one (the folder its files are kept in). The name only.
   */
  readonly keptAsideAs?: string
  /**
   * True for a file or folder Cairn may not read (permission denied by the operating system):
   * listed by name, a folder with nothing shown inside it, so that one such entry does not
   * break the rest of the tree.
   */
  readonly unreadable?: true
  /**
   * True for a file of memory at a commit whose version the history cannot read (its object
   * missing or damaged): listed, with its size unknown (0); opening it says it is damaged.
   */
  readonly damaged?: true
}

export interface MemoryFile {
  readonly path: string
  readonly size: number
  /**
   * `text` for UTF-8 files, `image` for png/jpeg (base64 in `data`); `too-large` for a file
   * over the size the viewer shows (no content is sent; `size` says how big it is).
   */
  readonly kind: 'text' | 'image' | 'binary' | 'too-large'
  readonly text: string | null
  readonly mediaType: string | null
  readonly data: string | null
}

/** The kinds of memory notice (`MemoryNotice.kind`). */
export const MEMORY_NOTICE_KINDS = [
  'too-large',
  'name-not-allowed',
  'unreadable',
  'secret',
  'kept-aside',
  'damaged',
] as const

/**
 * Something about the memory folder the person should know, raised once per file:
 * `too-large`: a file is not versioned because it is too large;
 * `secret`: a file edited outside Cairn holds what looks like a secret (it was committed;
 * `memory:removeSecrets` takes it out of the current file).
 */
export interface MemoryNotice {
  /**
   * Given by the core when it raises the notice, once per raising and never again in the run
   * (`notice-7`): a dismissal names this, so it takes that notice and no other that reads the
   * same (the same file's notice raised again after it was dealt with).
   */
  readonly id: string
  /**
   * `kept-aside`: a file history never held was renamed so a sync could not write over it.
   * `damaged`: a stored version of a file was found damaged after its file had changed.
   */
  readonly kind: (typeof MEMORY_NOTICE_KINDS)[number]
  /** Virtual path of the file. */
  readonly path: string
  /** A sentence for people: no host path, never the secret itself. */
  readonly message: string
  /** The commit that recorded it, when there is one. */
  readonly commitOid: string | null
}

export interface MemorySearchHit {
  readonly path: string
  readonly line: number
  readonly text: string
}

// ---------------------------------------------------------------- history

/**
 * Who made a commit: Claude, the person ("You") or Cairn itself, each under Cairn's own git
 * identity; or `outside`: a commit Cairn did not write (made with git, its author named in
 * `author`).
 */
export type Actor = 'claude' | 'user' | 'system' | 'outside'

/** The actors Cairn writes commits as (each has its git identity). */
export type CairnActor = Exclude<Actor, 'outside'>

export type CommitCommand =
  | 'create'
  | 'str_replace'
  | 'insert'
  | 'delete'
  | 'rename'
  | 'write'
  | 'restore-file'
  | 'restore-deleted'
  | 'revert'
  | 'restore-all'
  | 'recovery'
  | 'outside'
  | 'init'
  | 'merge'
  | 'resolve'
  | 'import'

/** One entry of the timeline. */
export interface CommitSummary {
  readonly oid: string
  readonly parent: string | null
  /** Milliseconds since the epoch. */
  readonly time: number
  readonly actor: Actor
  /**
   * For a commit made outside Cairn (actor `outside`): its author's name as git records it
   * ("Ann Smith"), or the committer's when the author is one of Cairn's; absent otherwise.
   */
  readonly author?: string
  readonly command: CommitCommand
  readonly subject: string
  /** Virtual paths touched, e.g. `['/memories/a.md', '/memories/b.md']` for a rename. */
  readonly paths: ReadonlyArray<string>
  readonly conversationId: string | null
  readonly toolUseId: string | null
  /** True when a `create` replaced an existing file. */
  readonly overwrite: boolean
  /** For restores and reverts: the commit they restored from or reverted. */
  readonly restoredFrom: string | null
  /** For a merge commit: the parents after `parent` (the history it joined in). */
  readonly otherParents?: ReadonlyArray<string>
  /** The machine that made the commit (its `Machine:` trailer), when it names one. */
  readonly machine?: string | null
  /**
   * What the review checks found in this change (see `WriteFlag`); absent when none fired or
   * the commit predates them. Stored as `Flag:` trailers, so they survive a restart.
   */
  readonly flags?: ReadonlyArray<WriteFlag>
  /** Set when the person reviewed the change before it landed (`Reviewed-by: You`). */
  readonly review?: ReviewMark
}

export interface LogPage {
  readonly entries: ReadonlyArray<CommitSummary>
  /** Number of entries matching the filter (for virtualized lists). */
  readonly total: number
}

/** `unchanged` only from a diff of one file between two commits that hold it alike. */
export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'unchanged'

/** One file changed by a commit, with both sides for the diff view. */
export interface FileChange {
  readonly path: string
  readonly oldPath: string | null
  readonly status: ChangeStatus
  /** Text before/after; null when absent on that side or binary. */
  readonly before: string | null
  readonly after: string | null
  readonly binary: boolean
  /**
   * True when `before`/`after` were left out to keep a large commit's answer small (they are
   * null then, whatever the file holds); fetch this file alone with `history:diff`.
   */
  readonly omitted?: boolean
  /**
   * True when the history's copy of this version (`after`) is missing or corrupt, or of the
   * earlier one when this version has no content of its own (a deletion): it cannot be shown
   * (the rest of the history is unaffected).
   */
  readonly damaged?: boolean
  /**
   * True when only the earlier version's copy (`before`) is damaged: `before` is null and this
   * version, intact, is `after`, to be shown whole rather than as a diff.
   */
  readonly beforeDamaged?: boolean
}

export interface CommitDetail {
  readonly commit: CommitSummary
  /** The commit's message as git stores it: subject, then one trailer per fact. */
  readonly message: string
  /** The first changes in path order, at most a bounded number (see `totalChanges`). */
  readonly changes: ReadonlyArray<FileChange>
  /** How many files the commit changed in all (renames count once). */
  readonly totalChanges: number
  /** True when `changes` lists fewer files than `totalChanges`. */
  readonly truncated: boolean
}

/** One line of a file with the commit that last changed it (`history:blame`). */
export interface BlameLine {
  /** 1-based line number. */
  readonly line: number
  /** The line's text, without its newline. */
  readonly text: string
  readonly commit: CommitSummary
  /**
   * True when the history's copy of an older version of the file is damaged, so the trace
   * stopped at `commit`: the line may be older than that.
   */
  readonly damagedBefore?: boolean
}

/** How memory differs between two commits (`history:compare`), file by file. */
export interface Comparison {
  readonly from: string
  readonly to: string
  /** The first changes in path order, bounded like `CommitDetail.changes`. */
  readonly changes: ReadonlyArray<FileChange>
  readonly totalChanges: number
  readonly truncated: boolean
}

/** The longest text a history search looks for (`history:search`). */
export const MAX_SEARCH_CHARS = 1000

/** A commit whose diff adds or removes the searched text, and the files where it does. */
export interface HistorySearchHit {
  readonly commit: CommitSummary
  readonly files: ReadonlyArray<{ readonly path: string; readonly change: 'added' | 'removed' }>
}

/** One page of a history search, newest commits first (`history:search`). */
export interface HistorySearchPage {
  readonly hits: ReadonlyArray<HistorySearchHit>
  /** Pass as `before` to go on with older commits; null when the whole history was searched. */
  readonly next: string | null
  /** Commits searched so far, counted from the newest, out of `total`. */
  readonly scanned: number
  readonly total: number
  /**
   * File changes this page passed over because the history's copy of one of their versions
   * is damaged (missing or corrupt): the text may have been added or removed there unseen.
   */
  readonly damaged: number
}

/**
 * Something a change did not destroy because History holds no copy of it: moved beside its
 * place as `<name> (not in history)` instead (virtual paths).
 * - `not-in-history`: a file History never versioned (too large, or a name it cannot track);
 * - `changed`: a file History holds, but not this version (saved outside Cairn since);
 * - `folder`: files of a deleted folder History had no copy of, kept in a folder of that name;
 * - `unreadable`: a file Cairn may not read (permission denied): what it holds was never read.
 *   `versioned` says whether History holds a last version of it at `path`.
 */
export interface KeptAsideEntry {
  readonly path: string
  readonly keptAs: string
  readonly reason: 'not-in-history' | 'changed' | 'folder' | 'unreadable'
  readonly versioned?: boolean
}

/** Result of a user edit or a restore: the commit it made, or null when nothing changed. */
export interface ChangeResult {
  readonly commit: CommitSummary | null
  readonly message: string
  /** What the change moved aside rather than destroy (absent when nothing was). */
  readonly keptAside?: ReadonlyArray<KeptAsideEntry>
}

// ---------------------------------------------------------------- review

/** Which of Claude's memory changes wait for the person: none, suspicious ones, or all. */
export const REVIEW_MODES = ['off', 'flagged', 'all'] as const
export type ReviewMode = (typeof REVIEW_MODES)[number]

/**
 * The rules that flag a write as suspicious:
 * - `instructions`: text that reads as instructions to a future assistant;
 * - `hidden-unicode`: invisible characters (zero-width, bidi controls, tag characters);
 * - `deletes-folder`: deleting a whole folder;
 * - `deletes-most`: removing more than half of a file's text (deleting it counts);
 * - `person-edited`: writing to a file the person edited themselves in the last 24 hours;
 * - `unchecked`: whether the person edited the file could not be looked up (the history index
 *   being rebuilt, a read that failed): the change was not checked for `person-edited`.
 */
export const FLAG_RULES = [
  'instructions',
  'hidden-unicode',
  'deletes-folder',
  'deletes-most',
  'person-edited',
  'unchecked',
] as const
export type FlagRule = (typeof FLAG_RULES)[number]

/** One rule that fired on a change, and where. */
export interface WriteFlag {
  readonly rule: FlagRule
  /** The virtual path it fired on. */
  readonly path: string
  /** 1-based line of the new text it fired on; null for whole-file rules. */
  readonly line: number | null
  /** What was found, for people (invisible characters named, never pasted raw). */
  readonly message: string
}

/** How the person let a change land: as Claude wrote it, or with their own edits. */
export type ReviewMark = 'approved' | 'edited'

/** The memory commands that change something, which review may hold. */
export type ChangeCommand = 'create' | 'str_replace' | 'insert' | 'delete' | 'rename'

/** What a memory change does, from a dry run of it against the memory as it is. */
export interface ChangePreview {
  readonly command: ChangeCommand
  /** The path it changes (for a rename, where it moves from). */
  readonly path: string
  /** For a rename: where it moves to. */
  readonly newPath: string | null
  /** A folder delete or rename changes everything in it. */
  readonly kind: 'file' | 'dir'
  /** The file's text now; null when it does not exist yet, is a folder, or is not text. */
  readonly before: string | null
  /** The file's full text as the change would leave it; null when it deletes it. */
  readonly after: string | null
  /**
   * The size in bytes of the file there now when it exists but is not text (an image, notes
   * in Latin-1): `before` is then null, yet the change replaces or deletes a file. Null when
   * there is no file, or it is text.
   */
  readonly notTextBytes: number | null
  /**
   * The size in bytes of a file a delete or rename moves or removes without its text being
   * read: over what a review card's preview carries (1,000,000 bytes; such a change needs no
   * text, so it is planned from the file's size alone). `before` is then null. Absent or null
   * otherwise.
   */
  readonly unreadBytes?: number | null
  /** For a folder: the files it holds (the first 200), and how many in all. */
  readonly files: ReadonlyArray<string>
  readonly fileCount: number
}

/**
 * A change waiting for the person's decision: Claude's command (held, not run) or Cairn's
 * own proposal (an expiry). `before` and `after` are the file's full text now and as the
 * change would leave it, from a dry run of the command against the current file.
 */
export interface PendingChange extends ChangePreview {
  readonly id: string
  /** The tool_use the change answers; null for Cairn's proposals. */
  readonly toolUseId: string | null
  readonly conversationId: string | null
  /** Who proposes it: Claude in a conversation, or Cairn (an expiry of a file left unread). */
  readonly origin: 'claude' | 'cairn'
  readonly flags: ReadonlyArray<WriteFlag>
  /**
   * Set when the file's text before or after is too long to send with the change: `before`
   * and `after` are then null, and these say how long they are (characters). The whole text is
   * fetched on demand (`review:text`).
   */
  readonly omitted: { readonly beforeChars: number; readonly afterChars: number } | null
  /**
   * Checks that could not be made (the person-edited lookup while the history index is
   * rebuilt), in words for people: the change waits rather than land unchecked.
   */
  readonly unchecked: ReadonlyArray<string>
  readonly createdAt: number
  /** True when the person may edit `after` before approving (a change that leaves text). */
  readonly editable: boolean
  /**
   * Why it cannot be approved as it is: the memory changed since and the command would now
   * fail. Only declining is left. Null while it can be approved.
   */
  readonly problem: string | null
  /**
   * Bumped each time the preview is planned again against the file as it is (it changed
   * since): a decision names the revision the person saw, and one made on an older one is
   * refused, so edited text never lands over an edit the person has not seen.
   */
  readonly revision: number
}

// ---------------------------------------------------------------- memory hygiene

/** What Cairn knows about one memory file's use. */
export interface FileUse {
  readonly path: string
  readonly size: number
  readonly modifiedAt: number
  /** When Claude last viewed it (null: not since the read log began). */
  readonly lastReadAt: number | null
  /** When Claude last changed it. */
  readonly lastChangedAt: number | null
  /** Estimated tokens Claude reads to view all of it. */
  readonly tokens: number
  /** True when one `view` cannot return it whole (Claude needs several). */
  readonly overViewLimit: boolean
}

/** The memory size meter and per-file use, for the memory browser. */
export interface MemoryStats {
  readonly files: ReadonlyArray<FileUse>
  readonly totalBytes: number
  /** Estimated tokens Claude reads when it views the folder and every file in it. */
  readonly totalTokens: number
  /** Most characters one `view` returns. */
  readonly viewLimit: number
  /** When the read log began: files not read since may have been read before. */
  readonly since: number
}

// ---------------------------------------------------------------- chat

export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
}

/** A block of a stored message, in the Messages API's own shape (subset). */
export type StoredBlock =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'tool_use'
      readonly id: string
      readonly name: string
      readonly input: unknown
    }
  | {
      readonly type: 'tool_result'
      readonly tool_use_id: string
      readonly content: string
      readonly is_error: boolean
    }

/**
 * A block of a type this build does not know (one a newer build stored), as it was on disk, and
 * its index in the stored message's blocks. Never shown nor sent to the API; written back when
 * the conversation is saved again, so the newer build's data is not lost.
 */
export interface UnknownBlock {
  readonly at: number
  readonly block: { readonly type: string } & Readonly<Record<string, unknown>>
}

export interface StoredMessage {
  readonly role: 'user' | 'assistant'
  /** The blocks this build knows, in order. */
  readonly content: ReadonlyArray<StoredBlock>
  /** Blocks of types this build does not know (absent when there are none). */
  readonly unknownBlocks?: ReadonlyArray<UnknownBlock>
  /** For assistant messages: stop reason and usage, as reported by the API. */
  readonly stopReason?: string | null
  readonly usage?: TokenUsage | null
  readonly createdAt: number
  /** For a prompt the person typed: the turn it started (absent in older conversations). */
  readonly turnId?: string
  /**
   * For Claude's replies: the memory commit holding what the reply's memory commands read
   * (a view, or the file a `str_replace` or `insert` edited, just before its commit), else the
   * one the turn's earlier reads or start left it at (null: memory was empty; absent in older
   * conversations). Edits made outside Cairn are committed before Claude reads them.
   */
  readonly memoryAt?: string | null
  /** For Claude's replies: the memory paths Claude viewed during the turn, in order. */
  readonly viewed?: ReadonlyArray<string>
}

export interface ConversationSummary {
  readonly id: string
  readonly title: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly messageCount: number
  /**
   * True for a conversation whose file could not be read (cut short, not JSON): listed so the
   * person sees it and can delete it. Its title and times are what could be recovered from the
   * file (else "Unreadable conversation" and the file's time); it has no messages to open.
   */
  readonly unreadable?: boolean
  /**
   * Set when another program (an editor, a sync tool) changed the conversation's file since
   * Cairn last read or wrote it, this session: when (`at`), what Cairn did (`how`), and the
   * name of the copy it kept, relative to the conversations folder. Not stored.
   * - `taken-up`: Cairn took up that version; `keptAs` is Cairn's own copy
   *   (`cairn-replaced/<id>.json`) when it held something that version lacks, else null.
   * - `kept-own`: the change came while a turn ran (or as Cairn saved): Cairn went on with its
   *   own copy; `keptAs` is the other version, kept in `cairn-replaced/`.
   * - `written-back`: the file was removed or moved while a turn ran: Cairn wrote it back with
   *   the turn (`keptAs` null).
   * - `damaged`: the file no longer read as this conversation: it was moved to `keptAs`
   *   (`cairn-damaged/<id>.json`) and Cairn's copy saved in its place.
   */
  readonly changedOutside?: {
    readonly at: number
    readonly how: 'taken-up' | 'kept-own' | 'written-back' | 'damaged'
    readonly keptAs: string | null
  }
}

export interface Conversation extends ConversationSummary {
  readonly messages: ReadonlyArray<StoredMessage>
  /** tool_use_id -> commit made by that memory command. */
  readonly toolCommits: Readonly<Record<string, string>>
  /**
   * Why the last turn ended without a whole reply (an API error, an empty reply, a refusal, an
   * unknown stop reason), as its `error` event said: kept until the next message is sent, so the
   * chat can still say it after a restart. Absent when the last turn ended well.
   */
  readonly lastError?: TurnError
  /**
   * The turn that began and has not ended: stored with its prompt, cleared when it ends. What
   * `conversations:get` answers holds it only for a turn no Cairn runs now, one cut off when
   * Cairn closed (killed, crashed, a power cut) mid-reply, so the chat can say so. Absent when
   * the last turn ended (well or not), or was dismissed (`chat:dismiss`).
   */
  readonly openTurn?: string
}

/** The error a turn ended with, kept with its conversation (`Conversation.lastError`). */
export interface TurnError {
  readonly turnId: string
  readonly code: ErrorCode
  readonly message: string
}

/**
 * A turn running now, as a window that opened (or reloaded) after it began catches up with it
 * (`chat:running`): its events so far, neighbouring text deltas joined into one, and `next`,
 * the `seq` of the first event still to come. Live events with a lower `seq` are already in
 * `events`.
 */
export interface RunningTurn {
  readonly conversationId: string
  readonly turnId: string
  readonly events: ReadonlyArray<AgentEvent>
  readonly next: number
}

export interface ConversationSearchHit {
  readonly conversation: ConversationSummary
  /** A short excerpt around the match, or null when only the title matched. */
  readonly excerpt: string | null
}

/**
 * Events of one running turn, enough to rebuild the transcript live. `seq` counts the turn's
 * events from 0 (`turn-started`): a window that asked for the running turns (`chat:running`)
 * skips the live events its answer already held, and misses none.
 */
export type AgentEvent = {
  readonly conversationId: string
  readonly turnId: string
  readonly seq: number
} & (
  | {
      readonly type: 'turn-started'
      readonly userText: string
      /** The memory commit at the turn's start (null: memory was empty). */
      readonly memoryAt: string | null
      /** The id the sender gave `chat:send`: how it recognizes its own turn. */
      readonly clientId: string
    }
  | { readonly type: 'text-delta'; readonly text: string }
  | {
      readonly type: 'tool-call'
      readonly toolUseId: string
      readonly command: string
      readonly input: unknown
    }
  | {
      readonly type: 'tool-result'
      readonly toolUseId: string
      readonly content: string
      readonly isError: boolean
      readonly commitOid: string | null
    }
  | {
      readonly type: 'message-finished'
      readonly stopReason: string | null
      readonly usage: TokenUsage
    }
  | { readonly type: 'turn-finished'; readonly stopped: boolean }
  | { readonly type: 'error'; readonly code: ErrorCode; readonly message: string }
)

// ---------------------------------------------------------------- settings

/** What creating a file that exists does: replace it (history keeps the old one) or refuse. */
export const CREATE_EXISTING_POLICIES = ['overwrite', 'error'] as const
export type CreateExistingPolicy = (typeof CREATE_EXISTING_POLICIES)[number]
export const THEME_SETTINGS = ['system', 'light', 'dark'] as const
export type ThemeSetting = (typeof THEME_SETTINGS)[number]

export interface Settings {
  readonly model: string
  readonly maxTokens: number
  readonly customInstructions: string
  readonly createExisting: CreateExistingPolicy
  readonly secretScanning: boolean
  readonly theme: ThemeSetting
  /** Which of Claude's memory changes wait for the person (default `off`). */
  readonly reviewMode: ReviewMode
  /** Propose expiring files Claude has not read for this many days; null: never. */
  readonly expireAfterDays: number | null
}

/** Settings as the renderer sees them: never the key itself. */
/** Most characters of custom instructions (`settings:update` refuses more). */
export const MAX_INSTRUCTIONS_CHARS = 20_000

/** Most characters `settings:setApiKey` takes: Anthropic keys are about 100. */
export const MAX_API_KEY_CHARS = 500

export interface SettingsView extends Settings {
  readonly hasApiKey: boolean
  /** Where the key lives: OS keychain, plain-text fallback, this session only, the environment, or nowhere. */
  readonly apiKeySource: 'os' | 'plaintext' | 'memory' | 'env' | 'none'
  /**
   * Whether `ANTHROPIC_API_KEY` is set in the environment. A key saved in Settings wins over it;
   * it is used only while none is saved.
   */
  readonly envApiKey: boolean
  readonly dataDir: string
  /** Set when settings.json could not be read (defaults stand in), in words for people. */
  readonly settingsProblem?: string
  /**
   * Set when a key is saved but could not be read (a disk error), in words for people: the key
   * is kept, so Settings does not ask for one as if none were saved.
   */
  readonly apiKeyProblem?: string
}

export interface ModelInfo {
  readonly id: string
  readonly displayName: string
}

// ---------------------------------------------------------------- sync, export and import

export type SyncState = 'off' | 'idle' | 'syncing' | 'error' | 'conflicts'

/** Sync's settings as the renderer sees them: never the token itself. */
export interface SyncConfigView {
  /** The remote's address; '' when sync is off. */
  readonly url: string
  readonly username: string
  readonly hasToken: boolean
  /** The name this machine's commits carry. */
  readonly machineName: string
  /** The host name, used when `machineName` is left empty. */
  readonly defaultMachineName: string
  /** Minutes between syncs when nothing changes (0: only on changes and "Sync now"). */
  readonly intervalMinutes: number
  /** True when the token would travel unencrypted (plain http to another machine). */
  readonly insecure: boolean
}

/** One file a merge could not settle alone: both versions kept, waiting for the person. */
export interface SyncConflict {
  /** The file holding both versions (virtual path). */
  readonly path: string
  /** `text`: both versions between markers in the file; `binary`: kept as two files. */
  readonly kind: 'text' | 'binary'
  /** This machine's side: its machine name. */
  readonly oursLabel: string
  /** The other side's machine name. */
  readonly theirsLabel: string
  /**
   * For text: each conflicting region, this machine's version and the other one; the first
   * few only, each side cut to a bound (`cut`), so the status stays small whatever the file.
   */
  readonly blocks: ReadonlyArray<{ readonly ours: string; readonly theirs: string }>
  /** For text: how many conflicting regions the file holds (more than `blocks` when cut). */
  readonly blockCount: number
  /** True when `blocks` leaves regions out or a side was cut: the file holds the rest. */
  readonly cut: boolean
  /** For binary: where the other side's version is (virtual path). */
  readonly otherPath: string | null
  /** The merge commit that raised it. */
  readonly since: string
}

/**
 * The question asked before anything is joined: the remote holds memory unrelated to this
 * machine's (or its history was rewritten). Nothing happens until the person answers.
 */
export interface SyncJoinQuestion {
  readonly reason: 'unrelated' | 'rewritten'
  /** Files in the remote's memory and in this machine's. */
  readonly remoteFiles: number
  readonly localFiles: number
  /** The machine that made the remote's latest commit, when it says. */
  readonly remoteMachine: string | null
}

/** A history kept aside under a backup ref (when "Use the remote's memory" replaced it). */
export interface SyncBackup {
  /** The ref's name under refs/cairn/backups/. */
  readonly name: string
  readonly commit: string
  /** When the backup's last commit was made (ms). */
  readonly time: number
  readonly files: number
}

export interface SyncStatus {
  readonly state: SyncState
  /** When the last sync finished (ms), null if never. */
  readonly lastSyncedAt: number | null
  /** Why the last sync did not finish (state `error`). */
  readonly error?: ApiErrorData
  /**
   * Set when sync keeps failing: the last `count` syncs in a row (at least
   * `REPEATED_SYNC_FAILURES`) all failed, the first of them at `since` (ms), the latest with
   * `error` (`mixed` when they failed more than one way). `advice` says in plain words what
   * the person can do about the latest failure.
   */
  readonly repeated?: SyncRepeatedFailure
  readonly conflicts: ReadonlyArray<SyncConflict>
  /** Set while the person must choose how to join this machine's memory with the remote's. */
  readonly join: SyncJoinQuestion | null
  /** Local commits the remote does not have yet. */
  readonly unsynced: number
  readonly config: SyncConfigView
  readonly backups: ReadonlyArray<SyncBackup>
  /** Set when the list of backups cannot be read (a failing disk, a denied read): why, for people. */
  readonly backupsUnreadable?: string
}

/** Syncs failing the same way in a row; see `SyncStatus.repeated`. */
export interface SyncRepeatedFailure {
  readonly count: number
  readonly since: number
  readonly advice: string
  /** They failed more than one way (two failures taking turns); `error` is the latest. */
  readonly mixed?: boolean
}

/** Failures in a row after which the status says sync keeps failing. */
export const REPEATED_SYNC_FAILURES = 5

/** What "Test connection" found. */
export interface SyncTestResult {
  readonly ok: boolean
  readonly found:
    | 'empty'
    | 'this-memory'
    | 'other-memory'
    | 'unreachable'
    | 'disk'
    | 'auth'
    | 'redirected'
    | 'not-a-repository'
    | 'invalid-url'
  /** A sentence for people. */
  readonly message: string
}

export type ExportKind = 'bundle' | 'zip'
export type ImportKind = 'bundle' | 'repository' | 'folder' | 'zip' | 'text'

/** The result of an export: the file name the person chose (never a folder path). */
export interface ExportResult {
  /** False when the person cancelled the save dialog. */
  readonly saved: boolean
  readonly fileName: string | null
  readonly message: string
}

/** The result of an import: its commit (null when cancelled or nothing new) and what was left out. */
export interface ImportResult extends ChangeResult {
  /** Files not imported, each with why (hidden, a link, looks like a secret, too large...). */
  readonly skipped: ReadonlyArray<{ readonly path: string; readonly reason: string }>
}
