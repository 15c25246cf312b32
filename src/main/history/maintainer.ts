/**
 * Background maintenance of the history's objects: packs loose objects (see objects/repack.ts)
 * once enough have piled up, and whatever is loose once the user has been idle a while.
 *
 * It runs on the main thread in slices of a few milliseconds and steps aside whenever the
 * serial queue has work, so a command waits at most one slice; it is stopped (between two
 * slices, removing nothing it did not finish) when the history closes. Its file-system calls
 * that can wait for a busy disk run on the thread pool, and its removals, which make the disk
 * discard what they free, only once no command has run for `quietMs`: loose files a batch at a
 * time on a thread of their own (`UnlinkWorker`, halted as soon as a command is queued), the
 * rest one at a time on the thread pool.
 */
import { readRefTips, type ObjectStore } from './object-store'
import {
  estimateLoose,
  repack,
  RepackAborted,
  type RepackOptions,
  type RepackReport,
  type RepackStep,
} from './objects/repack'
import { usesNodeDisk } from '../lib/disk'
import type { Logger } from '../lib/logger'
import type { SerialQueue } from '../lib/serial-queue'
import { UnlinkWorker } from '../lib/unlink-worker'

export interface MaintenanceSettings {
  /** Pack as soon as this many loose objects have piled up (default 2,000). */
  readonly looseThreshold?: number
  /** Pack whatever is loose (at least `idleMinimum` objects) after this long without a commit. */
  readonly idleMs?: number
  readonly idleMinimum?: number
  /** Longest stretch of work between two yields (default 2 ms). */
  readonly sliceMs?: number
  /**
   * Each removal waits until no command has run for this long (default 500 ms): the disk's
   * work for removals is done while the person (or Claude) is not waiting for a command.
   * A pass's first step, the write-ahead log's checkpoint, waits for the larger of this and
   * the log's own 500 ms pause (`COMMANDS_PAUSED_MS`, docs/durability.md "Cost").
   */
  readonly quietMs?: number
  /** First wait before a failed index check and rebuild is tried again (default 5 s), doubled each time up to `verifyRetryMaxMs` (10 min). */
  readonly verifyRetryMs?: number
  readonly verifyRetryMaxMs?: number
  /**
   * Told when a packing pass begins (`started`, once its index check is done) and at each of
   * its steps (`RepackStep`). For tests: the crash test aims its kills at a pass's phases.
   */
  readonly onStep?: (step: PassStep) => void
}

/** A pass's beginning, then the steps of `repack`. */
export type PassStep = 'started' | RepackStep

export interface Maintainer {
  /** A commit happened: maybe time to pack; restarts the idle clock. */
  noteActivity(): void
  /**
   * Runs one pass now (after any pass in progress) and resolves with what it did; in slices
   * like a background pass, so commands keep running meanwhile.
   */
  runNow(options?: Pick<RepackOptions, 'mergeAll' | 'onStep'>): Promise<RepackReport>
  /** Runs the `verify` task again (something found the side index damaged). */
  reverify(): void
  /** The last background failure, if any (a later success clears it). */
  lastError(): Error | null
  /** Ends any pass at its next yield and stops all timers. */
  stop(): Promise<void>
}

/**
 * Keeps background maintenance and git transfers (a sync's fetch and push, through
 * isomorphic-git) out of each other's way. A transfer writes a pack and then its index, and
 * reads objects loose or from any pack; maintenance clears packs without an index and removes
 * loose objects and packs it folded. So while a transfer runs, maintenance neither clears,
 * installs nor removes anything (it waits, its new pack still under a temp name); a transfer
 * waits for such a step in progress. The same rule `git fetch` keeps with `git gc` through
 * `.keep` files, kept here in memory because both run in this one process.
 */
export class PackFolderGate {
  private transfers = 0
  private wanting = 0
  private changing = false
  private waiting: Array<() => void> = []
  private wantedListeners = new Set<() => void>()

  /** Runs a fetch or push: no maintenance step changes the object folders meanwhile. */
  async transfer<T>(task: () => Promise<T>): Promise<T> {
    this.wanting++
    for (const listener of this.wantedListeners) listener()
    try {
      while (this.changing) await this.wait()
    } finally {
      this.wanting--
    }
    this.transfers++
    try {
      return await task()
    } finally {
      this.transfers--
      this.wake()
    }
  }

  /** Runs a maintenance step that changes the object folders, once no transfer runs. */
  async change<T>(step: () => Promise<T>, aborted: () => boolean = () => false): Promise<T> {
    while (this.changing || this.transfers > 0) {
      if (aborted()) throw new RepackAborted('maintenance stopped')
      await this.wait()
    }
    this.changing = true
    try {
      return await step()
    } finally {
      this.changing = false
      this.wake()
    }
  }

