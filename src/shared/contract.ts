/**
 * The one typed contract between main and renderer.
 *
 * `requestSchemas` maps every request channel (`domain:verb`) to the zod schema of its
 * payload; `RequestResults` maps it to its result. Main registers one handler per channel
 * (a missing one is a compile error), validates every payload against its schema, and the
 * preload builds `window.api` from `requestChannels`. `EventMap` lists what main pushes.
 */
import { z } from 'zod'
import {
  CREATE_EXISTING_POLICIES,
  MAX_API_KEY_CHARS,
  MAX_INSTRUCTIONS_CHARS,
  MAX_SEARCH_CHARS,
  REVIEW_MODES,
  THEME_SETTINGS,
} from './types'
import type {
  AgentEvent,
  ApiResult,
  AppCommand,
  OpeningState,
  OpeningUpdate,
  AppInfo,
  BlameLine,
  ChangeResult,
  CommitDetail,
  Comparison,
  CommitSummary,
  FollowProgress,
  Conversation,
  ConversationSearchHit,
  ConversationSummary,
  FileChange,
  HistorySearchPage,
  LogPage,
  MemoryEntry,
  MemoryFile,
  MemoryNotice,
  MemorySearchHit,
  MemoryStats,
  ModelInfo,
  PendingChange,
  RecoveryReport,
  RunningTurn,
  SettingsView,
  SyncStatus,
  SyncTestResult,
  ExportResult,
  ImportResult,
} from './types'
import { requestChannels } from './channels'
import { hasInvisible } from './invisible'
import { runIdPattern } from './run-ids'

/** Why a name or model id holding a line break or an invisible character is refused. */
const ONE_VISIBLE_LINE = 'must be one line without control or invisible formatting characters'

const virtualPath = z.string().min(1).max(4096)
/** Most characters `memory:write` accepts: the Memory tool's 1 MiB per file. */
export const MAX_WRITE_CHARS = 1024 * 1024
/** Most characters a conflict's resolution takes: the history's 32 MiB per file. */
export const RESOLVE_MAX_CHARS = 32 * 1024 * 1024
/** The id the core gave a recovery report or a memory notice when it told it (`run-ids.ts`). */
const toldId = (prefix: string) =>
  z.string().max(40).regex(runIdPattern(prefix), `must be a ${prefix} id such as ${prefix}-1`)
const oid = z.string().regex(/^[0-9a-f]{40}$/, 'must be a 40-character commit id')
const id = z.string().min(1).max(200)
const none = z.undefined()
// What names are written with that is not drawn: see `machineName`.
const WRITTEN_WITH =
  /(?<=\p{Extended_Pictographic}|\u{FE0F}|\p{Emoji_Modifier})\u200D(?=\p{Extended_Pictographic})|[\u200E\u200F\u061C]/gu
// A name for this machine: one line, shown in the timeline and in conflict markers.
const machineName = z
  .string()
  .max(100)
  .refine(
    // Format characters too (a bidi override shows a name reversed): the name goes into
    // conflict markers and the names of the side copies other machines make of files. Not
    // those names are written with, and that reorder or hide nothing (names saved before
    // this rule must still save): a joiner inside an emoji sequence ("👩‍💻"), and the
    // direction marks of right-to-left text.
    (name) => !hasInvisible(name.replace(WRITTEN_WITH, '')),
    ONE_VISIBLE_LINE,
  )

/** Each setting's bounds: an update and what `settings.json` holds are checked alike. */
export const settingFields = {
  // No model's id holds one, and Settings would show it reordered (a bidi override) or not
  // at all: refused, as a machine's name is.
  model: z
    .string()
    .min(1)
    .max(200)
    .refine((model) => !hasInvisible(model), ONE_VISIBLE_LINE),
  maxTokens: z.int().min(1).max(128000),
  customInstructions: z.string().max(MAX_INSTRUCTIONS_CHARS),
  createExisting: z.enum(CREATE_EXISTING_POLICIES),
  secretScanning: z.boolean(),
  theme: z.enum(THEME_SETTINGS),
  reviewMode: z.enum(REVIEW_MODES),
  expireAfterDays: z.int().min(1).max(3650).nullable(),
}

