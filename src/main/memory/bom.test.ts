import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_VIEW_CHARS, wholeViewSize } from './format'
import { makeSandbox, text, type Sandbox } from './test-support'

// hunt13-tool D5: a file that starts with a UTF-8 byte order mark (as Notepad writes it). The
// mark is not part of line 1 for view and the edits, and stays at the start of the file.
const BOM = '\uFEFF'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('b.md', Buffer.from(`${BOM}hello\nworld\n`))
})
afterEach(() => box.cleanup())

const bytes = () => fs.readFile(path.join(box.root, 'b.md'), 'utf8')

describe('a file with a byte order mark (hunt13-tool D5)', () => {
  it('view shows line 1 without the mark, byte for byte as the same file without it', async () => {
    const viewed = text(await box.run({ command: 'view', path: '/memories/b.md' }))
    expect(viewed).not.toContain(BOM)
    await box.write('plain.md', 'hello\nworld\n')
    const plain = text(await box.run({ command: 'view', path: '/memories/plain.md' }))
    expect(viewed).toBe(plain.replace('/memories/plain.md', '/memories/b.md'))
  })

  it("the meter's word on one view agrees with view at the cap, the mark not counted", async () => {
    // The hygiene meter reads the file with its mark; view shows it without. A file whose view
    // is exactly 16,000 characters is whole, and one more character is cut.
    const header = "Here's the content of /memories/b.md with line numbers:"
    for (const extra of [0, 1]) {
      const body = 'x'.repeat(MAX_VIEW_CHARS - header.length - '\n     1\t'.length + extra)
      await box.write('b.md', Buffer.from(`${BOM}${body}\n`))
      const viewed = text(await box.run({ command: 'view', path: '/memories/b.md' }))
      const whole = viewed === `${header}\n     1\t${body}`
      expect(whole).toBe(extra === 0)
      const measured = wholeViewSize('/memories/b.md', `${BOM}${body}\n`)
      expect(measured).toEqual({ chars: MAX_VIEW_CHARS + extra, fits: whole })
    }
  })

  it('insert at line 0 goes after the mark, which stays first', async () => {
    const result = await box.run({
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 0,
      insert_text: 'top',
    })
    expect(result.isError, text(result)).toBe(false)
    expect(await bytes()).toBe(`${BOM}top\nhello\nworld\n`)
  })

  it('str_replace matches across line 1 as Claude reads it, keeping the mark', async () => {
    const first = await box.run({
      command: 'str_replace',
      path: '/memories/b.md',
      old_str: 'hello\nworld',
      new_str: 'hi\nthere',
    })
    expect(first.isError, text(first)).toBe(false)
    expect(text(first)).toContain('     1\thi\n     2\tthere')
    expect(text(first)).not.toContain(BOM)
    expect(await bytes()).toBe(`${BOM}hi\nthere\n`)
    // Replacing the whole text leaves the mark alone.
    const all = await box.run({
      command: 'str_replace',
      path: '/memories/b.md',
      old_str: 'hi\nthere\n',
      new_str: '',
    })
    expect(all.isError, text(all)).toBe(false)
    expect(await bytes()).toBe(BOM)
  })

  it('counts insert_line without the mark', async () => {
    const result = await box.run({
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 3,
      insert_text: 'x',
    })
    expect(text(result)).toContain('[0, 2]')
  })
})
