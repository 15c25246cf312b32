/** A letter of a script written right to left (Hebrew, Arabic, Syriac, Thaana, N'Ko…). */
const RTL_LETTER =
  /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}]/u
const LETTER = /\p{L}/u

/**
 * The direction a block reads in, from its first letter, as `dir="auto"` decides for a
 * paragraph: `rtl` for a Hebrew or Arabic one, `ltr` for any other, undefined with no letter.
 * For what holds blocks that each have their own `dir` (a list, a table, a quote), which
 * `dir="auto"` cannot decide: it skips what its children's own `dir` covers, and finds nothing.
 */
export function directionOf(text: string): 'rtl' | 'ltr' | undefined {
  for (const char of text) {
    if (LETTER.test(char)) return RTL_LETTER.test(char) ? 'rtl' : 'ltr'
  }
  return undefined
}
