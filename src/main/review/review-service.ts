/**
 * Review: Claude proposes, the person decides. Claude's memory commands pass through
 * `execute`, the gate: each change is checked (the flag rules) on a dry run, and, as the
 * review mode says, runs at once or waits as a pending change until the person approves it
 * (as it is, or with their edits) or declines it. In `off` mode, where nothing can wait, there
 * is no dry run: the command runs and its flags are found on what it changed. The command's caller (Claude's turn) waits
 * meanwhile, with no time limit; the turn's Stop, and closing Cairn, decline what still waits.
 * Cairn's own proposals (expiries) wait the same way.
 */
import { randomUUID } from 'node:crypto'
import type { ValidPayload } from '../../shared/contract'
import {
  CLOSED_REASON,
  declinedText,
  editedText,
  LIST_TEXT_CHARS,
  PREVIEW_CHARS,
  STOPPED_REASON,
} from '../../shared/review'
import type { ChangeCommand, ChangeResult, PendingChange, ReviewMode } from '../../shared/types'
import type { ExecuteOutcome, Origin, VersionedMemory } from '../history'
import { CairnError } from '../lib/errors'
import { consoleLogger, type Logger } from '../lib/logger'
import { createSerialQueue } from '../lib/serial-queue'
import { writeHeldCalls, type HeldCall } from './held-calls'
import type { MadeChange, PlannedChange } from '../memory'
import { commitFlags, flagsFor, type Checked } from './check'
import { approvalsBetween, LANDED_KEPT, ownEditUntouched, type Landed } from './own-edit'

const CHANGE_COMMANDS: ReadonlySet<string> = new Set<ChangeCommand>([
  'create',
  'str_replace',
  'insert',
  'delete',
  'rename',
])

export interface ReviewServiceOptions {
  readonly memory: Pick<VersionedMemory, 'execute' | 'changesSince'>
  /** The mode at start (settings may change it with `setMode`). Default `off`. */
  readonly mode?: ReviewMode
  readonly now?: () => number
  readonly logger?: Logger
  /**
   * Where Claude's calls are kept while they wait (`held-calls`): written before a call is
   * held and whenever one is decided. None: held calls are kept in memory only.
   */
  readonly heldFile?: string
  /**
   * Calls the file held at start (Cairn was killed while they waited): kept in it until
   * `settleCarried` says Claude was told about them.
   */
  readonly carried?: ReadonlyArray<HeldCall>
}

/** Options of one of Claude's commands through the gate. */
export interface GateOptions {
  /** The turn's signal: when it aborts (Stop), a change still waiting is declined, "stopped". */
  readonly signal?: AbortSignal
}

export interface ReviewService {
  /**
   * Runs one of Claude's memory commands, or holds it for the person and resolves once they
   * decided: with the command's outcome when approved, with an error naming the path and
   * their reason when declined. Reads and other actors' commands run at once.
   */
  execute(input: unknown, origin: Origin, options?: GateOptions): Promise<ExecuteOutcome>
  setMode(mode: ReviewMode): void
  /** Every change waiting, oldest first. */
  list(): ReadonlyArray<PendingChange>
  /**
   * Approves (runs and commits at once, `Reviewed-by: You`; with `editedText`, the person's
   * text lands instead of Claude's) or declines (nothing changes) one pending change.
   */
  decide(decision: ValidPayload<'review:decide'>): Promise<ChangeResult>
  /**
   * The whole text before and after of a pending change whose preview left it out (too long
   * to send with every list: `PendingChange.omitted`).
   */
  text(id: string): {
    readonly before: string | null
    readonly after: string | null
    /** The change's revision this text is of. */
    readonly revision: number
  }
  /**
   * Holds a change of Cairn's own (an expiry) for the person, as Claude's are held. Resolves
   * with it once it waits, or null when the command would fail as things are.
   */
  propose(
    input: { readonly command: 'delete'; readonly path: string },
    options: { readonly subject: string; readonly onDecline?: () => void },
  ): Promise<PendingChange | null>
  /** Told with the whole list whenever it changes. */
  onPending(listener: (changes: ReadonlyArray<PendingChange>) => void): () => void
  /**
   * Declines everything waiting (Cairn is quitting); later holds are declined at once. An
   * approval already running is let finish: its change is declined only if it did not land.
   * Resolves once the held file says so.
   */
  close(): Promise<void>
  /** The carried calls among `toolUseIds` were answered: the file forgets them. */
  settleCarried(toolUseIds: ReadonlyArray<string>): void
}

