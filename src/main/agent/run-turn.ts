/**
 * One user turn over the SDK's own tool loop (`client.beta.messages.toolRunner`) with the
 * memory tool, streaming. Emits the turn's events and hands every finished message to the
 * caller to store, so the stored conversation is valid at every step and after a stop.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import type {
  BetaContentBlock,
  BetaMemoryTool20250818Command,
} from '@anthropic-ai/sdk/resources/beta'
import type { AgentEvent, Settings, StoredBlock, StoredMessage } from '../../shared/types'
import type { ExecuteOutcome, Origin } from '../history'
import { CairnError, diskFailure } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { isRecord } from '../lib/records'
import { parseMemoryPath, type MemoryExecutor, type MemoryResult } from '../memory'
import {
  NOT_RUN_CUT_OFF,
  NOT_RUN_ENDED,
  NOT_RUN_STOPPED,
  resultText,
  sendableToolUseId,
  type ApiMessage,
  storedReply,
  toApiMessages,
  toolResultsFor,
  tokenUsage,
} from './messages'
import { buildSystemPrompt } from './system-prompt'
import {
  classifyTurnError,
  KNOWN_STOP_REASONS,
  maxTokensError,
  refusalError,
  unknownStopError,
  type TurnError,
} from './turn-errors'

/** Wraps an executor as the SDK's runnable memory tool (the memory domain's `createRunnableMemoryTool`). */
export type MemoryToolFactory = (
  execute: MemoryExecutor,
) => BetaRunnableTool<BetaMemoryTool20250818Command>

/** An agent event without the ids the caller adds. */
export type TurnEvent = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, 'conversationId' | 'turnId' | 'seq'>
    : never
  : never

/** Beta for context editing (`clear_tool_uses_20250919`) and the memory tool. */
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27'

/** Most API requests one turn may make before Cairn ends it (a loop guard, not a budget). */
export const MAX_REQUESTS_PER_TURN = 40

/**
 * The most image data (base64 characters) the requests of one turn carry. A viewed image stays
 * in every later request of its turn, and the API refuses a request over 32 MB whole; this
 * leaves room for the conversation itself. (Earlier turns hold only `[image]`.)
 */
export const MAX_TURN_IMAGE_CHARS = 24_000_000

/** The most images one turn's requests carry: over 20, the API allows less per image. */
export const MAX_TURN_IMAGES = 20

/**
 * Clears old tool results once the prompt passes 100k input tokens, keeping the 4 most recent
 * tool uses, and only when at least 10k tokens go (so a prompt-cache rewrite is worth it).
 */
export const CONTEXT_EDITS = {
  edits: [
    {
      type: 'clear_tool_uses_20250919' as const,
      trigger: { type: 'input_tokens' as const, value: 100_000 },
      keep: { type: 'tool_uses' as const, value: 4 },
      clear_at_least: { type: 'input_tokens' as const, value: 10_000 },
    },
  ],
}

/**
 * Where a turn's memory commands go: the versioned memory itself, or a gate in front of it
 * (review) that may hold a command until the person decides. `signal` is the turn's: a held
 * command gives up when the turn is stopped.
 */
export interface TurnMemory {
  execute(
    input: unknown,
    origin: Origin,
    options?: { readonly signal?: AbortSignal },
  ): Promise<ExecuteOutcome>
}

export interface TurnOptions {
  readonly client: Anthropic
  readonly memory: TurnMemory
  readonly createMemoryTool: MemoryToolFactory
  readonly conversationId: string
  /** The stored history, ending with the user's new message. */
  readonly history: ReadonlyArray<StoredMessage>
  readonly settings: Settings
  readonly signal: AbortSignal
  readonly emit: (event: TurnEvent) => void
  /** The memory commit at the turn's start (null: memory was empty). */
  readonly memoryAt: string | null
  /**
   * Stores messages as they complete (a reply, then the results of its tool calls), with
   * the paths viewed in the turn so far (every reply of the turn records them) and the memory
   * commit of the latest reply stored (`readAt` below): its results may have moved it.
   */
  readonly append: (
    messages: ReadonlyArray<StoredMessage>,
    toolCommits: Readonly<Record<string, string>>,
    viewed: ReadonlyArray<string>,
    memoryAt: string | null,
  ) => Promise<void>
  readonly now?: () => number
  /**
   * Claude was shown what a `view` of `path` (a `/memories/…` path) returned: the read log's
   * "last read". Not for a view that failed, nor one whose image the turn could not carry.
   */
  readonly onViewed?: (path: string) => void
  /** Where a memory command that failed unexpectedly is reported (Claude gets a plain error). */
  readonly logger: Logger
}

export interface TurnOutcome {
  readonly stopped: boolean
  readonly error: TurnError | null
  /** True when the turn's messages could not be stored (nor, then, its error). */
  readonly notStored?: boolean
}

