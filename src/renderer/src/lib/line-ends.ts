/**
 * A textarea hands its text back with every line ending as LF (the HTML spec normalizes
 * CRLF), so one keystroke in the edit step would turn every CRLF of a Windows file into LF:
 * the whole file would show as changed, and blame would give every line to that commit.
 * `keepLineEnds` puts CRLF back when the original used it for every line. A file that mixes
 * both cannot be told apart line by line after the textarea: it is left as typed.
 */
export function keepLineEnds(text: string, original: string | null): string {
  if (original === null || !original.includes('\r\n')) return text
  if (/(^|[^\r])\n/.test(original)) return text
  return text.replace(/\r?\n/g, '\r\n')
}
