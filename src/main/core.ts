import { mkdir, realpath } from 'node:fs/promises'
import path from 'node:path'
import type { OpeningProgress, Settings } from '../shared/types'
import {
  availableModels,
  chatHandlers,
  createChatService,
  hideKeys,
  type AnthropicFetch,
  type ReplyLimits,
} from './agent'
import { appHandlers, noHost, type HostActions } from './app'
import { conversationHandlers, createConversationStore } from './conversations'
import { createDispatcher, type Dispatch, type Handlers } from './dispatcher'
import { historyHandlers, openVersionedMemory, type VersionedMemory } from './history'
import { createHygieneService, hygieneHandlers, openReadLog } from './hygiene'
import { createEventBus, type EventBus } from './lib/events'
import { consoleLogger, type Logger } from './lib/logger'
import { createHidingLogger } from './lib/hiding-logger'
import { removeStrayTempFiles } from './lib/temp-sweep'
import { createRunnableMemoryTool } from './memory'
import { DEFAULT_LIMITS } from './memory'
import { memoryBrowserHandlers, sharedTreeReader } from './memory-browser'
import { createReviewService, heldCallsFile, readHeldCalls, reviewHandlers } from './review'
import {
  createMemorySecretStore,
  createSettingsService,
  settingsHandlers,
  type SecretStore,
} from './settings'
import { createSyncService, syncHandlers } from './sync'

export type { HostActions } from './app'

export interface CoreOptions {
  /** Everything Cairn stores lives under this folder (Electron's userData in the app). */
  readonly dataDir: string
  readonly appVersion?: string
  readonly host?: HostActions
  /**
   * Where every service reports what failed with no caller to tell (a watcher commit, a
   * listener, an error not meant for people). Default: the console.
   */
  readonly logger?: Logger
  /** Keeps the API key: the app passes a file store over Electron's safeStorage; default in memory. */
  readonly secretStore?: SecretStore
  /** Keeps the sync remote's token, the same way (default in memory). */
  readonly syncTokenStore?: SecretStore
  /**
   * The secrets every log line hides, filled as the core learns them (the API key, the sync
   * token). The shell passes the one its own log lines are hidden with (default: the core's).
   */
  readonly logSecrets?: LogSecrets
  /** The default machine name in commits (default: the host name). */
  readonly hostName?: () => string
  /** Quiet time after a memory change before sync runs (tests shorten it). */
  readonly syncDebounceMs?: number
  /** Quiet time on a connection to the sync remote before it counts as dropped (default 60 s). */
  readonly syncIdleTimeoutMs?: number
  /** The first quick retry of a sync the network may mend (default 30 s; tests shorten it). */
  readonly syncRetryFirstMs?: number
  /**
   * Whether the memory folder's names ignore case (`Notes.md` is `notes.md`), as imports judge
   * them. Default: macOS and Windows; tests pass true to judge as they do on any system.
   */
  readonly namesFoldCase?: boolean
  /** Source of `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** fetch for the Anthropic SDK (tests, proxies). */
  readonly fetch?: AnthropicFetch
  /** The SDK's retries per API request (default 2; tests pass 0). */
  readonly anthropicMaxRetries?: number
  /** How long a chat reply may take to start and stay silent (tests pass short limits). */
  readonly replyLimits?: ReplyLimits
  /**
   * Told what opening the memory is doing and how far its slow steps are (a rebuild of the
   * index can take minutes on a long history), then `starting` while the services start: the
   * shell's opening screen. A few reports a second at most; a throwing listener is logged.
   */
  readonly onProgress?: (progress: OpeningProgress) => void
}

/** Every main-process service, built from a data folder alone (no Electron). */
export interface Core {
  readonly dataDir: string
  readonly dispatch: Dispatch
  readonly events: EventBus
  close(): Promise<void>
}

/** The secrets every log line hides: API keys and sync tokens, once they are known. */
export interface LogSecrets {
  add(kind: 'api-key' | 'sync-token', value: string): void
  /**
   * `text` with each known secret hidden in every form `hideKeys` finds (as it is, encoded,
   * base64, hex, runs of 8), and anything shaped like an Anthropic key, known or not.
   */
  hide(text: string): string
}