/** Runs the turn to its end (finished, stopped or failed); never throws for API errors. */
export async function runTurn(options: TurnOptions): Promise<TurnOutcome> {
  const { settings, signal, emit } = options
  const now = options.now ?? Date.now
  const results = new Map<string, { content: string; isError: boolean }>()
  const commits: Record<string, string> = {}
  // The memory paths Claude viewed in this turn, in order, each once.
  const viewed: string[] = []
  // The memory commit of what Claude has read so far in the turn: where it started, then the
  // one each view, `str_replace` or `insert` read the file at (for an edit, just before its
  // own commit). Each reply records it as its results leave it, so "Memory at this reply"
  // holds what its commands read, outside edits made during the turn included, and shows
  // Claude's own edits as changes since.
  let readAt = options.memoryAt
  let awaitingResults: StoredMessage | null = null
  let streamStarted = false
  // Whether a reply is being read, and how many events it has held (an empty reply holds none).
  let reading = false
  let replyEvents = 0
  let partial: StoredBlock[] = []
  let lastStop: string | null = null
  // The replies of the turn so far: one per request.
  let replies = 0

  // Every store of the turn goes through here, so a failure to save is told apart from the
  // API's failures (it is not a problem "talking to Claude").
  const append = async (
    messages: ReadonlyArray<StoredMessage>,
    toolCommits: Readonly<Record<string, string>>,
    viewedPaths: ReadonlyArray<string>,
  ): Promise<void> => {
    try {
      await options.append(messages, toolCommits, viewedPaths, readAt)
    } catch (error) {
      throw new NotStored(error)
    }
  }

  let flushing: Promise<void> = Promise.resolve()
  /** Stores the results of the reply awaiting them (in order after any earlier flush). */
  const flushResults = (notRun: string): Promise<void> => {
    const reply = awaitingResults
    awaitingResults = null
    const previous = flushing
    flushing = (async () => {
      await previous
      const message = reply && toolResultsFor(reply, results, notRun, now())
      if (message) await append([message], { ...commits }, [...viewed])
    })()
    return flushing
  }

  // The ids of the calls started in this turn: a call repeating one is not run (below).
  const started = new Set<string>()
  // What the images viewed in this turn so far add to each of its later requests.
  const shown = { images: 0, chars: 0 }

  const noteViewed = (path: string): void => {
    try {
      options.onViewed?.(path)
    } catch (error) {
      // The read log is a nicety: Claude's view already happened.
      options.logger.warn('Could not record a view in the read log', error)
    }
  }

  const execute: MemoryExecutor = async (input, toolUseId) => {
    if (!toolUseId || started.has(toolUseId)) {
      // A call without an id, or with an earlier call's id (never from the real API), cannot
      // be linked to its own result or commit, and is not stored: running it would change
      // memory with no trace in the conversation. Claude is told; the window is not shown it
      // (no event): the stored conversation does not hold it, so a card would vanish when the
      // turn ends, and its events would be taken for the earlier call's (one id for both).
      return { content: toolUseId ? REPEATED_ID : NO_ID, isError: true }
    }
    const id = toolUseId
    emit({ type: 'tool-call', toolUseId: id, command: commandOf(input), input })
    started.add(toolUseId)
    let result: MemoryResult
    let commitOid: string | null = null
    if (signal.aborted) {
      // Stopped after the reply asked for this command: it does not run.
      result = { content: NOT_RUN_STOPPED, isError: true }
    } else {
      try {
        const outcome = await options.memory.execute(
          input,
          { actor: 'claude', conversationId: options.conversationId, toolUseId: id },
          { signal },
        )
        // Stop came while the command waited behind an earlier call of the same reply.
        result = outcome.stopped
          ? { content: NOT_RUN_STOPPED, isError: true }
          : withinImageBudget({ content: outcome.content, isError: outcome.isError }, shown)
        commitOid = outcome.commit?.oid ?? null
        // An image the turn could not carry was not shown to Claude: not viewed, and (as for
        // any command that failed) not what the reply read.
        const shownToClaude = !outcome.isError && !result.isError
        const path = shownToClaude ? viewedPath(input) : null
        if (path) noteViewed(path)
        if (path && !viewed.includes(path)) viewed.push(path)
        if (shownToClaude && outcome.readAt !== undefined) readAt = outcome.readAt
      } catch (error) {
        options.logger.error('A memory command failed unexpectedly', error)
        result = { content: 'Error: the memory command could not be completed.', isError: true }
      }
    }
    // Stored and shown as text (an image becomes a placeholder); Claude gets the blocks
    // themselves, so a viewed image reaches the model.
    const text = resultText(result.content)
    results.set(id, { content: text, isError: result.isError })
    if (commitOid) commits[id] = commitOid
    emit({ type: 'tool-result', toolUseId: id, content: text, isError: result.isError, commitOid })
    return result
  }

  try {
    const runner = options.client.beta.messages.toolRunner(
      {
        model: settings.model,
        max_tokens: settings.maxTokens,
        system: [
          {
            type: 'text',
            text: buildSystemPrompt(settings.customInstructions),
            // Tools and system prompt are the stable prefix of every request.
            cache_control: { type: 'ephemeral' },
          },
        ],
        tools: [options.createMemoryTool(execute)],
        messages: withCacheBreakpoint(toApiMessages(options.history)),
        context_management: CONTEXT_EDITS,
        betas: [CONTEXT_MANAGEMENT_BETA],
        max_iterations: MAX_REQUESTS_PER_TURN,
        stream: true,
        thread: false,
      },
      { signal },
    )
    for await (const stream of runner) {
      // The previous reply's commands have all run by the time the next request goes out.
      // Not awaited here: the stream must be read right away or its early events are lost.
      // A failure is not lost either: `await flushing` below throws it again.
      flushResults(signal.aborted ? NOT_RUN_STOPPED : NOT_RUN_ENDED).catch(() => {})
      streamStarted = false
      replies++
      reading = true
      replyEvents = 0
      partial = []
      for await (const event of stream) {
        replyEvents++
        if (event.type === 'message_start') streamStarted = true
        else if (event.type === 'content_block_start' && event.content_block.type === 'text') {
          partial[event.index] = { type: 'text', text: '' }
        } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          const block = partial[event.index]
          if (block?.type === 'text')
            partial[event.index] = { type: 'text', text: block.text + event.delta.text }
          emit({ type: 'text-delta', text: event.delta.text })
        }
      }
      const message = await stream.finalMessage()
      reading = false
      asSendableCalls(message.content)
      await flushing
      partial = []
      const reply: StoredMessage = {
        ...storedReply(message, now()),
        memoryAt: readAt,
        viewed: [...viewed],
      }
      lastStop = message.stop_reason
      await append([reply], { ...commits }, [...viewed])
      emit({
        type: 'message-finished',
        stopReason: message.stop_reason,
        usage: tokenUsage(message.usage),
      })
      if (reply.content.some((b) => b.type === 'tool_use')) awaitingResults = reply
    }
    if (signal.aborted) {
      await flushResults(NOT_RUN_STOPPED)
      return { stopped: true, error: null }
    }
    if (lastStop === 'max_tokens') {
      await flushResults(NOT_RUN_CUT_OFF)
      return { stopped: false, error: maxTokensError(settings.maxTokens) }
    }
    if (lastStop === 'model_context_window_exceeded') {
      await flushResults(NOT_RUN_CUT_OFF)
      return {
        stopped: false,
        error: {
          code: 'request-too-large',
          message:
            "This conversation has filled Claude's context window. Start a new conversation; your memory carries over.",
        },
      }
    }
    // A refusal, or a reason this build does not know, ends the turn: never without a word.
    if (lastStop === 'refusal' || (lastStop !== null && !KNOWN_STOP_REASONS.has(lastStop))) {
      await flushResults(NOT_RUN_ENDED)
      return {
        stopped: false,
        error: lastStop === 'refusal' ? refusalError() : unknownStopError(lastStop),
      }
    }
    if (awaitingResults && replies < MAX_REQUESTS_PER_TURN) {
      // The last reply asked for calls yet ended for another reason (`end_turn`,
      // `stop_sequence`: never from the real API), so the runner ran none of them. It was not
      // the step limit, and the turn ended as the reply said.
      await flushResults(NOT_RUN_ENDED)
      return { stopped: false, error: null }
    }
    if (awaitingResults) {
      await flushResults('This command was not run: the turn reached its limit of steps.')
      return {
        stopped: false,
        error: {
          code: 'too-many-steps',
          message: `Claude used more than ${MAX_REQUESTS_PER_TURN} steps in one turn, so Cairn ended it. Send a message to let it continue.`,
        },
      }
    }
    return { stopped: false, error: null }
  } catch (thrown) {
    let error = thrown
    const kept = partial.filter((b): b is StoredBlock => b?.type === 'text' && b.text.trim() !== '')
    try {
      await flushResults(signal.aborted ? NOT_RUN_STOPPED : NOT_RUN_ENDED)
      if (kept.length > 0) {
        // What the person saw stream in stays in the transcript (without any half tool call).
        await append(
          [
            {
              role: 'assistant',
              content: kept,
              stopReason: null,
              usage: null,
              createdAt: now(),
              memoryAt: readAt,
              viewed: [...viewed],
            },
          ],
          { ...commits },
          [...viewed],
        )
      }
    } catch (storing) {
      // Losing what was said matters more than why the reply ended: that is what is shown.
      if (!(error instanceof NotStored)) {
        options.logger.warn('A chat turn failed, and what it said could not be saved', error)
        error = storing
      }
    }
    if (error instanceof NotStored) {
      options.logger.error("Claude's reply could not be saved", error.cause)
      return { stopped: signal.aborted, error: notStoredError(error.cause), notStored: true }
    }
    if (signal.aborted) return { stopped: true, error: null }
    const classified = classifyTurnError(error, {
      streamStarted,
      model: settings.model,
      emptyReply: reading && replyEvents === 0,
    })
    // Anything not recognized is a defect or a case to learn about: never silent.
    if (classified.code === 'internal') options.logger.error('A chat turn failed', error)
    return { stopped: false, error: classified }
  }
}

