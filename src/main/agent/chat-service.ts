/**
 * The chat as the app sees it: start a turn in a (new or stored) conversation, stop it, and
 * keep the stored conversation in step with what happened. One turn per conversation at a time.
 */
import { randomUUID } from 'node:crypto'
import type { ErrorCode } from '../../shared/errors'
import { promptText, retriedPrompt } from '../../shared/retry'
import type {
  AgentEvent,
  CommitSummary,
  Conversation,
  RunningTurn,
  StoredMessage,
  TurnError,
} from '../../shared/types'
import {
  MAX_ERROR_MESSAGE,
  replyEnded,
  withoutOpenTurn,
  type ConversationStore,
} from '../conversations'
import { CairnError, diskFailure } from '../lib/errors'
import { consoleLogger, type Logger } from '../lib/logger'
import { cutText } from '../lib/text'
import { apiKeyProblem, type ApiCredentials, type SettingsService } from '../settings'
import { baseUrlProblem, clientFor, type AnthropicFetch } from './client'
import {
  NOT_RUN_HELD,
  RESULT_NOT_RECORDED,
  recordedResult,
  unansweredCalls,
  withAnswers,
} from './messages'
import type { ReplyLimits } from './reply-limits'
import { runTurn, type MemoryToolFactory, type TurnEvent, type TurnMemory } from './run-turn'
import { classifyTurnError, hideKeys, noApiKeyError, rejectedKeyError } from './turn-errors'

export interface ChatServiceOptions {
  readonly conversations: ConversationStore
  readonly settings: Pick<SettingsService, 'get' | 'credentials'>
  /** Claude's memory commands: the versioned memory, or the review gate in front of it. */
  readonly memory: TurnMemory
  /** Claude was shown what a view of this memory path returned (see `TurnOptions.onViewed`). */
  readonly onViewed?: (path: string) => void
  /**
   * The memory commit right now, outside edits not saved yet saved first: each reply records
   * the one its turn began with, and Claude's first `view` must not read newer text than it.
   */
  readonly memoryHead: () => string | null | Promise<string | null>
  readonly createMemoryTool: MemoryToolFactory
  /**
   * The commits history holds for Claude's calls `toolUseIds` in a conversation (the versioned
   * memory's `toolUseCommits`): how a call whose result a kill kept from being saved is answered
   * with what it did. Without it, such a call is answered "may or may not have run".
   */
  readonly toolUseCommits?: (
    conversationId: string,
    toolUseIds: ReadonlyArray<string>,
    since: number,
  ) => Promise<ReadonlyMap<string, CommitSummary>>
  /**
   * The tool use ids of Claude's calls that were waiting for the person's review when Cairn was
   * killed (the review's held file, read at start): one history holds no commit for is answered
   * "not run". `onHeldAnswered` is told each one once its answer is saved.
   */
  readonly heldAtKill?: ReadonlySet<string>
  readonly onHeldAnswered?: (toolUseIds: ReadonlyArray<string>) => void
  /** Receives every agent event (core forwards them as `agent:event`). */
  readonly emit: (event: AgentEvent) => void
  /** Called when a conversation's stored content changed (core emits `conversations:changed`). */
  readonly onConversationChanged: (id: string) => void
  readonly maxRetries?: number
  readonly fetch?: AnthropicFetch
  /** How long a reply may take to start and stay silent (the defaults when absent). */
  readonly replyLimits?: ReplyLimits
  readonly now?: () => number
  /** Where failures nobody waits for are reported (default: the console). */
  readonly logger?: Logger
}

