/**
 * An independent acceptance check of issue 3's promises, on edges the other suites leave out:
 * names at the 255-byte limit of a Linux file name written in multibyte UTF-8 (under the
 * 128-character rule, over the bytes), decomposed (NFD) spellings of a path end to end, a
 * rename onto itself, the root named with its trailing slash, a folder holding links out,
 * line ends in `str_replace`, and the edge numbers of `insert_line` and `view_range`. Every refusal changes nothing in or
 * beside the root and names no host path.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'
import type { MemoryExecution } from './types'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(async () => {
  await box.cleanup()
})

/** Runs `input`, expects a refusal that changed nothing and leaks nothing; returns its text. */
async function refused(input: Record<string, unknown>): Promise<string> {
  const before = await snapshot(box.base)
  const result = await box.run(input)
  expect(result.isError, `${JSON.stringify(input)} -> ${text(result)}`).toBe(true)
  expectSafe(result)
  expect(await snapshot(box.base)).toBe(before)
  return text(result)
}

function expectSafe(result: MemoryExecution): void {
  const message = text(result)
  expect(message).not.toContain(box.base)
  expect(message).not.toMatch(/E[A-Z]{3,}:|ENAMETOOLONG|ENOENT|\n\s+at /)
  expect(result.mutation).toBeNull()
}

// '日' is 3 bytes of UTF-8: 84 of them and ".md" are 255 bytes (the most a Linux name holds),
// 85 are 258 bytes in 88 characters, well under the 128-character rule.
const AT_LIMIT = `${'日'.repeat(84)}.md`
const OVER_LIMIT = `${'日'.repeat(85)}.md`

describe('names at the 255-byte limit, in multibyte UTF-8', () => {
  it('works with a name of exactly 255 bytes through every command', async () => {
    expect(Buffer.byteLength(AT_LIMIT)).toBe(255)
    const at = `/memories/${AT_LIMIT}`
    expect(await box.run({ command: 'create', path: at, file_text: 'one\n' })).toMatchObject({
      isError: false,
      content: `File created successfully at: ${at}`,
    })
    expect(text(await box.run({ command: 'view', path: '/memories' }))).toContain(`\t${at}`)
    await box.run({ command: 'str_replace', path: at, old_str: 'one', new_str: 'two' })
    await box.run({ command: 'insert', path: at, insert_line: 1, insert_text: 'three' })
    expect(await box.read(AT_LIMIT)).toBe('two\nthree\n')
    const moved = `/memories/d/${AT_LIMIT}`
    expect((await box.run({ command: 'rename', old_path: at, new_path: moved })).isError).toBe(
      false,
    )
    expect((await box.run({ command: 'delete', path: moved })).isError).toBe(false)
    expect(await fs.readdir(box.root)).toEqual(['d'])
  })

  it('refuses a name over 255 bytes in every command, clearly, with nothing left behind', async () => {
    expect(OVER_LIMIT.length).toBeLessThan(128)
    await box.write('keep.md', 'keep\n')
    const over = `/memories/${OVER_LIMIT}`
    const inputs: ReadonlyArray<Record<string, unknown>> = [
      { command: 'create', path: over, file_text: 'x\n' },
      // The folders a create makes on its way are taken back too.
      { command: 'create', path: `/memories/new/deeper/${OVER_LIMIT}`, file_text: 'x\n' },
      { command: 'create', path: `/memories/new/${OVER_LIMIT}/x.md`, file_text: 'x\n' },
      { command: 'view', path: over },
      { command: 'str_replace', path: over, old_str: 'x', new_str: 'y' },
      { command: 'insert', path: over, insert_line: 0, insert_text: 'y' },
      { command: 'delete', path: over },
      { command: 'rename', old_path: over, new_path: '/memories/x.md' },
      { command: 'rename', old_path: '/memories/keep.md', new_path: over },
      { command: 'rename', old_path: '/memories/keep.md', new_path: `/memories/n/${OVER_LIMIT}` },
    ]
    for (const input of inputs) {
      expect(await refused(input)).toMatch(/^Error: .*too long/)
    }
    expect(await fs.readdir(box.root)).toEqual(['keep.md'])
  })
})

