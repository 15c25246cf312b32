import { z } from 'zod'
import { isErrorCode } from '../../shared/errors'
import type {
  Conversation,
  StoredBlock,
  StoredMessage,
  TurnError,
  UnknownBlock,
} from '../../shared/types'
import { cutText, escapeInvisible } from '../lib/text'

/** Conversation ids are safe file names: no separators, no dots, bounded length. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,100}$/

const usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
})

const knownBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  z.object({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.string(),
    is_error: z.boolean(),
  }),
])
const KNOWN_TYPES: ReadonlySet<string> = new Set(['text', 'tool_use', 'tool_result'])

/** Any block with a string type; those of a known type must then have its shape. */
const anyBlock = z.looseObject({ type: z.string() })

const message = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.array(anyBlock),
  stopReason: z.string().nullable().optional(),
  usage: usage.nullable().optional(),
  createdAt: z.number(),
  turnId: z.string().optional(),
  memoryAt: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable()
    .optional(),
  viewed: z.array(z.string()).optional(),
})

/** Most characters of a stored turn error's message (the API's own words can run long). */
export const MAX_ERROR_MESSAGE = 2000

const lastError = z.object({
  turnId: z.string().max(200),
  code: z.string().max(100),
  message: z.string(),
})
const openTurn = z.string().max(200)

/*
 * On disk, `<dataDir>/conversations/<id>.json`:
 *   { "version": 1, "id": "c_…", "title": "…", "createdAt": 1760000000000, "updatedAt": …,
 *     "messages": [{ "role": "user", "content": [{ "type": "text", "text": "…" }], … }],
 *     "toolCommits": { "toolu_…": "<40-hex oid>" },
 *     "lastError": { "turnId": "t_…", "code": "empty-reply", "message": "…" },   (optional)
 *     "openTurn": "t_…" }   (optional: a turn under way, or cut off when Cairn closed)
 */
const conversationFile = z.object({
  version: z.literal(1),
  id: z.string().regex(CONVERSATION_ID),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  messages: z.array(message),
  toolCommits: z.record(z.string(), z.string()),
  // Notes about the last turn, not its content: read apart, so a malformed one (a hand edit,
  // another program) is left out and said, and the conversation still reads (see marksOf).
  lastError: z.unknown().optional(),
  openTurn: z.unknown().optional(),
})

/** Told of each mark `parseConversation` left out: the field and what is wrong with it. */
export type MarkProblem = (problem: string) => void

/** The file's marks of its last turn, each left out (and told) when it is not of its shape. */
function marksOf(
  file: { readonly lastError?: unknown; readonly openTurn?: unknown },
  told: MarkProblem,
): {
  readonly lastError?: z.infer<typeof lastError>
  readonly openTurn?: string
} {
  const read = <T>(field: string, value: unknown, schema: z.ZodType<T>): T | undefined => {
    if (value === undefined) return undefined
    const parsed = schema.safeParse(value)
    if (parsed.success) return parsed.data
    told(`${field}: ${parsed.error.issues.map(issueLine).join('; ')}`)
    return undefined
  }
  const error = read('lastError', file.lastError, lastError)
  const open = read('openTurn', file.openTurn, openTurn)
  return {
    ...(error !== undefined ? { lastError: error } : {}),
    ...(open !== undefined ? { openTurn: open } : {}),
  }
}

/** One zod issue as a log line: where, and what is wrong (never the value itself). */
function issueLine(issue: z.core.$ZodIssue): string {
  return `${issue.path.map(String).join('.') || 'the field'}: ${issue.message}`
}

/**
 * Parses a conversation file; throws when it is not one. A block of a type this build does not
 * know (a `thinking` block a newer build stored, say) does not make the file unreadable: it is
 * taken out of `content` (never shown, never sent to the API) and kept in `unknownBlocks` with
 * its place, so saving the conversation again writes it back as it was. A malformed mark of
 * the last turn (`lastError`, `openTurn`) is left out and told to `onBadMark`: the next save
 * drops it.
 */
export function parseConversation(
  raw: string,
  onBadMark: MarkProblem = () => undefined,
): Conversation {
  const file = conversationFile.parse(JSON.parse(raw))
  const marks = marksOf(file, onBadMark)
  const messages = file.messages.map((message): StoredMessage => {
    const content: StoredBlock[] = []
    const unknownBlocks: UnknownBlock[] = []
    message.content.forEach((block, at) => {
      if (KNOWN_TYPES.has(block.type)) content.push(knownBlock.parse(block) as StoredBlock)
      else unknownBlocks.push({ at, block })
    })
    const known = { ...message, content }
    return unknownBlocks.length > 0 ? { ...known, unknownBlocks } : known
  })
  return {
    id: file.id,
    title: file.title,
    createdAt: file.createdAt,
    updatedAt: file.updatedAt,
    messageCount: messages.length,
    messages,
    toolCommits: file.toolCommits,
    ...(marks.lastError && marks.lastError.turnId === lastTurnOf(messages)
      ? { lastError: readTurnError(marks.lastError) }
      : {}),
    // Like the error, it speaks only for the conversation's last turn, and only while that
    // turn's reply has not ended (see replyEnded).
    ...(marks.openTurn !== undefined &&
    marks.openTurn === lastTurnOf(messages) &&
    !replyEnded(messages)
      ? { openTurn: marks.openTurn }
      : {}),
  }
}

/**
 * `conversation` without its `openTurn` when that names `turnId`, or whatever turn it names
 * when no `turnId` is given (the conversation itself otherwise).
 */
