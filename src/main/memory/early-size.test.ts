import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the last acceptance probe: a 4 MB `insert_text` was split into lines and
// joined again (about 100 ms a megabyte) before its size was refused. The insert is now one
// cut of the file; the refusal keeps its words, with the byte count the file would have had.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('a.md', 'alpha\nbeta\n')
})
afterEach(() => box.cleanup())

// 4 MB of short lines, the shape that cost most to split.
const BIG = 'a short line of memory\n'.repeat(Math.ceil(4_000_000 / 23))
const over = (bytes: number) =>
  `Error: Nothing was written to /memories/a.md: the file would be ${bytes.toLocaleString('en-US')} bytes, over the limit of 1,048,576 bytes per memory file. Split it into smaller files.`

describe('an input too large for a memory file', () => {
  it.each([
    [
      'insert_text',
      { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: BIG },
      11 + BIG.length,
    ],
    [
      'insert_text without its last newline',
      { command: 'insert', path: '/memories/a.md', insert_line: 2, insert_text: BIG.slice(0, -1) },
      11 + BIG.length,
    ],
    ['file_text', { command: 'create', path: '/memories/a.md', file_text: BIG }, BIG.length],
    [
      'new_str',
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: BIG },
      7 + BIG.length,
    ],
  ])('is refused in %s with the words and size it always had', async (_, input, bytes) => {
    const before = await snapshot(box.base)
    const result = await box.run(input)
    expect(result.errorCode).toBe('too-large')
    expect(text(result)).toBe(over(bytes))
    expect(await snapshot(box.base)).toBe(before)
  })

  it('answers a huge old_str that cannot occur as not found, quoting 200 characters', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: BIG,
      new_str: 'x',
    })
    expect(result.errorCode).toBe('no-match')
    expect(text(result)).toBe(
      `No replacement was performed, old_str \`${BIG.slice(0, 200)}…\` did not appear verbatim in /memories/a.md.`,
    )
  })
})
