/**
 * What a Retry of a failed turn replaces. Main stores the retried prompt in its place, and the
 * chat stops drawing the failed one as soon as the Retry is sent, by the same rule. Pure.
 */
import type { StoredMessage } from './types'

/**
 * The place of turn `turnId`'s prompt when nothing came after it (the turn failed before any
 * reply was stored, or was cut off before one) and it reads `text`: a Retry of it stands in for
 * it, so the person's message is kept, drawn and sent to Claude once. Null otherwise: a turn
 * with part of a reply keeps its prompt, which that reply answered.
 */
export function retriedPrompt(
  messages: ReadonlyArray<StoredMessage>,
  turnId: string,
  text: string,
): number | null {
  const last = messages.length - 1
  const prompt = messages[last]
  if (!prompt || prompt.role !== 'user' || prompt.turnId !== turnId) return null
  return promptText(prompt) === text ? last : null
}

/** The text the person typed in a prompt, its text blocks joined as the chat shows them. */
export function promptText(prompt: StoredMessage): string {
  return prompt.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n\n')
}
