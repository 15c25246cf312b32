/**
 * Pure conversions between Cairn's stored messages and the Messages API's shapes.
 */
import { createHash } from 'node:crypto'
import type {
  BetaContentBlock,
  BetaContentBlockParam,
  BetaMessage,
  BetaUsage,
} from '@anthropic-ai/sdk/resources/beta'
import type { CommitSummary, StoredBlock, StoredMessage, TokenUsage } from '../../shared/types'
import { editedText } from '../../shared/review'
import { isRecord } from '../lib/records'
import { wellFormed } from '../lib/text'
import type { MemoryResult } from '../memory'

/** A user or assistant message as the API takes it, with block content. */
export interface ApiMessage {
  role: 'user' | 'assistant'
  content: BetaContentBlockParam[]
}

/** What a tool_result says when its command never ran because the turn ended first. */
export const NOT_RUN_STOPPED = 'This command was not run: the user stopped the turn.'
export const NOT_RUN_CUT_OFF = 'This command was not run: the reply was cut off before it finished.'
/**
 * A call the turn ended without running, when the person did not stop it: the reply ended as a
 * refusal, or the turn failed (the API refused the next request, the connection broke) before
 * the call was run. Never "the user stopped the turn": Claude would be told of a Stop that
 * did not happen.
 */
export const NOT_RUN_ENDED = 'This command was not run: the reply ended before it could run.'
/**
 * What a call with no stored result is answered with when history holds no commit for it:
 * Cairn closed (a crash, a kill, a power cut) between running it and saving its result, and
 * the call changed nothing, failed, only read, or ran and its commit was lost with the kill, so
 * whether it ran is not known here. Saying "not run" could make Claude repeat a change that was
 * made (an insert twice). A call whose commit history holds is answered with what it did
 * (`recordedResult`).
 */
export const RESULT_NOT_RECORDED =
  'The result of this command was not recorded: Cairn closed before saving it, so it may or may not have run. View the memory file before repeating it.'

/**
 * What a call with no stored result is answered with when it was waiting for the person's
 * review when Cairn was killed (the held file names it, and history holds no commit for it).
 */
export const NOT_RUN_HELD =
  'This command was not run: Cairn closed while it waited for the user to review it. Nothing was changed.'

/**
 * The stored history as the API expects it: consecutive messages of one role merged (a
 * stopped turn can leave two user messages in a row), blank text blocks and empty messages
 * dropped, and every tool_use answered by a tool_result in the next message (a crash mid-turn
 * can leave one unanswered), so a stored conversation can always continue.
 */
export function toApiMessages(stored: ReadonlyArray<StoredMessage>): ApiMessage[] {
  const merged: Array<{ role: 'user' | 'assistant'; content: StoredBlock[] }> = []
  for (const message of stored) {
    // The API refuses text blocks without visible text (a stream cut after "\n\n" stores one).
    const content = message.content.filter((b) => b.type !== 'text' || b.text.trim() !== '')
    if (content.length === 0) continue
    const last = merged.at(-1)
    if (last && last.role === message.role) last.content.push(...content)
    else merged.push({ role: message.role, content })
  }
  for (let i = 0; i < merged.length; i++) {
    const message = merged[i]!
    if (message.role !== 'assistant') continue
    const pending = toolUseIds(message.content)
    if (pending.length === 0) continue
    let next = merged[i + 1]
    if (!next || next.role !== 'user') {
      next = { role: 'user', content: [] }
      merged.splice(i + 1, 0, next)
    }
    const answered = new Set(
      next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    )
    const missing = message.content.flatMap((b): StoredBlock[] =>
      b.type === 'tool_use' && !answered.has(b.id)
        ? [
            {
              type: 'tool_result',
              tool_use_id: b.id,
              content: unanswered(b.name, RESULT_NOT_RECORDED),
              is_error: true,
            },
          ]
        : [],
    )
    // The API wants the results first in the message that answers the calls.
    const results = next.content.filter(
      (b) => b.type === 'tool_result' && pending.includes(b.tool_use_id),
    )
    const rest = next.content.filter(
      (b) => !(b.type === 'tool_result' && pending.includes(b.tool_use_id)),
    )
    next.content = [...results, ...missing, ...rest]
  }
  // Results whose call is not in the message right before them would be rejected by the API.
  for (let i = 0; i < merged.length; i++) {
    const message = merged[i]!
    if (message.role !== 'user') continue
    const previous = merged[i - 1]
    const calls = new Set(previous?.role === 'assistant' ? toolUseIds(previous.content) : [])
    message.content = message.content.filter(
      (b) => b.type !== 'tool_result' || calls.has(b.tool_use_id),
    )
  }
  return merged
    .filter((message) => message.content.length > 0)
    .map((message) => ({ role: message.role, content: message.content.map(toApiBlock) }))
}

