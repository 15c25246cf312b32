import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

let box: Sandbox

beforeEach(async () => {
  box = await makeSandbox()
  await box.write('notes.md', 'a\nb\nc\n')
  await box.write('work/x.md', 'x\n')
  await box.write('work/deep/y.md', 'y\n')
})
afterEach(() => box.cleanup())

/** Each command, and what its plan says (beside the files `beforeEach` writes). */
const CASES = [
  [
    { command: 'create', path: '/memories/new/n.md', file_text: 'n\n' },
    { command: 'create', path: '/memories/new/n.md', kind: 'file', before: null, after: 'n\n' },
  ],
  [
    { command: 'create', path: '/memories/notes.md', file_text: 'z\n' },
    { command: 'create', before: 'a\nb\nc\n', after: 'z\n' },
  ],
  [
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'b', new_str: 'B' },
    { command: 'str_replace', before: 'a\nb\nc\n', after: 'a\nB\nc\n' },
  ],
  [
    { command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: 'i' },
    { command: 'insert', before: 'a\nb\nc\n', after: 'a\ni\nb\nc\n' },
  ],
  [
    { command: 'delete', path: '/memories/notes.md' },
    { command: 'delete', kind: 'file', before: 'a\nb\nc\n', after: null },
  ],
  [
    { command: 'delete', path: '/memories/work' },
    {
      command: 'delete',
      kind: 'dir',
      before: null,
      after: null,
      files: ['/memories/work/deep/y.md', '/memories/work/x.md'],
      fileCount: 2,
    },
  ],
  [
    { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/n2.md' },
    { command: 'rename', newPath: '/memories/n2.md', before: 'a\nb\nc\n', after: 'a\nb\nc\n' },
  ],
] as const

