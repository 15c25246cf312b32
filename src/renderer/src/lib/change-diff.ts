/**
 * The compact diff a pending change shows: whole lines added and removed, unchanged runs
 * folded to a few lines of context. Pure, so it is tested without a browser.
 */
import { diffLines } from 'diff'

export interface ChangeLine {
  readonly kind: 'add' | 'del' | 'same'
  readonly text: string
  /** Line number in the file before (del, same) or after (add). */
  readonly line: number
}

export type ChangeRow = ChangeLine | { readonly kind: 'gap'; readonly count: number }

export interface ChangeDiff {
  readonly rows: ReadonlyArray<ChangeRow>
  readonly added: number
  readonly removed: number
  /** True when the diff has more rows than `maxRows` and the rest was left out. */
  readonly cut: boolean
}

/** Most lines added plus removed the diff looks for; beyond, everything is replaced. */
const MAX_EDIT = 5_000

function linesOf(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/**
 * The rows between `before` and `after` (null: no file on that side), keeping `context`
 * unchanged lines around each change and at most `maxRows` rows.
 */
export function changeDiff(
  before: string | null,
  after: string | null,
  context = 3,
  maxRows = 600,
): ChangeDiff {
  const all: ChangeLine[] = []
  let oldNo = 1
  let newNo = 1
  let added = 0
  let removed = 0
  // A bound on the work: past it the diff is one removal and one addition of everything.
  const parts = diffLines(before ?? '', after ?? '', { maxEditLength: MAX_EDIT }) ?? [
    { value: before ?? '', removed: true, added: false, count: 0 },
    { value: after ?? '', added: true, removed: false, count: 0 },
  ]
  for (const part of parts) {
    for (const text of linesOf(part.value)) {
      if (part.added) {
        all.push({ kind: 'add', text, line: newNo++ })
        added++
      } else if (part.removed) {
        all.push({ kind: 'del', text, line: oldNo++ })
        removed++
      } else {
        all.push({ kind: 'same', text, line: oldNo++ })
        newNo++
      }
    }
  }
  const rows: ChangeRow[] = []
  let i = 0
  while (i < all.length) {
    if (all[i]!.kind !== 'same') {
      rows.push(all[i++]!)
      continue
    }
    let end = i
    while (end < all.length && all[end]!.kind === 'same') end++
    const keepBefore = i === 0 ? 0 : context
    const keepAfter = end === all.length ? 0 : context
    const hidden = end - i - keepBefore - keepAfter
    if (hidden > 1) {
      rows.push(...all.slice(i, i + keepBefore), { kind: 'gap', count: hidden })
      rows.push(...all.slice(end - keepAfter, end))
    } else rows.push(...all.slice(i, end))
    i = end
  }
  return { rows: rows.slice(0, maxRows), added, removed, cut: rows.length > maxRows }
}
