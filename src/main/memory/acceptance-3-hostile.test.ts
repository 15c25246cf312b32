/**
 * Issue #3's promises checked the hostile way, through the public entry and, for the exact
 * tool_result text and `is_error`, through the SDK's `betaMemoryTool` as Claude receives them:
 * the 16,000-character cap at its exact boundary, sizes at every unit boundary, names at the
 * 255 bytes a file system holds, and edge values of every numeric field. Each hostile call
 * leaves the sentinel beside the root as it was and no temp file behind.
 */

import fs from 'node:fs/promises'
import path from 'node:path'
import {
  runRunnableTool,
  type BetaRunnableTool,
  type BetaToolRunContext,
  type RunnableToolOutcome,
} from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryTool, createRunnableMemoryTool, MAX_VIEW_CHARS } from './index'
import { makeSandbox, snapshot, type Sandbox } from './test-support'
import { TINY_JPEG, TINY_PNG } from '../../../test/fixtures/images'

let box: Sandbox
let runnable: BetaRunnableTool
let sentinelBefore: string

beforeEach(async () => {
  box = await makeSandbox()
  const tool = createMemoryTool({ root: box.root })
  runnable = createRunnableMemoryTool((input) => tool.execute(input)) as BetaRunnableTool
  sentinelBefore = await snapshot(box.sentinel)
})

afterEach(async () => {
  // Nothing beside the root changed, and no temp file (hidden) survived inside it.
  expect(await snapshot(box.sentinel)).toBe(sentinelBefore)
  expect(await fs.readFile(path.join(box.base, 'passwd'), 'utf8')).toBe('root:x:0:0\n')
  const names = await fs.readdir(box.root, { recursive: true })
  expect(names.filter((n) => path.basename(n).startsWith('.'))).toEqual([])
  await box.cleanup()
})

let ids = 0
/** Runs one command as the SDK's tool runner does: the tool_result's content and is_error. */
function claude(input: Record<string, unknown>): Promise<RunnableToolOutcome> {
  const toolUse = {
    type: 'tool_use',
    id: `toolu_probe_${ids++}`,
    name: 'memory',
    input,
  } as BetaToolRunContext['toolUse']
  return runRunnableTool(runnable, input, { toolUse, toolUseBlock: toolUse })
}

const FILE_HEADER = "Here's the content of /memories/a.md with line numbers:"
const LISTING_HEADER =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"

// The reply `view` gives for `lines` shown whole, numbered from 1.
const wholeView = (lines: ReadonlyArray<string>): string =>
  [FILE_HEADER, ...lines.map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)].join('\n')

// 146 lines of 99 characters (a reply line of 107 with its number and newline) and a last one
// as long as makes the whole view 16,000 characters less `short`.
function linesForView(short: number): string[] {
  const lines = Array.from({ length: 146 }, (_, i) => `${i}`.padEnd(99, 'x'))
  const room = MAX_VIEW_CHARS - short - wholeView(lines).length - '\n   147\t'.length
  return [...lines, 'y'.repeat(room)]
}