export function withoutOpenTurn(
  conversation: Conversation,
  turnId = conversation.openTurn,
): Conversation {
  if (conversation.openTurn !== turnId) return conversation
  const { openTurn: _, ...rest } = conversation
  return rest
}

/**
 * True when the last message is a reply the API ended the turn with (any stop reason but a
 * call for tools, or a paused turn the loop goes on with): the turn was not cut off, whatever
 * mark is left beside it. The reply and the turn's end mark are two writes, and Cairn killed
 * between them (or the mark's write failing) leaves the mark; told as "cut off", its Retry
 * would have Claude do the whole turn again. A reply kept half (a stop, an error: no stop
 * reason) or one asking for tools no result answers still leaves the turn open.
 */
export function replyEnded(messages: ReadonlyArray<StoredMessage>): boolean {
  const last = messages.at(-1)
  if (last?.role !== 'assistant') return false
  const reason = last.stopReason
  return typeof reason === 'string' && reason !== 'tool_use' && reason !== 'pause_turn'
}

/** The turn the conversation's last message belongs to (undefined when none says). */
function lastTurnOf(messages: ReadonlyArray<StoredMessage>): string | undefined {
  return messages.findLast((message) => message.turnId !== undefined)?.turnId
}

/**
 * A stored turn error as this build shows it: a code it does not know (written by a newer
 * build) reads as `api-error`, the words kept; an overlong message is cut, and its control and
 * format characters written as escapes (a bidi override would reorder the banner's words). One
 * that names a turn other than the conversation's last is not read at all (see parseConversation):
 * it would say a turn failed under a reply that came whole.
 */
function readTurnError(stored: z.infer<typeof lastError>): TurnError {
  return {
    turnId: stored.turnId,
    code: isErrorCode(stored.code) ? stored.code : 'api-error',
    message: cutText(escapeInvisible(stored.message), MAX_ERROR_MESSAGE),
  }
}

/**
 * Why `text`, about to be written as conversation `id`'s file, could not be read back as it
 * (null when it can): the reader's own checks (`parseConversation`, and the id that names the
 * file), run before writing, so that Cairn never writes a file it would then refuse (a stored
 * `tool_use` without an id once made a conversation unreadable after a restart). A line for the
 * log: the field and what is wrong with it, never the conversation's text.
 */
export function readBackProblem(text: string, id: string): string | null {
  let parsed: Conversation
  // A mark the reader would leave out is a fault in Cairn's own write too.
  const badMarks: string[] = []
  try {
    parsed = parseConversation(text, (problem) => badMarks.push(problem))
  } catch (error) {
    if (error instanceof z.ZodError) {
      return error.issues
        .map((issue) => `${issue.path.map(String).join('.') || 'the file'}: ${issue.message}`)
        .join('; ')
    }
    return error instanceof Error ? error.message : 'it is not JSON'
  }
  if (badMarks.length > 0) return badMarks.join('; ')
  return parsed.id === id ? null : 'it holds another conversation id'
}

/** The JSON written for `conversation` (messageCount is derived, not stored). */
export function serializeConversation(conversation: Conversation): unknown {
  return {
    version: 1,
    id: conversation.id,
    title: conversation.title,
    createdAt: conversation.createdAt,
    updatedAt: conversation.updatedAt,
    messages: conversation.messages.map(withUnknownBlocks),
    toolCommits: conversation.toolCommits,
    ...(conversation.lastError ? { lastError: conversation.lastError } : {}),
    ...(conversation.openTurn !== undefined ? { openTurn: conversation.openTurn } : {}),
  }
}

/** A stored message as written: its blocks of unknown types back in their places. */
function withUnknownBlocks(message: StoredMessage): unknown {
  const { unknownBlocks, ...rest } = message
  if (!unknownBlocks || unknownBlocks.length === 0) return rest
  const content: unknown[] = [...message.content]
  for (const { at, block } of [...unknownBlocks].sort((a, b) => a.at - b.at)) {
    content.splice(Math.min(at, content.length), 0, block)
  }
  return { ...rest, content }
}

/*
 * What can still be told of a file that does not parse (cut short, say): its title and times,
 * read from the text where they still stand, e.g. `{"version":1,"id":"c_…","title":"Trip",
 * "createdAt":1760000000000,"updatedAt":1760000001000,"messages":[{"role":"user","cont`.
 */
export function salvageSummary(raw: string): {
  readonly title: string | null
  readonly createdAt: number | null
  readonly updatedAt: number | null
} {
  const title = /"title"\s*:\s*("(?:[^"\\\n]|\\.)*")/.exec(raw)?.[1]
  let parsedTitle: string | null = null
  if (title !== undefined) {
    try {
      const value: unknown = JSON.parse(title)
      if (typeof value === 'string' && value.trim() !== '') parsedTitle = cutText(value.trim(), 200)
    } catch {
      parsedTitle = null
    }
  }
  const time = (key: string): number | null => {
    const match = new RegExp(`"${key}"\\s*:\\s*(\\d{1,15})[,}\\s]`).exec(raw)
    return match ? Number(match[1]) : null
  }
  return { title: parsedTitle, createdAt: time('createdAt'), updatedAt: time('updatedAt') }
}

const TITLE_LENGTH = 60

/** A title from the first user message: its first line, whitespace collapsed, cut at a word. */
export function deriveTitle(text: string): string {
  const line = text
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l.length > 0)
  if (!line) return 'New conversation'
  if (line.length <= TITLE_LENGTH) return line
  const cut = cutText(line, TITLE_LENGTH)
  const space = cut.lastIndexOf(' ')
  return `${(space > TITLE_LENGTH / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}
