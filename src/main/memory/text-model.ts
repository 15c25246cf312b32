/**
 * The line model shared by `view`, `str_replace` and `insert`. Pure.
 *
 * A file is a list of lines; a final newline ends the last line instead of starting an empty
 * one (as editors and `cat -n` count), so `"a\nb\n"` has 2 lines and `""` has none.
 */

/** Most lines a file may have to be viewed or edited (the official limit). */
export const MAX_LINES = 999_999

/** Width of the right-aligned line numbers (`String(999999).length`). */
export const LINE_NUMBER_WIDTH = 6

/** A text split into lines, remembering whether it ended with a newline. */
export interface Lines {
  readonly lines: ReadonlyArray<string>
  readonly finalNewline: boolean
}

/** Splits text into lines (see the module comment for how a final newline counts). */
export function splitLines(text: string): Lines {
  if (text === '') return { lines: [], finalNewline: false }
  const finalNewline = text.endsWith('\n')
  const lines = (finalNewline ? text.slice(0, -1) : text).split('\n')
  return { lines, finalNewline }
}

/**
 * Joins lines back into text. An empty last line gets its newline whatever `finalNewline`
 * says: without one it would not be a line (`"a\n"` is the one line `a`).
 */
export function joinLines({ lines, finalNewline }: Lines): string {
  if (lines.length === 0) return ''
  return lines.join('\n') + (finalNewline || lines.at(-1) === '' ? '\n' : '')
}

/** One line as `view` shows it: number right-aligned in 6 characters, a tab, the text. */
export function numberLine(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(LINE_NUMBER_WIDTH, ' ')}\t${text}`
}

/** 1-based line on which the character at `index` sits. */
export function lineOf(text: string, index: number): number {
  let line = 1
  let at = text.indexOf('\n')
  while (at !== -1 && at < index) {
    line++
    at = text.indexOf('\n', at + 1)
  }
  return line
}

/** Start offsets of every occurrence of `needle`, overlapping ones included (each is ambiguous). */
export function findOccurrences(haystack: string, needle: string): ReadonlyArray<number> {
  const found: number[] = []
  let at = haystack.indexOf(needle)
  while (at !== -1) {
    found.push(at)
    at = haystack.indexOf(needle, at + 1)
  }
  return found
}

/**
 * Inserts `text` after line `afterLine` (0 = at the top). One trailing newline of `text` is
 * dropped so it never adds an empty line; the other lines of a multi-line `text` each become lines.
 */
export function insertLines(file: Lines, afterLine: number, text: string): Lines {
  const inserted = splitLines(text.endsWith('\n') ? text : `${text}\n`).lines
  const lines = [...file.lines.slice(0, afterLine), ...inserted, ...file.lines.slice(afterLine)]
  // An empty file gains the newline the inserted text ended with; otherwise the file keeps its own.
  const finalNewline = file.lines.length === 0 ? text.endsWith('\n') : file.finalNewline
  return { lines, finalNewline }
}

/**
 * What `insert` adds to a file: `body`, the inserted text without one trailing line ending and
 * with its line endings written in the file's style, and `eol`, that style. The style is the
 * file's first line ending (`\r\n` or `\n`, as editors read a file's style); a file without
 * one takes the text's, and `\n` when neither has any. So `"c\r\n"` inserted at the end of
 * `"a\nb"` ends its line with `\n`, never a stray `\r`, and a CRLF file stays CRLF.
 */
export function insertedText(fileText: string, text: string): { body: string; eol: string } {
  const eol = lineEndingOf(fileText) ?? lineEndingOf(text) ?? '\n'
  const end = text.endsWith('\r\n') ? 2 : text.endsWith('\n') ? 1 : 0
  const cut = end > 0 ? text.slice(0, -end) : text
  // Only text holding a line ending of the other style is rewritten (a cost per byte).
  const other = eol === '\n' ? cut.includes('\r\n') : /(?<!\r)\n/.test(cut)
  return { body: other ? cut.replace(/\r?\n/g, eol) : cut, eol }
}

// The first line ending of `text`, or undefined when it has none.
function lineEndingOf(text: string): string | undefined {
  const at = text.indexOf('\n')
  if (at < 0) return undefined
  return at > 0 && text[at - 1] === '\r' ? '\r\n' : '\n'
}

/**
 * Whether the inserted `body` (see `insertedText`) ends in an empty line, which needs a line
 * ending of its own to be a line when it comes last in a file with no final newline.
 */
export function endsInEmptyLine(body: string): boolean {
  return body === '' || body.endsWith('\n')
}

/**
 * Inserts `text` after line `afterLine` (0 = at the top), cutting `fileText` once at the start
 * of line `afterLine + 1`: for a file and text with `\n` line endings, the same result as
 * `joinLines(insertLines(splitLines(fileText), afterLine, text))`; in a CRLF file, the same in
 * CRLF (see `insertedText`). Its cost does not grow with the lines of `text` (splitting and
 * joining them cost about 100 ms a megabyte, before an insert too large for a memory file was
 * even refused). `afterLine` must be within `[0, lines of fileText]`. `inserted` is
 * `insertedText(fileText, text)` when the caller has it already (to check the size first).
 */
export function insertText(
  fileText: string,
  afterLine: number,
  text: string,
  inserted?: { body: string; eol: string },
): string {
  // An empty line inserted into an empty file is a line only with its newline.
  if (fileText === '') return text === '' ? '\n' : text
  // One trailing line ending of `text` ends its last line; the file's own line end follows.
  const { body, eol } = inserted ?? insertedText(fileText, text)
  if (afterLine === 0) return `${body}${eol}${fileText}`
  let at = -1
  for (let line = 0; line < afterLine; line++) {
    at = fileText.indexOf('\n', at + 1)
    // After a last line that has no newline: it gets one, and the inserted lines keep none,
    // unless the last of them is empty (`""`, `"\n"`, `"x\n\n"`): a line only with its newline.
    if (at === -1) return `${fileText}${eol}${body}${endsInEmptyLine(body) ? eol : ''}`
  }
  return `${fileText.slice(0, at + 1)}${body}${eol}${fileText.slice(at + 1)}`
}
