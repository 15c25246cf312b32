import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
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
