/**
 * Sync as the app runs it: the settings, when syncs happen (at start, a few seconds after
 * memory changed, every N minutes, on "Sync now"), one at a time, and the status the window
 * shows. The engine (`engine.ts`) does each sync; this decides when and reports how it went.
 */
import os from 'node:os'
import path from 'node:path'
import type { RequestPayload } from '../../shared/contract'
import {
  REPEATED_SYNC_FAILURES,
  type ApiErrorData,
  type ExportKind,
  type ExportResult,
  type ImportKind,
  type ImportResult,
  type SyncBackup,
  type SyncConfigView,
  type SyncConflict,
  type SyncJoinQuestion,
  type SyncStatus,
  type SyncTestResult,
} from '../../shared/types'
import { sameServer } from '../../shared/remote-address'
import type { HostActions } from '../app'
import { MAX_VERSIONED_BYTES, type HistoryGit, type VersionedMemory } from '../history'
import { errorCode } from '../lib/disk'
import { diskProblem } from '../lib/disk-errors'
import { CairnError, toApiError } from '../lib/errors'
import { cutWithEllipsis, escapeInvisible } from '../lib/text'
import { repeatedAdvice, syncFailure } from './sync-errors'
import { hasConflicts } from './conflict-markers'
import type { Logger } from '../lib/logger'
import type { SecretStore } from '../settings'
import {
  markerSizesOf,
  mergedHere,
  resolvedText,
  viewConflict,
  withLaterConflict,
  type ConflictChoice,
} from './conflicts'
import {
  BACKUP_PREFIX,
  graphOf,
  isRefusalMessage,
  joinRemote,
  keptBothCommit,
  RefusedContentError,
  syncOnce,
  type EngineContext,
  type JoinChoice,
  type RefusedRemote,
  type SyncOutcome,
} from './engine'
import { conflictsSince, followRenames } from './conflict-history'
import { commitFiles, NAMES_FOLD_CASE } from './file-map'
import { leaveFetchedPacks, readRef, refCommits } from './git-fs'
import { explore, onOneLine } from './graph'
import { backupNames, restoreBackup } from './backups'
import type { ImportPolicy } from './import-checks'
import { exportMemory, importMemory, removeStaging, type TransferContext } from './transfer'
import {
  createSyncStore,
  MAX_FAILING_COUNT,
  OFF,
  type ConflictRecord,
  type FailingStreak,
  type SyncConfig,
  type SyncState,
} from './store'
import {
  checkRemoteUrl,
  fetchMain,
  IDLE_TIMEOUT_MS,
  isLoopback,
  remoteHead,
  type RemoteSpec,
} from './transport'

/** Quiet time after the last memory change before a sync starts. */
export const SYNC_DEBOUNCE_MS = 3000
const RETRY_FIRST_MS = 30_000
const RETRY_MAX_MS = 10 * 60_000
/**
 * How far apart tries by itself may go once downloads keep breaking (`sync-interrupted`, as
 * often as `REPEATED_SYNC_FAILURES`): each try downloads the pack again.
 */
export const RETRY_SLOW_MAX_MS = 60 * 60_000

/**
 * The wait before the quick retry after `failures` earlier ones: doubling from `firstMs`, up
 * to 10 minutes, or an hour once downloads keep breaking (`slow`).
 */
export function retryDelay(failures: number, firstMs: number, slow: boolean): number {
  return Math.min(firstMs * 2 ** Math.min(failures, 30), slow ? RETRY_SLOW_MAX_MS : RETRY_MAX_MS)
}

/** A streak of broken or damaged downloads: tries by itself go further apart. */
function slowedDown(failing: FailingStreak | null): boolean {
  return (
    failing !== null &&
    failing.code === 'sync-interrupted' &&
    failing.count >= REPEATED_SYNC_FAILURES
  )
}
/** Failures worth retrying soon: the network, or another machine pushing at the same time. */
const TRANSIENT: ReadonlySet<string> = new Set([
  'sync-unreachable',
  'sync-interrupted',
  'sync-rejected',
])

export interface SyncServiceOptions {
  readonly dataDir: string
  /** The versioned memory: its repository, and `execute` for the person's resolutions. */
  readonly memory: Pick<VersionedMemory, 'git' | 'execute' | 'readAt' | 'setMachine' | 'limits'>
  /** Keeps the remote's token (the same kind of store as the API key's). */
  readonly tokens: SecretStore
  readonly logger: Logger
  /** The shell's save and open dialogs, for export and import. */
  readonly host: Pick<HostActions, 'chooseSavePath' | 'chooseOpenPath'>
  /** The Memory tool's policy and limits in force: imports pass the same checks. */
  readonly importPolicy: () => Promise<ImportPolicy>
  /** The host name, the default machine name (tests pass their own). */
  readonly hostName?: () => string
  readonly now?: () => number
  readonly debounceMs?: number
  /** Quiet time on a connection to the remote before it counts as dropped (default 60 s). */
  readonly idleTimeoutMs?: number
  /** The first quick retry after a failure the network may mend (default 30 s; it doubles). */
  readonly retryFirstMs?: number
  /** Whether names in the memory folder ignore case (default: macOS and Windows). */
  readonly namesFoldCase?: boolean
  /**
   * This Cairn's version: a remote commit another version refused (its rules may differ) is
   * fetched and judged again rather than refused unfetched.
   */
  readonly appVersion?: string
  /**
   * Told each token as it is read, saved or tried (Test connection's), before it is sent:
   * the core hides it in every log line, as it does the API key.
   */
  readonly onTokenKnown?: (token: string) => void
}