export interface ChatService {
  /**
   * Stores the user's message and starts the turn; resolves before the reply streams.
   * `clientId`, chosen by the sender, comes back in the turn's `turn-started` event, so the
   * sender knows its own turn (even before this call resolves). `retryOf`: the failed turn this
   * one retries; its prompt, when no reply came after it and it reads `text`, is replaced rather
   * than kept beside the new one (`retriedPrompt`), so Claude and the chat see the message once.
   */
  send(
    conversationId: string | null,
    text: string,
    clientId: string,
    retryOf?: string,
  ): Promise<{ readonly conversationId: string; readonly turnId: string }>
  /** Stops the running turn of a conversation (no-op when none runs). */
  stop(conversationId: string): void
  isRunning(conversationId: string): boolean
  /** The turns running now, each with its events so far (`chat:running`). */
  running(): ReadonlyArray<RunningTurn>
  /**
   * True for a turn this Cairn started (running or ended): a conversation's `openTurn` naming
   * one was not cut off by a close (its end may not have been stored: a failing disk).
   */
  startedHere(turnId: string): boolean
  /**
   * Forgets the error turn `turnId` ended with, or that it was cut off, in the stored
   * conversation, so neither is told again (a reload, a restart). Nothing changes when the
   * conversation's latest word is about another turn.
   */
  dismiss(conversationId: string, turnId: string): Promise<void>
  /** Resolves when the conversation's running turn (if any) has ended and been stored. */
  settled(conversationId: string): Promise<void>
  /** Stops every turn and waits for them to end. */
  close(): Promise<void>
}

/** Answers found for calls whose results were not saved, and the commits they made. */
interface Recovered {
  readonly answers: ReadonlyMap<string, { readonly content: string; readonly isError: boolean }>
  readonly commits: Readonly<Record<string, string>>
}

interface ActiveTurn {
  readonly turnId: string
  readonly controller: AbortController
  readonly done: Promise<void>
  /** The events told so far, neighbouring text deltas joined: what `running()` answers. */
  readonly events: AgentEvent[]
  /** The `seq` the turn's next event gets. */
  next: number
}

/** An agent event before the service numbers it. */
type UnnumberedEvent = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, 'seq'>
    : never
  : never