/** The ids of the tool calls among `blocks`, in order. */
function toolUseIds(blocks: ReadonlyArray<StoredBlock>): string[] {
  return blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
}

// Every string is made well-formed on its way out: the API refuses a whole request over one
// lone surrogate, and a stored conversation resends every block, so one bad string (a
// result saved before this was fixed, a paste cut mid-emoji) would block it for good.
function toApiBlock(block: StoredBlock): BetaContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: wellFormed(block.text) }
    case 'tool_use':
      return {
        type: 'tool_use',
        id: sendableToolUseId(block.id),
        name: block.name,
        // One stored before Cairn gave such calls an empty input: the API refuses a request
        // resending an input that is not an object, so the conversation would fail for good.
        input: isRecord(block.input)
          ? (wellFormedValue(block.input) as Record<string, unknown>)
          : {},
      }
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: sendableToolUseId(block.tool_use_id),
        content: wellFormed(block.content),
        ...(block.is_error ? { is_error: true } : {}),
      }
  }
}

/** The ids the API takes for a tool call: it refuses a request holding any other. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/

/**
 * `id` when the API takes it as a tool call's id (or when it is empty: such a call is never
 * kept), else one it takes, made from it: the same for the same id, so a call and its result
 * still match, and apart for different ones.
 */
export function sendableToolUseId(id: string): string {
  if (id === '' || TOOL_USE_ID.test(id)) return id
  return `toolu_${createHash('sha256').update(id).digest('hex').slice(0, 32)}`
}

// A tool call's input as JSON holds it: every string in it (keys too) made well-formed.
function wellFormedValue(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value)
  if (Array.isArray(value)) return value.map(wellFormedValue)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [wellFormed(key), wellFormedValue(item)]),
  )
}

/** The blocks of an API reply that Cairn keeps (text and tool calls). */
export function fromApiContent(content: ReadonlyArray<BetaContentBlock>): StoredBlock[] {
  const blocks: StoredBlock[] = []
  const ids = new Set<string>()
  for (const block of content) {
    // Only what the conversation file's reader takes is kept (checked again on writing): a text
    // block that came without its text (never from the real API) is kept empty.
    if (block.type === 'text') {
      blocks.push({ type: 'text', text: typeof block.text === 'string' ? block.text : '' })
    }
    // A call without an id, or with an earlier call's, or without a name (never from the real
    // API), is not run by Cairn, and is not kept: no result could answer it alone, and a
    // conversation file holding a call without an id or name could not be read back.
    else if (
      block.type === 'tool_use' &&
      typeof block.id === 'string' &&
      block.id !== '' &&
      typeof block.name === 'string' &&
      !ids.has(block.id)
    ) {
      ids.add(block.id)
      blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input })
    }
  }
  return blocks
}

/** An assistant reply as stored. */
export function storedReply(message: BetaMessage, createdAt: number): StoredMessage {
  return {
    role: 'assistant',
    content: fromApiContent(message.content),
    // A stop reason that is not text (never from the real API) is not kept: the file's reader
    // would refuse it.
    stopReason: typeof message.stop_reason === 'string' ? message.stop_reason : null,
    usage: tokenUsage(message.usage),
    createdAt,
  }
}

/** Token counts in Cairn's shape (missing counters, and any that are not numbers, are 0). */
export function tokenUsage(usage: BetaUsage | null | undefined): TokenUsage {
  return {
    inputTokens: count(usage?.input_tokens),
    outputTokens: count(usage?.output_tokens),
    cacheReadInputTokens: count(usage?.cache_read_input_tokens),
    cacheCreationInputTokens: count(usage?.cache_creation_input_tokens),
  }
}

// A counter as the API sends it; anything else (text, never from the real API) counts 0.
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

