/**
 * Runs the same commands through Cairn's handler and the SDK's reference handler
 * (`BetaLocalFilesystemMemoryTool`), each on its own temp root, as Claude would see them
 * (through the SDK's `runRunnableTool`). Where the official behaviour agrees the outputs must be
 * identical; every deliberate difference has its own test below (and a line in docs/memory-tool.md).
 */

import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory'
import {
  runRunnableTool,
  type BetaRunnableTool,
  type BetaToolRunContext,
  type RunnableToolOutcome,
} from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryTool, type MemoryToolOptions } from './memory-tool'
import { createRunnableMemoryTool } from './sdk-adapter'
import { snapshot } from './test-support'
import { TINY_PNG } from '../../../test/fixtures/images'

interface Pair {
  readonly oursRoot: string
  readonly refRoot: string
  run(
    input: Record<string, unknown>,
  ): Promise<{ ours: RunnableToolOutcome; ref: RunnableToolOutcome }>
  /** Writes the same file under both roots (setup). */
  seed(relative: string, content: string | Buffer): Promise<void>
}

const bases: string[] = []

async function makePair(options: Partial<MemoryToolOptions> = {}): Promise<Pair> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-conformance-'))
  bases.push(base)
  const oursRoot = path.join(base, 'ours', 'memories')
  const reference = await BetaLocalFilesystemMemoryTool.init(path.join(base, 'ref'))
  const refRoot = path.join(base, 'ref', 'memories')
  const handler = createMemoryTool({ root: oursRoot, ...options })
  const ours = createRunnableMemoryTool((input) => handler.execute(input)) as BetaRunnableTool
  const ref = betaMemoryTool(reference) as BetaRunnableTool
  await fs.mkdir(oursRoot, { recursive: true, mode: 0o700 })
  let n = 0
  const context = (): BetaToolRunContext => {
    const toolUse = {
      type: 'tool_use',
      id: `toolu_${n++}`,
      name: 'memory',
      input: {},
    } as BetaToolRunContext['toolUse']
    return { toolUse, toolUseBlock: toolUse }
  }
  return {
    oursRoot,
    refRoot,
    run: async (input) => ({
      ours: await runRunnableTool(ours, input, context()),
      ref: await runRunnableTool(ref, input, context()),
    }),
    seed: async (relative, content) => {
      for (const root of [oursRoot, refRoot]) {
        await fs.mkdir(path.dirname(path.join(root, relative)), { recursive: true })
        await fs.writeFile(path.join(root, relative), content)
      }
    },
  }
}

afterEach(async () => {
  await Promise.all(
    bases.splice(0).map((b) => fs.rm(b, { recursive: true, force: true, maxRetries: 10 })),
  )
})

// Only deliberate difference inside listings: whole sizes keep their decimal (4.0K, as the docs show).
const referenceSizes = (outcome: RunnableToolOutcome): RunnableToolOutcome => ({
  ...outcome,
  content:
    typeof outcome.content === 'string'
      ? outcome.content.replace(/^(\d+)\.0([KMG])\t/gm, '$1$2\t')
      : outcome.content,
})