/** A set of secrets to hide, empty at first. One lives as long as the process (or the core). */
export function createLogSecrets(): LogSecrets {
  const keys = new Set<string>()
  const tokens = new Set<string>()
  return {
    add(kind, value) {
      if (value !== '') (kind === 'api-key' ? keys : tokens).add(value)
    },
    hide(text) {
      let hidden =
        keys.size === 0 ? hideKeys(text, '') : [...keys].reduce((t, key) => hideKeys(t, key), text)
      for (const token of tokens) hidden = hideKeys(hidden, token, 'the sync token')
      return hidden
    },
  }
}

/**
 * Makes Cairn's data folder if needed and gives its real path, once at start. Reached through
 * a symlink (`~/.config/Cairn` linked to another disk, `CAIRN_DATA_DIR` through a link), its
 * own files (settings, the API key) could not be saved: their folder is opened with
 * O_NOFOLLOW, which is meant for the memory folder's entries. Links inside the data folder
 * (`memories` itself, anything in it) are still never followed.
 */
export async function prepareDataDir(dir: string): Promise<string> {
  const resolved = path.resolve(dir)
  await mkdir(resolved, { recursive: true, mode: 0o700 })
  return realpath(resolved)
}

/**
 * The composition root: tests, benchmarks, the e2e harness and the app all start here. Every
 * service is built here and nowhere else; each domain contributes the handlers of its own
 * channels, and the dispatcher refuses to start without one for every channel.
 */
export async function createCore(options: CoreOptions): Promise<Core> {
  const dataDir = await prepareDataDir(options.dataDir)
  // Every key the settings read or were given, and every sync token, is hidden in whatever
  // any service logs: a failure's words, cause, or a response body a proxy echoed may hold
  // it, encoded or not.
  const secrets = options.logSecrets ?? createLogSecrets()
  const logger = createHidingLogger(options.logger ?? consoleLogger, secrets.hide)
  const events = createEventBus()

  // Refused with a `locked` CairnError when another Cairn has this data folder open.
  const memory = await openVersionedMemory({ dataDir, logger, onProgress: options.onProgress })
  try {
    try {
      options.onProgress?.({ step: 'starting', done: 0, total: null })
    } catch (error) {
      logger.error('A listener of the opening progress failed', error)
    }
    // With the lock held, before anything here saves: what an interrupted save left in
    // Cairn's own folders (settings, the API key, conversations, sync) is a dead instance's.
    removeStrayTempFiles(
      ['', 'conversations', 'sync'].map((folder) => path.join(dataDir, folder)),
      logger,
    )
    return await assemble(options, dataDir, logger, events, memory, secrets)
  } catch (error) {
    // The data folder's lock is released, so a retry (or another window) can open it. The
    // person is told why the start failed: a failing close (its lock released all the same)
    // goes to the log, never in the start's place.
    await memory.close().catch((closeError: unknown) => {
      logger.error('The memory did not close cleanly after a failed start', closeError)
    })
    throw error
  }
}

