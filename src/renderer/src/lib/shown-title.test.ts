import { describe, expect, it } from 'vitest'
import { shownTitle } from './shown-title'

describe('shownTitle', () => {
  it('drops bidi overrides and isolates, so the title cannot reorder what is drawn', () => {
    expect(shownTitle('Invoice \u202Efdp.exe\u202C notes')).toBe('Invoice fdp.exe notes')
    expect(shownTitle('\u2067abc\u2069 \u200Fx')).toBe('abc x')
  })

  it('draws controls and line breaks as one space', () => {
    expect(shownTitle('Plan\nmy\tweek\u0007\u2028now\u0085')).toBe('Plan my week now')
    expect(shownTitle('a\r\n\r\nb')).toBe('a b')
  })

  it('calls a title of only invisible characters Untitled', () => {
    expect(shownTitle('\u200B\u200C\u200D\uFEFF')).toBe('Untitled')
    expect(shownTitle('\u202E \n\u2066')).toBe('Untitled')
    expect(shownTitle('')).toBe('Untitled')
  })

  it('keeps joined emoji, a keycap, a subdivision flag and right-to-left titles whole', () => {
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'
    const rainbow = '\u{1F3F3}\uFE0F\u200D\u{1F308}'
    const england = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}'
    expect(shownTitle(`${family} trip ${rainbow}`)).toBe(`${family} trip ${rainbow}`)
    expect(shownTitle(`1\uFE0F\u20E3 ${england} match`)).toBe(`1\uFE0F\u20E3 ${england} match`)
    expect(shownTitle('שלום עולם')).toBe('שלום עולם')
    expect(shownTitle('مرحبا 2024')).toBe('مرحبا 2024')
  })

  it('drops tag characters that spell hidden text', () => {
    expect(shownTitle('pay\u{E0069}\u{E0067}\u{E006E}me')).toBe('payme')
  })

  it('keeps the non-joiner and joiner that Persian, Sinhala and Indic words are spelled with', () => {
    for (const title of ['می\u200Cخواهم نامه\u200Cها', 'ශ්\u200Dරී ලංකා', 'क्\u200Dष']) {
      expect(shownTitle(title)).toBe(title)
    }
    expect(shownTitle('\u200C\u202Eمی\u200Cخواهم\u202C')).toBe('\u200Cمی\u200Cخواهم')
    expect(shownTitle(' \u200D \u200C\u200B ')).toBe('Untitled')
  })

  it('leaves an ordinary title as it is', () => {
    expect(shownTitle('Café plans — week 3')).toBe('Café plans — week 3')
  })
})