/** What Claude is told for a tool call that came without an id, or with an earlier call's. */
const NO_ID = 'Error: This tool call has no id, so it was not run.'
const REPEATED_ID = 'Error: This tool call has the same id as an earlier one, so it was not run.'

/** A failure to store the turn's messages, as opposed to the API's failures. */
class NotStored extends Error {
  constructor(override readonly cause: unknown) {
    super('The turn could not be stored')
  }
}

/** What the person is told when the turn's messages could not be saved. */
function notStoredError(cause: unknown): TurnError {
  // A refusal of the store itself (the conversation was deleted meanwhile) says it all.
  if (cause instanceof CairnError) return { code: cause.code, message: cause.message }
  const lost =
    ': it stays on screen until you send another message, but reopening this conversation will not show it'
  return (
    diskFailure(cause, "Claude's reply could not be saved", lost) ?? {
      code: 'internal',
      message: `Claude's reply could not be saved${lost}. Please try again.`,
    }
  )
}

/** Marks the end of the history sent at the start of the turn as a prompt-cache breakpoint. */
function withCacheBreakpoint(messages: ApiMessage[]): ApiMessage[] {
  const last = messages.at(-1)
  if (!last || last.content.length === 0) return messages
  const blocks = [...last.content]
  const end = blocks.at(-1)!
  if (end.type !== 'text' && end.type !== 'tool_result') return messages
  blocks[blocks.length - 1] = { ...end, cache_control: { type: 'ephemeral' } }
  return [...messages.slice(0, -1), { ...last, content: blocks }]
}

