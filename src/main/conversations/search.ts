import type { Conversation, ConversationSearchHit, ConversationSummary } from '../../shared/types'

const EXCERPT_RADIUS = 50

/** The summary part of a conversation (what lists show). */
export function summarize(conversation: Conversation): ConversationSummary {
  return {
    id: conversation.id,
    title: conversation.title,
    createdAt: conversation.createdAt,
    updatedAt: conversation.updatedAt,
    messageCount: conversation.messages.length,
  }
}

/**
 * Matches `query` (case-insensitive) against the title and the text people see (user and
 * assistant text blocks). Returns null when neither matches; the excerpt is null when only
 * the title matched.
 */
export function matchConversation(
  conversation: Conversation,
  query: string,
): ConversationSearchHit | null {
  const needle = query.trim().toLowerCase()
  if (needle.length === 0) return { conversation: summarize(conversation), excerpt: null }
  for (const message of conversation.messages) {
    for (const block of message.content) {
      if (block.type !== 'text') continue
      const at = block.text.toLowerCase().indexOf(needle)
      if (at >= 0) {
        return {
          conversation: summarize(conversation),
          excerpt: excerptAround(block.text, at, needle.length),
        }
      }
    }
  }
  if (conversation.title.toLowerCase().includes(needle)) {
    return { conversation: summarize(conversation), excerpt: null }
  }
  return null
}

/** A one-line excerpt of `text` around [at, at+length), with ellipses where it was cut. */
export function excerptAround(text: string, at: number, length: number): string {
  const start = Math.max(0, at - EXCERPT_RADIUS)
  const end = Math.min(text.length, at + length + EXCERPT_RADIUS)
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`
}
