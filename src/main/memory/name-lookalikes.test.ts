import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the #3 acceptance check: names that read as a path step (`．．` in
// fullwidth dots, `a／b` with a fullwidth slash) and the noncharacter U+FFFE were accepted;
// a NUL in `file_text` was stored raw, making a file git, the history and the Memory tab read
// as binary; and a path refused for its trailing space was quoted with the space unseen.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('keep.md', 'keep\n')
})
afterEach(() => box.cleanup())

async function refusedUnchanged(input: Record<string, unknown>): Promise<string> {
  const before = await snapshot(box.base)
  const result = await box.run(input)
  expect(result.isError).toBe(true)
  expect(await snapshot(box.base)).toEqual(before)
  return text(result)
}

describe('names that look like a path step', () => {
  it.each([
    ['\uFF0E\uFF0E', 'is written with dot look-alikes and reads as ".."'],
    ['\uFF0E', 'is written with dot look-alikes and reads as "."'],
    ['\u2025', 'is written with dot look-alikes and reads as ".."'],
    ['\uFF0E\uFF0E/escape.md', 'is written with dot look-alikes and reads as ".."'],
    ['a\uFF0Fb.md', 'looks like a slash'],
    ['a\u2215b.md', 'looks like a slash'],
    ['a\uFF3Cb.md', 'looks like a slash'],
  ])('refuses /memories/%s for create and as a rename destination', async (name, why) => {
    const created = await refusedUnchanged({
      command: 'create',
      path: `/memories/${name}`,
      file_text: 'x\n',
    })
    expect(created).toContain(`The path /memories/${name} is not allowed:`)
    expect(created).toContain(why)
    const renamed = await refusedUnchanged({
      command: 'rename',
      old_path: '/memories/keep.md',
      new_path: `/memories/${name}`,
    })
    expect(renamed).toContain(why)
  })

  it('keeps names with fullwidth dots among other characters', async () => {
    const result = await box.run({
      command: 'create',
      path: '/memories/\u30E1\u30E2\uFF0Emd',
      file_text: 'x\n',
    })
    expect(result.isError).toBe(false)
  })
})

describe('noncharacters in a path', () => {
  it.each(['FFFE', 'FFFF', 'FDD0', '1FFFE'])('refuses U+%s', async (code) => {
    const char = String.fromCodePoint(parseInt(code, 16))
    const message = await refusedUnchanged({
      command: 'create',
      path: `/memories/a${char}.md`,
      file_text: 'x\n',
    })
    expect(message).toBe(
      `Error: The path contains the Unicode noncharacter U+${code}, which memory paths may not contain.`,
    )
    expect(message).not.toContain(char)
  })
})

describe('a NUL character in written text', () => {
  it('refuses it in file_text, new_str and insert_text, naming where it is', async () => {
    expect(
      await refusedUnchanged({ command: 'create', path: '/memories/n.md', file_text: 'ab\0c' }),
    ).toBe(
      'Error: Invalid `file_text` parameter for `create`: it contains a NUL character (U+0000) at character 3, which would make the file read as binary, not text. Nothing was changed; send the text without it.',
    )
    expect(
      await refusedUnchanged({
        command: 'str_replace',
        path: '/memories/keep.md',
        old_str: 'keep',
        new_str: '😀\0',
      }),
    ).toContain(
      'Invalid `new_str` parameter for `str_replace`: it contains a NUL character (U+0000) at character 2,',
    )
    expect(
      await refusedUnchanged({
        command: 'insert',
        path: '/memories/keep.md',
        insert_line: 0,
        insert_text: '\0',
      }),
    ).toContain('Invalid `insert_text` parameter for `insert`: it contains a NUL character')
  })

  it('still lets old_str hold one, to mend a file written outside Cairn', async () => {
    await box.write('raw.md', 'a\0b\n')
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/raw.md',
      old_str: 'a\0b',
      new_str: 'ab',
    })
    expect(result.isError).toBe(false)
    expect(await box.read('raw.md')).toBe('ab\n')
  })
})

describe('a path quoted with spaces at its end', () => {
  it('shows them as escapes', async () => {
    expect(
      await refusedUnchanged({ command: 'create', path: '/memories/notes.md  ', file_text: 'x' }),
    ).toBe(
      'Error: The path /memories/notes.md\\u0020\\u0020 is not allowed: names may not end with a dot or a space.',
    )
    expect(await refusedUnchanged({ command: 'view', path: '/elsewhere/a.md\u00A0' })).toBe(
      'Error: The path /elsewhere/a.md\\u00A0 is outside the memory directory; paths must start with /memories/.',
    )
  })
})
