import type { MemoryNotice, RecoveryReport } from './types'

/**
 * Whether two recovery reports, or two memory notices, are the same telling: one kind (and one
 * file, for a notice), one message, one commit. A dismissal names the very one the person saw:
 * a later one in its place (outside edits saved again, a secret found anew in the same file)
 * is not dismissed with it.
 */
export function sameTelling<T extends RecoveryReport | Omit<MemoryNotice, 'id'>>(
  a: T,
  b: T,
): boolean {
  return (
    a.kind === b.kind &&
    a.message === b.message &&
    a.commitOid === b.commitOid &&
    ('path' in a ? a.path : null) === ('path' in b ? b.path : null)
  )
}
