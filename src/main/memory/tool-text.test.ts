import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_VIEW_CHARS } from './format'
import { createMemoryTool } from './memory-tool'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, defects D1 and D8 found by review: what the tool says to Claude (and the UI).

// Half a surrogate pair: the Messages API refuses a request holding one, for good.
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const EMOJI = '😀'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

/** The emoji right after `prefix` in `out` is whole, or it and all after it are gone. */
function keptOrDropped(out: string, prefix: string): void {
  expect(out).not.toMatch(LONE)
  const at = out.indexOf(prefix)
  expect(at).toBeGreaterThanOrEqual(0)
  const next = out.slice(at + prefix.length)
  expect(next.startsWith(EMOJI) || !next.startsWith(EMOJI.charAt(0))).toBe(true)
}

describe('no half emoji in what the tool answers (D1)', () => {
  it('quotes an unknown command cut at 40 characters without splitting an emoji', async () => {
    const prefix = 'x'.repeat(39)
    const result = await box.run({ command: prefix + EMOJI })
    expect(result.isError).toBe(true)
    keptOrDropped(text(result), prefix)
    expect(text(result)).toBe(
      `Error: Unknown command \`${prefix}…\`. Use one of: view, create, str_replace, insert, delete, rename.`,
    )
  })

  it('quotes an unexpected parameter cut at 40 characters without splitting an emoji', async () => {
    const prefix = 'k'.repeat(39)
    const result = await box.run({ command: 'view', path: '/memories', [prefix + EMOJI]: 1 })
    expect(result.isError).toBe(true)
    keptOrDropped(text(result), prefix)
    expect(text(result)).toContain(`Unexpected parameter \`${prefix}…\` for \`view\``)
  })

  it('quotes a long refused path cut at 200 characters without splitting an emoji', async () => {
    const prefix = '/memories/' + 'a'.repeat(189)
    const result = await box.run({ command: 'view', path: `${prefix}${EMOJI}/%41` })
    expect(result.isError).toBe(true)
    keptOrDropped(text(result), prefix)
    expect(text(result)).toContain(`${prefix}…`)
  })

  it('cuts a line too long for one view at a whole emoji', async () => {
    const prefix = 'a'.repeat(15_542)
    const created = await box.run({
      command: 'create',
      path: '/memories/one.md',
      file_text: `${prefix}${EMOJI.repeat(300)}\nsecond line\n`,
    })
    expect(created.isError).toBe(false)
    const out = text(await box.run({ command: 'view', path: '/memories/one.md' }))
    expect(out.length).toBeLessThanOrEqual(MAX_VIEW_CHARS)
    keptOrDropped(out, prefix)
    // Every position of the cut keeps the reply well-formed.
    for (let extra = 0; extra < 4; extra++) {
      await box.write('two.md', 'b'.repeat(15_500 + extra) + EMOJI.repeat(400))
      const view = text(await box.run({ command: 'view', path: '/memories/two.md' }))
      expect(view).not.toMatch(LONE)
    }
  })

  it('says plainly that a cut line cannot be viewed whole, and how to go on after it', async () => {
    const long = 'z'.repeat(40_000)
    await box.write('long-line.md', `${long}\nafter\n`)
    const out = text(await box.run({ command: 'view', path: '/memories/long-line.md' }))
    const note = out.split('\n').at(-1)!
    expect(note).toMatch(
      /^\[Line 1 is too long to show whole: only its first [\d,]+ of 40,000 characters are shown/,
    )
    expect(note).toContain('no view shows the rest of it')
    expect(note).toMatch(/To continue, view with view_range: \[2, -1\]\]$/)
    const shown = Number(/first ([\d,]+) of/.exec(note)![1]!.replace(/,/g, ''))
    expect(out.split('\n')[1]).toBe(`     1\t${'z'.repeat(shown)}`)
    // The last line of a file: nothing to go on to.
    await box.write('last.md', long)
    const last = text(await box.run({ command: 'view', path: '/memories/last.md' }))
    expect(last.split('\n').at(-1)).not.toContain('To continue')
    expect(last.split('\n').at(-1)).toContain('too long to show whole')
  })
})

describe('view of a bounded range (D8a)', () => {
  it('names the exact rest of the range asked for, not the rest of the file', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line number ${i + 1} of the file`)
    await box.write('long.md', lines.join('\n') + '\n')
    const out = text(
      await box.run({ command: 'view', path: '/memories/long.md', view_range: [1, 1000] }),
    )
    const match = /view_range: \[(\d+), (-?\d+)\]\]$/.exec(out)
    expect(match).not.toBeNull()
    const next = Number(match![1])
    expect(Number(match![2])).toBe(1000)
    expect(out.split('\n').at(-2)).toBe(
      `${String(next - 1).padStart(6)}\tline number ${next - 1} of the file`,
    )
    // Asked to the end (-1), it still says -1.
    const open = text(
      await box.run({ command: 'view', path: '/memories/long.md', view_range: [1, -1] }),
    )
    expect(open).toMatch(/view_range: \[\d+, -1\]\]$/)
  })
})

describe('rename of a file under itself (D8b)', () => {
  it('says the destination lies under a file, not that a directory moves into itself', async () => {
    await box.write('long.md', 'text\n')
    const before = await snapshot(box.root)
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/long.md',
      new_path: '/memories/long.md/x',
    })
    expect(result).toMatchObject({ isError: true, errorCode: 'conflict' })
    expect(text(result)).toBe(
      'Error: Cannot rename to /memories/long.md/x: /memories/long.md is a file, not a directory.',
    )
    expect(await snapshot(box.root)).toBe(before)
  })
})

describe('echoed names with invisible characters (D8c)', () => {
  it('escapes line breaks and bidi overrides in an unexpected parameter', async () => {
    const result = await box.run({ command: 'view', path: '/memories', 'a\nb\u202Ec\td': 1 })
    expect(text(result)).toBe(
      'Error: Unexpected parameter `a\\nb\\u202Ec\\td` for `view`. Its parameters are: path, view_range.',
    )
    expect(text(result)).not.toMatch(/[\n\u202E\t]/)
  })

  it('escapes them in an unknown command too', async () => {
    const result = await box.run({ command: 'view\n\u202Edelete' })
    expect(text(result)).toContain('Unknown command `view\\n\\u202Edelete`.')
    expect(text(result)).not.toMatch(/[\n\u202E]/)
  })
})

describe('the root folder (D8d)', () => {
  it('exists, owner-only, as soon as the tool is made', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-root-'))
    try {
      const root = path.join(base, 'memories')
      createMemoryTool({ root })
      const stats = await fs.stat(root)
      expect(stats.isDirectory()).toBe(true)
      expect(stats.mode & 0o077).toBe(0)
    } finally {
      await fs.rm(base, { recursive: true, force: true, maxRetries: 10 })
    }
  })

  it('when it cannot be made, every command says so clearly and nothing leaks', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-root-'))
    try {
      // Its parent is a file: the root cannot be made now, and creating the tool does not throw.
      await fs.writeFile(path.join(base, 'file'), 'x')
      const tool = createMemoryTool({ root: path.join(base, 'file', 'memories') })
      const result = await tool.execute({ command: 'view', path: '/memories' })
      expect(result.isError).toBe(true)
      expect(text(result)).toMatch(
        /^Error: The memory command failed because .+\. Nothing was changed\.$/,
      )
      expect(text(result)).not.toContain(base)
    } finally {
      await fs.rm(base, { recursive: true, force: true, maxRetries: 10 })
    }
  })
})