describe('a path spelled decomposed (NFD)', () => {
  const nfd = '/memories/cafe\u0301/re\u0301sume\u0301.md'
  const nfc = '/memories/caf\u00e9/r\u00e9sum\u00e9.md'

  it('names the one composed file in every command, and shows it composed', async () => {
    expect(await box.run({ command: 'create', path: nfd, file_text: 'a\n' })).toMatchObject({
      isError: false,
      content: `File created successfully at: ${nfc}`,
    })
    // One folder and one file on disk, both under their composed names.
    expect(await fs.readdir(box.root)).toEqual(['caf\u00e9'])
    expect(await box.read('caf\u00e9/r\u00e9sum\u00e9.md')).toBe('a\n')
    // The other spelling reaches the same file (an overwrite, not a twin).
    const again = await box.run({ command: 'create', path: nfc, file_text: 'b\n' })
    expect(text(again)).toContain('existed')
    expect(await fs.readdir(`${box.root}/caf\u00e9`)).toEqual(['r\u00e9sum\u00e9.md'])
    await box.run({ command: 'str_replace', path: nfd, old_str: 'b', new_str: 'c' })
    await box.run({ command: 'insert', path: nfd, insert_line: 0, insert_text: 'top' })
    expect(text(await box.run({ command: 'view', path: nfd }))).toBe(
      `Here's the content of ${nfc} with line numbers:\n     1\ttop\n     2\tc`,
    )
    // A rename from one spelling to the other is a rename onto itself.
    expect(await refused({ command: 'rename', old_path: nfd, new_path: nfc })).toBe(
      `Error: The destination ${nfc} already exists`,
    )
    expect(await box.run({ command: 'delete', path: '/memories/cafe\u0301' })).toMatchObject({
      isError: false,
      content: 'Successfully deleted /memories/caf\u00e9',
    })
    expect(await fs.readdir(box.root)).toEqual([])
  })
})

describe('targets that are their own destination, or the root', () => {
  it('refuses a rename onto itself, for a file and for a folder, changing nothing', async () => {
    await box.write('a.md', 'a\n')
    await box.write('d/x.md', 'x\n')
    for (const [from, to] of [
      ['/memories/a.md', '/memories/a.md'],
      ['/memories/d', '/memories/d'],
      ['/memories/d', '/memories/d/'],
      ['/memories/d/', '/memories/d'],
    ]) {
      expect(await refused({ command: 'rename', old_path: from, new_path: to })).toBe(
        'Error: The destination /memories/' + to.slice(10).replace(/\/$/, '') + ' already exists',
      )
    }
  })

  it('refuses the root named with its trailing slash, as it refuses /memories', async () => {
    await box.write('a.md', 'a\n')
    expect(await refused({ command: 'delete', path: '/memories/' })).toBe(
      'Error: Cannot delete the /memories directory itself',
    )
    expect(
      await refused({ command: 'rename', old_path: '/memories/', new_path: '/memories/x' }),
    ).toBe('Error: Cannot rename the /memories directory itself')
    expect(
      await refused({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/' }),
    ).toMatch(/^Error: /)
    for (const input of [
      { command: 'create', path: '/memories/', file_text: 'x' },
      { command: 'str_replace', path: '/memories/', old_str: 'a', new_str: 'b' },
      { command: 'insert', path: '/memories/', insert_line: 0, insert_text: 'x' },
    ]) {
      expect(await refused(input)).toMatch(/^Error: /)
    }
  })
})

describe('a folder holding links planted by someone else', () => {
  it('is viewed, renamed and deleted with its links, never touching what they point at', async () => {
    await box.write('d/x.md', 'x\n')
    await box.write('d/sub/y.md', 'y\n')
    await fs.symlink(box.sentinel, path.join(box.root, 'd/out-dir'))
    await fs.symlink(path.join(box.sentinel, 'secret.txt'), path.join(box.root, 'd/sub/out.md'))
    await fs.symlink(path.join(box.base, 'passwd'), path.join(box.root, 'd/passwd.md'))
    const outside = await snapshot(box.sentinel)
    const listing = text(await box.run({ command: 'view', path: '/memories/d' }))
    expect(listing).not.toMatch(/out|passwd/)
    for (const input of [
      { command: 'rename', old_path: '/memories/d', new_path: '/memories/e' },
      { command: 'delete', path: '/memories/e' },
    ]) {
      const result = await box.run(input)
      expect(result.isError, text(result)).toBe(false)
    }
    expect(await fs.readdir(box.root)).toEqual([])
    expect(await snapshot(box.sentinel)).toBe(outside)
    expect(await fs.readFile(path.join(box.base, 'passwd'), 'utf8')).toBe('root:x:0:0\n')
  })
})

describe('str_replace and line ends', () => {
  it('matches verbatim: an LF old_str does not match CRLF text, a CRLF one does and keeps the rest', async () => {
    await box.write('w.md', 'a\r\nb\r\nc\r\n')
    expect(
      await refused({
        command: 'str_replace',
        path: '/memories/w.md',
        old_str: 'a\nb',
        new_str: 'x',
      }),
    ).toBe(
      'No replacement was performed, old_str `a\nb` did not appear verbatim in /memories/w.md.',
    )
    const done = await box.run({
      command: 'str_replace',
      path: '/memories/w.md',
      old_str: 'b\r\nc',
      new_str: 'y',
    })
    expect(done.isError).toBe(false)
    expect(await box.read('w.md')).toBe('a\r\ny\r\n')
  })

  it('replaces text at the very end of a file with no final newline, and the whole file', async () => {
    await box.write('e.md', 'one\ntwo')
    await box.run({ command: 'str_replace', path: '/memories/e.md', old_str: 'two', new_str: '2' })
    expect(await box.read('e.md')).toBe('one\n2')
    await box.run({
      command: 'str_replace',
      path: '/memories/e.md',
      old_str: 'one\n2',
      new_str: '',
    })
    expect(await box.read('e.md')).toBe('')
    expect(text(await box.run({ command: 'view', path: '/memories/e.md' }))).toBe(
      "Here's the content of /memories/e.md with line numbers:\n[The file is empty.]",
    )
  })

  it('reads a null new_str as omitted: the match is deleted', async () => {
    await box.write('n.md', 'keep drop keep\n')
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/n.md',
      old_str: ' drop',
      new_str: null,
    })
    expect(result.isError).toBe(false)
    expect(await box.read('n.md')).toBe('keep keep\n')
  })
})

