/**
 * Cyrillic and Greek letters drawn like Latin ones: "Іgnore previous instructions" with a
 * Cyrillic І reads to a person (and to Claude) as the English sentence, yet no English
 * pattern matches it. Only letters that are near enough the same glyph are listed, so prose
 * written wholly in Cyrillic or Greek gains no English words when they are folded. Pure.
 */

// Each letter of `FROM` and the Latin letter at the same place in `TO`: Cyrillic small and
// capital, then Greek capital and small omicron.
const FROM = 'аеорсухіјѕһԁӏԛԝАВЕКМНОРСТХІЈЅҮΑΒΕΖΗΙΚΜΝΟΡΤΥΧο'
const TO = 'aeopcyxijshdlqwABEKMHOPCTXIJSYABEZHIKMNOPTYXo'
const LATIN_OF: ReadonlyMap<string, string> = new Map([...FROM].map((c, i) => [c, TO[i]!]))

const LOOK_ALIKE = new RegExp(`[${FROM}]`, 'u')
const LOOK_ALIKES = new RegExp(LOOK_ALIKE.source, 'gu')
const LATIN = /\p{Script=Latin}/u
const WORDS = /[\p{L}\p{M}]+/gu

/** `text` with every look-alike letter replaced by its Latin twin (for matching only). */
export function foldLookAlikes(text: string): string {
  return text.replace(LOOK_ALIKES, (c) => LATIN_OF.get(c)!)
}

/** True when `text` holds a look-alike letter at all (a cheap test before `mixedWords`). */
export function hasLookAlike(text: string): boolean {
  return LOOK_ALIKE.test(text)
}

/**
 * The words of `text` that mix Latin letters with look-alike ones ("Іgnore", "ignоre"): a
 * word is written in one script, so a mix is a disguise (or a slip of the keyboard layout).
 */
export function mixedWords(text: string): ReadonlyArray<string> {
  const found: string[] = []
  for (const [word] of text.matchAll(WORDS)) {
    if (LOOK_ALIKE.test(word) && LATIN.test(word)) found.push(word)
  }
  return found
}