describe('the 16,000-character view cap at its exact boundary', () => {
  it('shows a file whose view is exactly 16,000 characters whole, with no note', async () => {
    for (const short of [0, 1, 200]) {
      const lines = linesForView(short)
      await box.write('a.md', `${lines.join('\n')}\n`)
      const expected = wholeView(lines)
      expect(expected.length).toBe(MAX_VIEW_CHARS - short)
      // Before: any view over 15,645 characters (16,000 less room for a note) was cut here.
      expect(await claude({ command: 'view', path: '/memories/a.md' })).toEqual({
        content: expected,
        isError: false,
      })
    }
  })

  it('cuts one character over at a line boundary, and the continuation goes on exactly there', async () => {
    for (const ending of ['\n', '\r\n']) {
      const lines = linesForView(-1)
      await box.write('a.md', lines.join(ending) + ending)
      const first = await claude({ command: 'view', path: '/memories/a.md' })
      expect(first.isError).toBe(false)
      const reply = String(first.content)
      expect(reply.length).toBeLessThanOrEqual(MAX_VIEW_CHARS)
      const next = /To continue, view with view_range: \[(\d+), -1\]\]$/.exec(reply)
      expect(next).not.toBeNull()
      const shown = reply.split('\n').slice(1, -1)
      expect(shown.length).toBe(Number(next![1]) - 1)
      const rest = await claude({
        command: 'view',
        path: '/memories/a.md',
        view_range: [Number(next![1]), -1],
      })
      expect(rest.isError).toBe(false)
      const more = String(rest.content).split('\n').slice(1)
      // A CRLF file's lines keep their \r in the view, as the reference shows them.
      const cr = ending === '\r\n' ? '\r' : ''
      expect([...shown, ...more]).toEqual(
        lines.map((line, i) => `${String(i + 1).padStart(6)}\t${line}${cr}`),
      )
    }
  })

  it('shows a bounded range that fits whole, and names [next, end] when it does not', async () => {
    // Lines 1 to 147 make a view of 16,001 characters; two short lines follow.
    const lines = [...linesForView(-1), 'after 1', 'after 2']
    await box.write('a.md', `${lines.join('\n')}\n`)
    const numbered = (from: number, to: number) =>
      lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(6)}\t${l}`)
    expect(await claude({ command: 'view', path: '/memories/a.md', view_range: [2, 147] })).toEqual(
      { content: [FILE_HEADER, ...numbered(2, 147)].join('\n'), isError: false },
    )
    const cut = String(
      (await claude({ command: 'view', path: '/memories/a.md', view_range: [1, 147] })).content,
    )
    expect(cut.length).toBeLessThanOrEqual(MAX_VIEW_CHARS)
    const next = /To continue, view with view_range: \[(\d+), 147\]\]$/.exec(cut)
    expect(next).not.toBeNull()
    const from = Number(next![1])
    expect(cut.split('\n').slice(1, -1)).toEqual(numbered(1, from - 1))
    expect(
      await claude({ command: 'view', path: '/memories/a.md', view_range: [from, 147] }),
    ).toEqual({ content: [FILE_HEADER, ...numbered(from, 147)].join('\n'), isError: false })
  })

  it('lists a folder whose listing is exactly 16,000 characters whole', async () => {
    // Empty files (`0B`) with names padded so the listing's length is exact.
    for (let i = 0; i < 255; i++)
      await box.write(`f${String(i).padStart(3, '0')}-${'n'.repeat(40)}.md`, '')
    const listing = async (): Promise<{ reply: string; expected: string }> => {
      const reply = String((await claude({ command: 'view', path: '/memories' })).content)
      const names = (await fs.readdir(box.root)).sort()
      const ownLine = reply.split('\n')[1]!
      expect(ownLine).toMatch(/^\d+(\.\d)?[BKM]\t\/memories$/)
      const expected = [LISTING_HEADER, ownLine, ...names.map((n) => `0B\t/memories/${n}`)].join(
        '\n',
      )
      return { reply, expected }
    }
    const last = path.join(box.root, `f254-${'n'.repeat(40)}.md`)
    const { expected } = await listing()
    const fitted = path.join(
      box.root,
      `f254-${'n'.repeat(40 + MAX_VIEW_CHARS - expected.length)}.md`,
    )
    await fs.rename(last, fitted)
    const exact = await listing()
    expect(exact.expected.length).toBe(MAX_VIEW_CHARS)
    // Before: a listing over about 15,560 characters was paged (room kept for a note).
    expect(exact.reply).toBe(exact.expected)
    await fs.rename(fitted, fitted.replace(/\.md$/, 'n.md'))
    const over = await listing()
    expect(over.expected.length).toBe(MAX_VIEW_CHARS + 1)
    expect(over.reply.length).toBeLessThanOrEqual(MAX_VIEW_CHARS)
    const next = /view \/memories with view_range: \[(\d+), -1\]\]$/.exec(over.reply)
    expect(next).not.toBeNull()
    const page2 = String(
      (await claude({ command: 'view', path: '/memories', view_range: [Number(next![1]), -1] }))
        .content,
    )
    const entries = (reply: string) => reply.split('\n').filter((l) => l.startsWith('0B\t'))
    expect([...entries(over.reply), ...entries(page2)]).toEqual(over.expected.split('\n').slice(2))
  })
})

describe('human sizes in a listing at every unit boundary', () => {
  it.each([
    [0, '0B'],
    [1023, '1023B'],
    [1024, '1.0K'],
    [1536, '1.5K'],
    [2000, '2.0K'],
    [3000, '2.9K'],
    [4096, '4.0K'],
    [1_048_524, '1023.9K'],
    // Before: 1024.0K, a size no listing writes (it is 1.0M).
    [1_048_525, '1.0M'],
    [1_048_575, '1.0M'],
    [1_048_576, '1.0M'],
  ])('lists a file of %i bytes as %s', async (bytes, shown) => {
    await box.write('s.txt', Buffer.alloc(bytes, 'a'))
    const { content, isError } = await claude({ command: 'view', path: '/memories' })
    expect(isError).toBe(false)
    expect(String(content).split('\n').slice(2)).toEqual([`${shown}\t/memories/s.txt`])
  })
})

describe('names at the 255 bytes a file system holds', () => {
  const fits = '中'.repeat(85) // 255 bytes in UTF-8, 85 characters
  const over = '中'.repeat(86) // 258 bytes: under the 128-character rule, over the disk's
  const refusal = (p: string) =>
    `Error: The path ${p} is not allowed: a name is too long: 258 bytes in UTF-8, over the 255 bytes a file system holds in one name.`

  it('creates, views and renames a name of exactly 255 bytes', async () => {
    expect(
      await claude({ command: 'create', path: `/memories/${fits}`, file_text: 'a\n' }),
    ).toEqual({ content: `File created successfully at: /memories/${fits}`, isError: false })
    expect(
      (
        await claude({
          command: 'rename',
          old_path: `/memories/${fits}`,
          new_path: `/memories/d/${fits}`,
        })
      ).isError,
    ).toBe(false)
    expect(await box.read(`d/${fits}`)).toBe('a\n')
  })

  it('refuses a name one character over in every command and field, changing nothing', async () => {
    await box.write('a.md', 'a\n')
    await box.write('d/x.md', 'x\n')
    const before = await snapshot(box.root)
    const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
      [{ command: 'view', path: `/memories/${over}` }, `/memories/${over}`],
      [{ command: 'create', path: `/memories/${over}`, file_text: 'x' }, `/memories/${over}`],
      [
        { command: 'create', path: `/memories/${over}/a.md`, file_text: 'x' },
        `/memories/${over}/a.md`,
      ],
      [
        { command: 'str_replace', path: `/memories/${over}`, old_str: 'a', new_str: 'b' },
        `/memories/${over}`,
      ],
      [
        { command: 'insert', path: `/memories/${over}`, insert_line: 0, insert_text: 'b' },
        `/memories/${over}`,
      ],
      [{ command: 'delete', path: `/memories/${over}` }, `/memories/${over}`],
      [
        { command: 'rename', old_path: `/memories/${over}`, new_path: '/memories/b.md' },
        `/memories/${over}`,
      ],
      [
        { command: 'rename', old_path: '/memories/a.md', new_path: `/memories/${over}` },
        `/memories/${over}`,
      ],
      [
        { command: 'rename', old_path: '/memories/d', new_path: `/memories/e/${over}` },
        `/memories/e/${over}`,
      ],
    ]
    for (const [input, shown] of cases) {
      // Before: `The memory command failed because the path is too long for this system.`
      const result = await claude(input)
      expect(result.isError).toBe(true)
      expect(result.content).toBe(refusal(shown))
    }
    expect(await snapshot(box.root)).toBe(before)
  })
})

describe('numeric fields at their edges', () => {
  beforeEach(() => box.write('a.md', 'one\ntwo\nthree'))

  it.each([
    [
      [0, 1],
      'Error: Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of lines of the file: [1, 3]',
    ],
    [
      [-1, 2],
      'Error: Invalid `view_range`: [-1, 2]. Its first element `-1` should be within the range of lines of the file: [1, 3]',
    ],
    [
      [3, 2],
      'Error: Invalid `view_range`: [3, 2]. Its second element `2` should be -1 or larger than or equal to its first element `3`',
    ],
    [
      [4, -1],
      'Error: Invalid `view_range`: [4, -1]. Its first element `4` should be within the range of lines of the file: [1, 3]',
    ],
    [
      [1, -2],
      'Error: Invalid `view_range`: [1, -2]. Its second element `-2` should be -1 or larger than or equal to its first element `1`',
    ],
    [
      [1.5, 2],
      'Error: Invalid `view_range` parameter for `view`: it should be a list of two integers, like [1, 20] or [5, -1].',
    ],
    [
      ['1', '2'],
      'Error: Invalid `view_range` parameter for `view`: it should be a list of two integers, like [1, 20] or [5, -1].',
    ],
    [
      [1, 2, 3],
      'Error: Invalid `view_range` parameter for `view`: it should be a list of two integers, like [1, 20] or [5, -1].',
    ],
    [
      [1],
      'Error: Invalid `view_range` parameter for `view`: it should be a list of two integers, like [1, 20] or [5, -1].',
    ],
    [
      { 0: 1, 1: 2 },
      'Error: Invalid `view_range` parameter for `view`: it should be a list of two integers, like [1, 20] or [5, -1].',
    ],
  ])('refuses view_range %j', async (viewRange, message) => {
    expect(
      await claude({ command: 'view', path: '/memories/a.md', view_range: viewRange }),
    ).toEqual({ content: message, isError: true })
  })

  it.each([
    [
      [2, -1],
      ['     2\ttwo', '     3\tthree'],
    ],
    [[3, 3], ['     3\tthree']],
    [
      [2, 99],
      ['     2\ttwo', '     3\tthree'],
    ],
  ])('shows view_range %j', async (viewRange, shown) => {
    expect(
      await claude({ command: 'view', path: '/memories/a.md', view_range: viewRange }),
    ).toEqual({
      content: ["Here's the content of /memories/a.md with line numbers:", ...shown].join('\n'),
      isError: false,
    })
  })

  it.each([
    [0, 'x\n', 'x\none\ntwo\nthree'],
    [3, 'x\r\n', 'one\ntwo\nthree\nx'],
    [2, 'x\ny\n', 'one\ntwo\nx\ny\nthree'],
  ])('inserts at line %i', async (line, insertText, after) => {
    expect(
      await claude({
        command: 'insert',
        path: '/memories/a.md',
        insert_line: line,
        insert_text: insertText,
      }),
    ).toEqual({ content: 'The file /memories/a.md has been edited.', isError: false })
    expect(await box.read('a.md')).toBe(after)
  })

  it.each([-1, 4, 1.5, '1', null])('refuses insert_line %j and changes nothing', async (line) => {
    const result = await claude({
      command: 'insert',
      path: '/memories/a.md',
      insert_line: line,
      insert_text: 'x',
    })
    expect(result.isError).toBe(true)
    expect(String(result.content)).toMatch(/^Error: /)
    if (line === -1 || line === 4) {
      expect(result.content).toBe(
        `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, 3]`,
      )
    }
    expect(await box.read('a.md')).toBe('one\ntwo\nthree')
  })

  it('inserts an empty line after a last line with no newline, and into an empty file', async () => {
    // Before: the file became "one\ntwo\nthree\n", still three lines, though the insert said
    // it had edited the file; and an empty file stayed empty.
    for (const insertText of ['', '\n']) {
      await box.write('a.md', 'one\ntwo\nthree')
      await box.write('e.md', '')
      for (const [p, line] of [
        ['a.md', 3],
        ['e.md', 0],
      ] as const) {
        const inserted = await claude({
          command: 'insert',
          path: `/memories/${p}`,
          insert_line: line,
          insert_text: insertText,
        })
        expect(inserted).toEqual({
          content: `The file /memories/${p} has been edited.`,
          isError: false,
        })
      }
      expect(await box.read('a.md')).toBe('one\ntwo\nthree\n\n')
      expect(await box.read('e.md')).toBe('\n')
      expect(
        (await claude({ command: 'view', path: '/memories/a.md', view_range: [4, -1] })).content,
      ).toBe("Here's the content of /memories/a.md with line numbers:\n     4\t")
    }
  })

  it('inserts at 0 into an empty file and refuses line 1 there', async () => {
    await box.write('e.md', '')
    expect(
      (
        await claude({
          command: 'insert',
          path: '/memories/e.md',
          insert_line: 1,
          insert_text: 'x',
        })
      ).content,
    ).toBe(
      'Error: Invalid `insert_line` parameter: 1. It should be within the range of lines of the file: [0, 0]',
    )
    await claude({ command: 'insert', path: '/memories/e.md', insert_line: 0, insert_text: 'x\n' })
    expect(await box.read('e.md')).toBe('x\n')
  })
})

describe('str_replace with text an unkind tester picks', () => {
  it('refuses overlapping occurrences, naming the line of each', async () => {
    await box.write('a.md', 'aaa\n')
    expect(
      await claude({ command: 'str_replace', path: '/memories/a.md', old_str: 'aa', new_str: 'b' }),
    ).toEqual({
      content:
        'No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1. Please ensure it is unique',
      isError: true,
    })
    expect(await box.read('a.md')).toBe('aaa\n')
  })

  it('writes replacement patterns literally', async () => {
    await box.write('a.md', 'x foo y\n')
    await claude({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'foo',
      new_str: "$&|$1|$$|$'|$`|$<n>",
    })
    expect(await box.read('a.md')).toBe("x $&|$1|$$|$'|$`|$<n> y\n")
  })

  it('matches a CRLF old_str across CRLF lines, and not its LF spelling', async () => {
    await box.write('a.md', 'one\r\ntwo\r\nthree\r\n')
    expect(
      (
        await claude({
          command: 'str_replace',
          path: '/memories/a.md',
          old_str: 'one\ntwo',
          new_str: 'X',
        })
      ).content,
    ).toBe(
      'No replacement was performed, old_str `one\ntwo` did not appear verbatim in /memories/a.md.',
    )
    await claude({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'one\r\ntwo',
      new_str: 'X',
    })
    expect(await box.read('a.md')).toBe('X\r\nthree\r\n')
  })

  it('deletes the whole file text when old_str is all of it and new_str is omitted or null', async () => {
    for (const newStr of [undefined, null]) {
      await box.write('a.md', 'all of it\n')
      const input: Record<string, unknown> = {
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'all of it\n',
      }
      if (newStr === null) input['new_str'] = null
      expect((await claude(input)).isError).toBe(false)
      expect(await box.read('a.md')).toBe('')
    }
  })

  it('refuses a number for new_str, changing nothing', async () => {
    await box.write('a.md', 'whole\n')
    expect(
      await claude({
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'whole',
        new_str: 5,
      }),
    ).toEqual({
      content: 'Error: Invalid `new_str` parameter for `str_replace`: expected a string, got 5.',
      isError: true,
    })
    expect(await box.read('a.md')).toBe('whole\n')
  })
})