describe('the edge numbers of insert_line and view_range', () => {
  beforeEach(async () => {
    await box.write('f.md', 'a\nb\nc\n')
  })

  it('reads insert_line -0 (as JSON can carry it) as 0: the top', async () => {
    const input = JSON.parse(
      '{"command":"insert","path":"/memories/f.md","insert_line":-0,"insert_text":"top"}',
    ) as Record<string, unknown>
    expect(Object.is(input.insert_line, -0)).toBe(true)
    expect((await box.run(input)).isError).toBe(false)
    expect(await box.read('f.md')).toBe('top\na\nb\nc\n')
  })

  it('answers a huge but exact insert_line with the official range error', async () => {
    expect(
      await refused({
        command: 'insert',
        path: '/memories/f.md',
        insert_line: Number.MAX_SAFE_INTEGER,
        insert_text: 'x',
      }),
    ).toBe(
      `Error: Invalid \`insert_line\` parameter: ${Number.MAX_SAFE_INTEGER}. It should be within the range of lines of the file: [0, 3]`,
    )
  })

  it('refuses insert_line 1 in an empty file: its range is [0, 0]', async () => {
    await box.write('empty.md', '')
    expect(
      await refused({
        command: 'insert',
        path: '/memories/empty.md',
        insert_line: 1,
        insert_text: 'x',
      }),
    ).toBe(
      'Error: Invalid `insert_line` parameter: 1. It should be within the range of lines of the file: [0, 0]',
    )
  })

  it('shows the last line alone by [n, n] and by [n, -1], and refuses [n + 1, -1]', async () => {
    const lastOnly = `Here's the content of /memories/f.md with line numbers:\n     3\tc`
    for (const range of [
      [3, 3],
      [3, -1],
    ]) {
      expect(
        text(await box.run({ command: 'view', path: '/memories/f.md', view_range: range })),
      ).toBe(lastOnly)
    }
    expect(
      await refused({ command: 'view', path: '/memories/f.md', view_range: [4, -1] }),
    ).toContain('Invalid `view_range`')
    expect(
      await refused({ command: 'view', path: '/memories/f.md', view_range: [-1, -1] }),
    ).toContain('Invalid `view_range`')
  })
})
