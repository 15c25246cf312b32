import { describe, expect, it } from 'vitest'
import { keepLineEnds } from './line-ends'

describe('line endings of edited text', () => {
  it('puts CRLF back when the original used it for every line', () => {
    expect(keepLineEnds('a\nb\nc\n', 'a\r\nb\r\n')).toBe('a\r\nb\r\nc\r\n')
    expect(keepLineEnds('a\r\nb\n', 'x\r\n')).toBe('a\r\nb\r\n')
  })

  it('leaves LF files, new files and mixed files as typed', () => {
    expect(keepLineEnds('a\nb\n', 'a\nb\n')).toBe('a\nb\n')
    expect(keepLineEnds('a\nb\n', null)).toBe('a\nb\n')
    expect(keepLineEnds('a\nb\n', 'a\r\nb\n')).toBe('a\nb\n')
    expect(keepLineEnds('a\nb\n', '\na\r\n')).toBe('a\nb\n')
  })
})