/** Builds the chat service over its collaborators (all injected, no Electron). */
export function createChatService(options: ChatServiceOptions): ChatService {
  const now = options.now ?? Date.now
  const logger = options.logger ?? consoleLogger
  const running = new Map<string, ActiveTurn>()
  const started = new Set<string>()

  /**
   * Numbers `event` in its turn and sends it; while the turn runs, it is also kept for windows
   * that ask later (the last ones, `error` and `turn-finished`, come once it no longer runs).
   */
  const publish = (turn: ActiveTurn, event: UnnumberedEvent): void => {
    const numbered = { ...event, seq: turn.next } as AgentEvent
    turn.next += 1
    if (running.get(event.conversationId) === turn) {
      const last = turn.events.at(-1)
      if (numbered.type === 'text-delta' && last?.type === 'text-delta') {
        turn.events[turn.events.length - 1] = { ...last, text: last.text + numbered.text }
      } else {
        turn.events.push(numbered)
      }
    }
    options.emit(numbered)
  }

  const append = async (
    id: string,
    messages: ReadonlyArray<StoredMessage>,
    toolCommits: Readonly<Record<string, string>> = {},
    turn: TurnFacts | null = null,
    recovered: Recovered | null = null,
    opening: string | null = null,
    retried: string | null = null,
  ): Promise<Conversation> => {
    // A turn under way: the last one's error is no longer the latest word.
    const updated = await options.conversations.update(id, ({ lastError: _, ...current }) => {
      // A Retry's prompt stands in for the failed turn's, when no reply came after it.
      const text = messages[0] ? promptText(messages[0]) : ''
      const replaced = retried === null ? null : retriedPrompt(current.messages, retried, text)
      const kept = replaced === null ? current.messages : current.messages.slice(0, replaced)
      const next: Conversation = {
        ...current,
        // Stored with the prompt, in the same write: a turn a kill cuts off is still marked.
        ...(opening !== null ? { openTurn: opening } : {}),
        messages: withViewed(
          [...(recovered ? withAnswers(kept, recovered.answers) : kept), ...messages],
          turn,
        ),
        toolCommits: { ...current.toolCommits, ...recovered?.commits, ...toolCommits },
      }
      // A reply the API ended the turn with ends its mark in the same write (a mark beside one
      // is never read: replyEnded), so a turn that ends well needs no write of its own for it.
      return replyEnded(next.messages) ? withoutOpenTurn(next) : next
    })
    options.onConversationChanged(id)
    return updated
  }

  /**
   * Keeps the error a turn ended with in its conversation, so the chat can still say why after
   * a restart. Best effort: when it cannot be stored (the disk that failed the turn, a deleted
   * conversation), the error event still tells the windows open now.
   */
  const keepError = async (id: string, error: TurnError): Promise<void> => {
    try {
      await options.conversations.update(id, (current) => ({
        ...withoutOpenTurn(current, error.turnId),
        lastError: { ...error, message: cutText(error.message, MAX_ERROR_MESSAGE) },
      }))
      options.onConversationChanged(id)
    } catch (failure) {
      logger.warn('Could not keep the error a turn ended with in its conversation', failure)
    }
  }

  /**
   * Marks turn `turnId` ended in its conversation (its `openTurn` goes). Best effort: one not
   * marked is still known to have run here (`startedHere`) until Cairn closes. `quiet` when the
   * turn already failed to be stored: the log has said why.
   */
  const markEnded = async (id: string, turnId: string, quiet: boolean): Promise<void> => {
    try {
      await options.conversations.update(id, (current) => withoutOpenTurn(current, turnId))
    } catch (failure) {
      // Deleted while the turn ran: nothing is left to mark.
      if (quiet || (failure instanceof CairnError && failure.code === 'conversation-not-found'))
        return
      logger.warn('Could not mark the end of a turn in its conversation', failure)
    }
  }

  /**
   * Answers for the memory calls of `conversation` that no saved result answers (Cairn was
   * killed between running them and saving their results): history is asked for each call's
   * commit, by its tool use id; one found ran, and is answered with what it did, one not found
   * "may or may not have run", as is every one when history cannot answer now (its side index
   * being rebuilt): Claude hears that in this turn, and what is saved is what Claude heard.
   * Stored with the next message, so history is asked once. Null when every call is answered
   * (the usual case: nothing is looked up).
   */
  const recover = async (conversation: Conversation): Promise<Recovered | null> => {
    const open = unansweredCalls(conversation.messages)
    if (open.length === 0 || !options.toolUseCommits) return null
    // Their commits came after the replies that asked for them were saved (a minute's margin
    // for a clock set back, and for commit times kept in whole seconds).
    const asked = conversation.messages.filter(
      (m) =>
        m.role === 'assistant' &&
        m.content.some((b) => b.type === 'tool_use' && open.includes(b.id)),
    )
    const since = Math.min(...asked.map((m) => m.createdAt)) - 60_000
    let found: ReadonlyMap<string, CommitSummary>
    try {
      found = await options.toolUseCommits(conversation.id, open, since)
    } catch (error) {
      // Claude is told "may or may not have run" for them in this turn: that is what is saved,
      // so a later message, when history answers again, cannot tell Claude otherwise.
      logger.warn(
        'Could not look in history for the commits of calls whose results were not saved',
        error,
      )
      found = new Map()
    }
    const answers = new Map<string, { content: string; isError: boolean }>()
    const commits: Record<string, string> = {}
    for (const id of open) {
      const commit = found.get(id)
      answers.set(
        id,
        commit
          ? { content: recordedResult(commit), isError: false }
          : options.heldAtKill?.has(id)
            ? { content: NOT_RUN_HELD, isError: true }
            : { content: RESULT_NOT_RECORDED, isError: true },
      )
      if (commit) commits[id] = commit.oid
    }
    return { answers, commits }
  }

  const execute = async (
    conversation: Conversation,
    turn: ActiveTurn,
    memoryAt: string | null,
    release: () => void,
  ): Promise<void> => {
    const { turnId, controller } = turn
    const emit = (event: TurnEvent): void =>
      publish(turn, { ...event, conversationId: conversation.id, turnId } as UnnumberedEvent)
    let outcome: {
      stopped: boolean
      error: { code: ErrorCode; message: string } | null
      notStored?: boolean
    }
    let apiKey = ''
    try {
      const [settings, read] = await Promise.all([
        options.settings.get(),
        // A saved key the disk failed to read (rdisk30) is the turn's error, kept with the turn
        // like any other: never "no key", so the person does not type a new one over theirs.
        options.settings.credentials().catch((error: unknown) => {
          if (error instanceof CairnError) return error
          throw error
        }),
      ])
      const credentials: ApiCredentials =
        read instanceof CairnError ? { apiKey: null, apiKeySource: null, baseURL: undefined } : read
      apiKey = credentials.apiKey ?? ''
      const urlProblem = baseUrlProblem(credentials.baseURL)
      const client = clientFor(credentials, {
        maxRetries: options.maxRetries,
        fetch: options.fetch,
        logger,
        replyLimits: options.replyLimits,
      })
      const keyProblem = credentials.apiKey ? apiKeyProblem(credentials.apiKey) : null
      if (read instanceof CairnError) {
        outcome = { stopped: false, error: { code: read.code, message: read.message } }
      } else if (!client) {
        outcome = { stopped: false, error: noApiKeyError() }
      } else if (urlProblem) {
        outcome = { stopped: false, error: { code: 'invalid-base-url', message: urlProblem } }
      } else if (keyProblem) {
        // It could not even go out as a request header: say so, rather than fail vaguely.
        outcome = {
          stopped: false,
          error: {
            code: 'invalid-api-key',
            message:
              credentials.apiKeySource === 'env'
                ? `The API key in the ANTHROPIC_API_KEY environment variable holds ${keyProblem}, a character that cannot be sent to the API. Save a key in Settings (a saved key is used instead), or fix the variable where it is set.`
                : `The API key saved in Settings holds ${keyProblem}, a character that cannot be sent to the API. Replace the key in Settings.`,
          },
        }
      } else {
        outcome = await runTurn({
          client,
          memory: options.memory,
          createMemoryTool: options.createMemoryTool,
          onViewed: options.onViewed,
          conversationId: conversation.id,
          history: conversation.messages,
          settings,
          signal: controller.signal,
          emit,
          memoryAt,
          append: async (messages, commits, viewed, readAt) => {
            await append(conversation.id, messages, commits, { turnId, viewed, memoryAt: readAt })
          },
          now,
          logger,
        })
        // The API's refusal does not say which key it was sent; the person needs to know.
        if (outcome.error?.code === 'invalid-api-key') {
          outcome = { ...outcome, error: rejectedKeyError(credentials.apiKeySource) }
        }
      }
    } catch (error) {
      // Storing failed (disk full, conversation deleted meanwhile): report, never crash the core.
      if (!(error instanceof CairnError)) logger.error('A chat turn failed', error)
      outcome = {
        stopped: controller.signal.aborted,
        notStored: true,
        error:
          error instanceof CairnError
            ? { code: error.code, message: error.message }
            : (diskFailure(error) ?? classifyTurnError(error, { streamStarted: false, model: '' })),
      }
    }
    // The API's own words can quote what it was sent (a proxy echoing the key's header, maybe
    // encoded, or a part of it): no key reaches the window.
    if (outcome.error) {
      outcome = {
        ...outcome,
        error: { ...outcome.error, message: hideKeys(outcome.error.message, apiKey) },
      }
    }
    // A turn that failed in the store itself: its error cannot be stored either.
    if (outcome.error && !outcome.notStored)
      await keepError(conversation.id, { turnId, ...outcome.error })
    else await markEnded(conversation.id, turnId, outcome.notStored === true)
    // Forget the running turn before announcing its end, so whoever reacts to turn-finished
    // (the renderer, a test, another feature) can send the next message at once.
    release()
    if (outcome.error) emit({ type: 'error', ...outcome.error })
    emit({ type: 'turn-finished', stopped: outcome.stopped })
  }

  return {
    async send(conversationId, text, clientId, retryOf) {
      if (conversationId !== null && running.has(conversationId)) {
        throw turnRunning()
      }
      const base =
        conversationId === null
          ? await options.conversations.create(text)
          : await options.conversations.get(conversationId)
      if (running.has(base.id)) {
        throw turnRunning()
      }
      const turnId = `t_${randomUUID().replaceAll('-', '')}`
      const controller = new AbortController()
      // Registered before the first await below, so a second send cannot slip in.
      let finish!: () => void
      const done = new Promise<void>((resolve) => (finish = resolve))
      const turn: ActiveTurn = { turnId, controller, done, events: [], next: 0 }
      running.set(base.id, turn)
      started.add(turnId)
      let stored = false
      try {
        const recovered = await recover(base)
        const conversation = await append(
          base.id,
          [{ role: 'user', content: [{ type: 'text', text }], createdAt: now(), turnId }],
          {},
          null,
          recovered,
          turnId,
          retryOf ?? null,
        )
        stored = true
        if (recovered && options.onHeldAnswered) {
          const held = [...recovered.answers.keys()].filter((id) => options.heldAtKill?.has(id))
          if (held.length > 0) options.onHeldAnswered(held)
        }
        // What Claude can see when the turn starts: every reply of the turn records it.
        const memoryAt = await options.memoryHead()
        publish(turn, {
          type: 'turn-started',
          conversationId: base.id,
          turnId,
          clientId,
          userText: text,
          memoryAt,
        })
        const release = () => {
          if (running.get(base.id)?.turnId === turnId) running.delete(base.id)
          finish()
        }
        void execute(conversation, turn, memoryAt, release).finally(release)
      } catch (error) {
        // The prompt stored with its open mark, the turn never began: the person is told the
        // send failed, so a restart must not say the reply was cut off when Cairn closed.
        if (stored) await markEnded(base.id, turnId, false)
        running.delete(base.id)
        finish()
        throw error
      }
      return { conversationId: base.id, turnId }
    },
    stop(conversationId) {
      running.get(conversationId)?.controller.abort()
    },
    isRunning(conversationId) {
      return running.has(conversationId)
    },
    running() {
      // A turn whose prompt is still being stored has told nothing yet: its `turn-started`
      // (seq 0) comes live.
      return [...running.entries()]
        .filter(([, turn]) => turn.events.length > 0)
        .map(([conversationId, turn]) => ({
          conversationId,
          turnId: turn.turnId,
          events: [...turn.events],
          next: turn.next,
        }))
    },
    startedHere(turnId) {
      return started.has(turnId)
    },
    async dismiss(conversationId, turnId) {
      let changed = false
      await options.conversations.update(
        conversationId,
        (current) => {
          if (current.lastError?.turnId !== turnId && current.openTurn !== turnId) return current
          changed = true
          const { lastError, ...rest } = withoutOpenTurn(current, turnId)
          return lastError?.turnId === turnId ? rest : { ...rest, ...(lastError && { lastError }) }
        },
        // Dismissing is no news: the conversation keeps its place in the list.
        { touch: false },
      )
      if (changed) options.onConversationChanged(conversationId)
    },
    async settled(conversationId) {
      await running.get(conversationId)?.done
    },
    async close() {
      const turns = [...running.values()]
      for (const turn of turns) turn.controller.abort()
      await Promise.all(turns.map((turn) => turn.done))
    },
  }
}

/** What a turn's store brings its replies: the paths viewed so far, the memory read at. */
interface TurnFacts {
  readonly turnId: string
  readonly viewed: ReadonlyArray<string>
  readonly memoryAt: string | null
}

/**
 * Gives every reply of the turn `turn.turnId` the paths viewed so far in that turn, and its
 * latest reply the commit of what its results showed: a reply is stored before the commands
 * it asked for run, so it learns of them as their results are stored.
 */
function withViewed(
  messages: ReadonlyArray<StoredMessage>,
  turn: TurnFacts | null,
): ReadonlyArray<StoredMessage> {
  if (!turn) return messages
  const start = messages.findLastIndex((message) => message.turnId === turn.turnId)
  if (start < 0) return messages
  const latest = messages.findLastIndex((message) => message.role === 'assistant')
  return messages.map((message, i) =>
    i > start && message.role === 'assistant'
      ? {
          ...message,
          viewed: turn.viewed,
          ...(i === latest ? { memoryAt: turn.memoryAt } : {}),
        }
      : message,
  )
}

function turnRunning(): CairnError {
  return new CairnError(
    'turn-running',
    'Claude is still answering in this conversation. Stop it or wait until it finishes.',
  )
}
