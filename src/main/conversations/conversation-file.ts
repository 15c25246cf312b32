import { z } from 'zod'
import type { Conversation, StoredMessage } from '../../shared/types'
import { cutText } from '../lib/text'

/** Conversation ids are safe file names: no separators, no dots, bounded length. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,100}$/

const usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
})

const block = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  z.object({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.string(),
    is_error: z.boolean(),
  }),
])

const message = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.array(block),
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

/*
 * On disk, `<dataDir>/conversations/<id>.json`:
 *   { "version": 1, "id": "c_…", "title": "…", "createdAt": 1760000000000, "updatedAt": …,
 *     "messages": [{ "role": "user", "content": [{ "type": "text", "text": "…" }], … }],
 *     "toolCommits": { "toolu_…": "<40-hex oid>" } }
 */
const conversationFile = z.object({
  version: z.literal(1),
  id: z.string().regex(CONVERSATION_ID),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  messages: z.array(message),
  toolCommits: z.record(z.string(), z.string()),
})

/** Parses a conversation file; throws when it is not one. */
export function parseConversation(raw: string): Conversation {
  const file = conversationFile.parse(JSON.parse(raw))
  return {
    id: file.id,
    title: file.title,
    createdAt: file.createdAt,
    updatedAt: file.updatedAt,
    messageCount: file.messages.length,
    messages: file.messages as ReadonlyArray<StoredMessage>,
    toolCommits: file.toolCommits,
  }
}

/** The JSON written for `conversation` (messageCount is derived, not stored). */
export function serializeConversation(conversation: Conversation): unknown {
  return {
    version: 1,
    id: conversation.id,
    title: conversation.title,
    createdAt: conversation.createdAt,
    updatedAt: conversation.updatedAt,
    messages: conversation.messages,
    toolCommits: conversation.toolCommits,
  }
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
