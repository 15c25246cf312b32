/**
 * The transcript as the chat pane draws it, built from the stored conversation and from the
 * agent events of the turn that is running. Pure: values in, values out.
 */
import type { ErrorCode } from '../../../../shared/errors'
import type { AgentEvent, ApiErrorData, StoredMessage, TokenUsage } from '../../../../shared/types'

/** One memory command Claude ran, with its outcome once it is known. */
export interface ToolItem {
  readonly kind: 'tool'
  readonly key: string
  readonly toolUseId: string
  readonly command: string
  readonly input: unknown
  /** null while the command is still running (or never answered). */
  readonly result: { readonly content: string; readonly isError: boolean } | null
  readonly commitOid: string | null
}

export interface TextItem {
  readonly kind: 'text'
  readonly key: string
  readonly text: string
}

export type ReplyItem = TextItem | ToolItem

/** A user message and everything Claude did to answer it. */
export interface TranscriptTurn {
  readonly key: string
  readonly userText: string
  readonly items: ReadonlyArray<ReplyItem>
  /** Summed over every API response of the turn; null when none finished. */
  readonly usage: TokenUsage | null
  readonly stopReason: string | null
  /**
   * The memory commit Claude could see when the turn started (null: memory was empty;
   * undefined: not recorded, in conversations from before Cairn kept it).
   */
  readonly memoryAt?: string | null
  /** The memory paths Claude viewed during the turn. */
  readonly viewed?: ReadonlyArray<string>
}

/** What the events of one running turn have told so far. */
export interface LiveTurn {
  readonly conversationId: string
  readonly turnId: string
  /** The id the sender gave the message (from `turn-started`); null if that was missed. */
  readonly clientId: string | null
  readonly userText: string
  /** The memory commit at the turn's start, from `turn-started` (undefined if missed). */
  readonly memoryAt?: string | null
  readonly items: ReadonlyArray<ReplyItem>
  readonly usage: TokenUsage | null
  readonly stopReason: string | null
  readonly finished: boolean
  readonly stopped: boolean
  readonly error: ApiErrorData | null
}

const zeroUsage: TokenUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
}

/** Adds two usages; null counts as nothing. */
export function addUsage(
  a: TokenUsage | null,
  b: TokenUsage | null | undefined,
): TokenUsage | null {
  if (!b) return a
  const base = a ?? zeroUsage
  return {
    inputTokens: base.inputTokens + b.inputTokens,
    outputTokens: base.outputTokens + b.outputTokens,
    cacheReadInputTokens: base.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: base.cacheCreationInputTokens + b.cacheCreationInputTokens,
  }
}

function textOf(message: StoredMessage): string | null {
  const texts = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
  return texts.length > 0 ? texts.join('\n\n') : null
}

/** A user message the person typed (not one that only carries tool results). */
function isPrompt(message: StoredMessage): boolean {
  return message.role === 'user' && textOf(message) !== null
}

/**
 * Groups a stored conversation into turns: each starts at a message the person typed and
 * holds Claude's text and memory commands (matched with their results and commits) after it.
 */
export function turnsFromStored(
  messages: ReadonlyArray<StoredMessage>,
  toolCommits: Readonly<Record<string, string>>,
): ReadonlyArray<TranscriptTurn> {
  const results = new Map<string, { content: string; isError: boolean }>()
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        results.set(block.tool_use_id, { content: block.content, isError: block.is_error })
      }
    }
  }

  const turns: TranscriptTurn[] = []
  let current: { -readonly [K in keyof TranscriptTurn]: TranscriptTurn[K] } | null = null
  let items: ReplyItem[] = []
  const flush = () => {
    if (current) turns.push({ ...current, items })
  }
  messages.forEach((message, index) => {
    if (isPrompt(message)) {
      flush()
      current = {
        key: `stored-${index}`,
        userText: textOf(message) ?? '',
        items: [],
        usage: null,
        stopReason: null,
      }
      items = []
      return
    }
    if (message.role !== 'assistant') return
    // A reply without a prompt before it (should not happen) still shows.
    current ??= { key: `stored-${index}`, userText: '', items: [], usage: null, stopReason: null }
    current.usage = addUsage(current.usage, message.usage)
    current.stopReason = message.stopReason ?? current.stopReason
    if (message.memoryAt !== undefined) current.memoryAt = message.memoryAt
    if (message.viewed) current.viewed = message.viewed
    message.content.forEach((block, blockIndex) => {
      const key = `stored-${index}-${blockIndex}`
      if (block.type === 'text' && block.text.length > 0) {
        items.push({ kind: 'text', key, text: block.text })
      } else if (block.type === 'tool_use') {
        items.push({
          kind: 'tool',
          key,
          toolUseId: block.id,
          command: commandOf(block.input),
          input: block.input,
          result: results.get(block.id) ?? null,
          commitOid: toolCommits[block.id] ?? null,
        })
      }
    })
  })
  flush()
  return turns
}