// Command sequences on which the official behaviour agrees. Files are seeded without a final
// newline where the line model would otherwise differ (see the differences below).
const AGREEING_SEQUENCES: ReadonlyArray<[string, ReadonlyArray<Record<string, unknown>>]> = [
  [
    'create, view, edit, insert, rename, delete a file',
    [
      { command: 'view', path: '/memories' },
      {
        command: 'create',
        path: '/memories/notes.md',
        file_text: 'alpha\nbeta\ngamma\ndelta\nepsilon\nzeta',
      },
      { command: 'view', path: '/memories' },
      { command: 'view', path: '/memories/notes.md' },
      { command: 'view', path: '/memories/notes.md', view_range: [2, 4] },
      { command: 'view', path: '/memories/notes.md', view_range: [3, -1] },
      { command: 'view', path: '/memories/notes.md', view_range: [5, 60] },
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'gamma', new_str: 'GAMMA' },
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'alpha', new_str: 'first' },
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'zeta', new_str: 'last' },
      {
        command: 'str_replace',
        path: '/memories/notes.md',
        old_str: 'beta',
        new_str: 'costs $& and $$1',
      },
      { command: 'view', path: '/memories/notes.md' },
      { command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: 'top' },
      { command: 'insert', path: '/memories/notes.md', insert_line: 3, insert_text: 'middle\n' },
      { command: 'insert', path: '/memories/notes.md', insert_line: 8, insert_text: 'bottom' },
      { command: 'insert', path: '/memories/notes.md', insert_line: 99, insert_text: 'x' },
      { command: 'insert', path: '/memories/notes.md', insert_line: -1, insert_text: 'x' },
      { command: 'view', path: '/memories/notes.md' },
      { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/archive/notes.md' },
      { command: 'view', path: '/memories' },
      { command: 'delete', path: '/memories/archive/notes.md' },
      { command: 'delete', path: '/memories/archive/notes.md' },
      { command: 'view', path: '/memories' },
    ],
  ],
  [
    'folders: nested create, listing, rename and delete of directories',
    [
      { command: 'create', path: '/memories/projects/cairn/plan.md', file_text: 'plan' },
      { command: 'create', path: '/memories/projects/cairn/deep/more/x.md', file_text: 'deep' },
      { command: 'create', path: '/memories/projects/other.md', file_text: 'other file' },
      { command: 'create', path: '/memories/people.md', file_text: 'Ada\nGrace' },
      { command: 'create', path: '/memories/a-b.md', file_text: 'dash' },
      { command: 'view', path: '/memories' },
      { command: 'view', path: '/memories/projects' },
      { command: 'view', path: '/memories/projects', view_range: [1, 2] },
      { command: 'rename', old_path: '/memories/projects/cairn', new_path: '/memories/cairn' },
      { command: 'view', path: '/memories' },
      { command: 'rename', old_path: '/memories/people.md', new_path: '/memories/cairn/plan.md' },
      { command: 'rename', old_path: '/memories/missing.md', new_path: '/memories/found.md' },
      { command: 'delete', path: '/memories/cairn' },
      { command: 'delete', path: '/memories' },
      { command: 'rename', old_path: '/memories', new_path: '/memories/x' },
      { command: 'view', path: '/memories' },
    ],
  ],
  [
    'str_replace deleting text and editing one-line files',
    [
      { command: 'create', path: '/memories/one.md', file_text: 'only line' },
      { command: 'str_replace', path: '/memories/one.md', old_str: ' line', new_str: '' },
      { command: 'view', path: '/memories/one.md' },
      {
        command: 'str_replace',
        path: '/memories/one.md',
        old_str: 'only',
        new_str: 'line 1\nline 2\nline 3',
      },
      { command: 'view', path: '/memories/one.md' },
      { command: 'delete', path: '/memories/one.md' },
    ],
  ],
]

describe('conformance with the SDK reference handler', () => {
  it.each(AGREEING_SEQUENCES)('agrees on: %s', async (_name, steps) => {
    const pair = await makePair()
    for (const step of steps) {
      const { ours, ref } = await pair.run(step)
      const listing = step.command === 'view' && !String(step.path).endsWith('.md')
      expect(listing ? referenceSizes(ours) : ours, JSON.stringify(step)).toEqual(ref)
    }
    expect(await snapshot(pair.oursRoot)).toBe(await snapshot(pair.refRoot))
  })

  it("agrees on create of an existing file with createExisting: 'error'", async () => {
    const pair = await makePair({ createExisting: 'error' })
    await pair.run({ command: 'create', path: '/memories/a.md', file_text: 'one' })
    const { ours, ref } = await pair.run({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'two',
    })
    expect(ours).toEqual(ref)
    expect(ours).toEqual({ content: 'Error: File /memories/a.md already exists', isError: true })
  })
})