  /** True while a transfer waits for a step to end: a step that can, ends early. */
  wanted(): boolean {
    return this.wanting > 0
  }

  /** Calls `listener` whenever a transfer starts wanting the folders; returns its removal. */
  onWanted(listener: () => void): () => void {
    this.wantedListeners.add(listener)
    return () => this.wantedListeners.delete(listener)
  }

  /** True while a transfer runs (tests). */
  busy(): boolean {
    return this.transfers > 0
  }

  /** Lets a waiting `change` see that it was aborted. */
  wake(): void {
    const waiting = this.waiting
    this.waiting = []
    for (const resume of waiting) resume()
  }

  private wait(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve))
  }
}

const EMPTY_REPORT: RepackReport = {
  loose: 0,
  packed: 0,
  mergedPacks: 0,
  removedLoose: 0,
  pack: null,
  unreadable: [],
}

const DEFAULTS = {
  looseThreshold: 2_000,
  idleMs: 20_000,
  idleMinimum: 64,
  sliceMs: 2,
  quietMs: 500,
  verifyRetryMs: 5_000,
  verifyRetryMaxMs: 600_000,
}

export function createMaintainer(options: {
  store: ObjectStore
  queue: SerialQueue
  head: () => string | null
  /** Shared with sync's transfers (see `PackFolderGate`). */
  gate?: PackFolderGate
  settings?: MaintenanceSettings
  /**
   * A check to run once per session, at the first idle moment or pass (the side index against
   * the commits); it gets the same `pause` as packing.
   */
  verify?: (pause: () => Promise<void>) => Promise<void>
  /** Runs before each pass packs anything (after `verify`); a failure fails the pass. */
  beforePack?: () => Promise<void>
  /** Told about background passes that failed (they are tried again at the next trigger). */
  logger?: Logger
}): Maintainer {
  const { store, queue, head } = options
  const gate = options.gate ?? new PackFolderGate()
  const settings = { ...DEFAULTS, ...options.settings }
  // Loose objects = what the folders held at the last count + what this process wrote since.
  // The first count waits for the first commit or idle moment (not on the way to opening).
  let counted: number | null = null
  let writtenAtCount = store.looseWritten()
  let running: Promise<RepackReport> | null = null
  let stopped = false
  let failure: Error | null = null
  let idleTimer: NodeJS.Timeout | null = null
  // The running pass's removals (see `UnlinkWorker`): halted as a command is queued, a
  // transfer wants the folders, or the history closes.
  let remover: UnlinkWorker | null = null
  const haltRemovals = () => remover?.halt()
  const unwatch = [queue.onQueued(haltRemovals), gate.onWanted(haltRemovals)]

  const loose = () => {
    counted ??= estimateLoose(store.db)
    return counted + store.looseWritten() - writtenAtCount
  }

  let sliceStart = performance.now()
  // Nothing (not even a promise) while the slice goes on: a pass calls this for every object.
  function pause(): Promise<void> | undefined {
    if (performance.now() - sliceStart < settings.sliceMs && !queue.busy()) return undefined
    return stepAside()
  }
  async function stepAside(): Promise<void> {
    do {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (queue.busy()) await queue.idle()
    } while (queue.busy() && !stopped)
    sliceStart = performance.now()
  }

  /**
   * Resolves once no command has run for `quietMs` (a command that comes meanwhile makes it
   * wait again), with false when a transfer waits for the pack folder (the removals stop for
   * this pass; the next removes the rest). A removal frees blocks, which the bench machine's
   * disk discards before the call returns; a command's rename over a file frees the old one,
   * and that discard queues behind any of maintenance's in flight, on the main thread: with two
   * unlinks kept in flight through the commands, one command was blocked 1.3 s in the kernel
   * (docs/durability.md, docs/history-storage.md).
   */
  let wakeQuiet: (() => void) | null = null
  async function quiet(): Promise<boolean> {
    for (;;) {
      if (stopped) throw new RepackAborted('maintenance stopped')
      if (gate.wanted()) return false
      if (queue.busy()) {
        await queue.idle()
        continue
      }
      const wait = settings.quietMs - (performance.now() - queue.lastActive())
      if (wait <= 0) break
      // `stop` wakes it: a close never waits for quiet.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.ceil(wait))
        wakeQuiet = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      wakeQuiet = null
    }
    sliceStart = performance.now()
    return true
  }

  let verified = false
  // A check whose rebuild failed (a full disk, the history switched meanwhile) is tried again:
  // at the next pass or idle moment once its wait is over, by a timer at that moment, and at
  // once by `maintain()`. Until it succeeds, reads past the index say it is being rebuilt.
  let verifyFailures = 0
  let verifyRetryAt = 0
  let verifyTimer: NodeJS.Timeout | null = null
  async function verifyOnce(force: boolean): Promise<void> {
    if (verified || !options.verify) return
    if (!force && performance.now() < verifyRetryAt) return
    verified = true
    try {
      await options.verify(async () => {
        await pause()
        if (stopped) throw new RepackAborted('maintenance stopped')
      })
      verifyFailures = 0
      verifyRetryAt = 0
    } catch (error) {
      if (error instanceof RepackAborted) throw error
      failure = error as Error
      options.logger?.warn('The history index check failed; it is tried again later', error)
      verified = false
      verifyFailures++
      const wait = Math.min(
        settings.verifyRetryMaxMs,
        settings.verifyRetryMs * 2 ** Math.min(verifyFailures - 1, 30),
      )
      verifyRetryAt = performance.now() + wait
      if (verifyTimer) clearTimeout(verifyTimer)
      verifyTimer = setTimeout(() => {
        verifyTimer = null
        if (!stopped && !verified) start({}, true, true).catch(() => undefined)
      }, wait)
      verifyTimer.unref()
    }
  }

  function start(
    extra: Pick<RepackOptions, 'mergeAll' | 'onStep'> = {},
    verifyOnly = false,
    forceVerify = false,
  ): Promise<RepackReport> {
    const previous = running ?? Promise.resolve(null)
    const pass = previous
      .catch(() => null)
      .then(async () => {
        if (stopped) throw new RepackAborted('maintenance stopped')
        sliceStart = performance.now()
        await verifyOnce(forceVerify)
        if (verifyOnly) return EMPTY_REPORT
        await options.beforePack?.()
        if (stopped) throw new RepackAborted('maintenance stopped')
        // A caller's own `onStep` (`runNow`) is told repack's steps instead.
        const onStep = extra.onStep ?? settings.onStep
        if (!extra.onStep) settings.onStep?.('started')
        // The objects the write-ahead log covers are made durable first: a pass removes
        // loose files (once packed) and renews their folders, and the log should not have to
        // reach across that.
        // Yielding to commands meanwhile, as the log's own checkpoints do.
        await store.checkpoint({ yields: true })
        if (stopped) throw new RepackAborted('maintenance stopped')
        const writtenBefore = store.looseWritten()
        sliceStart = performance.now()
        // `main` first, then every other ref: the remote's `main`, backups of other histories.
        const current = head()
        const tips = [...new Set([...(current ? [current] : []), ...readRefTips(store.gitdir)])]
        // Loose files go a batch at a time on a thread of their own, not one thread-pool
        // request each (docs/performance.md, stop 21); a test's wrapper around the file system
        // (`setDisk`) sees them one by one on the thread pool instead.
        const own = usesNodeDisk() ? new UnlinkWorker() : null
        remover = own
        let report: RepackReport
        try {
          report = await repack(store.db, tips, {
            pause,
            aborted: () => stopped,
            logger: options.logger,
            exclusive: (step) => gate.change(step, () => stopped),
            beforeRemoval: quiet,
            removeBatch: own ? (paths) => own.unlink(paths) : undefined,
            ...extra,
            onStep,
          })
        } finally {
          if (remover === own) remover = null
          await own?.close()
        }
        if (report.unreadable.length > 0) {
          // Damage the pass found and left in place (no sound copy to pack instead): said,
          // never silently carried on with. A copy written again later is packed next time.
          options.logger?.warn(
            `History maintenance found ${report.unreadable.length} damaged object(s) and left them as they are`,
            new Error(report.unreadable.slice(0, 5).join(', ')),
          )
        }
        // What is loose now: whatever this process wrote while the pass ran (a few at most).
        counted = 0
        writtenAtCount = writtenBefore
        failure = null
        return report
      })
    running = pass
    void pass.then(
      () => {
        if (running === pass) running = null
      },
      (error: unknown) => {
        if (running === pass) running = null
        if (error instanceof RepackAborted) return
        failure = error as Error
        options.logger?.warn('History maintenance failed; it is tried again later', error)
      },
    )
    return pass
  }

  function armIdle(): void {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = setTimeout(() => {
      idleTimer = null
      if (stopped || running) return
      start({}, loose() < settings.idleMinimum).catch(() => undefined)
    }, settings.idleMs)
    idleTimer.unref()
  }

  armIdle()
  return {
    noteActivity() {
      if (stopped) return
      armIdle()
      if (!running && loose() >= settings.looseThreshold) start().catch(() => undefined)
    },
    runNow: (extra) => start(extra, false, true),
    reverify() {
      if (stopped) return
      verified = false
      start({}, true).catch(() => undefined)
    },
    lastError: () => failure,
    async stop() {
      stopped = true
      haltRemovals()
      for (const off of unwatch) off()
      gate.wake()
      wakeQuiet?.()
      if (idleTimer) clearTimeout(idleTimer)
      idleTimer = null
      if (verifyTimer) clearTimeout(verifyTimer)
      verifyTimer = null
      await running?.catch(() => undefined)
    },
  }
}