/** Text of a memory result for storage and events (image blocks become a placeholder). */
export function resultText(content: MemoryResult['content']): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '[image]')).join('\n')
}

/**
 * The user message answering the tool calls of `reply`: the recorded result of each call,
 * or a "not run" error for a call that never ran.
 */
export function toolResultsFor(
  reply: StoredMessage,
  results: ReadonlyMap<string, { content: string; isError: boolean }>,
  notRun: string,
  createdAt: number,
): StoredMessage | null {
  const calls = reply.content.filter((b) => b.type === 'tool_use')
  if (calls.length === 0) return null
  return {
    role: 'user',
    content: calls.map((call): StoredBlock => {
      const result = results.get(call.id)
      return {
        type: 'tool_result',
        tool_use_id: call.id,
        content: result?.content ?? unanswered(call.name, notRun),
        is_error: result?.isError ?? true,
      }
    }),
    createdAt,
  }
}

/**
 * The ids of the memory calls that no stored result answers, in order: a kill (or a crash, a
 * power cut) between running a reply's calls and saving their results leaves them so.
 */
export function unansweredCalls(stored: ReadonlyArray<StoredMessage>): string[] {
  const answered = new Set(
    stored.flatMap((m) =>
      m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    ),
  )
  return stored.flatMap((m) =>
    m.role !== 'assistant'
      ? []
      : m.content.flatMap((b) =>
          b.type === 'tool_use' && b.name === MEMORY_TOOL_NAME && !answered.has(b.id) ? [b.id] : [],
        ),
  )
}

/**
 * What Claude is told of a call whose result was not saved but whose commit history holds
 * (found by its `Tool-Use-Id`): it ran, and this is what it changed. In the Memory tool's own
 * words where the commit's facts give them exactly (a create that made a new file, an insert, a
 * delete, a rename); otherwise plainly (an edit's answer shows a snippet, and a create over an
 * existing file may have said more), never words the tool might not have said.
 */
export function recordedResult(
  commit: Pick<CommitSummary, 'command' | 'paths' | 'overwrite' | 'review'>,
): string {
  const [first, second] = commit.paths
  // The person edited it before approving (`Edited-by: You`): the file holds their version, as
  // Claude was told when it landed, never its own text.
  if (commit.review === 'edited' && first !== undefined) return editedText(commit.command, first)
  if (first !== undefined) {
    if (commit.command === 'create' && !commit.overwrite)
      return `File created successfully at: ${first}`
    if (commit.command === 'insert') return `The file ${first} has been edited.`
    if (commit.command === 'delete') return `Successfully deleted ${first}`
    if (commit.command === 'rename' && second !== undefined) {
      return `Successfully renamed ${first} to ${second}`
    }
  }
  const changed = commit.paths.length > 0 ? commit.paths.join(' and ') : 'memory'
  return `This command ran: it changed ${changed} (saved in history).`
}

/**
 * `stored` with the calls of `answers` that no stored result answers yet answered: a user
 * message with their results right after the reply that made them (the API wants them next).
 */
export function withAnswers(
  stored: ReadonlyArray<StoredMessage>,
  answers: ReadonlyMap<string, { readonly content: string; readonly isError: boolean }>,
): StoredMessage[] {
  const open = new Set(unansweredCalls(stored))
  return stored.flatMap((message): StoredMessage[] => {
    if (message.role !== 'assistant') return [message]
    const content = message.content.flatMap((b): StoredBlock[] => {
      const answer = b.type === 'tool_use' && open.has(b.id) ? answers.get(b.id) : undefined
      return b.type === 'tool_use' && answer
        ? [
            {
              type: 'tool_result',
              tool_use_id: b.id,
              content: answer.content,
              is_error: answer.isError,
            },
          ]
        : []
    })
    return content.length === 0
      ? [message]
      : [message, { role: 'user', content, createdAt: message.createdAt }]
  })
}

/** The memory tool's name: the only tool Cairn gives Claude. */
export const MEMORY_TOOL_NAME = 'memory'

/**
 * What a call that never reached Cairn's memory handler is answered with. A call to a tool
 * that does not exist is answered by the SDK itself, with this very text, and never runs:
 * "the user stopped the turn" would be untrue.
 */
function unanswered(name: string, notRun: string): string {
  return name === MEMORY_TOOL_NAME ? notRun : `Error: Tool '${name}' not found`
}