export type SyncConfigureInput = RequestPayload<'sync:configure'>
export type SyncTestInput = RequestPayload<'sync:test'>
export type SyncResolveInput = RequestPayload<'sync:resolve'>

export interface SyncService {
  status(): Promise<SyncStatus>
  configure(input: SyncConfigureInput): Promise<SyncStatus>
  /** Syncs now (or after the sync already running) and answers the status after it. */
  syncNow(): Promise<SyncStatus>
  /**
   * Stops the sync running (its network work aborted; a merge already under way is finished
   * whole) and answers the status once it has stopped. With none running, changes nothing.
   */
  stop(): Promise<SyncStatus>
  test(input: SyncTestInput): Promise<SyncTestResult>
  resolve(input: SyncResolveInput): Promise<SyncStatus>
  join(choice: JoinChoice): Promise<SyncStatus>
  restoreBackup(name: string): Promise<SyncStatus>
  exportMemory(kind: ExportKind, at?: string): Promise<ExportResult>
  importMemory(kind: ImportKind, text?: string): Promise<ImportResult>
  /** Memory changed here: sync once it has been quiet for a few seconds. */
  noteLocalChange(): void
  /**
   * Starts syncing: once now, then on changes and every N minutes. Resolves once this
   * machine's name is set on the memory (every commit from then on names it); the first sync
   * goes on after that.
   */
  start(): Promise<void>
  onStatus(listener: (status: SyncStatus) => void): () => void
  close(): Promise<void>
}

/** What a Stop between two syncs left: the one before it whole, the next not begun. */
const STOPPED_BETWEEN =
  'Sync stopped before the next sync began. The sync before it had finished whole; anything changed since was not sent, and the next sync sends it.'

