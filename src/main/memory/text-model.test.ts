import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatSize } from './format'
import {
  findOccurrences,
  insertLines,
  insertText,
  joinLines,
  lineOf,
  splitLines,
} from './text-model'

describe('the line model', () => {
  it('counts a final newline as the end of the last line', () => {
    expect(splitLines('')).toEqual({ lines: [], finalNewline: false })
    expect(splitLines('a')).toEqual({ lines: ['a'], finalNewline: false })
    expect(splitLines('a\nb\n')).toEqual({ lines: ['a', 'b'], finalNewline: true })
    expect(splitLines('\n')).toEqual({ lines: [''], finalNewline: true })
  })

  it('round-trips any text through split and join', () => {
    fc.assert(fc.property(fc.string(), (text) => joinLines(splitLines(text)) === text))
  })

  it('inserts after line N: the new lines start at N + 1 and nothing else moves', () => {
    const line = fc.string().filter((s) => !s.includes('\n'))
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1 }),
        fc.boolean(),
        fc.array(line, { minLength: 1 }),
        fc.nat(),
        (fileLines, finalNewline, added, at) => {
          const file = splitLines(joinLines({ lines: fileLines, finalNewline }))
          const n = at % (file.lines.length + 1)
          const result = insertLines(file, n, added.join('\n') + '\n')
          expect(result.lines).toEqual([
            ...file.lines.slice(0, n),
            ...added,
            ...file.lines.slice(n),
          ])
          // An empty file takes the inserted text's newline; any other keeps its own.
          expect(result.finalNewline).toBe(file.lines.length === 0 ? true : file.finalNewline)
        },
      ),
    )
  })

  it('adds the inserted lines as the text written reads back, an empty last line too', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '\n', 'é') })
    fc.assert(
      fc.property(text, text, fc.nat(), (file, added, at) => {
        const before = splitLines(file).lines
        const n = at % (before.length + 1)
        const lines = splitLines(added.endsWith('\n') ? added : `${added}\n`).lines
        const expected = [...before.slice(0, n), ...lines, ...before.slice(n)]
        expect(splitLines(insertText(file, n, added)).lines).toEqual(expected)
        expect(splitLines(joinLines(insertLines(splitLines(file), n, added))).lines).toEqual(
          expected,
        )
      }),
      { numRuns: 2000 },
    )
    // Before: "a" with "" inserted after line 1 became "a\n", still the one line `a`.
    expect(insertText('a', 1, '')).toBe('a\n\n')
    expect(insertText('a\r\nb', 2, '\r\n')).toBe('a\r\nb\r\n\r\n')
    expect(insertText('', 0, '')).toBe('\n')
  })

  it('inserts on text exactly as the line model does (insertText)', () => {
    // The line model splits at \n only; a lone \r is text. CRLF is the next test's.
    const text = fc
      .string({ unit: fc.constantFrom('a', 'b', '\n', '\r', 'é') })
      .filter((s) => !s.includes('\r\n'))
    fc.assert(
      fc.property(text, text, fc.nat(), (file, added, at) => {
        const lines = splitLines(file)
        const n = at % (lines.lines.length + 1)
        expect(insertText(file, n, added)).toBe(joinLines(insertLines(lines, n, added)))
      }),
      { numRuns: 2000 },
    )
    expect(insertText('a\nb', 2, 'c\n')).toBe('a\nb\nc')
    expect(insertText('a\nb\n', 2, 'c')).toBe('a\nb\nc\n')
    expect(insertText('', 0, 'c\n')).toBe('c\n')
  })

  it("writes the inserted lines in the file's own line endings (CRLF or LF)", () => {
    const lf = fc.string({ unit: fc.constantFrom('a', 'b', '\n', 'é') })
    const crlf = (s: string) => s.replaceAll('\n', '\r\n')
    fc.assert(
      fc.property(lf, lf, fc.nat(), fc.boolean(), (file, added, at, addedInCrlf) => {
        const n = at % (splitLines(file).lines.length + 1)
        const sent = addedInCrlf ? crlf(added) : added
        // A CRLF file gets CRLF lines, whatever the text's style; an LF file gets LF lines.
        if (file.includes('\n')) {
          expect(insertText(crlf(file), n, sent)).toBe(crlf(insertText(file, n, added)))
          expect(insertText(file, n, sent)).toBe(insertText(file, n, added))
        } else if (added.includes('\n')) {
          // A file without a line ending takes the text's.
          const expected = insertText(file, n, added)
          expect(insertText(file, n, sent)).toBe(addedInCrlf ? crlf(expected) : expected)
        }
      }),
      { numRuns: 2000 },
    )
    // The acceptance check's case: no stray CR after the last line.
    expect(insertText('a\nb', 2, 'c\r\n')).toBe('a\nb\nc')
    expect(insertText('a\r\nb', 2, 'c')).toBe('a\r\nb\r\nc')
    expect(insertText('a\r\nb\r\n', 1, 'x\ny\n')).toBe('a\r\nx\r\ny\r\nb\r\n')
    expect(insertText('a', 0, 'x\r\ny')).toBe('x\r\ny\r\na')
  })

  it('finds overlapping occurrences and the line each starts on', () => {
    expect(findOccurrences('aaa', 'aa')).toEqual([0, 1])
    expect(
      findOccurrences('x cat cat\ncat', 'cat').map((at) => lineOf('x cat cat\ncat', at)),
    ).toEqual([1, 1, 2])
  })
})

describe('formatSize', () => {
  it.each([
    [0, '0B'],
    [512, '512B'],
    [1023, '1023B'],
    [1024, '1.0K'],
    [1536, '1.5K'],
    [4096, '4.0K'],
    [10 * 1024 + 512, '10.5K'],
    [3 * 1024 * 1024, '3.0M'],
  ])('shows %i bytes as %s', (bytes, shown) => {
    expect(formatSize(bytes)).toBe(shown)
  })
})
