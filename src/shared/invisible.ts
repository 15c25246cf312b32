/**
 * How a name with characters that draw as nothing is written wherever it is shown: in Claude's
 * messages (the main process) and on screen (the window). One rule for both, so that a person
 * reads in the Memory tab the name Claude is told.
 */

// Control and format characters (newlines, tabs, zero-width, bidi overrides, tag characters)
// and line/paragraph separators.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu
// The same class for a test (no `g`: a global pattern's `test` carries its place over).
const ANY_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

/** Whether `text` holds a control or invisible formatting character (see `escapeInvisible`). */
export function hasInvisible(text: string): boolean {
  return ANY_INVISIBLE.test(text)
}

/**
 * `text` with every control or invisible formatting character written as an escape (`\n`,
 * `\t`, `\u202E`): a name echoed back in an error must not break the message's lines or
 * reorder the text around it (a bidi override), in Claude's reply or on screen; two names
 * that differ only by a zero-width space or a byte-order mark must not look the same.
 */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    if (c === '\n') return '\\n'
    if (c === '\t') return '\\t'
    if (c === '\r') return '\\r'
    return unicodeEscape(c)
  })
}

// `c` as a JavaScript escape: `\u202E`, or `\u{1D173}` past four hex digits.
function unicodeEscape(c: string): string {
  const code = c.codePointAt(0)!.toString(16).toUpperCase()
  return code.length <= 4 ? `\\u${code.padStart(4, '0')}` : `\\u{${code}}`
}

// Spaces of any width (a plain space, a no-break space U+00A0, an ideographic space U+3000) at
// the very end of a text.
const TRAILING_SPACES = /\p{Zs}+$/u

/**
 * `text` with the spaces that end it written as escapes (`notes.md\u0020`): a name quoted at
 * the end of a message, or before the words that follow it, shows no trace of a trailing
 * space, and `notes.md ` would read as the `notes.md` beside it. Spaces inside stay as they are.
 */
export function escapeTrailingSpaces(text: string): string {
  return text.replace(TRAILING_SPACES, (run) => [...run].map(unicodeEscape).join(''))
}