interface Held {
  change: PendingChange
  /** The whole text before and after (the change may carry neither: `omitted`). */
  text: { readonly before: string | null; readonly after: string | null }
  fingerprint: string
  readonly input: unknown
  readonly origin: Origin
  readonly subject: string | undefined
  /** Set while an approval runs: no second decision may start. */
  deciding: boolean
  /**
   * The turn stopped, or Cairn closed, while an approval ran: the approval's command may
   * already be in history's queue, so it is let finish, and the change is declined with this
   * reason only if it did not land (Claude is told what happened, never "declined" for a
   * change that is in History).
   */
  declineAfter: string | null
  /** Ends the wait of whoever holds the command (Claude's turn). */
  readonly finish: (outcome: ExecuteOutcome) => void
  readonly onDecline: (() => void) | undefined
}

/** Builds the review gate over the versioned memory. */
export function createReviewService(options: ReviewServiceOptions): ReviewService {
  const { memory } = options
  const now = options.now ?? Date.now
  const logger = options.logger ?? consoleLogger
  let mode: ReviewMode = options.mode ?? 'off'
  let closed = false
  const pending = new Map<string, Held>()
  /** The file approvals that landed while changes waited, oldest first (see `own-edit`). */
  let landed: ReadonlyArray<Landed> = []
  const listeners = new Set<(changes: ReadonlyArray<PendingChange>) => void>()

  // The list the window gets: each change's text while the list's total stays within
  // LIST_TEXT_CHARS, oldest first; the others with their sizes only, as a long change (twenty
  // changes of 900,000 characters would otherwise send 36 million with every list).
  const list = (): ReadonlyArray<PendingChange> => {
    let left = LIST_TEXT_CHARS
    return [...pending.values()].map(({ change }) => {
      if (change.omitted) return change
      const size = (change.before?.length ?? 0) + (change.after?.length ?? 0)
      if (size <= left) {
        left -= size
        return change
      }
      return { ...change, ...omit(change.before, change.after) }
    })
  }

  // What the held file says, rewritten one write at a time, each with the list as it is then.
  let carried: ReadonlyArray<HeldCall> = options.carried ?? []
  const arriving = new Set<HeldCall>()
  const writes = createSerialQueue().run
  const persist = (): Promise<void> => {
    const file = options.heldFile
    if (file === undefined) return Promise.resolve()
    return writes(() => {
      const calls: HeldCall[] = [...carried, ...arriving]
      for (const { origin } of pending.values()) {
        if (origin.actor === 'claude') calls.push(heldCallOf(origin))
      }
      return writeHeldCalls(file, calls, logger)
    }).catch((error: unknown) => {
      // Only the answer after a kill is at stake: "may or may not have run" instead of "not run".
      logger.warn('Could not keep the calls held for review on disk', error)
    })
  }

  const announce = (): void => {
    void persist()
    const changes = list()
    for (const listener of listeners) {
      try {
        listener(changes)
      } catch (error) {
        logger.error('A review listener failed', error)
      }
    }
  }

  const check = (planned: MadeChange, origin: Origin): Promise<Checked> =>
    origin.actor === 'claude'
      ? flagsFor(planned, { history: memory, now: now(), logger })
      : Promise.resolve(UNFLAGGED)

  // A lookup that did not answer may hide a `person-edited` flag: in `flagged` mode the change
  // waits for the person rather than land unasked (and never fails Claude's write).
  const shouldHold = (checked: Checked): boolean =>
    mode === 'all' ||
    (mode === 'flagged' && (checked.flags.length > 0 || checked.personEditedUnknown))

  function hold(
    input: unknown,
    origin: Origin,
    planned: PlannedChange,
    checked: Checked,
    extra: {
      readonly subject?: string
      readonly finish: (outcome: ExecuteOutcome) => void
      readonly onDecline?: () => void
    },
  ): Held {
    const held: Held = {
      change: pendingChange(randomUUID(), origin, planned, checked, now()),
      text: { before: planned.before, after: planned.after },
      fingerprint: planned.fingerprint,
      input,
      origin,
      subject: extra.subject,
      deciding: false,
      declineAfter: null,
      finish: extra.finish,
      onDecline: extra.onDecline,
    }
    pending.set(held.change.id, held)
    announce()
    return held
  }

  function decline(held: Held, reason: string | null, byPerson: boolean): void {
    if (!pending.delete(held.change.id)) return
    if (pending.size === 0) landed = []
    held.finish(declined(held.change.path, reason))
    if (byPerson) held.onDecline?.()
    announce()
  }

  /** Plans Claude's command again against the memory as it is now, updating its preview. */
  async function refresh(held: Held): Promise<void> {
    const box: { planned: PlannedChange | null; checked: Checked } = {
      planned: null,
      checked: UNFLAGGED,
    }
    const outcome = await memory.execute(held.input, held.origin, {
      subject: held.subject,
      beforeRun: async (planned) => {
        box.planned = planned
        box.checked = await check(planned, held.origin)
        return { run: false }
      },
    })
    if (!pending.has(held.change.id)) return
    // The memory could not be reached (a full disk, an owed commit that failed): that says
    // nothing about the change, which stays as it was, approvable once the disk has room.
    if (!box.planned && passing(outcome)) return
    if (box.planned) {
      held.change = {
        ...pendingChange(held.change.id, held.origin, box.planned, box.checked, now()),
        createdAt: held.change.createdAt,
        revision: held.change.revision + 1,
      }
      held.text = { before: box.planned.before, after: box.planned.after }
      held.fingerprint = box.planned.fingerprint
    } else {
      held.change = {
        ...held.change,
        problem: forPeople(outcome),
        revision: held.change.revision + 1,
      }
    }
    announce()
  }

  async function approve(
    held: Held,
    editedText: string | undefined,
    revision: number | undefined,
  ): Promise<ChangeResult> {
    // Decided on a preview that was planned again since (the file changed): the person has
    // not seen what it would now do, and edited text was written against the old file.
    if (revision !== undefined && revision !== held.change.revision) {
      throw new CairnError(
        'review-outdated',
        `${held.change.path} changed since you looked at this change. The preview now shows it against the file as it is: review it again.`,
      )
    }
    // A problem found earlier may be gone (the file was put back): plan again before refusing,
    // and show the person what it would now do before it runs.
    if (held.change.problem) {
      await refresh(held)
      const { problem } = held.change
      if (problem) {
        throw new CairnError(
          'review-unappliable',
          `${problem} This change can no longer be applied; decline it instead.`,
        )
      }
      throw new CairnError(
        'review-outdated',
        `${held.change.path} changed again, and this change can be applied now. The preview shows it against the file as it is: review it again.`,
      )
    }
    const change = { ...held.change, ...held.text }
    const edited = editedText !== undefined && editedText !== change.after
    if (edited && !change.editable) {
      throw new CairnError(
        'invalid-input',
        'Only a change that leaves text in a file can be edited before approving it.',
      )
    }
    const runInput = edited
      ? { command: 'create', path: change.path, file_text: editedText }
      : held.input
    const box = { stale: false, planned: false }
    let landing: Landed | null = null
    // The file changed only by other approvals of this gate, and this command's edit is untouched.
    const onlyApprovedSince = (planned: PlannedChange): boolean =>
      planned.kind === 'file' &&
      change.before !== null &&
      change.after !== null &&
      planned.before !== null &&
      planned.after !== null &&
      ownEditUntouched(
        held.input,
        change.before,
        planned.before,
        change.after,
        planned.after,
        approvalsBetween(landed, change.path, change.before, planned.before) ?? [],
      )
    const outcome = await memory.execute(runInput, held.origin, {
      createExisting: edited ? 'overwrite' : undefined,
      commitAs: edited ? change.command : undefined,
      subject: held.subject,
      beforeRun: async (planned) => {
        if (planned.fingerprint !== held.fingerprint && !(!edited && onlyApprovedSince(planned))) {
          box.stale = true
          return { run: false }
        }
        box.planned = true
        // The person's own text counts as their edit: a change planned before it looks again.
        if (
          !edited &&
          planned.kind === 'file' &&
          planned.before !== null &&
          planned.after !== null
        ) {
          landing = { path: planned.path, before: planned.before, after: planned.after }
        }
        return {
          run: true,
          review: edited ? 'edited' : 'approved',
          // The person looked at it: a lookup that does not answer now holds it no longer (its
          // commit says it was not checked).
          flags: commitFlags(planned.path, await check(planned, held.origin)),
        }
      },
    })
    if (box.stale) {
      await refresh(held)
      throw new CairnError(
        'review-outdated',
        `${change.path} changed since this change was proposed. The preview now shows it against the file as it is: review it again.`,
      )
    }
    if (outcome.isError && (box.planned || edited || passing(outcome))) {
      // The write itself failed (a full disk, a permission), or the person's text was refused
      // (too large, a secret), or the memory could not be reached before the dry run (a full
      // disk while committing an outside edit first): nothing changed, and the change can be
      // approved again.
      throw new CairnError(outcome.errorCode ?? 'io-error', forPeople(outcome))
    }
    if (outcome.isError) {
      await refresh(held)
      throw new CairnError(
        'review-unappliable',
        `${forPeople(outcome)} This change can no longer be applied; decline it instead.`,
      )
    }
    pending.delete(change.id)
    if (landing) landed = [...landed, landing].slice(-LANDED_KEPT)
    // With nothing waiting, no change can have been planned before these approvals.
    if (pending.size === 0) landed = []
    held.finish(edited ? editedOutcome(outcome, change) : outcome)
    announce()
    const what = edited ? 'Approved with your edits' : 'Approved'
    return {
      commit: outcome.commit,
      message: outcome.commit
        ? `${what}. The change is in History.`
        : outcome.commitPending
          ? `${what}. It will appear in History with the next change.`
          : `${what}. It changed nothing.`,
    }
  }

  // The changes waiting on each turn's signal, and the one listener that stops them all: a
  // reply may hold dozens of calls at once, and a listener each made Node warn past ten.
  const waitingOn = new WeakMap<
    AbortSignal,
    { readonly held: Set<Held>; readonly onAbort: () => void }
  >()

  /** A change waiting when its turn stops is declined (after its approval, when one runs). */
  function stopped(held: Held): void {
    if (held.deciding) held.declineAfter ??= STOPPED_REASON
    else decline(held, STOPPED_REASON, false)
  }

  /**
   * Declines `held` when the turn's signal aborts, while it waits. Returns what stops
   * listening once it is decided: a turn may hold many calls in its life, and each listener
   * left on its signal kept its change's whole text until the turn ended.
   */
  function wait(held: Held, signal: AbortSignal | undefined): () => void {
    if (!signal) return () => {}
    if (signal.aborted) {
      stopped(held)
      return () => {}
    }
    let waiting = waitingOn.get(signal)
    if (!waiting) {
      const all = new Set<Held>()
      const onAbort = (): void => {
        waitingOn.delete(signal)
        for (const one of [...all]) stopped(one)
      }
      waiting = { held: all, onAbort }
      waitingOn.set(signal, waiting)
      signal.addEventListener('abort', onAbort, { once: true })
    }
    const { held: all, onAbort } = waiting
    all.add(held)
    return () => {
      if (!all.delete(held) || all.size > 0 || waitingOn.get(signal)?.held !== all) return
      waitingOn.delete(signal)
      signal.removeEventListener('abort', onAbort)
    }
  }

  return {
    async execute(input, origin, gateOptions = {}) {
      if (origin.actor !== 'claude' || !CHANGE_COMMANDS.has(commandOf(input))) {
        return memory.execute(input, origin, { signal: gateOptions.signal })
      }
      const box: { planned: PlannedChange | null; checked: Checked } = {
        planned: null,
        checked: UNFLAGGED,
      }
      const outcome = await memory.execute(input, origin, {
        signal: gateOptions.signal,
        // In `off` mode nothing waits: the command runs without a dry run, and its flags,
        // found on what it changed, go with its commit all the same.
        needsDryRun: () => mode !== 'off',
        afterRun: async (made) => ({ flags: commitFlags(made.path, await check(made, origin)) }),
        beforeRun: async (planned) => {
          const checked = await check(planned, origin)
          if (!shouldHold(checked)) return { run: true, flags: commitFlags(planned.path, checked) }
          box.planned = planned
          box.checked = checked
          return { run: false }
        },
      })
      if (!outcome.held || !box.planned) return outcome
      if (closed) return declined(box.planned.path, CLOSED_REASON)
      const { planned, checked } = box
      // On disk before it waits: killed now, Claude is told after the restart it did not run.
      if (origin.actor === 'claude' && options.heldFile !== undefined) {
        const call = heldCallOf(origin)
        arriving.add(call)
        await persist()
        arriving.delete(call)
        if (closed) {
          void persist()
          return declined(planned.path, CLOSED_REASON)
        }
      }
      return new Promise<ExecuteOutcome>((resolve) => {
        let stopWaiting = (): void => {}
        const held = hold(input, origin, planned, checked, {
          finish: (outcome) => {
            stopWaiting()
            resolve(outcome)
          },
        })
        stopWaiting = wait(held, gateOptions.signal)
      })
    },

    setMode(next) {
      mode = next
    },

    list,

    text(id) {
      const held = pending.get(id)
      if (!held) {
        throw new CairnError(
          'review-not-found',
          'This change is no longer waiting: it was decided already, or its turn ended.',
        )
      }
      return { ...held.text, revision: held.change.revision }
    },

    async decide({ id, decision, reason, editedText, revision }) {
      const held = pending.get(id)
      if (!held) {
        throw new CairnError(
          'review-not-found',
          'This change is no longer waiting: it was decided already, or its turn ended.',
        )
      }
      if (held.deciding) {
        throw new CairnError('conflict', 'This change is being applied already.')
      }
      if (decision === 'decline') {
        decline(held, reason ?? null, true)
        return {
          commit: null,
          message:
            held.origin.actor === 'claude'
              ? 'Declined. Nothing changed, and Claude was told.'
              : 'Declined. Nothing changed.',
        }
      }
      held.deciding = true
      try {
        return await approve(held, editedText, revision)
      } finally {
        held.deciding = false
        if (held.declineAfter !== null) decline(held, held.declineAfter, false)
      }
    },

    async propose(input, proposal) {
      const origin: Origin = { actor: 'system' }
      const box: { planned: PlannedChange | null } = { planned: null }
      if (closed) return null
      const outcome = await memory.execute(input, origin, {
        subject: proposal.subject,
        beforeRun: (planned) => {
          box.planned = planned
          return { run: false }
        },
      })
      if (!outcome.held || !box.planned || closed) return null
      const held = hold(input, origin, box.planned, UNFLAGGED, {
        subject: proposal.subject,
        finish: () => {},
        onDecline: proposal.onDecline,
      })
      return held.change
    },

    onPending(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },

    settleCarried(toolUseIds) {
      const settled = new Set(toolUseIds)
      const left = carried.filter((call) => !settled.has(call.toolUseId))
      if (left.length === carried.length) return
      carried = left
      void persist()
    },

    close() {
      closed = true
      for (const held of [...pending.values()]) {
        if (held.deciding) held.declineAfter = CLOSED_REASON
        else decline(held, CLOSED_REASON, false)
      }
      return persist()
    },
  }
}

