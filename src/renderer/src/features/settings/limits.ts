/**
 * The limits `settings:update` and `settings:setApiKey` enforce, said in words for people
 * before any request: past them main refuses with a schema's text ("Too big: expected string
 * to have <=20000 characters"), which is for developers.
 */
import { MAX_API_KEY_CHARS, MAX_INSTRUCTIONS_CHARS } from '../../../../shared/types'

const count = (n: number) => n.toLocaleString('en-US')

/** "1,234 of 20,000 characters": shown under the custom-instructions box. */
export function instructionsCount(text: string): string {
  return `${count(text.length)} of ${count(MAX_INSTRUCTIONS_CHARS)} characters`
}

/** Why these custom instructions cannot be saved, or null when they can. */
export function instructionsProblem(text: string): string | null {
  if (text.length <= MAX_INSTRUCTIONS_CHARS) return null
  return `Custom instructions can be at most ${count(MAX_INSTRUCTIONS_CHARS)} characters, and these have ${count(text.length)}. Shorten them, or keep the long text in a memory file Claude can read.`
}

/** Why this text cannot be an API key, or null when it may be one. */
export function apiKeyProblem(key: string): string | null {
  const length = key.trim().length
  if (length <= MAX_API_KEY_CHARS) return null
  return `This is not an API key: Anthropic keys are about 100 characters long, and this text has ${count(length)}. Copy the key again from the Anthropic Console.`
}
