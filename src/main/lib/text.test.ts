import { describe, expect, it } from 'vitest'
import { cutText, cutWithEllipsis, decodeUtf8, fitName, foldedName, wellFormed } from './text'

describe('decodeUtf8', () => {
  it('keeps a leading byte order mark, so text written back from it keeps the mark', () => {
    const bytes = Buffer.from('\uFEFFhello\n', 'utf8')
    expect(decodeUtf8(bytes)).toBe('\uFEFFhello\n')
    expect(Buffer.from(decodeUtf8(bytes) as string, 'utf8')).toEqual(bytes)
  })

  it('takes invalid UTF-8 and a NUL byte for binary content', () => {
    expect(decodeUtf8(Buffer.from([0xc3, 0x28]))).toBeNull()
    expect(decodeUtf8(Buffer.from('a\0b'))).toBeNull()
    expect(decodeUtf8(Buffer.from('plain'))).toBe('plain')
  })
})

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe('cutText', () => {
  it('never cuts an emoji in half: it is kept whole or dropped whole', () => {
    const text = 'x'.repeat(39) + '😀' + 'tail'
    expect(cutText(text, 40)).toBe('x'.repeat(39))
    expect(cutText(text, 41)).toBe('x'.repeat(39) + '😀')
    for (let max = 0; max <= text.length; max++) expect(cutText(text, max)).not.toMatch(LONE)
  })

  it('keeps a short grapheme cluster (skin tone, ZWJ family, accents) together', () => {
    const family = '👨‍👩‍👧'
    const text = `ab${family}cd`
    for (let max = 3; max < 2 + family.length; max++) expect(cutText(text, max)).toBe('ab')
    expect(cutText(text, 2 + family.length)).toBe(`ab${family}`)
    expect(cutText('ab👍🏽', 4)).toBe('ab')
    expect(cutText('cafe\u0301s', 4)).toBe('caf')
  })

  it('falls back to a code point boundary inside a very long cluster', () => {
    const zalgo = 'a' + '\u0301'.repeat(100)
    const cut = cutText(zalgo + '😀'.repeat(10), 60)
    expect(cut).toBe(zalgo.slice(0, 60))
  })

  it('leaves text that fits alone, and cuts at most max units', () => {
    expect(cutText('short', 10)).toBe('short')
    const long = '😀'.repeat(1000)
    expect(cutText(long, 1001).length).toBe(1000)
    expect(cutWithEllipsis(long, 1001)).toBe('😀'.repeat(500) + '…')
    expect(cutWithEllipsis('fits', 4)).toBe('fits')
  })
})

describe('wellFormed', () => {
  it('replaces lone surrogates with U+FFFD and keeps pairs', () => {
    expect(wellFormed('a\uD83D')).toBe('a\uFFFD')
    expect(wellFormed('\uDE00b')).toBe('\uFFFDb')
    expect(wellFormed('😀\uDE00😀')).toBe('😀\uFFFD😀')
    expect(wellFormed('ok 😀')).toBe('ok 😀')
  })
})

describe('fitName', () => {
  it('keeps a short name whole and cuts a long stem, by whole characters, to fit 255 bytes', () => {
    expect(fitName('notes', ' (not in history).md')).toBe('notes (not in history).md')
    const name = fitName('記'.repeat(80), ' (not in history)')
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255)
    expect(name).toBe(`${'記'.repeat(79)} (not in history)`)
    const emoji = fitName('👍🏽'.repeat(40), ' (not in history 2).md')
    expect(Buffer.byteLength(emoji)).toBeLessThanOrEqual(255)
    expect(emoji.startsWith('👍🏽'.repeat(29))).toBe(true)
    expect(emoji.slice(0, -' (not in history 2).md'.length).length % 4).toBe(0)
  })
})

describe('foldedName', () => {
  it('folds case and Unicode form alike, as a case-blind disk does, and nothing else', () => {
    expect(foldedName('Trip (Not In History).md')).toBe('trip (not in history).md')
    expect(foldedName('Caf\u0065\u0301/N.md')).toBe(foldedName('caf\u00e9/n.md'))
    expect(foldedName('notes.md')).not.toBe(foldedName('notes .md'))
  })
})
