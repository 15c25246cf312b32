/** Sorting and filtering memory files by their use (the read log). Pure. */
import type { FileUse } from '../../../../shared/types'

export type FileOrder = 'name' | 'last-read' | 'size'

const DAY = 24 * 60 * 60 * 1000

/** The files to list: those not read in `days` days (all when null), in the chosen order. */
export function filesByUse(
  files: ReadonlyArray<FileUse>,
  options: {
    readonly order: FileOrder
    readonly notReadInDays: number | null
    readonly oversizedOnly: boolean
    readonly now: number
  },
): ReadonlyArray<FileUse> {
  const cutoff = options.notReadInDays === null ? null : options.now - options.notReadInDays * DAY
  const kept = files.filter(
    (file) =>
      (cutoff === null || file.lastReadAt === null || file.lastReadAt < cutoff) &&
      (!options.oversizedOnly || file.overViewLimit),
  )
  const byName = (a: FileUse, b: FileUse) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  const sorted = [...kept]
  if (options.order === 'name') return sorted.sort(byName)
  if (options.order === 'size') return sorted.sort((a, b) => b.size - a.size || byName(a, b))
  // Least recently read first; never read before anything read.
  return sorted.sort((a, b) => (a.lastReadAt ?? -1) - (b.lastReadAt ?? -1) || byName(a, b))
}

/** "about 12,300 tokens" */
export function tokensLabel(tokens: number): string {
  const rounded = tokens < 1000 ? tokens : Math.round(tokens / 100) * 100
  return `about ${rounded.toLocaleString('en-US')} ${rounded === 1 ? 'token' : 'tokens'}`
}
