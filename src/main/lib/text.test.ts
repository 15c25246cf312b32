import { describe, expect, it } from 'vitest'
import { decodeUtf8 } from './text'

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
