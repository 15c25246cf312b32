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
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, '']
  return `${withoutLabel(stem)} ${label}${ext}`
}

// A label the name carries already, in any case (a person's `Trip (Not In History).log`):
// the core replaces it, never adds a second (`asideName`'s `withoutLabel`).
const LABEL_AT_END = / \((?:not in history|unreadable)(?: \d+)?\)$/i

function withoutLabel(stem: string): string {
  const found = LABEL_AT_END.exec(stem)
  return found && found.index > 0 ? stem.slice(0, found.index) : stem
}
