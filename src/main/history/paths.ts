import { CairnError } from '../lib/errors'
import { MEMORY_ROOT } from '../memory'
import { cutWithEllipsis, escapeInvisible } from '../lib/text'

/**
 * Turns a virtual path (`/memories/a/b.md`) into a relative one (`a/b.md`; `''` for the root).
 * Lenient on purpose: history may hold files that arrived outside the Memory tool, so only
 * what could escape the folder or confuse git is refused. New writes go through the tool's
 * own, stricter rules.
 */
export function toRelative(virtual: string): string {
  if (virtual === MEMORY_ROOT || virtual === `${MEMORY_ROOT}/`) return ''
  if (!virtual.startsWith(`${MEMORY_ROOT}/`)) throw invalid(virtual)
  const relative = virtual.slice(MEMORY_ROOT.length + 1).replace(/\/$/, '')
  for (const segment of relative.split('/')) {
    if (
      segment === '' ||
      segment === '.' ||
      segment === '..' ||
      segment.includes('\\') ||
      segment.includes('\0')
    ) {
      throw invalid(virtual)
    }
    if (segment.toLowerCase() === '.git') throw invalid(virtual)
  }
  return relative
}

/** `a/b.md` -> `/memories/a/b.md`. */
export function toVirtual(relative: string): string {
  return relative === '' ? MEMORY_ROOT : `${MEMORY_ROOT}/${relative}`
}

/**
 * A relative path as a message shows it: virtual, with characters that draw as nothing
 * escaped (a bidi override must not reorder the sentence around it).
 */
export function shownPath(relative: string): string {
  return escapeInvisible(toVirtual(relative))
}

export function segmentsOf(relative: string): ReadonlyArray<string> {
  return relative === '' ? [] : relative.split('/')
}

/** True when `path` is `parent` or lies inside it (both virtual or both relative). */
export function isWithin(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`) || parent === '' || parent === MEMORY_ROOT
}

function invalid(virtual: string): CairnError {
  const shown = cutWithEllipsis(virtual, 200)
  return new CairnError('invalid-path', `${JSON.stringify(shown)} is not a path under /memories.`)
}
