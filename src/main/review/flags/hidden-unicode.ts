/**
 * The `hidden-unicode` rule: characters a person cannot see in new text. They hide words from
 * the person while Claude still reads them (tag characters spell out whole sentences),
 * reorder what is shown (bidi controls, "Trojan Source"), or split words so that checks miss
 * them (zero-width characters). Legitimate uses are left alone: a byte-order mark at the
 * start, joiners inside emoji and between letters of scripts that need them, direction marks
 * in right-to-left text, the tags of a subdivision flag emoji, and a variation selector after
 * a character that has the variant it picks (emoji style, a kanji's variant glyph). Every
 * other default-ignorable code point (drawn as nothing) is reported. Pure.
 */
import type { WriteFlag } from '../../../shared/types'
import { addedBlocks, quote } from './added-text'
import { hasLookAlike, mixedWords } from './look-alikes'

/** Most lines this rule reports for one change. */
const MAX_FLAGS = 5

const NAMES: Readonly<Record<number, string>> = {
  0x00ad: 'soft hyphen',
  0x034f: 'combining grapheme joiner',
  0x061c: 'Arabic letter mark',
  0x180e: 'Mongolian vowel separator',
  0x200b: 'zero-width space',
  0x200c: 'zero-width non-joiner',
  0x200d: 'zero-width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2061: 'invisible function application',
  0x2062: 'invisible times',
  0x2063: 'invisible separator',
  0x2064: 'invisible plus',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero-width no-break space',
  // Hangul fillers draw nothing: "Ign\u3164ore" reads as "Ignore" to a person.
  0x115f: 'Hangul choseong filler',
  0x1160: 'Hangul jungseong filler',
  0x3164: 'Hangul filler',
  0xffa0: 'halfwidth Hangul filler',
  0x17b4: 'Khmer inherent vowel',
  0x17b5: 'Khmer inherent vowel',
  0xfff9: 'interlinear annotation anchor',
  0xfffa: 'interlinear annotation separator',
  0xfffb: 'interlinear annotation terminator',
}

/** What any other default-ignorable character (drawn as nothing) is called. */
const OTHER_INVISIBLE = 'invisible format character'

const PICTOGRAPH = /\p{Extended_Pictographic}/u
// Any character the rule looks at; a line without one is skipped without being taken apart.
// Unicode's default-ignorable code points are those a renderer draws as nothing: all of them
// (the Hangul fillers, the musical and shorthand format controls, …), not a hand list.
const CANDIDATE =
  /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|\p{Variation_Selector}|\p{Default_Ignorable_Code_Point}/u
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/u
// Scripts whose spelling uses the joiners (Arabic and Persian, the Indic scripts, …).
const JOINING_LETTER =
  /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=Mongolian}]/u
// Characters with a variant a selector can pick (Unicode's StandardizedVariants and the
// ideographic variation database): emoji and text style for emoji; glyph variants of CJK
// ideographs, Myanmar, Phags-pa, Manichaean and Egyptian letters, math operators and the
// digit zero (slashed).
const EMOJI_BASE = /[\p{Emoji}\p{Extended_Pictographic}]/u
const IDEOGRAPH = /\p{Ideographic}/u
const VARIANT_BASE =
  /[\p{Ideographic}\p{Script=Myanmar}\p{Script=Phags_Pa}\p{Script=Manichaean}\p{Script=Egyptian_Hieroglyphs}0\u2200-\u22ff\u2a00-\u2aff]/u
// Letters of the right-to-left scripts: a line is right-to-left for its letters, never for
// its marks (an Arabic letter mark is itself in the Arabic block, and must not exempt itself).
const RTL_TEXT =
  /(?=\p{L})[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}\p{Script=Yezidi}]/u
// Hangul conjoining jamo, between which the choseong and jungseong fillers spell a syllable.
const JAMO = /[\u1100-\u115e\u1161-\u11ff]/u
const WAVING_BLACK_FLAG = 0x1f3f4
const CANCEL_TAG = 0xe007f

// Kinds counted as one, whatever their code (they carry data, one character at a time).
const AS_ONE: ReadonlySet<string> = new Set([
  'tag character',
  'run of variation selectors',
  'variation selector',
])

