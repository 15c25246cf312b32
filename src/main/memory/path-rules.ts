/**
 * The rules a `/memories` path must pass before it touches the disk. Pure: strings in, values out.
 *
 * Sample input (untrusted, exactly as Claude sent it): `/memories/projects/cairn.md`
 */

import { escapeTrailingSpaces } from '../../shared/invisible'
import { cutWithEllipsis } from '../lib/text'

/** The virtual root every memory path starts with. */
export const MEMORY_ROOT = '/memories'

/** Longest segment, in characters (UTF-16 code units, as JavaScript counts them). */
export const MAX_SEGMENT_LENGTH = 128
/**
 * Longest segment in UTF-8 bytes: what ext4, APFS and most file systems hold in one name. 128
 * characters of most scripts beyond Latin take more (`中` is 3 bytes, an emoji 4).
 */
export const MAX_SEGMENT_BYTES = 255
/** Longest whole virtual path, in characters (keeps the real path under common OS limits). */
export const MAX_PATH_LENGTH = 512
/** Deepest path, in segments below `/memories`. */
export const MAX_DEPTH = 16

/** A path that passed every rule. */
export interface ParsedMemoryPath {
  readonly ok: true
  /** Normalized virtual path: `/memories` or `/memories/a/b.md`. */
  readonly virtual: string
  /** Posix path relative to the root: `''` for the root itself, else `a/b.md`. */
  readonly relative: string
}

/** A path that broke a rule, with a message written for Claude (no `Error:` prefix). */
export interface RejectedMemoryPath {
  readonly ok: false
  readonly message: string
}

// Windows device names are reserved with or without an extension (`CON.txt` too).
const RESERVED_NAMES = new Set([
  'CON',
  'PRN',
  'AUX',
  'NUL',
  'CONIN$',
  'CONOUT$',
  'CLOCK$',
  ...['COM', 'LPT'].flatMap((prefix) => [...'0123456789¹²³'].map((digit) => `${prefix}${digit}`)),
])

// The 66 code points Unicode keeps out of text for good (U+FFFE, U+FFFF, U+FDD0-U+FDEF, the
// last two of each plane): a name holding one shows as nothing or as a box, and U+FFFE is a
// byte-order mark read backwards.
const NONCHARACTER = /\p{Noncharacter_Code_Point}/u

// Control (Cc), format (Cf: zero-width, bidi overrides), line/paragraph separators, lone surrogates.
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/**
 * True when `name` holds a control or invisible formatting character (a line break, a
 * zero-width space U+200B, a bidi override U+202E or isolate U+2066, a byte-order mark U+FEFF,
 * a line separator, a lone surrogate): a name that reads as another, or breaks the lines it
 * is shown in. Claude's paths are held to it.
 */
export function hasInvisibleOrControl(name: string): boolean {
  return INVISIBLE_OR_CONTROL.test(name)
}

// What makes a name display as another name: controls, and the bidi embeddings, overrides and
// isolates (U+202A-U+202E, U+2066-U+2069: "evil\u202Egpj.md" shows as "evildm.jpg"), which
// reorder what follows them. Nothing else Claude's paths refuse: a zero-width space, a soft
// hyphen or a byte-order mark shows nothing and reorders nothing (the name is shown with the
// character escaped wherever Cairn names it), and the joiners and marks belong to emoji
// sequences ("👨‍👩‍👧") and to Persian, Indic, Hebrew and Arabic names a person's files carry.
const SPOOFING = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u

/**
 * True when a name taken in from elsewhere (an imported history, a remote) could display as
 * another name (`SPOOFING` above). Every such character is one Claude's paths refuse too; the
 * rest of what they refuse is carried here, since the folder scan versions a person's files by
 * the history's rules and a sync must carry what another machine versioned: a name refused
 * here refuses every sync of the machines that do not have it yet.
 */
