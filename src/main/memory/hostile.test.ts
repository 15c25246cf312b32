import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'
import type { MemoryExecution } from './types'

// Paths Claude (or a prompt injection speaking through Claude) might send. Each must be refused
// by every command, with nothing changed inside the root or beside it.
const HOSTILE_PATHS: ReadonlyArray<string> = [
  '',
  '/',
  '.',
  'memories/a.md',
  '/memoriesX/a.md',
  '/memories-evil/a.md',
  '/memories../sentinel/secret.txt',
  '/etc/passwd',
  '/tmp/x.md',
  '~/.ssh/id_rsa',
  'C:\\Windows\\win.ini',
  '/memories/../sentinel/secret.txt',
  '/memories/../../etc/passwd',
  '/memories/a/../../passwd',
  '/memories/./a.md',
  '/memories//a.md',
  '/memories/a.md//',
  '/memories\\..\\passwd',
  '/memories/..\\passwd',
  '/memories/%2e%2e/sentinel/secret.txt',
  '/memories/%2E%2E%2Fpasswd',
  '/memories/..%2fpasswd',
  '/memories/a\u0000.md',
  '/memories/a.md\u0000.png',
  '/memories/a\r\nb.md',
  '/memories/\u001b[2Jclear.md',
  '/memories/a\u200d.md',
  '/memories/\u202egnp.md',
  '/memories/\ufeffbom.md',
  '/memories/a:stream.md',
  '/memories/C:/x.md',
  '/memories/a<b>.md',
  '/memories/what?.md',
  '/memories/star*.md',
  '/memories/pipe|.md',
  '/memories/CON',
  '/memories/con.md',
  '/memories/Aux.txt',
  '/memories/NUL',
  '/memories/COM1.log',
  '/memories/lpt3',
  '/memories/trailing.',
  '/memories/trailing ',
  '/memories/dir./x.md',
  '/memories/.hidden.md',
  '/memories/.git',
  '/memories/.git/config',
  '/memories/.GiT/HEAD',
  '/memories/sub/.git/hooks/pre-commit',
  '/memories/GIT~1/config',
  '/memories/.cairn-tmp-1234',
  '/memories/node_modules/evil.js',
  '/memories/' + 'a'.repeat(300) + '.md',
  '/memories/' + Array(40).fill('d').join('/') + '/x.md',
  '/memories/' + 'x/'.repeat(400) + 'y',
]

const commandsFor = (p: string): ReadonlyArray<Record<string, unknown>> => [
  { command: 'view', path: p },
  { command: 'create', path: p, file_text: 'pwned\n' },
  { command: 'str_replace', path: p, old_str: 'sentinel', new_str: 'pwned' },
  { command: 'insert', path: p, insert_line: 0, insert_text: 'pwned\n' },
  { command: 'delete', path: p },
  { command: 'rename', old_path: p, new_path: '/memories/moved.md' },
  { command: 'rename', old_path: '/memories/keep.md', new_path: p },
]

describe('hostile paths', () => {
  let box: Sandbox
  let before: string
  beforeAll(async () => {
    box = await makeSandbox()
    await box.write('keep.md', 'keep me\n')
    await box.write('sub/note.md', 'note\n')
    before = await snapshot(box.base)
  })
  afterAll(() => box.cleanup())

  it('has at least 40 of them', () => {
    expect(HOSTILE_PATHS.length).toBeGreaterThanOrEqual(40)
  })

  it.each(HOSTILE_PATHS.map((p) => [p]))(
    'refuses %j in every command, changing nothing in or beside the root',
    async (hostile) => {
      for (const input of commandsFor(hostile)) {
        const result = await box.run(input)
        expect(result.isError, JSON.stringify(input)).toBe(true)
        expectSafeMessage(result, box)
      }
      expect(await snapshot(box.base)).toBe(before)
    },
  )
})