function pendingChange(
  id: string,
  origin: Origin,
  planned: PlannedChange,
  checked: Checked,
  createdAt: number,
): PendingChange {
  const { fingerprint: _, ...preview } = planned
  const claude = origin.actor === 'claude' ? origin : null
  // A long text goes to the window on demand, not with every list (review hunt13 D4).
  const long =
    (planned.before?.length ?? 0) > PREVIEW_CHARS || (planned.after?.length ?? 0) > PREVIEW_CHARS
  return {
    ...preview,
    ...(long ? omit(planned.before, planned.after) : { omitted: null }),
    id,
    toolUseId: claude?.toolUseId ?? null,
    conversationId: claude?.conversationId ?? null,
    origin: claude ? 'claude' : 'cairn',
    flags: checked.flags,
    unchecked: checked.personEditedUnknown ? [personEditedUnknown(checked.uncheckedCause)] : [],
    createdAt,
    editable:
      planned.kind === 'file' && planned.after !== null && planned.command !== 'rename' && !long,
    problem: null,
    revision: 0,
  }
}

export { PREVIEW_CHARS }

/** A change's text left out, with how long it is (`PendingChange.omitted`). */
function omit(
  before: string | null,
  after: string | null,
): Pick<PendingChange, 'before' | 'after' | 'omitted'> {
  return {
    before: null,
    after: null,
    omitted: { beforeChars: before?.length ?? 0, afterChars: after?.length ?? 0 },
  }
}

