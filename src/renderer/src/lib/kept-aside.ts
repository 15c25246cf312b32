/**
 * Words for what a change kept aside rather than destroy: a file History holds no copy of
 * (too large to version, or changed outside Cairn since History saw it) is moved beside its
 * place as `<name> (not in history)` (`<name> (unreadable)` when Cairn may not read it). The person must learn where it went, never read that
 * History keeps it.
 */
import type { KeptAsideEntry } from '../../../shared/types'
import { displayPath } from './format'

/** The sentences (each with a leading space) that say where each kept entry went. */
export function keptAsideWords(kept: ReadonlyArray<KeptAsideEntry> | undefined): string {
  return (kept ?? [])
    .map(({ path, keptAs, reason, versioned }) => {
      const name = displayPath(path)
      const as = displayPath(keptAs)
      if (reason === 'folder') {
        return ` ${name} held files History has no copy of: they were kept in “${as}”.`
      }
      if (reason === 'unreadable') {
        // Never "History has no copy": its last readable version may well be there.
        const history = versioned
          ? 'History keeps its last version Cairn could read'
          : 'History has no version of it'
        return ` Cairn may not read ${name} (permission denied), so it was kept as “${as}”; ${history}.`
      }
      if (reason === 'changed') {
        return ` ${name} had been changed outside Cairn since History saw it, so that version was kept as “${as}”.`
      }
      return ` History has no copy of ${name}, so it was kept as “${as}”.`
    })
    .join('')
}

/**
 * The name a file History keeps no copy of gets when a change keeps it aside:
 * `big.log` -> `big (not in history).log`, or `private (unreadable).md` for one kept aside
 * because Cairn may not read it (the core's rule, `asideName`; it adds a number when that is
 * taken).
 */
export function asideNameOf(path: string, unreadable = false): string {
  const name = displayPath(path).split('/').pop() ?? path
  const label = unreadable ? '(unreadable)' : '(not in history)'
  const dot = name.lastIndexOf('.')
  return dot > 0 ? `${name.slice(0, dot)} ${label}${name.slice(dot)}` : `${name} ${label}`
}
