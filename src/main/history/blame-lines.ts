/**
 * What both blames (`blame.ts`, and `blame-reset.ts` at a commit the index lacks) ask of the
 * version traced, and how they cut its lines for display.
 */
import { isUtf8 } from 'node:buffer'
import { CairnError } from '../lib/errors'

/**
 * Largest file traced: its answer repeats a commit per line, so a 10 MB file (400,000 lines)
 * made a 133 MB answer for a view nobody can read. Past it, a `too-large` error says so.
 */
export const BLAME_MAX_BYTES = 2_000_000
export const BLAME_MAX_LINES = 20_000

/** True when `bytes` can be shown line by line: no NUL byte, valid UTF-8. */
export function isLineText(bytes: Uint8Array): boolean {
  return !bytes.includes(0) && isUtf8(bytes)
}

/** The error for a version traced that is not text (see `isLineText`). */
export function notTextError(virtual: string): CairnError {
  return new CairnError('not-text', `${virtual} is not a text file, so it has no lines to trace.`)
}

/** Throws `too-large` when a version of `bytes` bytes and `lines` lines is past the limits. */
export function requireTraceableSize(virtual: string, bytes: number, lines: number): void {
  if (bytes > BLAME_MAX_BYTES || lines > BLAME_MAX_LINES) {
    throw new CairnError(
      'too-large',
      `${virtual} is too large to trace line by line: Cairn traces files of up to ${BLAME_MAX_LINES.toLocaleString('en-US')} lines and ${BLAME_MAX_BYTES / 1_000_000} MB.`,
    )
  }
}

/** Line `i` (from 0) of `text`, whose lines start at `starts`, without its line feed. */
export function lineText(text: Buffer, starts: ArrayLike<number>, i: number): string {
  let end = starts[i + 1] as number
  if (end > (starts[i] as number) && text[end - 1] === 0x0a) end--
  return text.toString('utf8', starts[i], end)
}