async function assemble(
  options: CoreOptions,
  dataDir: string,
  logger: Logger,
  events: EventBus,
  memory: VersionedMemory,
  secrets: LogSecrets,
): Promise<Core> {
  memory.onCommit((commit) => events.emit('history:commit', commit))
  memory.onFollowing((progress) => events.emit('history:following', progress))
  memory.onRecovery((report) => events.emit('app:recovery', report))
  memory.onNotice((notice) => events.emit('memory:notice', notice))
  memory.onNoticeCleared((id) => events.emit('memory:noticeCleared', { id }))

  const settings = createSettingsService({
    dataDir,
    secretStore: options.secretStore ?? createMemorySecretStore(),
    env: options.env ?? process.env,
    logger,
    onKeyKnown: (key) => secrets.add('api-key', key),
  })
  // Claude's memory commands pass the review gate; the person's own edits do not.
  // Claude's calls that waited for review when Cairn was killed: they did not run.
  const heldFile = heldCallsFile(dataDir)
  const heldAtKill = await readHeldCalls(heldFile, logger)
  const review = createReviewService({
    memory,
    logger,
    heldFile,
    carried: heldAtKill,
  })
  review.onPending((changes) => events.emit('review:pending', changes))
  const readLog = await openReadLog({ dataDir, logger })
  // One walk of the live folder for the memory tree and the size meter asked together.
  const readTree = sharedTreeReader(memory)
  const hygiene = createHygieneService({ memory, readLog, review, logger, readTree })
  memory.onCommit((commit) => hygiene.noteCommit(commit))

  // Settings' memory policies reach the memory (and review) at start-up and after every change.
  const applyPolicy = (current: Settings): void => {
    memory.setPolicy({
      createExisting: current.createExisting,
      secretScanning: current.secretScanning,
    })
    review.setMode(current.reviewMode)
    hygiene.setExpireAfterDays(current.expireAfterDays)
  }
  applyPolicy(await settings.get())

  const sync = createSyncService({
    dataDir,
    memory,
    tokens: options.syncTokenStore ?? createMemorySecretStore(),
    logger,
    host: options.host ?? noHost,
    importPolicy: async () => ({
      secretScanning: (await settings.get()).secretScanning,
      limits: DEFAULT_LIMITS,
    }),
    hostName: options.hostName,
    debounceMs: options.syncDebounceMs,
    idleTimeoutMs: options.syncIdleTimeoutMs,
    retryFirstMs: options.syncRetryFirstMs,
    onTokenKnown: (token) => secrets.add('sync-token', token),
    ...(options.namesFoldCase !== undefined ? { namesFoldCase: options.namesFoldCase } : {}),
    ...(options.appVersion !== undefined ? { appVersion: options.appVersion } : {}),
  })
  sync.onStatus((status) => events.emit('sync:state', status))
  // A few seconds after memory changed here (a turn, an edit), the change goes out.
  memory.onCommit(() => sync.noteLocalChange())

  const conversations = createConversationStore({
    dataDir,
    logger,
    // The list, and an open view, show what was there before another program's change.
    onChangedOutside: (id) => events.emit('conversations:changed', { id, deleted: false }),
    // Another program's version is never taken up in the middle of a turn (chat is made next).
    busy: (id) => chat.isRunning(id),
  })
  const chat = createChatService({
    conversations,
    settings,
    memory: review,
    // The turn, not the review gate, knows whether Claude was shown what a view returned.
    onViewed: (file) => void hygiene.noteViewed(file),
    memoryHead: () => memory.settledHead(),
    createMemoryTool: createRunnableMemoryTool,
    toolUseCommits: (conversationId, ids, since) =>
      memory.toolUseCommits(conversationId, ids, since),
    emit: (event) => events.emit('agent:event', event),
    onConversationChanged: (id) => events.emit('conversations:changed', { id, deleted: false }),
    heldAtKill: new Set(heldAtKill.map((call) => call.toolUseId)),
    onHeldAnswered: (ids) => review.settleCarried(ids),
    maxRetries: options.anthropicMaxRetries,
    fetch: options.fetch,
    replyLimits: options.replyLimits,
    logger,
  })

  const handlers: Handlers = {
    ...appHandlers({
      info: {
        name: 'Cairn',
        version: options.appVersion ?? '0.0.0',
        dataDir,
        recovery: memory.recovery,
      },
      host: options.host ?? noHost,
      recoveries: () => memory.recoveries(),
      dismissRecovery: (id) => memory.dismissRecovery(id),
      events,
    }),
    ...memoryBrowserHandlers(memory, events, readTree),
    ...historyHandlers(memory),
    ...reviewHandlers(review),
    ...hygieneHandlers(hygiene),
    ...chatHandlers(chat),
    ...conversationHandlers({
      store: conversations,
      events,
      beforeDelete: async (id) => {
        chat.stop(id)
        await chat.settled(id)
      },
      startedHere: (turnId) => chat.startedHere(turnId),
    }),
    ...syncHandlers(sync),
    ...settingsHandlers({
      settings,
      events,
      onChange: applyPolicy,
      models: () => availableModels(settings, { fetch: options.fetch, logger }),
    }),
  }

  const dispatch = createDispatcher(handlers, { logger })
  // Before any command: every commit names this machine (a commit made while the settings
  // were still being read went out without it).
  await sync.start()
  return {
    dataDir,
    dispatch,
    events,
    async close() {
      // Changes still waiting are declined first (Claude is told Cairn closed), then the turns
      // that waited for them stop. None of these holds a write meant to last that its close
      // would flush (a conversation is saved as it changes; the read log is best-effort), so a
      // failing one is logged and the next goes on: the memory is closed (its log emptied, its
      // lock released) whatever the others did, and only its own close's failure is thrown.
      const steps: ReadonlyArray<readonly [string, () => void | Promise<void>]> = [
        ['review', () => review.close()],
        ['sync', () => sync.close()],
        ['chat', () => chat.close()],
        ['hygiene', () => hygiene.close()],
      ]
      for (const [name, close] of steps) {
        try {
          await close()
        } catch (error) {
          logger.error(`The ${name} service did not close cleanly`, error)
        }
      }
      await memory.close()
    },
  }
}