export const requestSchemas = {
  'app:info': none,
  /** The recovery reports of this session (start-up's and later ones), latest of each kind. */
  'app:recoveries': none,
  /**
   * The report the person dismissed, by the id it was told with (`app:recoveries`,
   * `app:recovery`): `app:recoveries` no longer answers it, in any window, for the rest of the
   * run. Another report that reads the same keeps its own id and stays.
   */
  'app:dismissRecovery': z.strictObject({ id: toldId('recovery') }),
  'app:openDataFolder': none,
  'app:openExternal': z.strictObject({ url: z.url({ protocol: /^https$/ }) }),
  /** The memory file whose editor holds unsaved text (null: none): closing the window asks. */
  'app:unsaved': z.strictObject({ path: virtualPath.nullable() }),
  /**
   * Whether the memory is open yet, and how far its opening is. The one channel the shell
   * answers before the core is ready; every other one is refused meanwhile (`starting`).
   */
  'app:opening': none,

  /** `at`: the memory as it was after that commit (read-only), instead of now. */
  'memory:tree': z.strictObject({ at: oid.optional() }).optional(),
  'memory:read': z.strictObject({ path: virtualPath, at: oid.optional() }),
  'memory:write': z.strictObject({
    path: virtualPath,
    // The Memory tool's write limit is 1 MiB of UTF-8; no character is less than a byte.
    content: z.string().max(MAX_WRITE_CHARS, 'is over the 1 MiB limit of a memory file'),
    /** true for "New file": refuse to replace an existing one. */
    mustNotExist: z.boolean().optional(),
  }),
  'memory:rename': z.strictObject({ from: virtualPath, to: virtualPath }),
  'memory:delete': z.strictObject({ path: virtualPath }),
  'memory:search': z.strictObject({ query: z.string().min(1).max(500) }),
  'memory:notices': none,
  /**
   * The notice the person dismissed, by the id it was raised with (`memory:notices`,
   * `memory:notice`): `memory:notices` no longer answers it, in any window, until its file's
   * notice is raised anew. Another notice that reads the same keeps its own id and stays.
   */
  'memory:dismissNotice': z.strictObject({ id: toldId('notice') }),
  'memory:removeSecrets': z.strictObject({ path: virtualPath }),

  'history:log': z.strictObject({
    offset: z.int().min(0),
    limit: z.int().min(1).max(500),
    path: virtualPath.optional(),
    conversationId: id.optional(),
    actor: z.enum(['claude', 'user', 'system', 'outside']).optional(),
  }),
  'history:show': z.strictObject({ oid }),
  'history:fileHistory': z.strictObject({ path: virtualPath }),
  'history:readAt': z.strictObject({ path: virtualPath, oid }),
  'history:diff': z.strictObject({ path: virtualPath, from: oid, to: oid }),
  'history:restoreFile': z.strictObject({ path: virtualPath, oid }),
  /** `oid`: the change that deleted it, as selected; the version just before it comes back. */
  'history:restoreDeleted': z.strictObject({ path: virtualPath, oid: oid.optional() }),
  'history:revert': z.strictObject({ oid }),
  'history:restoreAll': z.strictObject({ oid }),
  /** Each line of a file (at `oid`, default now) with the commit that last changed it. */
  'history:blame': z.strictObject({ path: virtualPath, oid: oid.optional() }),
  /** One page of the commits adding or removing `text`, older than `before` if given. */
  'history:search': z.strictObject({
    text: z
      .string()
      .min(1)
      .max(MAX_SEARCH_CHARS, 'is longer than the 1,000 characters a search can look for'),
    matchCase: z.boolean().optional(),
    before: oid.optional(),
  }),
  /** How memory at `from` differs from memory at `to` (default now). */
  'history:compare': z.strictObject({ from: oid, to: oid.optional() }),
  /** The summaries of these commits (unknown ones are left out). */
  'history:summaries': z.strictObject({ oids: z.array(oid).max(500) }),

  'review:list': none,
  'review:decide': z
    .strictObject({
      id,
      decision: z.enum(['approve', 'decline']),
      /** Why the person declined; Claude is told (an approval has none: it is ignored). */
      reason: z.string().max(2000).optional(),
      /** The person's version of the file's full text, replacing the change's `after`. */
      editedText: z.string().max(8_000_000).optional(),
      /**
       * The change's `revision` the person decided on (for edited text: the one the edit was
       * made against); a stale one is refused as outdated.
       */
      revision: z.number().int().nonnegative().optional(),
    })
    .refine((d) => d.decision === 'approve' || d.editedText === undefined, {
      message: 'only an approval can carry edited text',
      path: ['editedText'],
    }),
  /** The whole text of a pending change whose preview left it out (`omitted`). */
  'review:text': z.strictObject({ id }),

  'hygiene:stats': none,
  'hygiene:expire': z.strictObject({ path: virtualPath }),

  'chat:send': z.strictObject({
    conversationId: id.nullable(),
    /** Chosen by the sender; the turn's `turn-started` event carries it back. */
    clientId: id,
    // The API refuses a text block without visible text; stored, it would break the chat.
    text: z
      .string()
      .max(200_000, 'is too long for one message (200,000 characters at most)')
      .refine((text) => text.trim() !== '', 'must contain visible text'),
    /**
     * The failed turn a Retry sends again: its prompt, with nothing stored after it, is
     * replaced by this one rather than kept beside it.
     */
    retryOf: id.optional(),
  }),
  'chat:stop': z.strictObject({ conversationId: id }),
  /**
   * The turns running now, each with its events so far: a window asks when it opens (or
   * reloads), then follows the live `agent:event`s from the `next` of each.
   */
  'chat:running': none,
  /**
   * Forgets, in the stored conversation, the error its turn `turnId` ended with or that it was
   * cut off (`Conversation.lastError`, `openTurn`): the person dismissed it.
   */
  'chat:dismiss': z.strictObject({ conversationId: id, turnId: id }),

  'conversations:list': z.strictObject({ query: z.string().max(500).optional() }),
  'conversations:get': z.strictObject({ id }),
  'conversations:rename': z.strictObject({ id, title: z.string().trim().min(1).max(200) }),
  'conversations:delete': z.strictObject({ id }),

  'settings:get': none,
  'settings:update': z.strictObject(settingFields).partial(),
  'settings:setApiKey': z.strictObject({ key: z.string().trim().min(1).max(MAX_API_KEY_CHARS) }),
  'settings:clearApiKey': none,
  'settings:models': none,

  'sync:status': none,
  'sync:now': none,
  'sync:stop': none,
  /** An empty `url` turns sync off (and forgets the token); omitted fields keep their value. */
  'sync:configure': z.strictObject({
    url: z.string().max(2000),
    username: z.string().max(200).optional(),
    /** Stored encrypted, never sent back; '' removes it. */
    token: z.string().max(1000).optional(),
    machineName: machineName.optional(),
    intervalMinutes: z.int().min(0).max(1440).optional(),
  }),
  /** Tries an address without saving it; without a token, the saved one (same address). */
  'sync:test': z.strictObject({
    url: z.string().min(1).max(2000),
    username: z.string().max(200).optional(),
    token: z.string().max(1000).optional(),
  }),
  'sync:resolve': z.strictObject({
    path: virtualPath,
    choice: z.enum(['ours', 'theirs', 'both', 'edit']),
    /**
     * The text to keep, for `edit`. As large as the history keeps a file (32 MiB; no character
     * is less than a byte): the dialog edits any conflicted file the browser reads whole.
     */
    text: z.string().max(RESOLVE_MAX_CHARS).optional(),
    /**
     * For `edit`: the file's text the person started from. When the file holds anything else
     * by the time the choice is written (Claude or an editor wrote meanwhile), nothing is.
     */
    basis: z.string().max(RESOLVE_MAX_CHARS).optional(),
  }),
  'sync:join': z.strictObject({ choice: z.enum(['merge', 'use-remote']) }),
  'sync:restoreBackup': z.strictObject({ name: z.string().min(1).max(200) }),
  /** `bundle`: the whole history; `zip`: the memory files now, or at commit `at`. */
  'sync:export': z.strictObject({ kind: z.enum(['bundle', 'zip']), at: oid.optional() }),
  /** `text`: a pasted memory export from another assistant, saved as one file. */
  'sync:import': z.strictObject({
    kind: z.enum(['bundle', 'repository', 'folder', 'zip', 'text']),
    text: z.string().max(1_000_000).optional(),
  }),
} as const

