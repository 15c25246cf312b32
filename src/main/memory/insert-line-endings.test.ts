import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the #3 acceptance check: `insert` of "c\r\n" at the end of a file without
// a final newline dropped only the \n and left "c\r", a stray carriage return ending the
// file; and any text went in with \n line endings, a CRLF file (as Windows editors write them)
// then mixing the two. The inserted lines now take the file's own line endings.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox({ limits: { maxFileBytes: 40 } })
})
afterEach(() => box.cleanup())

const insert = (path: string, insertLine: number, insertText: string) =>
  box.run({ command: 'insert', path, insert_line: insertLine, insert_text: insertText })

describe('insert and line endings', () => {
  it('leaves no stray CR when CRLF text ends an LF file without a final newline', async () => {
    await box.write('lf.md', 'a\nb')
    const result = await insert('/memories/lf.md', 2, 'c\r\n')
    expect(result.isError).toBe(false)
    expect(await box.read('lf.md')).toBe('a\nb\nc')
  })

  it('writes the inserted lines of any style in a CRLF file as CRLF', async () => {
    await box.write('crlf.md', 'a\r\nb\r\n')
    expect((await insert('/memories/crlf.md', 1, 'x\ny\n')).isError).toBe(false)
    expect(await box.read('crlf.md')).toBe('a\r\nx\r\ny\r\nb\r\n')
    expect((await insert('/memories/crlf.md', 4, 'z')).isError).toBe(false)
    expect(await box.read('crlf.md')).toBe('a\r\nx\r\ny\r\nb\r\nz\r\n')
    const view = await box.run({ command: 'view', path: '/memories/crlf.md' })
    expect(text(view).split('\n')).toHaveLength(6)
  })

  it('counts the size of the file as it would be written, line endings included', async () => {
    // 9 bytes; the 14 bytes of text become 17 in CRLF, and a CRLF after: 28 bytes, under 40.
    await box.write('crlf.md', 'a\r\nb\r\nc\r\n')
    expect((await insert('/memories/crlf.md', 3, 'ddd\neee\nfff\ngg')).isError).toBe(false)
    expect(await box.read('crlf.md')).toBe('a\r\nb\r\nc\r\nddd\r\neee\r\nfff\r\ngg\r\n')
    // 28 bytes, 8 more and a CRLF: 38 bytes. Then 1 more and a CRLF would be 41: refused whole.
    expect((await insert('/memories/crlf.md', 0, 'hhhhhhhh')).isError).toBe(false)
    const before = await snapshot(box.base)
    const refused = await insert('/memories/crlf.md', 0, 'i')
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain('the file would be 41 bytes, over the limit of 40 bytes')
    expect(await snapshot(box.base)).toEqual(before)
  })
})