describe('hostile paths, each answered exactly and changing nothing', () => {
  const hidden = 'names starting with "." (hidden files) are not allowed'
  it.each([
    [
      '/memories/a\uff0fb.md',
      'Error: The path /memories/a\uff0fb.md is not allowed: names may not contain a character that looks like a slash (such as ／ or ∕), as the name would read as a path of folders.',
    ],
    [
      '/memories/a\u200bb.md',
      'Error: The path contains a control or invisible formatting character, which memory paths may not contain.',
    ],
    [
      '/memories/\u202egnp.md',
      'Error: The path contains a control or invisible formatting character, which memory paths may not contain.',
    ],
    [
      '/memories/\u200fa.md',
      'Error: The path contains a control or invisible formatting character, which memory paths may not contain.',
    ],
    [
      '//memories/a.md',
      'Error: The path //memories/a.md is outside the memory directory; paths must start with /memories/.',
    ],
    [
      '/memories//a.md',
      'Error: The path /memories//a.md is not allowed: it contains an empty segment (//).',
    ],
    [
      '/memories/CON.txt',
      'Error: The path /memories/CON.txt is not allowed: CON is a reserved device name on Windows.',
    ],
    [
      '/memories/con ',
      'Error: The path /memories/con\\u0020 is not allowed: names may not end with a dot or a space.',
    ],
    [
      '/memories/a.',
      'Error: The path /memories/a. is not allowed: names may not end with a dot or a space.',
    ],
    ['/memories/.GIT', `Error: The path /memories/.GIT is not allowed: ${hidden}.`],
    ['/memories/.Git/x', `Error: The path /memories/.Git/x is not allowed: ${hidden}.`],
    [
      '/memories/%2e%2e/x.md',
      'Error: The path /memories/%2e%2e/x.md contains %-encoded text; write the characters themselves.',
    ],
  ])('create %j', async (p, message) => {
    const before = await snapshot(box.root)
    expect(await claude({ command: 'create', path: p, file_text: 'x\n' })).toEqual({
      content: message,
      isError: true,
    })
    expect(await snapshot(box.root)).toBe(before)
  })

  it('takes 16 names after /memories/ and refuses 17, counting them rightly', async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`).join('/')
    expect(
      (await claude({ command: 'create', path: `/memories/${names(16)}`, file_text: 'x' })).isError,
    ).toBe(false)
    // Before: "is nested deeper than 16 folders", of a path with 16 folders and a file.
    expect(
      await claude({ command: 'create', path: `/memories/${names(17)}`, file_text: 'x' }),
    ).toEqual({
      content: `Error: The path /memories/${names(17)} is nested too deep: it has 17 names after /memories/, and a memory path may have at most 16 (such as 15 folders and a file).`,
      isError: true,
    })
    expect(
      await claude({ command: 'rename', old_path: '/memories/d0', new_path: '/memories/e/d0' }),
    ).toEqual({
      content:
        'Error: Cannot rename /memories/d0 to /memories/e/d0: a path inside it would become longer than 512 characters or have more than 16 names after /memories/.',
      isError: true,
    })
  })

  it('takes an NFD path as its NFC twin: one file, named composed', async () => {
    const nfd = '/memories/cafe\u0301.md'
    expect(await claude({ command: 'create', path: nfd, file_text: 'a\n' })).toEqual({
      content: 'File created successfully at: /memories/caf\u00e9.md',
      isError: false,
    })
    expect(
      (await claude({ command: 'create', path: '/memories/caf\u00e9.md', file_text: 'b\n' }))
        .content,
    ).toBe(
      'File created successfully at: /memories/caf\u00e9.md. The file already existed; its previous content was replaced.',
    )
    expect(await fs.readdir(box.root)).toEqual(['caf\u00e9.md'])
  })

  it('names the root as /memories however it is written, and refuses to create it', async () => {
    const listing = `${LISTING_HEADER}\n`
    for (const p of ['/memories', '/memories/']) {
      expect(String((await claude({ command: 'view', path: p })).content).startsWith(listing)).toBe(
        true,
      )
    }
    expect(await claude({ command: 'create', path: '/memories/', file_text: 'x' })).toEqual({
      content:
        'Error: /memories is the memory directory itself; create needs a file path such as /memories/notes.md.',
      isError: true,
    })
  })
})

describe('images at the size cap', () => {
  it.each([
    ['a.png', TINY_PNG, 'image/png'],
    ['a.jpeg', TINY_JPEG, 'image/jpeg'],
  ])('shows %s at exactly the cap and refuses it one byte over', async (name, bytes, type) => {
    await box.write(name, bytes)
    const at = createMemoryTool({ root: box.root, limits: { maxImageBytes: bytes.length } })
    expect(await at.execute({ command: 'view', path: `/memories/${name}` })).toMatchObject({
      isError: false,
      content: [
        { type: 'text', text: `Here's the image /memories/${name}:` },
        {
          type: 'image',
          source: { type: 'base64', media_type: type, data: bytes.toString('base64') },
        },
      ],
    })
    const under = createMemoryTool({ root: box.root, limits: { maxImageBytes: bytes.length - 1 } })
    expect(await under.execute({ command: 'view', path: `/memories/${name}` })).toMatchObject({
      isError: true,
      content: `Error: The image /memories/${name} is ${bytes.length} bytes; images up to ${bytes.length - 1} bytes can be viewed.`,
    })
  })

  it('refuses a .png or .jpg that only starts like one', async () => {
    await box.write('x.png', Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 0, 0xff, 0xfe]))
    await box.write('x.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 1, 2]))
    expect(await claude({ command: 'view', path: '/memories/x.png' })).toEqual({
      content: 'Error: /memories/x.png is not a valid PNG image.',
      isError: true,
    })
    expect(await claude({ command: 'view', path: '/memories/x.jpg' })).toEqual({
      content: 'Error: /memories/x.jpg is not a valid JPEG image.',
      isError: true,
    })
  })
})