export type RequestChannel = keyof typeof requestSchemas
export type RequestPayload<C extends RequestChannel> = z.input<(typeof requestSchemas)[C]>
/** The payload after validation (defaults applied), as handlers receive it. */
export type ValidPayload<C extends RequestChannel> = z.output<(typeof requestSchemas)[C]>

/** What each request channel resolves to. */
export interface RequestResults {
  'app:info': AppInfo
  'app:recoveries': ReadonlyArray<RecoveryReport>
  'app:dismissRecovery': null
  'app:openDataFolder': null
  'app:openExternal': null
  'app:unsaved': null
  'app:opening': OpeningState
  'memory:tree': ReadonlyArray<MemoryEntry>
  'memory:read': MemoryFile
  'memory:write': ChangeResult
  'memory:rename': ChangeResult
  'memory:delete': ChangeResult
  'memory:search': ReadonlyArray<MemorySearchHit>
  'memory:notices': ReadonlyArray<MemoryNotice>
  'memory:dismissNotice': null
  'memory:removeSecrets': ChangeResult
  'history:log': LogPage
  'history:show': CommitDetail
  'history:fileHistory': ReadonlyArray<CommitSummary>
  'history:readAt': string | null
  'history:diff': FileChange
  'history:restoreFile': ChangeResult
  'history:restoreDeleted': ChangeResult
  'history:revert': ChangeResult
  'history:restoreAll': ChangeResult
  'history:blame': ReadonlyArray<BlameLine>
  'history:search': HistorySearchPage
  'history:compare': Comparison
  'history:summaries': ReadonlyArray<CommitSummary>
  'review:list': ReadonlyArray<PendingChange>
  'review:decide': ChangeResult
  'review:text': {
    readonly before: string | null
    readonly after: string | null
    /** The change's revision the text is of (`PendingChange.revision`). */
    readonly revision: number
  }
  'hygiene:stats': MemoryStats
  'hygiene:expire': ChangeResult
  'chat:send': { readonly conversationId: string; readonly turnId: string }
  'chat:stop': null
  'chat:running': ReadonlyArray<RunningTurn>
  'chat:dismiss': null
  'conversations:list': ReadonlyArray<ConversationSearchHit>
  'conversations:get': Conversation
  'conversations:rename': ConversationSummary
  'conversations:delete': null
  'settings:get': SettingsView
  'settings:update': SettingsView
  'settings:setApiKey': SettingsView
  'settings:clearApiKey': SettingsView
  'settings:models': ReadonlyArray<ModelInfo>
  'sync:status': SyncStatus
  'sync:now': SyncStatus
  'sync:stop': SyncStatus
  'sync:configure': SyncStatus
  'sync:test': SyncTestResult
  'sync:resolve': SyncStatus
  'sync:join': SyncStatus
  'sync:restoreBackup': SyncStatus
  'sync:export': ExportResult
  'sync:import': ImportResult
}