describe('hostile input shapes', () => {
  let box: Sandbox
  let before: string
  beforeAll(async () => {
    box = await makeSandbox()
    await box.write('f.md', 'a\nb\nc\n')
    before = await snapshot(box.base)
  })
  afterAll(() => box.cleanup())

  const junk: ReadonlyArray<[string, unknown, RegExp]> = [
    ['null', null, /JSON object/],
    ['a string', 'view /memories', /JSON object/],
    ['an array', [{ command: 'view', path: '/memories' }], /JSON object/],
    ['a number', 42, /JSON object/],
    [
      'no command',
      { path: '/memories' },
      /^Error: Missing required parameter `command`\. Use one of: view,/,
    ],
    ['a null command', { command: null }, /^Error: Missing required parameter `command`\./],
    [
      'a numeric command',
      { command: 5 },
      /^Error: Invalid `command` parameter: expected a string, got 5\./,
    ],
    ['an object as command', { command: {} }, /got an object\./],
    [
      'an object as path',
      { command: 'view', path: {} },
      /Invalid `path` parameter for `view`: expected a string, got an object\.$/,
    ],
    ['a boolean as path', { command: 'view', path: true }, /expected a string, got a boolean\.$/],
    ['unknown command', { command: 'exec', path: '/memories' }, /Unknown command `exec`/],
    ['command in caps', { command: 'VIEW', path: '/memories' }, /Unknown command/],
    ['prototype key as command', { command: '__proto__', path: '/memories' }, /Unknown command/],
    ['toString as command', { command: 'toString' }, /Unknown command/],
    ['missing path', { command: 'view' }, /Missing required parameter `path`/],
    ['numeric path', { command: 'view', path: 7 }, /expected a string/],
    ['array path', { command: 'delete', path: ['/memories/f.md'] }, /expected a string/],
    [
      'object path',
      { command: 'delete', path: { toString: '/memories/f.md' } },
      /expected a string/,
    ],
    ['missing file_text', { command: 'create', path: '/memories/x.md' }, /`file_text`/],
    [
      'file_text buffer',
      { command: 'create', path: '/memories/x.md', file_text: { type: 'Buffer', data: [1] } },
      /expected a string/,
    ],
    [
      'extra field',
      { command: 'view', path: '/memories', recursive: true },
      /Unexpected parameter `recursive`/,
    ],
    [
      'field of another command',
      { command: 'delete', path: '/memories/f.md', new_path: '/x' },
      /Unexpected parameter `new_path`/,
    ],
    [
      '__proto__ field',
      JSON.parse('{"command":"view","path":"/memories","__proto__":{"x":1}}'),
      /Unexpected parameter `__proto__`/,
    ],
    [
      'fractional insert_line',
      { command: 'insert', path: '/memories/f.md', insert_line: 1.5, insert_text: 'x' },
      /expected an integer, got 1.5/,
    ],
    [
      'string insert_line',
      { command: 'insert', path: '/memories/f.md', insert_line: '1', insert_text: 'x' },
      /expected an integer/,
    ],
    [
      'NaN insert_line',
      { command: 'insert', path: '/memories/f.md', insert_line: NaN, insert_text: 'x' },
      /non-finite/,
    ],
    [
      'huge insert_line',
      { command: 'insert', path: '/memories/f.md', insert_line: 2 ** 60, insert_text: 'x' },
      /expected an integer/,
    ],
    [
      'negative insert_line',
      { command: 'insert', path: '/memories/f.md', insert_line: -5, insert_text: 'x' },
      /Invalid `insert_line` parameter: -5/,
    ],
    [
      'null insert_text',
      { command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: null },
      /`insert_text`/,
    ],
    [
      'non-string old_str',
      { command: 'str_replace', path: '/memories/f.md', old_str: 1, new_str: '2' },
      /`old_str`/,
    ],
    [
      'view_range of strings',
      { command: 'view', path: '/memories/f.md', view_range: ['1', '2'] },
      /two integers/,
    ],
    [
      'view_range of Infinity',
      { command: 'view', path: '/memories/f.md', view_range: [1, Infinity] },
      /two integers/,
    ],
    ['missing new_path', { command: 'rename', old_path: '/memories/f.md' }, /`new_path`/],
  ]

  it.each(junk)(
    'refuses %s with a clear error and changes nothing',
    async (_name, input, message) => {
      const result = await box.run(input)
      expect(result.isError).toBe(true)
      expect(text(result)).toMatch(/^Error: /)
      expect(text(result)).toMatch(message)
      expectSafeMessage(result, box)
      expect(await snapshot(box.base)).toBe(before)
    },
  )

  it('reads a null optional field as omitted', async () => {
    const result = await box.run({ command: 'view', path: '/memories/f.md', view_range: null })
    expect(result.isError).toBe(false)
  })
})

