/**
 * Limits on what a history read sends to the window. `history:show` leaves large changes out,
 * and "Load diff" then asked for them alone with `history:diff` and `history:readAt`, which had
 * no limit: a 20 MB log file edited outside Cairn sent 21 M characters (readAt) and 43 M
 * (diff), and froze or crashed the window. They now stop at the limit `memory:read` uses for
 * the memory browser (`maxEditableBytes`) with a `too-large` error in plain words.
 */

import type { FileChange } from '../../shared/types'
import { CairnError } from '../lib/errors'

/** `text` (a version of `virtual`) when it is within `maxBytes`; a `too-large` error if not. */
export function withinWindowLimit(
  virtual: string,
  text: string | null,
  maxBytes: number,
): string | null {
  if (text !== null) check(virtual, text, maxBytes)
  return text
}

/** `change` when both its sides are within `maxBytes`; a `too-large` error if not. */
export function changeWithinWindowLimit(change: FileChange, maxBytes: number): FileChange {
  for (const side of [change.before, change.after]) {
    if (side !== null) check(change.path, side, maxBytes)
  }
  return change
}

function check(virtual: string, text: string, maxBytes: number): void {
  // A UTF-8 byte is at least a character and at most three per UTF-16 unit: the exact count
  // is only needed near the limit.
  if (text.length <= maxBytes / 3) return
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes <= maxBytes) return
  throw new CairnError(
    'too-large',
    `${virtual} is too large to show here: this version is ${megabytes(bytes)}, and Cairn shows files of up to ${megabytes(maxBytes)}.`,
  )
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}