describe('secrets in what a write would leave', () => {
  const token = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'
  const refusal = (p: string) =>
    `Error: Nothing was written to ${p}: the text contains what looks like a secret (GitHub Token). Memory files must not hold credentials; store a description instead (for example "the API key is kept in the password manager").`

  it('refuses a secret made whole across old and new text, or by joining two lines', async () => {
    const start = `token: ${token.slice(0, 20)}`
    await box.write('a.md', `${start}\n`)
    expect(
      await claude({
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: '\n',
        new_str: `${token.slice(20)}\n`,
      }),
    ).toEqual({ content: refusal('/memories/a.md'), isError: true })
    await box.write('b.md', `${start}\n${token.slice(20)}\n`)
    expect(
      await claude({
        command: 'str_replace',
        path: '/memories/b.md',
        old_str: `${token.slice(17, 20)}\n`,
        new_str: token.slice(17, 20),
      }),
    ).toEqual({ content: refusal('/memories/b.md'), isError: true })
    expect(await box.read('a.md')).toBe(`${start}\n`)
    expect(await box.read('b.md')).toBe(`${start}\n${token.slice(20)}\n`)
  })

  it('refuses a secret in a new name, never echoing it', async () => {
    for (const input of [
      { command: 'create', path: `/memories/${token}.md`, file_text: 'x' },
      { command: 'create', path: `/memories/${token}/a.md`, file_text: 'x' },
    ]) {
      const result = await claude(input)
      expect(result.isError).toBe(true)
      expect(String(result.content)).not.toContain(token.slice(4))
      expect(String(result.content)).toContain('(GitHub Token)')
    }
    await box.write('a.md', 'x\n')
    const renamed = await claude({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: `/memories/${token}.md`,
    })
    expect(renamed.isError).toBe(true)
    expect(String(renamed.content)).not.toContain(token.slice(4))
    expect(await fs.readdir(box.root)).toEqual(['a.md'])
  })

  it('shows a secret already in a file (view is a read), and lets unrelated edits through', async () => {
    await box.write('a.md', `key ${token}\nother\n`)
    expect((await claude({ command: 'view', path: '/memories/a.md' })).content).toContain(token)
    expect(
      (
        await claude({
          command: 'str_replace',
          path: '/memories/a.md',
          old_str: 'other',
          new_str: 'more',
        })
      ).isError,
    ).toBe(false)
  })
})