/** What one hidden character is, or null for a visible (or harmless) one. */
function hiddenName(chars: ReadonlyArray<string>, i: number, lineIsRtl: boolean): string | null {
  const code = chars[i]!.codePointAt(0)!
  if (code >= 0xe0000 && code <= 0xe007f) {
    return inFlagEmoji(chars, i) ? null : 'tag character'
  }
  if ((code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xe0100 && code <= 0xe01ef)) {
    // One selector picks a glyph (emoji style, a kanji variant); a run of them carries data,
    // and so does one after each of many letters that have no variants to pick.
    if (isSelector(chars[i - 1]) || isSelector(chars[i + 1])) return 'run of variation selectors'
    return selects(code, chars[i - 1]) ? null : 'variation selector'
  }
  const previous = chars[i - 1] ?? ''
  const next = chars[i + 1] ?? ''
  // Mongolian free variation selectors pick a letter's form, as variation selectors do.
  if (code >= 0x180b && code <= 0x180f && code !== 0x180e) {
    return /\p{Script=Mongolian}/u.test(previous) ? null : 'Mongolian variation selector'
  }
  if ((code === 0x115f || code === 0x1160) && (JAMO.test(previous) || JAMO.test(next))) return null
  const name = NAMES[code] ?? (DEFAULT_IGNORABLE.test(chars[i]!) ? OTHER_INVISIBLE : null)
  if (!name) return null
  if (code === 0x200d && (isEmojiPart(previous) || isJoiningLetter(previous)) && next !== '') {
    // Family and profession emoji; conjuncts in Indic scripts.
    if (PICTOGRAPH.test(next) || isJoiningLetter(next)) return null
  }
  if (code === 0x200c && isJoiningLetter(previous) && isJoiningLetter(next)) return null
  if ((code === 0x200e || code === 0x200f || code === 0x061c) && lineIsRtl) return null
  return name
}

/**
 * Flags for the new lines of `after` holding invisible characters, one per line, naming each
 * kind and how many (`zero-width space (U+200B) ×3`).
 */
export function hiddenUnicodeFlags(
  path: string,
  before: string | null,
  after: string,
): ReadonlyArray<WriteFlag> {
  const flags: WriteFlag[] = []
  for (const block of addedBlocks(before, after)) {
    block.text.split('\n').forEach((text, offset) => {
      if (flags.length >= MAX_FLAGS) return
      const invisible = CANDIDATE.test(text)
      const disguised = hasLookAlike(text) ? mixedWords(text) : []
      if (!invisible && disguised.length === 0) return
      const line = block.line + offset
      const chars = invisible ? [...text] : []
      const rtl = invisible && RTL_TEXT.test(text)
      const counts = new Map<string, number>()
      chars.forEach((char, i) => {
        // A byte-order mark opening the file is how some editors save UTF-8.
        if (i === 0 && line === 1 && char === '\ufeff') return
        const name = hiddenName(chars, i, rtl)
        if (!name) return
        const key = AS_ONE.has(name) ? name : label(name, char)
        counts.set(key, (counts.get(key) ?? 0) + 1)
      })
      const found: string[] = []
      if (counts.size > 0) {
        const kinds = [...counts].map(([what, n]) => (n > 1 ? `${what} ×${n}` : what))
        found.push(`Invisible characters: ${kinds.join(', ')}`)
      }
      if (disguised.length > 0) {
        const words = disguised.slice(0, 3).map((word) => quote(word, 40))
        found.push(`Cyrillic or Greek letters that look Latin, in ${words.join(', ')}`)
      }
      if (found.length === 0) return
      flags.push({ rule: 'hidden-unicode', path, line, message: found.join('; ') })
    })
  }
  return flags
}

function label(name: string, char: string): string {
  const hex = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
  return `${name} (U+${hex})`
}

/** True when the selector `code` has a variant to pick for the character `base`. */
function selects(code: number, base: string | undefined): boolean {
  if (base === undefined) return false
  if (code >= 0xe0100) return IDEOGRAPH.test(base)
  if (code >= 0xfe0e) return EMOJI_BASE.test(base)
  return VARIANT_BASE.test(base)
}

function isSelector(char: string | undefined): boolean {
  const code = char?.codePointAt(0) ?? 0
  return (code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xe0100 && code <= 0xe01ef)
}

function isEmojiPart(char: string): boolean {
  const code = char.codePointAt(0) ?? 0
  // A pictograph, its emoji-style selector, or a skin-tone modifier.
  return PICTOGRAPH.test(char) || code === 0xfe0f || (code >= 0x1f3fb && code <= 0x1f3ff)
}

function isJoiningLetter(char: string): boolean {
  return char !== '' && JOINING_LETTER.test(char)
}

/**
 * True for a tag inside a subdivision flag emoji, 🏴 + a region code in tags + cancel tag
 * (England is 🏴 g b e n g ␡): two tag letters for the country, one to three tag letters or
 * digits for the subdivision. Any other run of tags, even between a 🏴 and a cancel tag,
 * carries hidden text.
 */
function inFlagEmoji(chars: ReadonlyArray<string>, i: number): boolean {
  // A flag's run is six tags at most: looking no further keeps a long run linear.
  let start = i
  while (start > 0 && i - start < 6 && isTag(chars[start - 1]!)) start--
  let end = i
  while (end < chars.length - 1 && end - i < 6 && isTag(chars[end + 1]!)) end++
  if (chars[start - 1]?.codePointAt(0) !== WAVING_BLACK_FLAG) return false
  if (chars[end]!.codePointAt(0) !== CANCEL_TAG) return false
  const code = chars
    .slice(start, end)
    .map((c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000))
    .join('')
  return /^[a-z]{2}[a-z0-9]{1,3}$/.test(code)
}

function isTag(char: string): boolean {
  const code = char.codePointAt(0)!
  return code >= 0xe0000 && code <= 0xe007f
}