describe('deliberate differences from the reference handler', () => {
  let pair: Pair
  beforeEach(async () => {
    pair = await makePair()
  })

  it('D1: the docs error texts without "Error:" are kept as the docs write them', async () => {
    const missing = await pair.run({ command: 'view', path: '/memories/none.md' })
    expect(missing.ours.content).toBe(
      'The path /memories/none.md does not exist. Please provide a valid path.',
    )
    expect(missing.ref.content).toBe(
      'Error: The path /memories/none.md does not exist. Please provide a valid path.',
    )
    await pair.seed('f.md', 'abc')
    const absent = await pair.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'zzz',
      new_str: 'y',
    })
    expect(absent.ours.content).toBe(
      'No replacement was performed, old_str `zzz` did not appear verbatim in /memories/f.md.',
    )
    expect(absent.ref.content).toBe('Error: ' + absent.ours.content)
  })

  it('D2: sizes keep one decimal for whole units (4.0K), as the docs show', async () => {
    await pair.seed('four.md', 'x'.repeat(4096))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories' })
    expect(ours.content).toContain('4.0K\t/memories/four.md')
    expect(ref.content).toContain('4K\t/memories/four.md')
  })

  it('D2: a size that rounds to 1024.0K is shown as 1.0M', async () => {
    await pair.seed('almost.md', 'x'.repeat(1024 * 1024 - 1))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories' })
    expect(ours.content).toContain('1.0M\t/memories/almost.md')
    expect(ref.content).toContain('1024.0K\t/memories/almost.md')
  })

  it('D3: a final newline ends the last line instead of adding an empty one', async () => {
    await pair.seed('f.md', 'a\nb\n')
    const view = await pair.run({ command: 'view', path: '/memories/f.md' })
    expect(view.ours.content).toBe(
      "Here's the content of /memories/f.md with line numbers:\n     1\ta\n     2\tb",
    )
    expect(view.ref.content).toBe(`${view.ours.content}\n     3\t`)
    const insert = await pair.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 3,
      insert_text: 'c',
    })
    expect(insert.ours.content).toMatch(/^Error: Invalid `insert_line` parameter: 3\. .*\[0, 2\]$/)
    expect(insert.ref.isError).toBe(false)
    expect(await fs.readFile(path.join(pair.refRoot, 'f.md'), 'utf8')).toBe('a\nb\n\nc')
  })

  it('D4: create overwrites an existing file by default and says so', async () => {
    await pair.seed('f.md', 'old')
    const { ours, ref } = await pair.run({
      command: 'create',
      path: '/memories/f.md',
      file_text: 'new',
    })
    expect(ours).toEqual({
      content:
        'File created successfully at: /memories/f.md. The file already existed; its previous content was replaced.',
      isError: false,
    })
    expect(ref).toEqual({ content: 'Error: File /memories/f.md already exists', isError: true })
  })

  it('D5: str_replace matches across lines and counts occurrences, not lines', async () => {
    await pair.seed('f.md', 'one\ntwo\nthe cat and the cat')
    const multi = await pair.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'one\ntwo',
      new_str: '1\n2',
    })
    expect(multi.ours.isError).toBe(false)
    expect(multi.ref.content).toMatch(/^Error: No replacement was performed, old_str/)
    const twice = await pair.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'cat',
      new_str: 'dog',
    })
    expect(twice.ours).toEqual({
      content:
        'No replacement was performed. Multiple occurrences of old_str `cat` in lines: 3, 3. Please ensure it is unique',
      isError: true,
    })
    // The reference sees one matching line and replaces the first cat.
    expect(twice.ref.isError).toBe(false)
  })

  it('D6: str_replace rejects an empty old_str and reads an omitted new_str as deletion', async () => {
    await pair.seed('f.md', 'keep drop')
    const empty = await pair.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: '',
      new_str: 'x',
    })
    expect(empty.ours.isError).toBe(true)
    expect(empty.ref.isError).toBe(false)
    const omitted = await pair.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: ' drop',
    })
    expect(omitted.ours.isError).toBe(false)
    expect(await fs.readFile(path.join(pair.oursRoot, 'f.md'), 'utf8')).toBe('keep')
    expect(await fs.readFile(path.join(pair.refRoot, 'f.md'), 'utf8')).toContain('undefined')
  })

  it('D7: a malformed view_range is an error, not an empty or clamped view', async () => {
    await pair.seed('f.md', 'a\nb')
    for (const range of [[0, 1], [5, -1], [2, 1], [1]]) {
      const { ours, ref } = await pair.run({
        command: 'view',
        path: '/memories/f.md',
        view_range: range,
      })
      expect(ours.isError, JSON.stringify(range)).toBe(true)
      expect(ref.isError).toBe(false)
    }
  })

  it('D8: view output is capped at 16,000 characters with a note to continue', async () => {
    await pair.seed('long.md', Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n'))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/long.md' })
    expect(String(ours.content).length).toBeLessThanOrEqual(16_000)
    expect(ours.content).toMatch(/view_range: \[\d+, -1\]\]$/)
    expect(String(ref.content).length).toBeGreaterThan(16_000)
  })

  it('D9: .png/.jpg/.jpeg are returned as image blocks', async () => {
    await pair.seed('p.png', TINY_PNG)
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/p.png' })
    expect(ours.content).toMatchObject([{ type: 'text' }, { type: 'image' }])
    expect(typeof ref.content).toBe('string')
  })

  it('D10: hostile paths the reference accepts are refused', async () => {
    for (const p of [
      '/memoriesX/a.md',
      '/memories/.hidden.md',
      '/memories/CON',
      '/memories/a:b.md',
      '/memories/%2e%2e',
    ]) {
      const { ours, ref } = await pair.run({ command: 'create', path: p, file_text: 'x' })
      expect(ours.isError, p).toBe(true)
      expect(ref.isError, p).toBe(false)
    }
  })

  it('D11: symlinks are never followed, even inside the root', async () => {
    await pair.seed('real.md', 'real')
    await fs.symlink('real.md', path.join(pair.oursRoot, 'link.md'))
    await fs.symlink('real.md', path.join(pair.refRoot, 'link.md'))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/link.md' })
    expect(ours.isError).toBe(true)
    expect(ref.isError).toBe(false)
  })

  it('D12: a failed rename leaves no destination folders behind', async () => {
    const { ours, ref } = await pair.run({
      command: 'rename',
      old_path: '/memories/none.md',
      new_path: '/memories/new/x.md',
    })
    expect(ours).toEqual(ref)
    expect(await fs.readdir(pair.oursRoot)).toEqual([])
    expect(await fs.readdir(pair.refRoot)).toEqual(['new'])
  })

  it('D13: insert on a missing path answers the docs text', async () => {
    const { ours, ref } = await pair.run({
      command: 'insert',
      path: '/memories/none.md',
      insert_line: 0,
      insert_text: 'x',
    })
    expect(ours.content).toBe('Error: The path /memories/none.md does not exist')
    expect(ref.content).toBe(
      'Error: The path /memories/none.md does not exist. Please provide a valid path.',
    )
  })

  it('D14: str_replace on a directory answers "does not exist", as the docs say', async () => {
    await pair.seed('d/x.md', 'x')
    const { ours, ref } = await pair.run({
      command: 'str_replace',
      path: '/memories/d',
      old_str: 'a',
      new_str: 'b',
    })
    expect(ours.content).toBe(
      'Error: The path /memories/d does not exist. Please provide a valid path.',
    )
    expect(ref.content).toBe('Error: The path /memories/d is not a file.')
  })

  it('D15: the line limit answers the docs text', async () => {
    await pair.seed('big.md', '\n'.repeat(1_000_000))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/big.md' })
    expect(ours.content).toBe('File /memories/big.md exceeds maximum line limit of 999,999 lines.')
    expect(ref.content).toBe(
      'Error: File /memories/big.md has too many lines (1000001). Maximum is 999,999 lines.',
    )
  })

  it('D16: writes are checked for secrets and limits', async () => {
    const token = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')
    const { ours, ref } = await pair.run({
      command: 'create',
      path: '/memories/t.md',
      file_text: token,
    })
    expect(ours.isError).toBe(true)
    expect(ref.isError).toBe(false)
    // Over the default 1 MiB per file: refused here, written by the reference.
    const big = await pair.run({
      command: 'create',
      path: '/memories/big.md',
      file_text: 'a'.repeat(1024 * 1024 + 1),
    })
    expect(big.ours).toMatchObject({ isError: true, content: expect.stringMatching(/limit/) })
    expect(big.ref.isError).toBe(false)
    expect(await fs.readdir(pair.oursRoot)).toEqual([])
    expect(await fs.readdir(pair.refRoot)).toEqual(['big.md', 't.md'])
  })

  it('D17: a trailing slash is normalized away in what is shown', async () => {
    await pair.seed('a.md', 'a')
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/' })
    expect(ours.content).toContain('\t/memories/a.md')
    expect(ref.content).toContain('\t/memories//a.md')
  })

  it('D18: listings leave out names no memory path can address', async () => {
    await pair.seed('ok.md', 'a')
    await pair.seed('CON.md', 'a')
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories' })
    expect(ours.content).not.toContain('CON.md')
    expect(ref.content).toContain('CON.md')
  })

  it('D19: an empty file is shown as empty, not as one blank line', async () => {
    await pair.seed('e.md', '')
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/e.md' })
    expect(ours.content).toBe(
      "Here's the content of /memories/e.md with line numbers:\n[The file is empty.]",
    )
    expect(ref.content).toBe("Here's the content of /memories/e.md with line numbers:\n     1\t")
  })

  it('D20: files that are not UTF-8 are refused instead of shown mangled', async () => {
    await pair.seed('bin.md', Buffer.from([0x61, 0xff, 0x62]))
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/bin.md' })
    expect(ours.isError).toBe(true)
    expect(ref.content).toContain('\uFFFD')
  })

  it('D21: malformed input is answered with a clear error naming the problem', async () => {
    const { ours, ref } = await pair.run({ command: 'exec', path: '/memories' })
    expect(ours.content).toBe(
      'Error: Unknown command `exec`. Use one of: view, create, str_replace, insert, delete, rename.',
    )
    expect(ref.content).toBe('Error: exec not implemented')
  })

  it('D23: a rename to a path ending in / is refused instead of making a file of that name', async () => {
    await pair.seed('a.md', 'one')
    const { ours, ref } = await pair.run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/newdir/',
    })
    expect(ours.isError).toBe(true)
    expect(ours.content).toContain("rename needs the file's full new path")
    expect(ref.isError).toBe(false)
    expect((await fs.stat(path.join(pair.refRoot, 'newdir'))).isFile()).toBe(true)
    expect((await fs.stat(path.join(pair.oursRoot, 'a.md'))).isFile()).toBe(true)
  })

  it('D23 is for files only: a folder renamed to a path ending in / is renamed as the reference does', async () => {
    for (const oldPath of ['/memories/drafts', '/memories/drafts/']) {
      const pair = await makePair()
      await pair.seed('drafts/n.md', 'n')
      await pair.seed('drafts/deep/m.md', 'm')
      const { ours, ref } = await pair.run({
        command: 'rename',
        old_path: oldPath,
        new_path: '/memories/archive/',
      })
      expect(ref.isError, oldPath).toBe(false)
      // Only the shown path differs: it is normalized (D17).
      expect(ours).toEqual({
        ...ref,
        content: 'Successfully renamed /memories/drafts to /memories/archive',
      })
      expect(await snapshot(pair.oursRoot)).toBe(await snapshot(pair.refRoot))
      expect(await fs.readdir(pair.oursRoot)).toEqual(['archive'])
    }
    // A missing source is missing, whatever the destination looks like.
    const { ours, ref } = await pair.run({
      command: 'rename',
      old_path: '/memories/gone',
      new_path: '/memories/x/',
    })
    expect(ours).toEqual({ ...ref, content: 'Error: The path /memories/gone does not exist' })
    expect(ref.isError).toBe(true)
    expect(String(ref.content)).toContain('does not exist')
  })

  it('D22: a listing too long for one reply is paged breadth-first by view_range', async () => {
    for (let d = 0; d < 30; d++) {
      for (let f = 0; f < 25; f++) await pair.seed(`topic-${d}/note-${f}.md`, 'x')
    }
    const entries = (content: unknown) =>
      String(content)
        .split('\n')
        .slice(2)
        .flatMap((line) => /^\S+\t(\/memories\/\S+)$/.exec(line)?.[1] ?? []) // sizes differ (D2)
    const first = await pair.run({ command: 'view', path: '/memories' })
    const refLines = entries(first.ref.content)
    expect(refLines).toHaveLength(30 * 26)
    // The reference lists depth-first, whole, and ignores a view_range on a directory.
    const again = await pair.run({ command: 'view', path: '/memories', view_range: [500, -1] })
    expect(again.ref.content).toBe(first.ref.content)
    // Ours names every folder at once; the pages together hold the reference's entries.
    const pages = [String(first.ours.content)]
    let next = /view_range: \[(\d+), -1\]\]$/.exec(pages[0]!)
    while (next) {
      const page = await pair.run({
        command: 'view',
        path: '/memories',
        view_range: [Number(next[1]), -1],
      })
      pages.push(String(page.ours.content))
      next = /view_range: \[(\d+), -1\]\]$/.exec(pages.at(-1)!)
    }
    for (let d = 0; d < 30; d++) expect(pages[0]).toContain(`\t/memories/topic-${d}/\n`)
    expect(pages.length).toBeGreaterThan(1)
    expect(pages.flatMap(entries).sort()).toEqual([...refLines].sort())
  })

  it('D24: a leading byte order mark is not part of line 1 and stays first on an edit', async () => {
    const file = Buffer.from('\uFEFFhello\nworld\n')
    await pair.seed('b.md', file)
    const viewed = await pair.run({ command: 'view', path: '/memories/b.md' })
    expect(String(viewed.ours.content)).not.toContain('\uFEFF')
    expect(String(viewed.ref.content)).toContain('\uFEFFhello')
    await pair.run({
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 0,
      insert_text: 'top',
    })
    expect(await fs.readFile(path.join(pair.oursRoot, 'b.md'), 'utf8')).toBe(
      '\uFEFFtop\nhello\nworld\n',
    )
    // The reference puts the text before the mark, which is now a stray character in line 2.
    expect(await fs.readFile(path.join(pair.refRoot, 'b.md'), 'utf8')).toBe(
      'top\n\uFEFFhello\nworld\n',
    )
  })

  it('D9: a text file named like an image is viewed as its text', async () => {
    await pair.seed('outline.png', 'Not a picture.\n')
    const { ours, ref } = await pair.run({ command: 'view', path: '/memories/outline.png' })
    expect(ours.content).toBe(
      "Here's the content of /memories/outline.png with line numbers:\n     1\tNot a picture.",
    )
    expect(String(ref.content)).toContain('     1\tNot a picture.')
  })

  it('D18: the composed spelling of a decomposed name in the folder is refused, never a twin', async () => {
    await pair.seed('cafe\u0301.md', 'Flat white.\n')
    const input = { command: 'create', path: '/memories/caf\u00e9.md', file_text: 'x\n' }
    const { ours, ref } = await pair.run(input)
    expect(ours.isError).toBe(true)
    expect(String(ours.content)).toMatch(
      /^Error: Cannot create \/memories\/café\.md: \/memories holds the file/,
    )
    expect(ref.isError).toBe(false)
    expect(await fs.readdir(pair.oursRoot)).toEqual(['cafe\u0301.md'])
    expect((await fs.readdir(pair.refRoot)).sort()).toEqual(['cafe\u0301.md', 'caf\u00e9.md'])
  })

  it('D25: a lone surrogate in a string field is refused, not written as U+FFFD', async () => {
    const input = { command: 'create', path: '/memories/s.md', file_text: 'half \uD83D\n' }
    const { ours, ref } = await pair.run(input)
    expect(ours.isError).toBe(true)
    expect(String(ours.content)).toMatch(
      /^Error: Invalid `file_text` parameter for `create`: it contains a lone surrogate/,
    )
    await expect(fs.readdir(pair.oursRoot)).resolves.toEqual([])
    expect(ref.isError).toBe(false)
    expect(await fs.readFile(path.join(pair.refRoot, 's.md'), 'utf8')).toBe('half \uFFFD\n')
  })
})