const UNFLAGGED: Checked = { flags: [], personEditedUnknown: false, uncheckedCause: null }

/** What the card says when the person-edited lookup did not answer, and why. */
function personEditedUnknown(cause: string | null): string {
  return `Cairn could not check whether you edited this file in the last day (${cause ?? 'its history could not be read'}), so this change waits for you.`
}

/** What Claude receives for a change the person declined (or that Stop or quitting declined). */
function declined(path: string, reason: string | null): ExecuteOutcome {
  return {
    content: declinedText(path, reason),
    isError: true,
    mutation: null,
    errorCode: null,
    commit: null,
  }
}

/** What Claude receives when the person changed its text before approving it. */
function editedOutcome(outcome: ExecuteOutcome, change: PendingChange): ExecuteOutcome {
  return {
    ...outcome,
    content: editedText(change.command, change.path),
  }
}

/**
 * True when a command failed because the memory could not be reached or written right now
 * (a full disk, a permission, an I/O error, the history busy or closed), not because the
 * command no longer applies: such a failure passes, and the change must stay approvable.
 */
function passing(outcome: ExecuteOutcome): boolean {
  return outcome.errorCode !== null && PASSING.has(outcome.errorCode)
}

const PASSING: ReadonlySet<string> = new Set<NonNullable<ExecuteOutcome['errorCode']>>([
  'disk-full',
  'access-denied',
  'read-only',
  'io-error',
  'closed',
  'locked',
  'history-damaged',
  'index-rebuilding',
])

/**
 * The tool's refusal in words for people (Claude's "Error:" prefix dropped), as a finished
 * sentence: some official texts end without a full stop ("The destination … already exists",
 * "… Please ensure it is unique"), and people read it with a sentence of ours after it.
 */
function forPeople(outcome: ExecuteOutcome): string {
  const text = typeof outcome.content === 'string' ? outcome.content : 'The change was refused.'
  const words = text.replace(/^Error:\s*/, '')
  return /[.!?]$/.test(words) ? words : `${words}.`
}

function commandOf(input: unknown): string {
  const command = (input as { command?: unknown } | null)?.command
  return typeof command === 'string' ? command : ''
}

function heldCallOf(origin: Extract<Origin, { actor: 'claude' }>): HeldCall {
  return { conversationId: origin.conversationId, toolUseId: origin.toolUseId }
}