export function createSyncService(options: SyncServiceOptions): SyncService {
  const { memory, tokens, logger } = options
  const history = memory.git
  const store = createSyncStore(options.dataDir, logger)
  const now = options.now ?? Date.now
  const hostName = options.hostName ?? (() => os.hostname())
  const debounceMs = options.debounceMs ?? SYNC_DEBOUNCE_MS
  const listeners = new Set<(status: SyncStatus) => void>()

  let syncing = false
  let error: ApiErrorData | null = null
  let join: SyncJoinQuestion | null = null
  let pendingChoice: JoinChoice | null = null
  let running: Promise<void> | null = null
  // The running sync's Stop: aborts its requests; the engine then stops at its next step.
  let stopper: AbortController | null = null
  // A Stop that came while the loop runs, between two of its syncs (one ended, the follow-up
  // asked for meanwhile not started yet) or during one: no follow-up starts, and none is
  // queued for changes made meanwhile. Cleared when the loop ends.
  let stopBetween = false
  let again = false
  let moving = false
  let closed = false
  let debounce: NodeJS.Timeout | null = null
  let interval: NodeJS.Timeout | null = null
  // A failure the network may mend (unreachable, cut, raced) is retried sooner than the
  // interval, less often each time: 30 s, 1 min, 2 min … up to 10 min.
  let retry: NodeJS.Timeout | null = null
  let failures = 0
  // While downloads keep breaking, the interval's syncs wait until this time (ms) too.
  let quietUntil: number | null = null
  const retryFirstMs = options.retryFirstMs ?? RETRY_FIRST_MS
  // Syncs in a row that failed (any way: two failures taking turns are failing too), and when
  // the first of them did: after a few, the status says plainly that sync keeps failing (a
  // proxy that damages every large pack would otherwise show the same "tries again" for ever).
  // A success, a question or a change of the remote's settings starts the count again. Kept in
  // state.json, so a restart goes on counting (undefined: not read yet).
  let streak: FailingStreak | null | undefined = undefined
  // The conflicts of a merge reach state.json only after the merge moved `main` and was
  // pushed: a kill or a full disk in between would lose them here for good (the next sync
  // finds nothing to merge). So the first sync of a session, and each one after a failed
  // sync, first reads them back from the merges since the last remote state.json recorded.
  let recheck = true

  // Commits the engine itself makes (a fast-forward, a merge) are no reason to sync again.
  const engineHistory: HistoryGit = {
    ...history,
    gitdir: history.gitdir,
    objects: history.objects,
    head: () => history.head(),
    position: (oid) => history.position(oid),
    exclusive: (task) =>
      history.exclusive(async (session) => {
        moving = true
        try {
          return await task(session)
        } finally {
          moving = false
        }
      }),
  }

  const machineOf = (config: SyncConfig) => config.machineName.trim() || hostName()
  // Made on first use: a machine that never merged needs one too, to tell that a merge was
  // made elsewhere. Unreadable and unwritable (a full disk): the markers' names decide.
  const withId = (machineId: string | undefined) => (machineId ? { machineId } : {})
  const knownMachineId = () =>
    store.machineId().catch((failure: unknown) => {
      logger.warn('Could not read this machine’s id', failure)
      return undefined
    })

  // Conflicts found anywhere (a merge here, one learnt from another machine, an import) are
  // kept until their file is settled.
  async function addConflicts(records: ReadonlyArray<ConflictRecord>): Promise<void> {
    if (records.length === 0) return
    const state = await store.state()
    // Settled on another machine (binary "keep both"): this machine's record closes too.
    const settled = new Set(records.filter((r) => r.settled).map((r) => r.path))
    const kept = state.conflicts.filter((c) => !settled.has(c.path))
    const byPath = new Map(kept.map((c) => [c.path, c]))
    const graph = graphOf(engineHistory)
    for (const record of records) {
      if (record.settled) continue
      const known = byPath.get(record.path)
      if (!known) {
        byPath.set(record.path, record)
        continue
      }
      // Which of the merges involved know of each other (asked before, as the walk reads
      // commits): two that do not may both have taken one marker size.
      const merges = [...new Set([known, record].flatMap(mergeCommitsOf))]
      const apart = new Set<string>()
      for (const [i, a] of merges.entries()) {
        for (const b of merges.slice(i + 1)) {
          if (!(await onOneLine(graph, a, b))) apart.add(`${a} ${b}`).add(`${b} ${a}`)
        }
      }
      byPath.set(
        record.path,
        withLaterConflict(
          known,
          record,
          (oid) => engineHistory.position(oid),
          (a, b) => !apart.has(`${a} ${b}`),
        ),
      )
    }
    await store.saveState({ ...state, conflicts: [...byPath.values()] })
  }

  const transfer: TransferContext = {
    dataDir: options.dataDir,
    history: engineHistory,
    memory,
    host: options.host,
    policy: options.importPolicy,
    machine: async () => machineOf(await store.config()),
    now,
    onConflicts: addConflicts,
    namesFoldCase: options.namesFoldCase ?? NAMES_FOLD_CASE,
  }

  async function knownStreak(): Promise<FailingStreak | null> {
    if (streak === undefined) {
      streak = await store.state().then(
        (state) => state.failing ?? null,
        () => null,
      )
    }
    return streak
  }

  // Kept on disk as well as here; a disk that refuses it (full) costs only the count's memory
  // over a restart.
  async function setStreak(next: FailingStreak | null): Promise<void> {
    const prior = await knownStreak()
    streak = next
    if (prior === null && next === null) return
    try {
      const { failing: _dropped, ...latest } = await store.state()
      await store.saveState(next ? { ...latest, failing: next } : latest)
    } catch (failure) {
      logger.warn('Could not keep the count of failed syncs', failure)
    }
  }

  async function remoteOf(config: SyncConfig, signal: AbortSignal): Promise<RemoteSpec> {
    return {
      url: config.url,
      username: config.username,
      token: await tokenFor(config.url),
      idleTimeoutMs: options.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
      signal,
      logger,
    }
  }

  // The token is kept with the address it was given for, in one value of the secret store,
  // and handed out only for that server (scheme, host and port). The address is saved apart
  // (the sync config), so a sync that read the old address while the person saved a new
  // address and token would otherwise send the new server's token to the old one.
  async function saveToken(url: string, token: string): Promise<void> {
    options.onTokenKnown?.(token)
    await tokens.set(JSON.stringify({ forServer: url, token } satisfies BoundToken))
  }

  async function savedTokenFor(url: string): Promise<string | null> {
    const saved = await tokens.get()
    if (saved === null || url === '') return null
    const bound = boundToken(saved)
    // A token saved before it was kept with its address belongs to the address saved then.
    if (bound === null) return sameServer(url, (await store.config()).url) ? saved : null
    return sameServer(url, bound.forServer) ? bound.token : null
  }

  /** The token saved for `url`, made known to the log's hiding as it is read. */
  async function tokenFor(url: string): Promise<string | null> {
    const token = await savedTokenFor(url)
    if (token !== null) options.onTokenKnown?.(token)
    return token
  }

  async function configView(config: SyncConfig): Promise<SyncConfigView> {
    const url = config.url
    return {
      url,
      username: config.username,
      hasToken: (await tokenFor(url)) !== null,
      machineName: config.machineName,
      defaultMachineName: hostName(),
      intervalMinutes: config.intervalMinutes,
      insecure: url.startsWith('http:') && !isLoopback(url),
    }
  }

  async function openConflicts(): Promise<SyncConflict[]> {
    const state = await store.state()
    const config = await store.config()
    const head = history.head()
    if (!head || state.conflicts.length === 0) return []
    const read = (path: string) => memory.readAt(path, head).catch(() => null)
    const machineId = await knownMachineId()
    const open: SyncConflict[] = []
    const kept: ConflictRecord[] = []
    // Each record examined, and what it is now (null: settled).
    const found = new Map<ConflictRecord, ConflictRecord | null>()
    let changed = false
    for (const record of state.conflicts) {
      let current = record
      let view = await viewConflict(record, machineOf(config), read, machineId)
      if (!view) {
        // Renamed since (file or folder): the conflict follows its markers.
        const moved = await followRenames(history.objects, record, head).catch(
          (failure: unknown) => {
            logger.warn('Could not follow a conflicted file that moved', failure)
            return null
          },
        )
        view = moved ? await viewConflict(moved, machineOf(config), read, machineId) : null
        if (moved && view) current = moved
      }
      changed ||= current !== record || !view
      // Two records that now name one file (moved onto another conflicted one) show once.
      if (!view || kept.some((k) => k.path === current.path)) {
        found.set(record, null)
        continue
      }
      open.push(view)
      kept.push(current)
      found.set(record, current)
    }
    // Settled ones (by the dialog, Claude or an editor) are forgotten; renamed ones kept where
    // their file is now.
    if (changed) await saveFound(found)
    return open
  }

  // Saves what `openConflicts` found into the state as it is now, not as it was read: a sync
  // (or a resolution) may have saved it meanwhile, across the awaits above, and its
  // `lastRemote` and new conflicts must not be written back over.
  async function saveFound(found: ReadonlyMap<ConflictRecord, ConflictRecord | null>) {
    const latest = await store.state()
    const conflicts: ConflictRecord[] = []
    for (const record of latest.conflicts) {
      const now = found.has(record) ? found.get(record) : record
      if (now && !conflicts.some((c) => c.path === now.path)) conflicts.push(now)
    }
    await store.saveState({ ...latest, conflicts })
  }

  /**
   * Choices written per path in this run: a choice that finds the file changed or its conflict
   * gone after another of the person's own choices for it was written lost to that one, and is
   * told so rather than blamed on Claude or another program.
   */
  const resolvesWritten = new Map<string, number>()
  const noteResolved = (path: string) =>
    resolvesWritten.set(path, (resolvesWritten.get(path) ?? 0) + 1)

  const backupFacts = new Map<string, { time: number; files: number }>()
  // The last failure to list the backups that was logged (its errno), so a status asked every
  // few seconds logs it once; cleared once the list reads again.
  let backupsFailure: string | null = null
  async function backups(): Promise<{ list: SyncBackup[]; unreadable?: string }> {
    let refs: ReadonlyArray<string>
    try {
      refs = await backupNames(history.gitdir)
      backupsFailure = null
    } catch (failure) {
      const problem = diskProblem(failure)
      const code = errorCode(failure) ?? 'unknown'
      if (backupsFailure !== code) {
        backupsFailure = code
        logger.warn('The list of memory kept aside (refs/cairn/backups) could not be read', failure)
      }
      return {
        list: [],
        unreadable: `The memory kept aside by “Use the remote’s memory” cannot be listed because ${problem?.reason ?? 'its record in the history is damaged'}. Nothing was changed; the list comes back once it can be read.`,
      }
    }
    const list: SyncBackup[] = []
    for (const name of refs) {
      try {
        const commit = await readRef(history.gitdir, `${BACKUP_PREFIX}${name}`)
        if (!commit) continue
        let facts = backupFacts.get(commit)
        if (!facts) {
          // Read once per backup: its files are counted from its whole tree.
          const raw = await history.objects.readCommit(commit)
          const files = await commitFiles(history.objects, commit)
          facts = { time: raw.timestamp * 1000, files: files.size }
          backupFacts.set(commit, facts)
        }
        list.push({ name, commit, ...facts })
      } catch (failure) {
        logger.warn('A backup of an earlier history could not be read', failure)
      }
    }
    return { list: list.sort((a, b) => b.time - a.time) }
  }

  async function unsynced(lastRemote: string | null): Promise<number> {
    const head = history.head()
    if (!head || head === lastRemote) return 0
    const floor = lastRemote ? history.position(lastRemote) : -1
    const graph = graphOf(history)
    const seen = new Set<string>()
    const stack = [head]
    while (stack.length > 0 && seen.size < 10_000) {
      const oid = stack.pop() as string
      if (seen.has(oid) || history.position(oid) <= floor) continue
      seen.add(oid)
      stack.push(...(await graph.parents(oid)))
    }
    return seen.size
  }

  async function status(): Promise<SyncStatus> {
    const config = await store.config()
    const state = await store.state()
    const lastRemote = state.remoteUrl === config.url ? state.lastRemote : null
    const conflicts = config.url || state.conflicts.length ? await openConflicts() : []
    const off = !config.url
    const failing = streak === undefined ? (state.failing ?? null) : streak
    const kept = await backups()
    return {
      state: off
        ? conflicts.length > 0
          ? 'conflicts'
          : 'off'
        : syncing
          ? 'syncing'
          : error
            ? 'error'
            : conflicts.length > 0
              ? 'conflicts'
              : 'idle',
      lastSyncedAt: state.remoteUrl === config.url ? state.lastSyncedAt : null,
      ...(error && !off ? { error } : {}),
      ...(error && !off && failing?.code === error.code && failing.count >= REPEATED_SYNC_FAILURES
        ? {
            repeated: {
              count: failing.count,
              // A clock set back since: never "since" a time still to come.
              since: Math.min(failing.since, now()),
              advice: repeatedAdvice(error.code, TRANSIENT.has(error.code), slowedDown(failing)),
              ...(failing.mixed ? { mixed: true } : {}),
            },
          }
        : {}),
      conflicts,
      join: off ? null : join,
      unsynced: off ? 0 : await unsynced(lastRemote),
      config: await configView(config),
      backups: kept.list,
      ...(kept.unreadable ? { backupsUnreadable: kept.unreadable } : {}),
    }
  }

  function announce(): void {
    if (listeners.size === 0) return
    status().then(
      (current) => {
        for (const listener of listeners) {
          try {
            listener(current)
          } catch (failure) {
            logger.error('A sync status listener failed', failure)
          }
        }
      },
      (failure: unknown) => logger.warn('Could not report the sync status', failure),
    )
  }

  async function runOnce(): Promise<void> {
    const config = await store.config()
    if (!config.url || closed) return
    if (stopBetween) {
      // Stopped before it began: nothing of it ran.
      error = { code: 'sync-stopped', message: STOPPED_BETWEEN }
      announce()
      return
    }
    const choice = pendingChoice
    pendingChoice = null
    syncing = true
    const controller = new AbortController()
    stopper = controller
    announce()
    try {
      if (recheck) {
        await addConflicts(await conflictsSince(history, (await store.state()).lastRemote))
        recheck = false
      }
      const state = await store.state()
      const ctx: EngineContext = {
        git: engineHistory,
        remote: await remoteOf(config, controller.signal),
        machine: machineOf(config),
        ...withId(await knownMachineId()),
        lastRemote: state.remoteUrl === config.url ? state.lastRemote : null,
        now,
        namesFoldCase: transfer.namesFoldCase,
        refused: rememberedRefusal(state.refused, config.url),
      }
      const outcome: SyncOutcome = choice ? await joinRemote(ctx, choice) : await syncOnce(ctx)
      await setStreak(null)
      if (outcome.kind === 'question') {
        join = outcome.question
        error = {
          code: 'sync-join-needed',
          message:
            outcome.question.reason === 'rewritten'
              ? 'The remote’s history was rewritten since the last sync (it no longer holds what this machine synced). Cairn did not replace your history; choose what to do.'
              : 'The remote holds another machine’s memory. Choose whether to merge this machine’s memory into it or to use the remote’s memory.',
        }
      } else {
        join = null
        error = null
        await addConflicts(outcome.conflicts)
        // A refusal remembered is over: the remote moved past the commit refused.
        const { refused: _over, ...latest } = await store.state()
        await store.saveState({
          ...latest,
          remoteUrl: config.url,
          lastRemote: outcome.remote,
          lastSyncedAt: now(),
        })
      }
    } catch (failure) {
      // Closing mid-sync: the next start completes it, there is nobody to tell.
      recheck = true
      if (closed) return
      error = syncFailure(failure)
      if (failure instanceof RefusedContentError && failure.commit !== null) {
        await rememberRefused(config.url, failure)
      }
      if (error.code === 'sync-stopped') {
        // The person's choice, not a failure: the count of failures in a row stays as it was,
        // and a request made during the stopped sync does not start another at once (the
        // next change, the interval and Sync now sync as usual).
        again = false
      } else {
        const prior = await knownStreak()
        await setStreak(
          prior
            ? {
                code: error.code,
                count: Math.min(prior.count + 1, MAX_FAILING_COUNT),
                since: prior.since,
                ...(prior.mixed || prior.code !== error.code ? { mixed: true as const } : {}),
              }
            : { code: error.code, since: now(), count: 1 },
        )
        if (error.code === 'internal') logger.error('Sync failed', failure)
        else logger.warn(`Sync did not complete: ${error.message}`, failure)
      }
    } finally {
      syncing = false
      stopper = null
    }
    announce()
    if (retry) clearTimeout(retry)
    retry = null
    // The next wait while downloads keep breaking, or null when they do not (`slowedDown`).
    // Slowed, the waits go on from the count kept on disk: a restart or a Stop (which start
    // `failures` again) left it, and the quick retries began again at their first wait while
    // the status said "about once an hour".
    const slowedWait = (): number | null =>
      streak && slowedDown(streak)
        ? retryDelay(Math.max(failures, streak.count - 1), retryFirstMs, true)
        : null
    if (error && TRANSIENT.has(error.code) && !closed) {
      // Still retried once it keeps failing (the status then says so): what fails here mends
      // itself (a network, a proxy, a server), and sync should catch up then unasked.
      const slowed = slowedWait()
      const delay = slowed ?? retryDelay(failures, retryFirstMs, false)
      failures++
      // The interval's syncs wait for it too (changes and Sync now do not).
      quietUntil = slowed === null ? null : now() + delay
      retry = setTimeout(() => void request(), delay)
      retry.unref()
      return
    }
    if (error?.code === 'sync-stopped' && quietUntil !== null) {
      // Stopped while slowed (the back-off's own retry, whose wait was over by then, or a Sync
      // now): the interval still waits a slowed wait before it downloads again. Cleared here, it
      // synced at its next tick, a pack downloaded again within minutes while the status said
      // "only about once an hour".
      const wait = slowedWait()
      if (wait !== null) quietUntil = Math.max(quietUntil, now() + wait)
      return
    }
    failures = 0
    quietUntil = null
    // Memory changed while the sync ran: those changes go out with the next one.
    const state = await store.state()
    if (!error && history.head() !== state.lastRemote) {
      // Unless the person pressed Stop meanwhile: they go out with the next change, the
      // interval or Sync now.
      if (!stopBetween) schedule()
      else {
        error = { code: 'sync-stopped', message: STOPPED_BETWEEN }
        announce()
      }
    }
  }

  // What refused a remote commit: this Cairn (its version) and the rules it judged by. A commit
  // refused under other ones (an older Cairn, a larger limit, names judged otherwise) may pass
  // now: it is fetched and judged again, never refused unfetched for good.
  const refusalRules = `cairn ${options.appVersion ?? 'unknown'}; files up to ${MAX_VERSIONED_BYTES} bytes; names ${transfer.namesFoldCase ? 'fold case' : 'keep case'}`

  // The refusal remembered for `url`, to be said again: only one these rules made, with words as
  // the engine writes them. One edited by hand, torn into another shape or written by another
  // version (a path, markup, a line break, a sentence of its own) is ignored: the sync fetches
  // and judges the commit again, and says what it finds in its own words.
  function rememberedRefusal(refused: SyncState['refused'], url: string): RefusedRemote | null {
    if (!refused || refused.url !== url || refused.rules !== refusalRules) return null
    if (!isRefusalMessage(refused.message)) return null
    const home = os.homedir()
    const hosts = [path.resolve(options.dataDir), ...(home.length > 1 ? [home] : [])]
    if (hosts.some((host) => refused.message.includes(host))) return null
    return { commit: refused.commit, message: refused.message }
  }

  // The remote commit refused for its content, kept with the state so that the next sync asks
  // the remote's refs only and, while its `main` is still that commit, fetches nothing. The
  // message is the first refusal's (a repeat adds that nothing was downloaded).
  async function rememberRefused(url: string, failure: RefusedContentError): Promise<void> {
    try {
      // Within the try: the failure handling that calls this counts and logs the failure after
      // it, and expects nothing thrown. (The sync read the state before it began, and the store
      // keeps what it read, so no disk read is made here as the store stands.)
      const latest = await store.state()
      // Kept as it is only when it would be said again (not one edited into another shape).
      if (rememberedRefusal(latest.refused, url)?.commit === failure.commit) return
      await store.saveState({
        ...latest,
        refused: { url, commit: failure.commit!, message: failure.message, rules: refusalRules },
      })
    } catch (failed) {
      // Not remembered: the next sync fetches the commit again and refuses it again.
      logger.warn('Could not remember the refused version of the remote', failed)
    }
  }

  function request(): Promise<void> {
    if (closed) return Promise.resolve()
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await runOnce()
      } while (again && !closed && !stopBetween)
    })()
      .catch((failure: unknown) => logger.error('Sync failed', failure))
      .finally(() => {
        running = null
        stopBetween = false
      })
    return running
  }

  function schedule(): void {
    if (closed) return
    if (debounce) clearTimeout(debounce)
    debounce = setTimeout(() => {
      debounce = null
      void request()
    }, debounceMs)
    debounce.unref()
  }

  async function applyConfig(): Promise<void> {
    const config = await store.config()
    memory.setMachine(machineOf(config))
    if (interval) clearInterval(interval)
    interval = null
    if (!config.url || config.intervalMinutes === 0 || closed) return
    interval = setInterval(() => {
      if (quietUntil === null || now() >= quietUntil) void request()
    }, config.intervalMinutes * 60_000)
    interval.unref()
  }

  return {
    status,
    async configure(input) {
      const current = await store.config()
      const url = input.url.trim() === '' ? '' : checkRemoteUrl(input.url)
      const next: SyncConfig = url
        ? {
            url,
            username: input.username?.trim() ?? current.username,
            machineName: input.machineName?.trim() ?? current.machineName,
            intervalMinutes: input.intervalMinutes ?? current.intervalMinutes,
          }
        : { ...OFF, machineName: input.machineName?.trim() ?? current.machineName }
      if (!url) await tokens.clear()
      else if (input.token !== undefined) {
        if (input.token.trim() === '') await tokens.clear()
        else await saveToken(url, input.token.trim())
      } else if (!sameServer(url, current.url)) {
        // The token was given for the old server: it never follows the address to another
        // one (a person moving from GitHub to their own Gitea must not send it their GitHub
        // token). The form asks for this server's token.
        await tokens.clear()
      }
      await store.saveConfig(next)
      if (next.url !== current.url) {
        error = null
        join = null
      }
      // Another remote, account or token: what failed before says nothing about it.
      if (
        next.url !== current.url ||
        next.username !== current.username ||
        input.token !== undefined
      ) {
        await setStreak(null)
        failures = 0
      }
      await applyConfig()
      announce()
      if (next.url) void request()
      return status()
    },
    async syncNow() {
      // With no remote there is nothing to do: the answer says so (state `off`).
      if ((await store.config()).url) await request()
      return status()
    },
    async stop() {
      const current = running
      if (current) {
        // A request made meanwhile would start another sync right after this one: the person
        // asked for none (the next change, the interval and Sync now sync as usual).
        again = false
        // Between two syncs (one ended, the next asked for meanwhile not begun) there is no
        // request to abort, and the next must not begin; nor may one for changes made while
        // this one ran, should its work with the server be done already (it saves what it
        // reached: the abort stops nothing then).
        stopper?.abort()
        stopBetween = true
        // A join choice made meanwhile is not carried out by a later sync unasked: the
        // question stays, and the person answers it again.
        pendingChoice = null
        await current
      }
      return status()
    },
    async test(input) {
      return testConnection(input)
    },
    async resolve(input) {
      await resolveConflict(input.path, input.choice, input.text, input.basis)
      schedule()
      return status()
    },
    async join(choice) {
      if (!join) throw new CairnError('sync-no-conflict', 'There is no question to answer now.')
      pendingChoice = choice
      await request()
      return status()
    },
    async restoreBackup(name) {
      const config = await store.config()
      await addConflicts(
        await restoreBackup(engineHistory, name, machineOf(config), now, transfer.namesFoldCase),
      )
      schedule()
      return status()
    },
    exportMemory: (kind, at) => exportMemory(transfer, kind, at),
    async importMemory(kind, text) {
      const result = await importMemory(transfer, kind, text)
      if (result.commit) schedule()
      announce()
      return result
    },
    noteLocalChange() {
      if (moving || closed) return
      void store
        .config()
        .then((config) => {
          if (config.url) schedule()
        })
        .catch((failure: unknown) => logger.warn('Could not read the sync settings', failure))
    },
    async start() {
      // An import a crash interrupted leaves its staging repository behind.
      void removeStaging(options.dataDir).catch((failure: unknown) =>
        logger.warn('Could not remove what an interrupted import left', failure),
      )
      try {
        await applyConfig()
      } catch (failure) {
        logger.warn('Could not read the sync settings; this machine is not named yet', failure)
        return
      }
      void store
        .config()
        .then((config) => {
          if (config.url) void request()
        })
        .catch((failure: unknown) => logger.warn('Could not read the sync settings', failure))
    },
    onStatus(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      closed = true
      if (debounce) clearTimeout(debounce)
      if (interval) clearInterval(interval)
      if (retry) clearTimeout(retry)
      listeners.clear()
    },
  }

  async function resolveConflict(
    path: string,
    choice: ConflictChoice,
    text?: string,
    basis?: string,
  ): Promise<void> {
    const seen = resolvesWritten.get(path) ?? 0
    const lostToOwnChoice = (error: unknown): unknown =>
      (resolvesWritten.get(path) ?? 0) > seen &&
      error instanceof CairnError &&
      (error.code === 'conflict' || error.code === 'sync-no-conflict')
        ? alreadyResolved(path)
        : error
    try {
      await resolveOnce(path, choice, text, basis)
    } catch (error) {
      throw lostToOwnChoice(error)
    }
  }

  async function resolveOnce(
    path: string,
    choice: ConflictChoice,
    text?: string,
    basis?: string,
  ): Promise<void> {
    // Records follow renamed files and drop settled ones when viewed.
    await openConflicts()
    const state = await store.state()
    const config = await store.config()
    const record = state.conflicts.find((c) => c.path === path)
    const head = history.head()
    const read = (file: string) =>
      head ? memory.readAt(file, head).catch(() => null) : Promise.resolve(null)
    const machineId = await knownMachineId()
    const open = record ? await viewConflict(record, machineOf(config), read, machineId) : null
    if (!record || !open) {
      // The caller's path, which may be any string: cut, with nothing invisible.
      const shown = escapeInvisible(cutWithEllipsis(path, 200))
      throw new CairnError('sync-no-conflict', `${shown} has no conflict left to resolve.`)
    }
    if (choice === 'edit' && text === undefined) {
      throw new CairnError('invalid-input', 'Write the text to keep, or choose a version.')
    }
    // Whether the file still holds blocks of the conflict's marker sizes once written.
    let leftOpen = false
    if (record.kind === 'binary') {
      await resolveBinary(record, choice)
    } else {
      const current = (await read(path)) ?? ''
      const here = mergedHere(record, machineId)
      // Written only over the text the choice was made from: what the person edited, or the
      // conflicted version the other choices took their sides from.
      const from = choice === 'edit' && basis !== undefined ? basis : current
      const next = resolvedText(
        current,
        machineOf(config),
        choice,
        text,
        here,
        markerSizesOf(record),
      )
      if (Buffer.byteLength(next, 'utf8') > memory.limits.maxFileBytes) {
        // Larger than the Memory tool writes (a large file merged elsewhere): the history's
        // own limit applies, as for the merge that raised it.
        await commitResolved(record, new TextEncoder().encode(next), from)
      } else {
        await writeResolved(path, next, from)
      }
      // A later merge that landed inside an open block left a whole block of its own in the
      // side chosen (or the person's text holds one): the conflict stays open on what is left,
      // which the dialog shows next.
      leftOpen = hasConflicts(next, markerSizesOf(record))
    }
    if (leftOpen) return
    const latest = await store.state()
    await store.saveState({
      ...latest,
      conflicts: latest.conflicts.filter((c) => c !== record && c.path !== path),
    })
  }

  async function writeResolved(path: string, next: string, from: string): Promise<void> {
    const outcome = await memory.execute(
      { command: 'create', path, file_text: next },
      { actor: 'user' },
      {
        commitAs: 'resolve',
        createExisting: 'overwrite',
        // Checked in the write's own turn: Claude's write or an editor's save that lands
        // after the person's choice was made is never written over unseen.
        beforeRun: (planned) => {
          const run = planned.before === from
          if (run) noteResolved(path)
          return { run }
        },
      },
    )
    if (outcome.held) throw changedMeanwhile(path)
    if (outcome.isError) {
      const message = String(outcome.content).replace(/^Error: /, '')
      throw new CairnError(outcome.errorCode ?? 'invalid-input', message)
    }
  }

  async function commitResolved(
    record: ConflictRecord,
    content: Uint8Array,
    from: string,
  ): Promise<void> {
    if (content.length > MAX_VERSIONED_BYTES) {
      throw new CairnError(
        'too-large',
        `Nothing was written to ${record.path}: that text is larger than the history keeps. Choose one version, or edit it shorter.`,
      )
    }
    await history.exclusive(async (session) => {
      // The folder's edits are saved before this runs: `main` holds what the file holds now.
      const head = session.head()
      const now = head ? await memory.readAt(record.path, head).catch(() => null) : null
      if (now !== from) throw changedMeanwhile(record.path)
      await session.commitFiles(new Map([[record.path.replace(/^\/memories\//, ''), content]]), {
        actor: 'user',
        command: 'resolve',
        subject: `resolve ${record.path}`,
        paths: [record.path],
        conversationId: null,
        toolUseId: null,
        overwrite: false,
        restoredFrom: null,
      })
      noteResolved(record.path)
    })
  }

  async function resolveBinary(record: ConflictRecord, choice: ConflictChoice): Promise<void> {
    const other = record.otherPath
    if (!other || choice === 'edit') {
      throw new CairnError(
        'invalid-input',
        'A file that is not text can only be kept one way or both ways.',
      )
    }
    if (choice === 'both') {
      const machine = machineOf(await store.config())
      await history.exclusive(async (session) => {
        const head = session.head() as string
        const commit = await keptBothCommit(history, head, record.path, other, machine, now())
        await session.moveMain(commit, 'forward')
      })
      return
    }
    const relative = (virtual: string) => virtual.replace(/^\/memories\//, '')
    await history.exclusive(async (session) => {
      const files = new Map<string, Uint8Array | null>()
      if (choice === 'theirs') {
        const head = session.head() as string
        const tree = await commitFiles(history.objects, head)
        const entry = tree.get(relative(other))
        if (!entry) throw new CairnError('sync-no-conflict', `${other} is gone already.`)
        files.set(relative(record.path), await history.objects.readBlob(entry.oid))
      }
      files.set(relative(other), null)
      await session.commitFiles(files, {
        actor: 'user',
        command: 'resolve',
        subject: `resolve ${record.path}`,
        paths: [record.path, other],
        conversationId: null,
        toolUseId: null,
        overwrite: false,
        restoredFrom: null,
      })
    })
  }

  async function testConnection(input: SyncTestInput): Promise<SyncTestResult> {
    let url: string
    try {
      url = checkRemoteUrl(input.url)
    } catch (failure) {
      return { ok: false, found: 'invalid-url', message: toApiError(failure).message }
    }
    const config = await store.config()
    const typed = input.token?.trim() ?? ''
    // A typed token is made known to the log's hiding here; a saved one as it is read.
    if (typed !== '') options.onTokenKnown?.(typed)
    const token = typed !== '' ? typed : url === config.url ? await tokenFor(url) : null
    const remote: RemoteSpec = {
      url,
      username: input.username?.trim() ?? config.username,
      token,
      idleTimeoutMs: options.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
    }
    try {
      const head = await remoteHead(remote)
      if (head === null) {
        return {
          ok: true,
          found: 'empty',
          message:
            'Connected. The repository is empty: this machine’s memory will be its first content.',
        }
      }
      if (history.position(head) >= 0) {
        return {
          ok: true,
          found: 'this-memory',
          message: 'Connected. The repository holds this memory’s history.',
        }
      }
      // Which history it is needs its commits: fetched (after any fetch or push running), changing
      // nothing local but objects. Its packs are left unjudged (each beside a `.keep`) for the
      // next sync, which takes in or removes them with what it fetches: released here, a
      // refused commit's objects stayed for good, since that sync's fetch then brought nothing.
      const packs: string[] = []
      const fetched =
        (await history
          .transfer(async () =>
            fetchMain(history.gitdir, remote, {
              keepTracking: url !== config.url,
              onPack: (name) => packs.push(name),
              since: await refCommits(history.gitdir, history.head()),
            }),
          )
          .finally(() => leaveFetchedPacks(history.gitdir, packs))) ?? head
      const found = await explore(graphOf(history), fetched)
      if (history.head() === null || found.frontier.length > 0) {
        return {
          ok: true,
          found: 'this-memory',
          message:
            history.head() === null
              ? 'Connected. The repository holds memory that this machine will take on the first sync.'
              : 'Connected. The repository holds this memory’s history, with changes this machine does not have yet.',
        }
      }
      const files = await commitFiles(history.objects, fetched)
      return {
        ok: true,
        found: 'other-memory',
        message: `Connected. The repository holds another machine’s memory (${files.size} ${files.size === 1 ? 'file' : 'files'}). The first sync asks how to join it with this machine’s.`,
      }
    } catch (failure) {
      const apiError = toApiError(failure)
      const found: SyncTestResult['found'] =
        apiError.code === 'sync-auth'
          ? 'auth'
          : apiError.code === 'sync-redirected'
            ? 'redirected'
            : apiError.code === 'sync-not-a-repository'
              ? 'not-a-repository'
              : DISK_ERRORS.has(apiError.code)
                ? 'disk'
                : 'unreachable'
      if (apiError.code === 'internal') logger.error('Testing the sync connection failed', failure)
      return { ok: false, found, message: apiError.message }
    }
  }
}

// Codes of this machine's disk failing (full, failing, denied, read-only): Test connection says
// the disk, not the remote, is at fault.
const DISK_ERRORS: ReadonlySet<string> = new Set([
  'disk-full',
  'access-denied',
  'read-only',
  'io-error',
])

/** The secret store's value: the token and the address it was given for. */
interface BoundToken {
  readonly forServer: string
  readonly token: string
}

function boundToken(saved: string): BoundToken | null {
  if (!saved.startsWith('{')) return null
  try {
    const value = JSON.parse(saved) as Partial<BoundToken>
    return typeof value.forServer === 'string' && typeof value.token === 'string'
      ? { forServer: value.forServer, token: value.token }
      : null
  } catch {
    return null
  }
}

function alreadyResolved(path: string): CairnError {
  return new CairnError(
    'sync-no-conflict',
    `${path} is already resolved: your other choice for it was written, so this one changed nothing.`,
  )
}

function changedMeanwhile(path: string): CairnError {
  return new CairnError(
    'conflict',
    `${path} changed after you opened it (Claude or another program wrote to it), so nothing was written. Your text is still here to copy; Cancel and Edit… again start from the file as it is now.`,
  )
}

// The merge commits a record's blocks came from.
function mergeCommitsOf(record: ConflictRecord): string[] {
  const later = (record.laterMerges ?? []).flatMap((merge) => (merge.since ? [merge.since] : []))
  return [record.since, ...later].slice(0, 20)
}
