import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, type Sandbox } from './test-support'

let box: Sandbox

beforeEach(async () => {
  box = await makeSandbox()
  await box.write('notes.md', 'a\nb\nc\n')
  await box.write('work/x.md', 'x\n')
  await box.write('work/deep/y.md', 'y\n')
})
afterEach(() => box.cleanup())

describe('preview (a dry run)', () => {
  it('plans each command exactly, writing nothing', async () => {
    const before = await snapshot(box.base)
    const cases = [
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
    for (const [input, planned] of cases) {
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
})
