import { revealHidden } from './reveal-hidden'

// A subdivision flag (🏴 and tag letters, ended by the cancel tag): its tags draw the flag.
const TAG_FLAG = /(\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F})/u
// Line breaks, tabs and other controls, and line or paragraph separators: one space each.
const BREAKS = /[\p{Cc}\p{Zl}\p{Zp}]/gu
// The zero-width non-joiner and joiner, kept as they are: Persian, Sinhala and the Indic scripts
// spell words with them, and they cannot reorder or hide text as a bidi override can.
const JOINERS = /([\u200C\u200D])/u
// What draws nothing on its own: a title of only these is "Untitled".
const BLANK = /[\s\u200C\u200D]/gu

/**
 * A conversation's title as drawn: controls and line breaks as spaces, and every character that
 * draws as nothing (a zero-width space, a bidi override or isolate, a byte-order mark, stray tag
 * characters) dropped, so a title cannot reorder or hide the text around it; joined emoji (a ZWJ
 * sequence, a subdivision flag), the joiner and non-joiner (U+200D, U+200C) that Persian and Indic
 * words need, and right-to-left letters stay. A title with nothing left to see
 * is "Untitled". Display only: the stored title is unchanged. Pure.
 */
export function shownTitle(title: string): string {
  const shown = title
    .split(TAG_FLAG)
    .map((part, i) =>
      // The split keeps each flag at an odd place, as it is.
      i % 2 === 1
        ? part
        : part
            .replace(BREAKS, ' ')
            .split(JOINERS)
            .map((piece, j) =>
              // Again each joiner is at an odd place, kept; the text between loses what hides.
              j % 2 === 1
                ? piece
                : revealHidden(piece)
                    .map((bit) => (bit.kind === 'text' ? bit.text : ''))
                    .join(''),
            )
            .join(''),
    )
    .join('')
    .replace(/\s+/gu, ' ')
    .trim()
  return shown.replace(BLANK, '') === '' ? 'Untitled' : shown
}