export function mayDisplayAsAnother(name: string): boolean {
  return SPOOFING.test(name)
}
// Characters Windows refuses in names, and the path separators of other systems.
const INVALID_ON_WINDOWS = /[<>:"|?*\\]/
const PERCENT_ENCODED = /%[0-9a-f]{2}/i
// 8.3 short names such as `GIT~1` alias `.git` on Windows: a base of at most 8 characters
// ending in ~ and a number (`DRAFT~2` is one; `meeting-notes~2` cannot be).
const SHORT_NAME = /~\d+$/
const SHORT_NAME_LENGTH = 8
// Slashes and backslashes of other shapes (fullwidth, division, fraction, big, small, box
// drawing, set minus), which read as folder separators in a path.
const LOOKS_LIKE_SLASH = /[\u2044\u2215\u2216\u2571\u2572\u29F5\u29F8\u29F9\uFE68\uFF0F\uFF3C]/
// A letter, digit, punctuation or symbol: what makes a name visible.
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u
// Letters and symbols that draw as blank space: Hangul fillers, the braille blank.
const BLANK_LOOKING = /[\u115F\u1160\u3164\uFFA0\u2800]/gu

/**
 * Checks one untrusted path against every rule and normalizes it (NFC, no trailing slash).
 * Never decodes, never touches the disk. `keepSpelling`: the path is taken in its own Unicode
 * spelling, not made NFC (the person's name of an entry as the folder spells it, see
 * `MemoryExecuteOptions.spelledAsOnDisk`); every other rule holds alike.
 */
export function parseMemoryPath(
  virtualPath: string,
  options: { readonly keepSpelling?: boolean } = {},
): ParsedMemoryPath | RejectedMemoryPath {
  if (typeof virtualPath !== 'string' || virtualPath.length === 0) {
    return reject('The path is empty. Memory paths look like /memories/notes.md.')
  }
  // Checked before normalizing so that nothing hidden survives into a shown message.
  if (hasInvisibleOrControl(virtualPath)) {
    return reject(
      'The path contains a control or invisible formatting character, which memory paths may not contain.',
    )
  }
  const nonCharacter = NONCHARACTER.exec(virtualPath)
  if (nonCharacter) {
    return reject(
      `The path contains the Unicode noncharacter U+${nonCharacter[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, which memory paths may not contain.`,
    )
  }
  const path = options.keepSpelling === true ? virtualPath : virtualPath.normalize('NFC')
  const shown = quote(path)
  if (path.length > MAX_PATH_LENGTH) {
    return reject(`The path is longer than ${MAX_PATH_LENGTH} characters.`)
  }
  if (path.includes('\\')) {
    return reject(`The path ${shown} contains a backslash; use / to separate folders.`)
  }
  if (path !== MEMORY_ROOT && !path.startsWith(`${MEMORY_ROOT}/`)) {
    return reject(
      `The path ${shown} is outside the memory directory; paths must start with /memories/.`,
    )
  }
  if (PERCENT_ENCODED.test(path)) {
    return reject(`The path ${shown} contains %-encoded text; write the characters themselves.`)
  }
  // One trailing slash is accepted (`/memories/` and `/memories/notes/` are natural to write);
  // two in a row are an empty segment, at the end too (`/memories//` is not the root).
  if (path.slice(MEMORY_ROOT.length).includes('//')) {
    return reject(`The path ${shown} is not allowed: it contains an empty segment (//).`)
  }
  const body = path.slice(MEMORY_ROOT.length + 1).replace(/\/$/, '')
  if (body === '') return { ok: true, virtual: MEMORY_ROOT, relative: '' }
  const segments = body.split('/')
  if (segments.length > MAX_DEPTH) {
    // Counted in names, the file's too: "deeper than 16 folders" was said of 16 folders and a file.
    return reject(
      `The path ${shown} is nested too deep: it has ${segments.length} names after /memories/, and a memory path may have at most ${MAX_DEPTH} (such as ${MAX_DEPTH - 1} folders and a file).`,
    )
  }
  for (const segment of segments) {
    const problem = segmentProblem(segment)
    if (problem) return reject(`The path ${shown} is not allowed: ${problem}.`)
  }
  return { ok: true, virtual: `${MEMORY_ROOT}/${body}`, relative: body }
}

/** Why one path segment is refused, or null when it is fine. */
export function segmentProblem(segment: string): string | null {
  if (segment === '') return 'it contains an empty segment (//)'
  if (segment === '.' || segment === '..') return `it contains a "${segment}" segment`
  if (segment.startsWith('.')) return 'names starting with "." (hidden files) are not allowed'
  if (segment.length > MAX_SEGMENT_LENGTH) {
    return `a name is longer than ${MAX_SEGMENT_LENGTH} characters`
  }
  const bytes = Buffer.byteLength(segment)
  if (bytes > MAX_SEGMENT_BYTES) {
    return `a name is too long: ${bytes} bytes in UTF-8, over the ${MAX_SEGMENT_BYTES} bytes a file system holds in one name`
  }
  if (INVALID_ON_WINDOWS.test(segment)) {
    return 'names may not contain any of < > : " | ? * \\'
  }
  if (LOOKS_LIKE_SLASH.test(segment)) {
    return 'names may not contain a character that looks like a slash (such as ／ or ∕), as the name would read as a path of folders'
  }
  // Fullwidth dots (U+FF0E) and dot leaders (U+2024, U+2025) are no step up to the system,
  // but a person reads `．．` as `..`: a path that looks like it leaves its folder. NFKC leaves
  // ASCII as it is and an ASCII name of dots was refused above: only names with a character
  // beyond printable ASCII are folded.
  if (/[^ -~]/.test(segment)) {
    const compatible = segment.normalize('NFKC')
    if (/^\.+$/.test(compatible)) {
      return `the name ${segment} is written with dot look-alikes and reads as "${compatible}"`
    }
  }
  if (/[. ]$/.test(segment)) return 'names may not end with a dot or a space'
  if (/^ /.test(segment)) return 'names may not start with a space'
  if (segment.toLowerCase() === 'node_modules') return 'node_modules is not allowed'
  // A name of blanks only (a no-break space, a Hangul filler, a braille blank, a lone accent)
  // shows as nothing in a listing: Claude and the person could not tell it was there.
  if (!VISIBLE.test(segment.replace(BLANK_LOOKING, ''))) {
    return 'names need at least one visible character'
  }
  const stem = segment.split('.')[0]!.trimEnd().toUpperCase()
  if (RESERVED_NAMES.has(stem)) return `${stem} is a reserved device name on Windows`
  const base = segment.split('.')[0]!
  if (base.length <= SHORT_NAME_LENGTH && SHORT_NAME.test(base)) {
    return 'names ending in ~ and a number look like Windows short names'
  }
  return null
}

/** True when a name found on disk is one a memory path could name (used to filter listings). */
export function isAddressableName(name: string): boolean {
  return (
    name.normalize('NFC') === name &&
    !hasInvisibleOrControl(name) &&
    !NONCHARACTER.test(name) &&
    !PERCENT_ENCODED.test(name) &&
    segmentProblem(name) === null
  )
}

function reject(message: string): RejectedMemoryPath {
  return { ok: false, message }
}

// Echoed paths are cut so a huge hostile path cannot flood the reply; spaces ending one are
// escaped, since nothing else would show them (control characters were refused before).
function quote(path: string): string {
  return escapeTrailingSpaces(cutWithEllipsis(path, 200))
}
