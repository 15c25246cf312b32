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
 * taken). `restored`: the file is kept aside by a restore of its own path. A guess that
 * knows nothing of the disk (names taken, case ignored): the Memory tab's delete dialog shows
 * the core's own answer from the listing (`MemoryEntry.keptAsideAs`), and uses this only
 * without one; History's restore dialog, for a path the listing may not hold, uses it.
 */
export function asideNameOf(path: string, unreadable = false, restored = false): string {
  const name = displayPath(path).split('/').pop() ?? path
  const label = unreadable ? 'unreadable' : 'not in history'
  const dot = name.lastIndexOf('.')
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, '']
  const first = `${withoutLabel(stem)} (${label})${ext}`
  // `restored`: a restore writes the file's own name again, which the core counts as taken in
  // any case (`big (not in history).log` -> `big (not in history 2).log`).
  return restored && first.toLowerCase() === name.toLowerCase()
    ? `${withoutLabel(stem)} (${label} 2)${ext}`
    : first
}

// A name as Cairn spells what it keeps aside (its labels lower case), the core's
// `isOwnAsideName`: `big (not in history).log`, `private (unreadable 2).md`.
const OWN_ASIDE_NAME = /\((?:not in history|unreadable)(?: \d+)?\)(?:\.[^.]*)?$/

/**
 * True for a file name Cairn gave something it kept aside. Such a file that History keeps no
 * copy of is not deleted (the core refuses: keeping it aside again would only rename it), so a
 * dialog must not promise where it would go.
 */
export function isKeptAsideName(path: string): boolean {
  return OWN_ASIDE_NAME.test(path.slice(path.lastIndexOf('/') + 1))
}

// A label the name carries already, in any case (a person's `Trip (Not In History).log`):
// the core replaces it, never adds a second (`asideName`'s `withoutLabel`).
const LABEL_AT_END = / \((?:not in history|unreadable)(?: \d+)?\)$/i

function withoutLabel(stem: string): string {
  const found = LABEL_AT_END.exec(stem)
  return found && found.index > 0 ? stem.slice(0, found.index) : stem
}