/** The memory command named in a tool input (`view`, `create`, ...). */
export function commandOf(input: unknown): string {
  if (input && typeof input === 'object' && 'command' in input) {
    const command = (input as { command: unknown }).command
    if (typeof command === 'string') return command
  }
  return 'unknown'
}

/** Starts a live turn from its first event. */
export function startLiveTurn(event: AgentEvent): LiveTurn {
  return {
    conversationId: event.conversationId,
    turnId: event.turnId,
    clientId: event.type === 'turn-started' ? event.clientId : null,
    userText: event.type === 'turn-started' ? event.userText : '',
    ...(event.type === 'turn-started' ? { memoryAt: event.memoryAt } : {}),
    items: [],
    usage: null,
    stopReason: null,
    finished: false,
    stopped: false,
    error: null,
  }
}

/** Applies one agent event to the live turn it belongs to. */
export function applyAgentEvent(turn: LiveTurn, event: AgentEvent): LiveTurn {
  switch (event.type) {
    case 'turn-started':
      return startLiveTurn(event)
    case 'text-delta': {
      const last = turn.items.at(-1)
      if (last?.kind === 'text') {
        return {
          ...turn,
          items: [...turn.items.slice(0, -1), { ...last, text: last.text + event.text }],
        }
      }
      const key = `live-${turn.turnId}-${turn.items.length}`
      return { ...turn, items: [...turn.items, { kind: 'text', key, text: event.text }] }
    }
    case 'tool-call':
      return {
        ...turn,
        items: [
          ...turn.items,
          {
            kind: 'tool',
            key: `live-${turn.turnId}-${turn.items.length}`,
            toolUseId: event.toolUseId,
            command: event.command,
            input: event.input,
            result: null,
            commitOid: null,
          },
        ],
      }
    case 'tool-result':
      return {
        ...turn,
        items: turn.items.map((item) =>
          item.kind === 'tool' && item.toolUseId === event.toolUseId
            ? {
                ...item,
                result: { content: event.content, isError: event.isError },
                commitOid: event.commitOid,
              }
            : item,
        ),
      }
    case 'message-finished':
      return {
        ...turn,
        usage: addUsage(turn.usage, event.usage),
        stopReason: event.stopReason,
      }
    case 'turn-finished':
      return { ...turn, finished: true, stopped: event.stopped }
    case 'error':
      return { ...turn, error: { code: event.code, message: event.message } }
  }
}

/** The live turn drawn like a stored one. */
export function turnFromLive(turn: LiveTurn): TranscriptTurn {
  return {
    key: `live-${turn.turnId}`,
    userText: turn.userText,
    items: turn.items,
    usage: turn.usage,
    stopReason: turn.stopReason,
    ...(turn.memoryAt !== undefined ? { memoryAt: turn.memoryAt } : {}),
    viewed: viewedPaths(turn.items),
  }
}

/** The memory paths that `view` commands among `items` looked at successfully, each once. */
export function viewedPaths(items: ReadonlyArray<ReplyItem>): ReadonlyArray<string> {
  const paths: string[] = []
  for (const item of items) {
    if (item.kind !== 'tool' || item.command !== 'view' || !item.result || item.result.isError) {
      continue
    }
    const raw = (item.input as { path?: unknown } | null)?.path
    if (typeof raw !== 'string') continue
    const path = raw.length > 1 ? raw.replace(/\/$/, '') : raw
    if (!paths.includes(path)) paths.push(path)
  }
  return paths
}

/**
 * The stored messages from before the running turn. The core may already have saved part of
 * the turn (the prompt, finished tool rounds); the live events show all of it, so the stored
 * copy is cut at the prompt that started the turn `turnId`.
 */
export function storedBeforeTurn(
  messages: ReadonlyArray<StoredMessage>,
  turnId: string,
): ReadonlyArray<StoredMessage> {
  const start = messages.findLastIndex((message) => message.turnId === turnId)
  return start < 0 ? messages : messages.slice(0, start)
}

const SETTINGS_PROBLEMS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'no-api-key',
  'invalid-api-key',
  'permission-denied',
  'model-not-found',
  'max-tokens',
])

// A turn ends with one of these only when its messages could not be saved (main says so).
const NOT_SAVED = new Set<ErrorCode>(['disk-full', 'io-error', 'access-denied', 'read-only'])

/**
 * True when a turn's reply could not be saved: the store does not have it, so it stays drawn
 * from the turn's events (until the next message) rather than vanish from the screen.
 */
export function isUnsavedTurn(code: ErrorCode): boolean {
  return NOT_SAVED.has(code)
}

/** Error codes that the person fixes in Settings (the key, or the model it may use). */
export function isSettingsProblem(code: ErrorCode): boolean {
  return SETTINGS_PROBLEMS.has(code)
}

/** "1,234" — token counts for people. */
export function formatTokens(count: number): string {
  return count.toLocaleString('en-US')
}
