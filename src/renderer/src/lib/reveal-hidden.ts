/**
 * Makes invisible characters visible in a diff: a zero-width space or a bidi override shows as
 * a marked `U+200B`, and a run of tag characters (which can spell a whole hidden sentence)
 * shows the text it spells. Joiners inside emoji stay as they are. Pure.
 */

export type Piece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'hidden'; readonly label: string; readonly raw: string }

// Format characters (zero-width, bidi controls, tags), plus the few invisible ones outside Cf,
// and every default-ignorable character (drawn as nothing: the Hangul fillers, …) but the
// variation selectors that pick an emoji's or a Mongolian letter's form.
const FORMAT = /\p{Cf}/u
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u

function isHidden(char: string, code: number): boolean {
  return (
    FORMAT.test(char) ||
    (IGNORABLE.test(char) &&
      !(code >= 0xfe00 && code <= 0xfe0f) &&
      !(code >= 0x180b && code <= 0x180f)) ||
    code === 0x00ad ||
    code === 0x034f ||
    code === 0x180e ||
    (code >= 0xe0100 && code <= 0xe01ef)
  )
}
const ZWJ = 0x200d
const TAG_FIRST = 0xe0000
const TAG_LAST = 0xe007f

// Every character `isHidden` takes is a format or default-ignorable one: a text with none is
// one plain piece, found by one regex test instead of a walk over its characters (the Memory
// tab's view draws every line of a file of up to 4 MiB through this).
const MAY_HIDE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u

/** True when `text` holds a character `revealHidden` marks. */
export function holdsHidden(text: string): boolean {
  return MAY_HIDE.test(text) && revealHidden(text).some((piece) => piece.kind === 'hidden')
}

/** The pieces of `text`, with each invisible character (or run of tags) as its own piece. */
export function revealHidden(text: string): ReadonlyArray<Piece> {
  if (!MAY_HIDE.test(text)) return text === '' ? [] : [{ kind: 'text', text }]
  const chars = [...text]
  const pieces: Piece[] = []
  let plain = ''
  const flush = () => {
    if (plain) pieces.push({ kind: 'text', text: plain })
    plain = ''
  }
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!
    const code = char.codePointAt(0)!
    if (
      !isHidden(char, code) ||
      (code === ZWJ && /\p{Extended_Pictographic}/u.test(chars[i + 1] ?? ''))
    ) {
      plain += char
      continue
    }
    flush()
    if (code >= TAG_FIRST && code <= TAG_LAST) {
      let spelled = ''
      let raw = ''
      while (i < chars.length && isTag(chars[i]!)) {
        const tag = chars[i]!.codePointAt(0)! - TAG_FIRST
        spelled += tag >= 0x20 && tag < 0x7f ? String.fromCharCode(tag) : ''
        raw += chars[i]!
        i++
      }
      i--
      pieces.push({ kind: 'hidden', label: `hidden text “${spelled}”`, raw })
      continue
    }
    pieces.push({
      kind: 'hidden',
      label: `U+${code.toString(16).toUpperCase().padStart(4, '0')}`,
      raw: char,
    })
  }
  flush()
  return pieces
}

function isTag(char: string): boolean {
  const code = char.codePointAt(0)!
  return code >= TAG_FIRST && code <= TAG_LAST
}