/**
 * The result as it is when the turn's requests can still carry its images (counted in
 * `shown`); otherwise a plain error in their place, so the next request is not refused whole
 * (the API would end the turn as "too large" for a conversation that is not).
 */
function withinImageBudget(
  result: MemoryResult,
  shown: { images: number; chars: number },
): MemoryResult {
  if (result.isError || typeof result.content === 'string') return result
  let images = 0
  let chars = 0
  for (const block of result.content) {
    if (block.type !== 'image') continue
    images++
    chars += block.source.data.length
  }
  if (images === 0) return result
  if (shown.images + images > MAX_TURN_IMAGES || shown.chars + chars > MAX_TURN_IMAGE_CHARS) {
    return {
      content: `Error: This image was not shown: the images already viewed in this turn (${shown.images}) are as many as one request can carry. Say what you have seen so far; the image can be viewed again in the next turn.`,
      isError: true,
    }
  }
  shown.images += images
  shown.chars += chars
  return result
}

/**
 * Makes every tool call of a reply one the API takes back, in the reply itself: an input that
 * is not an object (a JSON array, string, `null`) becomes an empty one, and an id with other
 * characters than letters, digits, `_` and `-` one made from it. Never from the real API, but
 * the SDK passes them on, the runner resends this very message in the turn's next request, and
 * the API refuses any request holding such a call ("tool_use.input: Input should be a valid
 * dictionary", "tool_use.id: String should match pattern"), so the turn, and every later
 * message of its conversation, would fail. The call runs under the id it now has; one with no
 * input is told what it lacks.
 */
function asSendableCalls(content: ReadonlyArray<BetaContentBlock>): void {
  for (const block of content) {
    if (block.type !== 'tool_use') continue
    if (!isRecord(block.input)) block.input = {}
    if (typeof block.id === 'string') block.id = sendableToolUseId(block.id)
  }
}

/** The memory path a successful `view` looked at, as `/memories/…` (null for other commands). */
function viewedPath(input: unknown): string | null {
  const raw = input as { command?: unknown; path?: unknown } | null
  if (raw?.command !== 'view' || typeof raw.path !== 'string') return null
  const parsed = parseMemoryPath(raw.path)
  return parsed.ok ? parsed.virtual : null
}

function commandOf(input: unknown): string {
  const command = (input as { command?: unknown } | null)?.command
  return typeof command === 'string' ? command : 'unknown'
}
