import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshot } from '../memory/test-support'
import { commitCount, fsck, gitCli, headFolderDifferences, memoryTestBed } from './test-helpers'
import type { ExecuteOutcome, Origin } from './types'

// Issue #3's acceptance check (probe30h), run where Claude's commands really go: through the
// versioned memory, with the git CLI as the second opinion. Every refused command (a hostile
// path in each command's path field, a malformed field, a write a rule refuses) answers in
// plain words with a code, and changes nothing: the folder, a sentinel beside the data folder,
// `main`, and `git status --porcelain` are the same after as before, and the answer holds no
// host path, stack or errno. Every successful change is exactly one commit by Claude, with the
// docs' answer, checked with `git show`. (memory/hostile.test.ts runs hostile paths through the
// plain tool, without a history.)

const bed = memoryTestBed()
const CLAUDE: Origin = { actor: 'claude', conversationId: 'conv-probe', toolUseId: 'toolu_probe' }

function text(result: ExecuteOutcome): string {
  return typeof result.content === 'string' ? result.content : JSON.stringify(result.content)
}

function git(...args: string[]): string {
  return gitCli(bed.dataDir, ...args)
}

/** `git status --porcelain` of the memory folder against main, from an index read from main. */
function gitStatus(): string {
  const index = path.join(bed.dataDir, '..', `${path.basename(bed.dataDir)}-probe-index`)
  const env = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: bed.dataDir,
    GIT_INDEX_FILE: index,
  }
  const run = (...args: string[]) =>
    execFileSync(
      'git',
      [
        '--git-dir',
        path.join(bed.dataDir, 'history.git'),
        '--work-tree',
        path.join(bed.dataDir, 'memories'),
        ...args,
      ],
      { encoding: 'utf8', env },
    )
  try {
    run('read-tree', 'main')
    return run('status', '--porcelain', '--untracked-files=all', '--ignored=no')
  } finally {
    rmSync(index, { force: true })
  }
}

/** What a refused command must leave as it was. */
async function state(sentinel: string): Promise<string> {
  return JSON.stringify([
    git('rev-parse', 'main'),
    gitStatus(),
    await snapshot(path.join(bed.dataDir, 'memories')),
    await snapshot(sentinel),
  ])
}

/** The memory the hostile commands meet, and a sentinel folder beside the data folder. */
async function seed(): Promise<string> {
  const files: Array<[string, string]> = [
    ['a.md', 'one\ntwo\nthree\n'],
    ['crlf.md', 'one\r\ntwo\r\n'],
    ['d/x.md', 'x\n'],
  ]
  for (const [file, body] of files) {
    const result = await bed.memory.execute(
      { command: 'create', path: `/memories/${file}`, file_text: body },
      CLAUDE,
    )
    expect(result.isError, text(result)).toBe(false)
  }
  const sentinel = `${bed.dataDir}-sentinel`
  rmSync(sentinel, { recursive: true, force: true, maxRetries: 10 })
  mkdirSync(sentinel)
  writeFileSync(path.join(sentinel, 'target.md'), 'sentinel\n')
  return sentinel
}

const LONG_NAME = 'n'.repeat(129)
const LONG_UTF8 = 'é'.repeat(128) // 256 bytes: one over what a file system allows
const DEEP = `/memories/${'f/'.repeat(17)}a.md`

/** Paths no command may act on, each with a word its refusal must hold. */
const HOSTILE_PATHS: ReadonlyArray<readonly [string, RegExp]> = [
  ['/memories/../x.md', /".." segment/],
  ['/memories/d/../../x.md', /".." segment/],
  ['/memories/%2e%2e/x.md', /%-encoded/],
  ['/memories/%2E%2E%2Fx.md', /%-encoded/],
  ['/memories\\..\\x.md', /backslash/],
  ['/memories/d\\x.md', /backslash/],
  ['/memories/a\0.md', /control or invisible/],
  ['/memories/a.md\0', /control or invisible/],
  ['/memories//a.md', /empty segment/],
  ['/memories/a.md/.', /"\." segment/],
  ['/memories/d/.', /"\." segment/],
  ['/memories/./a.md', /"\." segment/],
  ['/memories/.git', /hidden/],
  ['/memories/.GIT/config', /hidden/],
  ['/memories/d/.git/HEAD', /hidden/],
  ['/memories/.cairn-tmp-1', /hidden/],
  ['/memories/a\nb.md', /control or invisible/],
  ['/memories/a\r.md', /control or invisible/],
  ['/memories/a\u0007.md', /control or invisible/],
  ['/memories/a\u001b[31m.md', /control or invisible/],
  ['/memories/a\u202Eb.md', /control or invisible/],
  ['/memories/a\u200Bb.md', /control or invisible/],
  ['/memories/a\u2028b.md', /./],
  [`/memories/${LONG_NAME}`, /longer than 128 characters/],
  [`/memories/${LONG_UTF8}`, /too long/],
  [DEEP, /nested too deep/],
  ['/memories/CON', /reserved device name/],
  ['/memories/d/nul.txt', /reserved device name/],
  ['/memories/a.md ', /end with a dot or a space/],
  ['/memories/a.', /end with a dot or a space/],
  ['/memories/GIT~1', /./],
  ['/memories/node_modules/x.md', /node_modules/],
  ['/memories/a:b.md', /./],
  ['/memories/a*.md', /./],
  ['/memoriesX/a.md', /outside the memory directory/],
  ['/memories../a.md', /outside the memory directory/],
  ['memories/a.md', /outside the memory directory/],
  ['/etc/passwd', /outside the memory directory/],
  ['/', /outside the memory directory/],
  ['', /empty/],
  ['/Memories/a.md', /outside the memory directory/],
]

