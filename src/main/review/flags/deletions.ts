/**
 * The `deletes-folder` and `deletes-most` rules: a change that removes a whole folder, or more
 * than half of a file's text (deleting the file, or rewriting it so that most of what it said
 * is gone). Pure, and linear in the size of the file: no diff algorithm with a quadratic
 * worst case runs on a write.
 */
import type { ChangeCommand, WriteFlag } from '../../../shared/types'

/** What the rules need to know about a change. */
export interface DeletionInput {
  readonly command: ChangeCommand
  readonly path: string
  readonly kind: 'file' | 'dir'
  readonly before: string | null
  readonly after: string | null
  /** For a folder: how many files it holds. */
  readonly fileCount: number
  /** The size of the file there now when it is not text (`before` is then null). */
  readonly notTextBytes?: number | null
  /** The size of a file deleted without its text being read (too large). */
  readonly unreadBytes?: number | null
}

/** Flags for a change that deletes a folder or most of a file. */
export function deletionFlags(change: DeletionInput): ReadonlyArray<WriteFlag> {
  const { path } = change
  if (change.command === 'rename') return []
  if (change.command === 'delete' && change.kind === 'dir') {
    const files = change.fileCount === 1 ? '1 file' : `${count(change.fileCount)} files`
    return [
      {
        rule: 'deletes-folder',
        path,
        line: null,
        message: `Deletes the folder ${path} and the ${files} in it`,
      },
    ]
  }
  const notText = change.notTextBytes ?? null
  const unread = change.unreadBytes ?? null
  if (change.command === 'delete') {
    const lines = change.before === null ? null : lineCount(change.before)
    if (change.before !== null && change.before.trim() === '') return []
    return [
      {
        rule: 'deletes-most',
        path,
        line: null,
        message:
          lines !== null
            ? `Deletes the whole file (${count(lines)} ${lines === 1 ? 'line' : 'lines'})`
            : unread !== null
              ? `Deletes the whole file (${bytes(unread)})`
              : notText !== null
                ? `Deletes the whole file (not text, ${bytes(notText)})`
                : 'Deletes the whole file',
      },
    ]
  }
  // A file that is not text (an image, notes in another encoding) replaced by new text: all
  // of it is gone, though there is no text to compare.
  if (change.before === null && notText !== null && notText > 0) {
    return [
      {
        rule: 'deletes-most',
        path,
        line: null,
        message: `Replaces the whole file (not text, ${bytes(notText)})`,
      },
    ]
  }
  if (change.before === null || change.after === null) return []
  const total = change.before.length
  if (change.before.trim() === '') return []
  const removed = removedChars(change.before, change.after)
  if (removed * 2 <= total) return []
  const share = Math.min(100, Math.round((removed / total) * 100))
  return [
    {
      rule: 'deletes-most',
      path,
      line: null,
      message: `Removes ${share}% of the file's text (${count(removed)} of ${count(total)} characters)`,
    },
  ]
}

/**
 * How many characters of `before` are gone from `after`: the common start and end are kept,
 * and in between, whole lines of `before` that `after` no longer holds (anywhere in its
 * middle) count as removed. A word changed inside a line counts only its own characters when
 * it is the only change; otherwise its line counts whole, which errs towards flagging.
 */
export function removedChars(before: string, after: string): number {
  let start = 0
  const shorter = Math.min(before.length, after.length)
  while (start < shorter && before[start] === after[start]) start++
  let end = 0
  while (
    end < shorter - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  ) {
    end++
  }
  const oldMiddle = before.slice(start, before.length - end)
  const newMiddle = after.slice(start, after.length - end)
  if (oldMiddle === '' || newMiddle === '') return oldMiddle.length
  if (!oldMiddle.includes('\n')) return oldMiddle.length
  const kept = new Map<string, number>()
  for (const line of newMiddle.split('\n')) kept.set(line, (kept.get(line) ?? 0) + 1)
  let removed = 0
  const lines = oldMiddle.split('\n')
  lines.forEach((line, i) => {
    const left = kept.get(line) ?? 0
    if (left > 0) kept.set(line, left - 1)
    else removed += line.length + (i < lines.length - 1 ? 1 : 0)
  })
  return removed
}

function lineCount(text: string): number {
  if (text === '') return 0
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n').length
}

function bytes(n: number): string {
  return n === 1 ? '1 byte' : `${count(n)} bytes`
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}