describe('symlinks and special files', () => {
  let box: Sandbox
  beforeAll(async () => {
    box = await makeSandbox()
    await box.write('real.md', 'real sentinel text\n')
    await box.write('inside/x.md', 'x\n')
    await fs.symlink(box.sentinel, path.join(box.root, 'out-dir'))
    await fs.symlink(path.join(box.sentinel, 'secret.txt'), path.join(box.root, 'out-file.md'))
    await fs.symlink(path.join(box.root, 'inside'), path.join(box.root, 'in-dir'))
    await fs.symlink('real.md', path.join(box.root, 'in-file.md'))
    await fs.symlink(path.join(box.base, 'nowhere'), path.join(box.root, 'dangling.md'))
    execFileSync('mkfifo', [path.join(box.root, 'pipe.md')])
  })
  afterAll(() => box.cleanup())

  const links = ['out-dir', 'out-file.md', 'in-dir', 'in-file.md', 'dangling.md', 'pipe.md']
  const through = (link: string) => [
    `/memories/${link}`,
    `/memories/${link}/secret.txt`,
    `/memories/${link}/new.md`,
  ]

  it.each(links)('never follows or touches %s', async (link) => {
    const before = await snapshot(box.base)
    for (const p of through(link)) {
      for (const input of commandsFor(p)) {
        if (input.command === 'rename' && input.old_path === '/memories/keep.md') continue
        const result = await box.run(input)
        expect(result.isError, `${JSON.stringify(input)} -> ${text(result)}`).toBe(true)
        expectSafeMessage(result, box)
      }
      const moveInto = await box.run({
        command: 'rename',
        old_path: '/memories/real.md',
        new_path: p,
      })
      expect(moveInto.isError).toBe(true)
    }
    expect(await snapshot(box.base)).toBe(before)
  })

  it('says a link is not followed', async () => {
    expect(text(await box.run({ command: 'view', path: '/memories/out-file.md' }))).toBe(
      'Error: The path /memories/out-file.md is (or passes through) a symbolic link or special file. Memory only works with regular files and folders and never follows links.',
    )
  })

  it('leaves links and special files out of listings', async () => {
    const out = text(await box.run({ command: 'view', path: '/memories' }))
    expect(
      out
        .split('\n')
        .slice(1)
        .map((l) => l.split('\t')[1]),
    ).toEqual(['/memories', '/memories/inside/', '/memories/inside/x.md', '/memories/real.md'])
  })

  it('refuses to work when the root itself is a symlink', async () => {
    const other = await makeSandbox()
    try {
      await fs.rm(other.root, { recursive: true })
      await fs.symlink(other.sentinel, other.root)
      const before = await snapshot(other.sentinel)
      const result = await other.run({ command: 'create', path: '/memories/x.md', file_text: 'x' })
      expect(result.isError).toBe(true)
      expect(await snapshot(other.sentinel)).toBe(before)
    } finally {
      await other.cleanup()
    }
  })

  it('replaces a hard-linked file instead of writing through the link', async () => {
    const other = await makeSandbox()
    try {
      await fs.link(path.join(other.sentinel, 'secret.txt'), path.join(other.root, 'hard.md'))
      const result = await other.run({
        command: 'str_replace',
        path: '/memories/hard.md',
        old_str: 'sentinel',
        new_str: 'changed',
      })
      expect(result.isError).toBe(false)
      expect(await fs.readFile(path.join(other.sentinel, 'secret.txt'), 'utf8')).toBe(
        'sentinel content\n',
      )
      expect(await other.read('hard.md')).toBe('changed content\n')
    } finally {
      await other.cleanup()
    }
  })
})

function expectSafeMessage(result: MemoryExecution, box: Sandbox): void {
  const message = text(result)
  expect(message).not.toContain(box.base)
  expect(message).not.toMatch(/E[A-Z]{3,}:|ENOENT|EACCES|\n\s+at /)
  expect(result.mutation).toBeNull()
}