/** One command for each field a path can be given in, with `p` in it. */
function commandsWith(p: string): ReadonlyArray<Record<string, unknown>> {
  return [
    { command: 'view', path: p },
    { command: 'create', path: p, file_text: 'pwned\n' },
    { command: 'str_replace', path: p, old_str: 'one', new_str: 'pwned' },
    { command: 'insert', path: p, insert_line: 0, insert_text: 'pwned\n' },
    { command: 'delete', path: p },
    { command: 'rename', old_path: p, new_path: '/memories/moved.md' },
    { command: 'rename', old_path: '/memories/a.md', new_path: p },
  ]
}

/** Inputs that are not paths: malformed fields, out-of-range numbers, refused writes. */
const HOSTILE_INPUTS: ReadonlyArray<readonly [Record<string, unknown> | unknown, RegExp]> = [
  [
    { command: 'str_replace', path: '/memories/a.md', old_str: '', new_str: 'x' },
    /must not be empty/,
  ],
  [
    { command: 'str_replace', path: '/memories/a.md', old_str: 'missing', new_str: 'x' },
    /verbatim/,
  ],
  [
    { command: 'str_replace', path: '/memories/a.md', old_str: 'o', new_str: 'x' },
    /in lines: 1, 2/,
  ],
  [
    { command: 'str_replace', path: '/memories/crlf.md', old_str: 'one\ntwo', new_str: 'x' },
    /verbatim/,
  ],
  [{ command: 'str_replace', path: '/memories/d', old_str: 'x', new_str: 'y' }, /does not exist/],
  [
    { command: 'str_replace', path: '/memories/a.md', old_str: 1, new_str: 'x' },
    /expected a string/,
  ],
  [{ command: 'insert', path: '/memories/a.md', insert_line: -1, insert_text: 'x' }, /\[0, 3\]/],
  [{ command: 'insert', path: '/memories/a.md', insert_line: 4, insert_text: 'x' }, /\[0, 3\]/],
  [{ command: 'insert', path: '/memories/a.md', insert_line: 1e9, insert_text: 'x' }, /\[0, 3\]/],
  [
    { command: 'insert', path: '/memories/a.md', insert_line: Number.NaN, insert_text: 'x' },
    /integer/,
  ],
  [{ command: 'insert', path: '/memories/a.md', insert_line: '3', insert_text: 'x' }, /integer/],
  [{ command: 'insert', path: '/memories/a.md', insert_line: 1.5, insert_text: 'x' }, /integer/],
  [
    { command: 'insert', path: '/memories/a.md', insert_line: Infinity, insert_text: 'x' },
    /integer/,
  ],
  [
    { command: 'insert', path: '/memories/a.md', insert_line: 2 ** 53, insert_text: 'x' },
    /integer/,
  ],
  [{ command: 'insert', path: '/memories/a.md', insert_line: null, insert_text: 'x' }, /integer/],
  [{ command: 'insert', path: '/memories/a.md', insert_line: 1 }, /Missing required/],
  [{ command: 'view', path: '/memories/a.md', view_range: [2, 1] }, /view_range/],
  [{ command: 'view', path: '/memories/a.md', view_range: [0, 1] }, /\[1, 3\]/],
  [{ command: 'view', path: '/memories/a.md', view_range: [4, -1] }, /\[1, 3\]/],
  [{ command: 'view', path: '/memories/a.md', view_range: [1, -2] }, /view_range/],
  [{ command: 'view', path: '/memories/a.md', view_range: [1, 2, 3] }, /two integers/],
  [{ command: 'view', path: '/memories/a.md', view_range: ['1', '2'] }, /two integers/],
  [{ command: 'view', path: '/memories/a.md', view_range: '1-2' }, /two integers/],
  [
    { command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(1024 * 1024 + 1) },
    /over the limit/,
  ],
  [
    { command: 'create', path: '/memories/k.md', file_text: `sk-ant-api03-${'A'.repeat(93)}AA` },
    /secret/,
  ],
  [
    { command: 'create', path: '/memories/a.md', file_text: 'x', mode: 'append' },
    /Unexpected parameter/,
  ],
  [{ command: 'create', path: '/memories/a.md' }, /Missing required/],
  [{ command: 'create', path: '/memories/d', file_text: 'x' }, /./],
  [{ command: 'create', path: '/memories/a.md/b.md', file_text: 'x' }, /not a directory/],
  [{ command: 'create', path: '/memories', file_text: 'x' }, /./],
  [{ command: 'delete', path: '/memories' }, /itself/],
  [{ command: 'delete', path: '/memories/' }, /itself/],
  [{ command: 'rename', old_path: '/memories', new_path: '/memories/x' }, /./],
  [{ command: 'rename', old_path: '/memories/d', new_path: '/memories/d/sub' }, /./],
  [
    { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/d/x.md' },
    /already exists/,
  ],
  [{ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/a.md' }, /./],
  [{ command: 'exec', path: '/memories/a.md' }, /Unknown command/],
  [{ path: '/memories/a.md' }, /Missing required parameter `command`/],
  [null, /JSON object/],
  ['view /memories', /JSON object/],
  [[{ command: 'view', path: '/memories' }], /JSON object/],
]

/** What no answer may hold: a host path, a stack frame, errno words. */
function expectNothingLeaked(answer: string, where: string): void {
  expect(answer, where).not.toContain(bed.dataDir)
  expect(answer, where).not.toContain(os.tmpdir() + path.sep)
  expect(answer, where).not.toMatch(/\n\s+at |\bE[A-Z]{3,}\b(?!rror)|errno|\/proc\/self/)
}

describe('a refused command, through the versioned memory', () => {
  it('has at least 40 hostile paths, in every field a path is given in', () => {
    expect(HOSTILE_PATHS.length).toBeGreaterThanOrEqual(40)
  })

  // In review mode (`beforeRun`) a refused command must be refused by its dry run, never held
  // for the person to approve.
  it.each([
    ['run at once', false],
    ['in review mode', true],
  ] as const)(
    'changes nothing anywhere, commits nothing, and says why in plain words: %s',
    async (_mode, review) => {
      const sentinel = await seed()
      // Planted outside Cairn (a binary file, a link to the sentinel), saved by the next open.
      writeFileSync(path.join(bed.dataDir, 'memories', 'bin.md'), Buffer.from([0, 0xff, 0xfe, 10]))
      symlinkSync(path.join(sentinel, 'target.md'), path.join(bed.dataDir, 'memories', 'link.md'))
      await bed.reopen()
      const cases: Array<readonly [unknown, RegExp]> = [
        ...HOSTILE_PATHS.flatMap(([p, words]) => commandsWith(p).map((c) => [c, words] as const)),
        ...HOSTILE_INPUTS,
        ...commandsWith('/memories/link.md').map((c) => [c, /symbolic link/] as const),
        ...commandsWith('/memories/link.md/x.md').map((c) => [c, /./] as const),
        [{ command: 'view', path: '/memories/bin.md' }, /not UTF-8 text/],
        [
          { command: 'str_replace', path: '/memories/bin.md', old_str: 'a', new_str: 'b' },
          /not UTF-8/,
        ],
        [
          { command: 'insert', path: '/memories/bin.md', insert_line: 0, insert_text: 'b' },
          /not UTF-8/,
        ],
      ]
      const before = await state(sentinel)
      const commits = git('rev-list', '--count', 'main')
      const wrong: string[] = []
      const held: string[] = []
      for (const [input, words] of cases) {
        const where = JSON.stringify(input)?.slice(0, 200) ?? String(input)
        const result = await bed.memory.execute(
          input,
          CLAUDE,
          review
            ? {
                beforeRun: () => {
                  held.push(where)
                  return { run: false }
                },
              }
            : {},
        )
        const answer = text(result)
        if (!result.isError) {
          wrong.push(`${where}: accepted (${answer.slice(0, 120)})`)
          continue
        }
        if (result.commit !== null) wrong.push(`${where}: committed`)
        if (result.errorCode === null) wrong.push(`${where}: no code`)
        if (!words.test(answer)) wrong.push(`${where}: ${answer.slice(0, 200)}`)
        expectNothingLeaked(answer, where)
        // The refusals that are not the docs' own texts are written for Claude as errors.
        if (!/^(Error: |The path |No replacement was performed|File \/memories)/.test(answer)) {
          wrong.push(`${where}: starts ${answer.slice(0, 40)}`)
        }
      }
      expect(wrong).toEqual([])
      expect(held).toEqual([])
      if (review) {
        // The same option holds a command that is fine: the empty list above means something.
        const fine = await bed.memory.execute(
          { command: 'create', path: '/memories/fine.md', file_text: 'fine\n' },
          CLAUDE,
          { beforeRun: () => ({ run: false }) },
        )
        expect(fine.held).toBe(true)
      }
      expect(await state(sentinel)).toBe(before)
      expect(git('rev-list', '--count', 'main')).toBe(commits)
      fsck(bed.dataDir)
      rmSync(sentinel, { recursive: true, force: true, maxRetries: 10 })
    },
    120_000,
  )

  it('answers old_str equal to new_str as an edit that changed nothing: no commit, no change', async () => {
    const sentinel = await seed()
    const before = await state(sentinel)
    const result = await bed.memory.execute(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'two' },
      CLAUDE,
    )
    // A no-op edit is a success (the text asked for is there), never an empty commit.
    expect(result.isError).toBe(false)
    expect(text(result)).toBe(
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     1\tone\n     2\ttwo\n     3\tthree',
    )
    expect(result.commit).toBeNull()
    expect(await state(sentinel)).toBe(before)
    rmSync(sentinel, { recursive: true, force: true, maxRetries: 10 })
  })
})

describe('a successful change, through the versioned memory', () => {
  /** `git show` of main: author, subject, trailers and the files it changed. */
  function shown(): string {
    return git(
      'show',
      '--format=%an <%ae>|%cn|%s|%(trailers:only,unfold)',
      '--name-status',
      '-M',
      'main',
    )
      .trim()
      .replace(/\n+/g, '\n')
  }

  it('is one commit by Claude per command, with the docs answer, as git shows it', async () => {
    const steps: ReadonlyArray<readonly [Record<string, unknown>, string, string]> = [
      [
        { command: 'create', path: '/memories/notes.md', file_text: 'alpha\nbeta\ngamma\n' },
        'File created successfully at: /memories/notes.md',
        'A\tnotes.md',
      ],
      [
        { command: 'str_replace', path: '/memories/notes.md', old_str: 'beta', new_str: 'BETA' },
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
          '     1\talpha\n     2\tBETA\n     3\tgamma',
        'M\tnotes.md',
      ],
      [
        { command: 'insert', path: '/memories/notes.md', insert_line: 3, insert_text: 'delta\n' },
        'The file /memories/notes.md has been edited.',
        'M\tnotes.md',
      ],
      [
        { command: 'create', path: '/memories/notes.md', file_text: 'new\n' },
        'File created successfully at: /memories/notes.md. The file already existed; its previous content was replaced.',
        'M\tnotes.md',
      ],
      [
        { command: 'create', path: '/memories/box/one.md', file_text: 'one\n' },
        'File created successfully at: /memories/box/one.md',
        'A\tbox/one.md',
      ],
      [
        { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/box/notes.md' },
        'Successfully renamed /memories/notes.md to /memories/box/notes.md',
        'R100\tnotes.md\tbox/notes.md',
      ],
      [
        { command: 'rename', old_path: '/memories/box', new_path: '/memories/crate' },
        'Successfully renamed /memories/box to /memories/crate',
        'R100\tbox/notes.md\tcrate/notes.md\nR100\tbox/one.md\tcrate/one.md',
      ],
      [
        { command: 'delete', path: '/memories/crate' },
        'Successfully deleted /memories/crate',
        'D\tcrate/notes.md\nD\tcrate/one.md',
      ],
    ]
    // A fresh memory has no commit yet: the first command's is the root.
    expect(commitCount(bed.dataDir)).toBe(0)
    let head = ''
    for (const [input, answer, changes] of steps) {
      const result = await bed.memory.execute(input, CLAUDE)
      expect(text(result)).toBe(answer)
      expect(result.isError).toBe(false)
      expect(result.commit).not.toBeNull()
      const next = git('rev-parse', 'main').trim()
      expect(result.commit?.oid).toBe(next)
      // Exactly one commit, on top of the last one.
      expect(git('rev-list', '--parents', '-1', 'main').trim()).toBe(
        head === '' ? next : `${next} ${head}`,
      )
      head = next
      const paths = [input.path, input.old_path, input.new_path].filter(Boolean) as string[]
      const overwrite = answer.includes('already existed') ? 'Overwrite: true\n' : ''
      expect(shown()).toBe(
        `Claude <claude@cairn.invalid>|Claude|${String(input.command)} ${paths.join(' -> ')}|` +
          `Command: ${String(input.command)}\n${paths.map((p) => `Path: ${p}\n`).join('')}` +
          `Conversation-Id: conv-probe\nTool-Use-Id: toolu_probe\n${overwrite}${changes}`,
      )
      expect(await headFolderDifferences(bed.dataDir)).toEqual([])
    }
    fsck(bed.dataDir)
    expect(gitStatus()).toBe('')
  })
})

describe("the docs' own refusal texts, through the versioned memory", () => {
  it('answers each word for word, with or without "Error:" as the docs write it', async () => {
    const sentinel = await seed()
    const before = await state(sentinel)
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [
        { command: 'view', path: '/memories/nope.md' },
        'The path /memories/nope.md does not exist. Please provide a valid path.',
      ],
      [
        { command: 'str_replace', path: '/memories/nope.md', old_str: 'a', new_str: 'b' },
        'Error: The path /memories/nope.md does not exist. Please provide a valid path.',
      ],
      [
        { command: 'str_replace', path: '/memories/d', old_str: 'a', new_str: 'b' },
        'Error: The path /memories/d does not exist. Please provide a valid path.',
      ],
      [
        { command: 'str_replace', path: '/memories/a.md', old_str: 'four', new_str: 'b' },
        'No replacement was performed, old_str `four` did not appear verbatim in /memories/a.md.',
      ],
      [
        // Occurrences, not lines: "three" holds two, each listed with its line.
        { command: 'str_replace', path: '/memories/a.md', old_str: 'e', new_str: 'b' },
        'No replacement was performed. Multiple occurrences of old_str `e` in lines: 1, 3, 3. Please ensure it is unique',
      ],
      [
        { command: 'insert', path: '/memories/a.md', insert_line: 4, insert_text: 'x' },
        'Error: Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]',
      ],
      [
        { command: 'insert', path: '/memories/nope.md', insert_line: 0, insert_text: 'x' },
        'Error: The path /memories/nope.md does not exist',
      ],
      [
        { command: 'insert', path: '/memories/d', insert_line: 0, insert_text: 'x' },
        'Error: The path /memories/d does not exist',
      ],
      [
        { command: 'delete', path: '/memories/nope' },
        'Error: The path /memories/nope does not exist',
      ],
      [
        { command: 'rename', old_path: '/memories/nope.md', new_path: '/memories/b.md' },
        'Error: The path /memories/nope.md does not exist',
      ],
      [
        { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/crlf.md' },
        'Error: The destination /memories/crlf.md already exists',
      ],
      [
        { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/d' },
        'Error: The destination /memories/d already exists',
      ],
    ]
    for (const [input, answer] of cases) {
      const result = await bed.memory.execute(input, CLAUDE)
      expect(text(result), JSON.stringify(input)).toBe(answer)
      expect(result.isError).toBe(true)
      expect(result.commit).toBeNull()
    }
    const refused = await bed.memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'x' },
      CLAUDE,
      { createExisting: 'error' },
    )
    expect(text(refused)).toBe('Error: File /memories/a.md already exists')
    expect(await state(sentinel)).toBe(before)
    rmSync(sentinel, { recursive: true, force: true, maxRetries: 10 })
  })

  it('views an empty memory as the header and its own line, and a CRLF file with its CRs kept', async () => {
    const empty = await bed.memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
    expect(text(empty)).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
        '4.0K\t/memories',
    )
    await seed()
    // The docs say nothing of CRLF: lines are split at \n and shown verbatim, the \r kept.
    const crlf = await bed.memory.execute({ command: 'view', path: '/memories/crlf.md' }, CLAUDE)
    expect(text(crlf)).toBe(
      "Here's the content of /memories/crlf.md with line numbers:\n     1\tone\r\n     2\ttwo\r",
    )
    const listing = await bed.memory.execute({ command: 'view', path: '/memories/' }, CLAUDE)
    expect(text(listing)).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
        '4.0K\t/memories\n14B\t/memories/a.md\n10B\t/memories/crlf.md\n4.0K\t/memories/d/\n2B\t/memories/d/x.md',
    )
  })
})