// Compile-time checks that schemas, results and the preload's channel list agree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never
export const contractIsComplete: Same<RequestChannel, keyof RequestResults> = true
export const channelListIsComplete: Same<RequestChannel, (typeof requestChannels)[number]> = true
export { requestChannels }

/** Events main pushes to the renderer. */
export interface EventMap {
  'agent:event': AgentEvent
  'history:commit': CommitSummary
  /** How far taking in commits git added outside Cairn is; the last one says it ended. */
  'history:following': FollowProgress
  'conversations:changed': { readonly id: string; readonly deleted: boolean }
  'settings:changed': SettingsView
  'app:recovery': RecoveryReport
  /** The id of a report dismissed in some window (`app:dismissRecovery`): every window hides it. */
  'app:recoveryDismissed': { readonly id: string }
  'memory:notice': MemoryNotice
  /** The id of a notice dismissed in some window (`memory:dismissNotice`): every window hides it. */
  'memory:noticeDismissed': { readonly id: string }
  /** The id of a notice whose file went (deleted, or replaced by a moved one): every window drops it. */
  'memory:noticeCleared': { readonly id: string }
  /** A command from the application menu, for the window to carry out. */
  'app:command': { readonly command: AppCommand }
  /** How far the opening of the memory is (only while it opens, before `app:ready`). */
  'app:opening': OpeningUpdate
  /** The memory is open: the window may start the app and call every channel. */
  'app:ready': { readonly state: 'ready' }
  'sync:state': SyncStatus
  /** Every change waiting for the person, whenever the list changes. */
  'review:pending': ReadonlyArray<PendingChange>
}
export type EventName = keyof EventMap

/** Splits `domain:verb` for the api object: `window.api.history.log(...)`. */
type Domain<C> = C extends `${infer D}:${string}` ? D : never
type Verb<C, D extends string> = C extends `${D}:${infer V}` ? V : never

type Method<C extends RequestChannel> =
  undefined extends RequestPayload<C>
    ? (payload?: RequestPayload<C>) => Promise<ApiResultOf<C>>
    : (payload: RequestPayload<C>) => Promise<ApiResultOf<C>>

export type ApiResultOf<C extends RequestChannel> = ApiResult<RequestResults[C]>

/** The shape of `window.api`: one named function per channel, plus `on` for events. */
export type CairnApi = {
  readonly [D in Domain<RequestChannel>]: {
    readonly [V in Verb<RequestChannel, D>]: Method<`${D}:${V}` & RequestChannel>
  }
} & {
  readonly on: <E extends EventName>(event: E, listener: (data: EventMap[E]) => void) => () => void
}