describe('preview (a dry run)', () => {
  it('plans each command exactly, writing nothing', async () => {
    const before = await snapshot(box.base)
    for (const [input, planned] of CASES) {
      const dry = await box.tool.preview(input)
      expect(dry.isError, JSON.stringify(input)).toBe(false)
      expect(dry.planned).toMatchObject(planned)
      expect(dry.planned!.fingerprint).toMatch(/\S/)
      // Planning again changes nothing and plans the same.
      expect(await box.tool.preview(input)).toEqual(dry)
    }
    expect(await snapshot(box.base)).toBe(before)
  })

  it('refuses exactly as the command would', async () => {
    const inputs = [
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'zz', new_str: 'y' },
      { command: 'delete', path: '/memories/missing.md' },
      { command: 'create', path: '/memories/../escape.md', file_text: 'x' },
      { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/work/x.md' },
      { command: 'nope' },
    ]
    for (const input of inputs) {
      const dry = await box.tool.preview(input)
      expect(dry.isError).toBe(true)
      expect(dry.planned ?? null).toBeNull()
      const real = await box.tool.execute(input)
      expect({ content: dry.content, code: dry.errorCode }).toEqual({
        content: real.content,
        code: real.errorCode,
      })
    }
  })

  // Review mode holds Claude's command and shows its dry run: the hardening of issue #9 (limits,
  // secrets in text and in names) must refuse a dry run exactly as it refuses the real one.
  it('refuses what the limits and the secret scan refuse, exactly as the command would', async () => {
    const token = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')
    const awsId = ['AKIA', 'Z3MHK7QX2N5P4WTR'].join('')
    const awsSecret = ['wJalrXUtnFEMI', 'K7MDENG', 'bPxRfiCYzq8d3Hs1Lp'].join('/')
    const limited = await makeSandbox({ limits: { maxFileBytes: 64, maxFiles: 4 } })
    try {
      await limited.write('notes.md', 'a\nb\nc\n')
      await limited.write('big.md', 'x'.repeat(100))
      await limited.write('f2.md', 'x')
      await limited.write('f3.md', 'x')
      const cases: ReadonlyArray<readonly [Sandbox, Record<string, unknown>, string]> = [
        [
          limited,
          { command: 'create', path: '/memories/n.md', file_text: 'y'.repeat(65) },
          'too-large',
        ],
        [
          limited,
          {
            command: 'str_replace',
            path: '/memories/notes.md',
            old_str: 'b',
            new_str: 'b'.repeat(70),
          },
          'too-large',
        ],
        [
          limited,
          { command: 'create', path: '/memories/fifth.md', file_text: 'y' },
          'limit-reached',
        ],
        [
          limited,
          {
            command: 'str_replace',
            path: '/memories/big.md',
            old_str: 'x'.repeat(100),
            new_str: 'y'.repeat(100),
          },
          'too-large',
        ],
        [
          box,
          {
            command: 'create',
            path: '/memories/k.md',
            file_text: `AWS secret access key: ${awsSecret}`,
          },
          'secret-detected',
        ],
        [
          box,
          {
            command: 'insert',
            path: '/memories/notes.md',
            insert_line: 1,
            insert_text: `id ${awsId}`,
          },
          'secret-detected',
        ],
        [
          box,
          { command: 'create', path: `/memories/${token}.md`, file_text: 'x' },
          'secret-detected',
        ],
        [
          box,
          {
            command: 'rename',
            old_path: '/memories/notes.md',
            new_path: `/memories/${awsId}/n.md`,
          },
          'secret-detected',
        ],
      ]
      for (const [sandbox, input, code] of cases) {
        const before = await snapshot(sandbox.base)
        const dry = await sandbox.tool.preview(input)
        expect({ isError: dry.isError, code: dry.errorCode }, JSON.stringify(input)).toEqual({
          isError: true,
          code,
        })
        expect(dry.planned ?? null).toBeNull()
        // Neither the dry run's answer nor its (absent) plan repeats the secret.
        for (const secret of [token, awsId, awsSecret]) expect(text(dry)).not.toContain(secret)
        const real = await sandbox.tool.execute(input)
        expect({ content: dry.content, code: dry.errorCode }).toEqual({
          content: real.content,
          code: real.errorCode,
        })
        expect(await snapshot(sandbox.base)).toBe(before)
      }
    } finally {
      await limited.cleanup()
    }
  })

  it('fingerprints the state: the same plan later has the same print, a change another', async () => {
    const input = { command: 'str_replace', path: '/memories/notes.md', old_str: 'b', new_str: 'B' }
    const first = (await box.tool.preview(input)).planned!.fingerprint
    expect((await box.tool.preview(input)).planned!.fingerprint).toBe(first)
    await box.write('notes.md', 'a\nb\nc\nd\n')
    expect((await box.tool.preview(input)).planned!.fingerprint).not.toBe(first)
    const folder = { command: 'delete', path: '/memories/work' }
    const print = (await box.tool.preview(folder)).planned!.fingerprint
    await box.write('work/deep/z.md', 'z\n')
    expect((await box.tool.preview(folder)).planned!.fingerprint).not.toBe(print)
  })

  it('has no plan for a view', async () => {
    const dry = await box.tool.preview({ command: 'view', path: '/memories' })
    expect(dry.isError).toBe(false)
    expect(dry.planned).toBeNull()
  })

  it.each(CASES)(
    'describes a run as its dry run plans it, when asked: %j',
    async (input, planned) => {
      const dry = await box.tool.preview(input)
      const { fingerprint: _, ...expected } = dry.planned!
      const run = await box.tool.execute(input, { describe: true })
      expect(run.isError).toBe(false)
      expect(run.made).toEqual(expected)
      expect(run.made).toMatchObject(planned)
      expect(run.planned).toBeUndefined()
      // It ran: the dry run now plans something else (or refuses).
      const again = await box.tool.preview(input)
      expect(again.isError ? null : again.planned!.fingerprint).not.toBe(dry.planned!.fingerprint)
    },
  )

  it('describes nothing unless asked, and nothing for a refusal or a view', async () => {
    const plain = await box.tool.execute({
      command: 'str_replace',
      path: '/memories/notes.md',
      old_str: 'b',
      new_str: 'B',
    })
    expect(plain.isError).toBe(false)
    expect(plain.made).toBeUndefined()
    const refused = await box.tool.execute(
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'gone', new_str: 'x' },
      { describe: true },
    )
    expect(refused.isError).toBe(true)
    expect(refused.made).toBeUndefined()
    const view = await box.tool.execute({ command: 'view', path: '/memories' }, { describe: true })
    expect(view.made).toBeUndefined()
  })
})