describe('modes under a umask of 0', () => {
  it('makes files 0600 and folders 0700 whatever the umask lets through', async () => {
    const old = process.umask(0)
    try {
      const root = path.join(box.base, 'fresh')
      const tool = createMemoryTool({ root })
      await tool.execute({ command: 'create', path: '/memories/a/b/c.md', file_text: 'x\n' })
      await tool.execute({ command: 'create', path: '/memories/a/d.md', file_text: 'x\n' })
      await tool.execute({
        command: 'str_replace',
        path: '/memories/a/d.md',
        old_str: 'x',
        new_str: 'y',
      })
      await tool.execute({
        command: 'insert',
        path: '/memories/a/b/c.md',
        insert_line: 0,
        insert_text: 'z',
      })
      await tool.execute({
        command: 'rename',
        old_path: '/memories/a/d.md',
        new_path: '/memories/e/f/d.md',
      })
      const modes = await snapshot(root)
      expect(modes.split('\n').map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([
        'D a 700',
        'D a/b 700',
        'F a/b/c.md 600',
        'D e 700',
        'D e/f 700',
        'F e/f/d.md 600',
      ])
      expect((await fs.stat(root)).mode & 0o777).toBe(0o700)
    } finally {
      process.umask(old)
    }
  })
})

describe("the issue's table, byte for byte, as Claude receives it", () => {
  beforeEach(async () => {
    await box.write('a.md', 'alpha\nbeta\n')
    await fs.mkdir(path.join(box.root, 'dir'))
  })

  const missing = '/memories/missing.md'
  it.each([
    [
      { command: 'view', path: missing },
      `The path ${missing} does not exist. Please provide a valid path.`,
    ],
    [
      { command: 'view', path: '/memories/a.md/x' },
      'The path /memories/a.md/x does not exist. Please provide a valid path.',
    ],
    [
      { command: 'str_replace', path: missing, old_str: 'a', new_str: 'b' },
      `Error: The path ${missing} does not exist. Please provide a valid path.`,
    ],
    [
      { command: 'str_replace', path: '/memories/dir', old_str: 'a', new_str: 'b' },
      'Error: The path /memories/dir does not exist. Please provide a valid path.',
    ],
    [
      { command: 'str_replace', path: '/memories/a.md', old_str: 'gamma', new_str: 'b' },
      'No replacement was performed, old_str `gamma` did not appear verbatim in /memories/a.md.',
    ],
    [
      { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' },
      'No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 1, 2. Please ensure it is unique',
    ],
    [
      { command: 'insert', path: missing, insert_line: 0, insert_text: 'b' },
      `Error: The path ${missing} does not exist`,
    ],
    [
      { command: 'insert', path: '/memories/dir', insert_line: 0, insert_text: 'b' },
      'Error: The path /memories/dir does not exist',
    ],
    [
      { command: 'insert', path: '/memories/a.md', insert_line: 3, insert_text: 'b' },
      'Error: Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]',
    ],
    [{ command: 'delete', path: missing }, `Error: The path ${missing} does not exist`],
    [
      { command: 'delete', path: '/memories' },
      'Error: Cannot delete the /memories directory itself',
    ],
    [
      { command: 'rename', old_path: missing, new_path: '/memories/b.md' },
      `Error: The path ${missing} does not exist`,
    ],
    [
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/dir' },
      'Error: The destination /memories/dir already exists',
    ],
    [
      { command: 'rename', old_path: '/memories/dir', new_path: '/memories/a.md' },
      'Error: The destination /memories/a.md already exists',
    ],
    [
      { command: 'rename', old_path: '/memories/dir', new_path: '/memories/dir/sub' },
      'Error: Cannot move the directory /memories/dir into itself (/memories/dir/sub).',
    ],
    [
      { command: 'rename', old_path: '/memories', new_path: '/memories/x' },
      'Error: Cannot rename the /memories directory itself',
    ],
  ])('refuses %j', async (input, message) => {
    const before = await snapshot(box.root)
    expect(await claude(input)).toEqual({ content: message, isError: true })
    expect(await snapshot(box.root)).toBe(before)
  })

  it('answers each success in the official words', async () => {
    const runs: ReadonlyArray<[Record<string, unknown>, string]> = [
      [
        { command: 'create', path: '/memories/n/b.md', file_text: 'x\n' },
        'File created successfully at: /memories/n/b.md',
      ],
      [
        { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\talpha\n     2\tgamma',
      ],
      [
        { command: 'insert', path: '/memories/a.md', insert_line: 2, insert_text: 'delta' },
        'The file /memories/a.md has been edited.',
      ],
      [
        { command: 'rename', old_path: '/memories/n', new_path: '/memories/m' },
        'Successfully renamed /memories/n to /memories/m',
      ],
      [{ command: 'delete', path: '/memories/m' }, 'Successfully deleted /memories/m'],
      [
        { command: 'view', path: '/memories/a.md' },
        "Here's the content of /memories/a.md with line numbers:\n     1\talpha\n     2\tgamma\n     3\tdelta",
      ],
    ]
    for (const [input, content] of runs)
      expect(await claude(input)).toEqual({ content, isError: false })
    expect((await fs.readdir(box.root)).sort()).toEqual(['a.md', 'dir'])
  })
})
