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
    ...(conversation.changedOutside ? { changedOutside: conversation.changedOutside } : {}),
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
      const found = findLowerCase(block.text, needle)
      if (found) {
        return {
          conversation: summarize(conversation),
          excerpt: excerptAround(block.text, found.at, found.length),
        }
      }
    }
  }
  if (conversation.title.toLowerCase().includes(needle)) {
    return { conversation: summarize(conversation), excerpt: null }
  }
  return null
}

/**
 * Where the lower-cased `needle` occurs in `text` lower-cased, as a span of `text` itself. Some
 * characters grow when lower-cased ("İ" becomes two), so an index into the lower-cased text
 * can point past the match in the original: it is mapped back.
 */
export function findLowerCase(
  text: string,
  needle: string,
): { readonly at: number; readonly length: number } | null {
  const lower = text.toLowerCase()
  const at = lower.indexOf(needle)
  if (at < 0) return null
  if (lower.length === text.length) return { at, length: needle.length }
  // origin[i]: the index in `text` of the character that lower-cased to lower[i].
  const origin: number[] = []
  let i = 0
  for (const char of text) {
    for (let k = 0; k < char.toLowerCase().length; k++) origin.push(i)
    i += char.length
  }
  origin.push(text.length)
  const start = origin[at] ?? 0
  const end = origin[at + needle.length] ?? text.length
  return { at: start, length: Math.max(end - start, 1) }
}

/** A one-line excerpt of `text` around [at, at+length), with ellipses where it was cut. */
export function excerptAround(text: string, at: number, length: number): string {
  const start = Math.max(0, at - EXCERPT_RADIUS)
  const end = Math.min(text.length, at + length + EXCERPT_RADIUS)
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`
}
