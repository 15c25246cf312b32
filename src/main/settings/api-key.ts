/**
 * What a pasted API key may hold. Keys are visible ASCII (`sk-ant-api03-…`); a key copied from a
 * web page, a chat or a password manager often brings an invisible character along (a
 * zero-width space, a byte-order mark, a no-break space, a line break). Such a key cannot even
 * be sent as a request header, so every turn would fail: it is refused when saved instead, and
 * one from the environment is named as the problem before any request.
 */
import { CairnError } from '../lib/errors'
import { escapeInvisible } from '../lib/text'

// Whitespace and the invisible characters that ride along with a copy, at either end.
const INVISIBLE = '\\s\\u200b-\\u200d\\u2060\\ufeff\\u00ad'
const SURROUNDING = new RegExp(`^[${INVISIBLE}]+|[${INVISIBLE}]+$`, 'gu')

/** The key without the whitespace and invisible characters around it. */
export function trimApiKey(raw: string): string {
  return raw.replace(SURROUNDING, '')
}

/**
 * What in `key` no API key contains, in words ("a line break"), or null when it is well formed
 * (visible ASCII only).
 */
export function apiKeyProblem(key: string): string | null {
  const odd = [...key].find((char) => !/^[\x21-\x7e]$/.test(char))
  return odd === undefined ? null : describe(odd)
}

/** The key without what surrounds it; throws `invalid-api-key` when what is left is no key. */
export function cleanApiKey(raw: string): string {
  const key = trimApiKey(raw)
  if (key === '') {
    throw new CairnError(
      'invalid-api-key',
      'The API key is empty. Paste your key from the Anthropic Console.',
    )
  }
  const problem = apiKeyProblem(key)
  if (problem) {
    throw new CairnError(
      'invalid-api-key',
      `This API key holds ${problem}, which no API key contains (it often comes along when a key is copied). Paste the key again, copied from the Anthropic Console.`,
    )
  }
  return key
}

function describe(char: string): string {
  if (/\s/u.test(char)) return char === '\n' || char === '\r' ? 'a line break' : 'a space'
  const code = char.codePointAt(0)!
  if (code < 0x20 || code === 0x7f) return 'a control character'
  if (code >= 0x200b && code <= 0x200d) return 'an invisible zero-width character'
  if (code === 0x2060 || code === 0xfeff || code === 0xad) return 'an invisible character'
  // Any other formatting character (a bidi override would reorder the sentence around it).
  if (/[\p{Cf}\p{Zl}\p{Zp}]/u.test(char))
    return `an invisible formatting character (${escapeInvisible(char)})`
  return `the character “${char}”`
}
