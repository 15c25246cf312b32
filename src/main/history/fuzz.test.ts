import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addTotals, size } from '../../../test/stress/stress'
import { treeHash } from '../../../test/stress/tree-hash'
import { CairnError } from '../lib/errors'
import { memoryBrowserHandlers } from '../memory-browser'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { fsck, headFolderDifferences, CLAUDE } from './test-helpers'

// Fuzzing (issue #9): sequences of valid, malformed and hostile commands (Memory tool and
// user API), run one by one and in concurrent bursts, with links planted into the folder by
// "another process". A sentinel tree beside the memory folder, and one outside the data
// folder, are checked by hash: nothing outside is ever touched, no exception escapes, no
// host path appears in any result.

const FILES = ['a.md', 'b.md', 'd/c.md', 'd/e/f.md', 'link/x.md', 'sentinel-link', 'up/x.md']
const DIRS = ['d', 'd/e', 'link', 'up', 'new']
const HOSTILE = [
  '/memories/../sentinel/secret.md',
  '/memories/%2e%2e/sentinel/secret.md',
  '/memories/..\\sentinel\\secret.md',
  '/memories/link/secret.md',
  '/memories/link/../../sentinel/secret.md',
  '/memories/.git/config',
  '/memories/.cairn-tmp-x',
  '/memories/a\u0000.md',
  '/memories/a\nb.md',
  '/memories//a.md',
  '/etc/passwd',
  '/memoriesX/a.md',
  '~/.ssh/id_rsa',
  `/memories/${'x'.repeat(600)}`,
  '/memories/CON',
  '/memories/\u202egnp.md',
  '',
  '/',
]

const anyPath = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FILES, ...DIRS).map((p) => `/memories/${p}`) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('..', '.', 'a', 'link', '%2e', '\\', '', 'sentinel'), { maxLength: 5 })
      .map((parts) => `/memories/${parts.join('/')}`),
  },
)
const text = fc.oneof(
  fc.constantFrom('', 'x', 'alpha\nbeta\n', 'sentinel'),
  fc.string({ maxLength: 60 }),
)
const junk = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.anything(), { maxKeys: 4 }),
)

const toolCommand: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ command: fc.constant('view'), path: anyPath }),
  fc.record({ command: fc.constant('create'), path: anyPath, file_text: text }),
  fc.record({ command: fc.constant('str_replace'), path: anyPath, old_str: text, new_str: text }),
  fc.record({
    command: fc.constant('insert'),
    path: anyPath,
    insert_line: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double()),
    insert_text: text,
  }),
  fc.record({ command: fc.constant('delete'), path: anyPath }),
  fc.record({ command: fc.constant('rename'), old_path: anyPath, new_path: anyPath }),
  // Malformed: wrong types, missing or extra fields, unknown commands.
  fc.record({ command: fc.constantFrom('view', 'exec', '__proto__', 'create'), path: junk }),
  fc.record({ command: fc.constant('create'), path: anyPath, file_text: junk, extra: junk }),
  junk,
)

type Action =
  | { readonly kind: 'tool'; readonly input: unknown }
  | { readonly kind: 'burst'; readonly inputs: ReadonlyArray<unknown> }
  | { readonly kind: 'user'; readonly call: string; readonly a: string; readonly b: string }
  | { readonly kind: 'plant'; readonly at: string; readonly to: 'sentinel' | 'outside' | 'inside' }

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 8, arbitrary: toolCommand.map((input) => ({ kind: 'tool' as const, input })) },
  {
    weight: 2,
    arbitrary: fc
      .array(toolCommand, { minLength: 2, maxLength: 6 })
      .map((inputs) => ({ kind: 'burst' as const, inputs })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('user' as const),
      call: fc.constantFrom(
        'write',
        'rename',
        'delete',
        'read',
        'search',
        'restoreDeleted',
        'removeSecrets',
      ),
      a: anyPath,
      b: anyPath,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('plant' as const),
      at: fc.constantFrom('link', 'sentinel-link', 'd/e', 'up'),
      to: fc.constantFrom('sentinel' as const, 'outside' as const, 'inside' as const),
    }),
  },
)

let base: string
beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-fuzz-'))
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10 }))

function makeTree(dir: string): void {
  fs.mkdirSync(path.join(dir, 'deep'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'secret.md'), 'sentinel secret\n')
  fs.writeFileSync(path.join(dir, 'deep', 'x.md'), 'sentinel deep\n')
}

let run = 0
async function runActions(actions: ReadonlyArray<Action>): Promise<number> {
  const dataDir = path.join(base, `data-${++run}`)
  const outside = path.join(base, `outside-${run}`)
  const sentinel = path.join(dataDir, 'sentinel')
  fs.mkdirSync(dataDir)
  makeTree(sentinel)
  makeTree(outside)
  const clean = { sentinel: treeHash(sentinel), outside: treeHash(outside) }
  const memory: VersionedMemory = await openVersionedMemory({
    dataDir,
    watch: false,
    logger: createRecordingLogger(),
  })
  // The person's side goes through the memory browser's handlers, as the window's requests do.
  const handlers = memoryBrowserHandlers(memory)
  let commands = 0
  const shown: string[] = []
  const expectNoEscape = (label: string) => {
    expect(treeHash(sentinel), `${label}: the sentinel beside the memory folder`).toBe(
      clean.sentinel,
    )
    expect(treeHash(outside), `${label}: the tree outside the data folder`).toBe(clean.outside)
  }
  const runTool = async (input: unknown) => {
    commands++
    // Never rejects, whatever the input.
    const result = await memory.execute(input, CLAUDE)
    shown.push(JSON.stringify(result.content))
  }
  const runUser = async (call: string, a: string, b: string) => {
    commands++
    const calls: Record<string, () => unknown> = {
      write: () => handlers['memory:write']({ path: a, content: b }),
      rename: () => handlers['memory:rename']({ from: a, to: b }),
      delete: () => handlers['memory:delete']({ path: a }),
      read: () => handlers['memory:read']({ path: a }),
      search: () => handlers['memory:search']({ query: b || 'x' }),
      restoreDeleted: () => memory.restoreDeleted(a),
      removeSecrets: () => memory.removeSecrets(a),
    }
    try {
      shown.push(JSON.stringify(await calls[call]!()))
    } catch (error) {
      // Only errors meant for people: never an internal one.
      expect(error, `${call}(${JSON.stringify(a)}, ${JSON.stringify(b)})`).toBeInstanceOf(
        CairnError,
      )
      shown.push((error as Error).message)
    }
  }
  try {
    for (const [i, act] of actions.entries()) {
      if (act.kind === 'tool') await runTool(act.input)
      else if (act.kind === 'burst') await Promise.all(act.inputs.map(runTool))
      else if (act.kind === 'user') await runUser(act.call, act.a, act.b)
      else {
        const at = path.join(dataDir, 'memories', act.at)
        const target =
          act.to === 'sentinel'
            ? sentinel
            : act.to === 'outside'
              ? outside
              : path.join(dataDir, 'memories', 'd')
        try {
          fs.rmSync(at, { recursive: true, force: true, maxRetries: 10 })
          fs.mkdirSync(path.dirname(at), { recursive: true })
          fs.symlinkSync(target, at)
        } catch {
          // A file is in the way (d/e under a file d): the other process cannot plant it.
        }
      }
      expectNoEscape(`action ${i}: ${JSON.stringify(act).slice(0, 200)}`)
    }
    for (const text of shown) {
      expect(text).not.toContain(base)
      expect(text).not.toMatch(/\n\s+at |ENOENT|EACCES|EPERM|EISDIR/)
    }
    // The next change works; after the next open (which saves outside edits such as the
    // planted links' removals), the history matches the folder.
    const last = await memory.execute(
      { command: 'create', path: '/memories/z.md', file_text: 'z' },
      CLAUDE,
    )
    expect(last.isError, JSON.stringify(last.content)).toBe(false)
    await memory.close()
    await (
      await openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
    ).close()
    expect(await headDifferencesWithoutLinks(dataDir)).toEqual([])
    fsck(dataDir)
    expectNoEscape('end')
  } finally {
    await memory.close()
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 })
    fs.rmSync(outside, { recursive: true, force: true, maxRetries: 10 })
  }
  return commands
}

// Links are not versioned: compare with them taken out.
async function headDifferencesWithoutLinks(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'memories')
  const links: string[] = []
  const walk = (dir: string) => {
    for (const dirent of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, dirent.name)
      if (dirent.isSymbolicLink()) links.push(full)
      else if (dirent.isDirectory()) walk(full)
    }
  }
  walk(root)
  for (const link of links) fs.unlinkSync(link)
  return headFolderDifferences(dataDir)
}

describe('fuzzing the memory with valid, malformed and hostile commands', () => {
  it('never touches anything outside, never throws, never shows a host path', async () => {
    let commands = 0
    let runs = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 5, maxLength: size(25, 60) }),
        async (actions) => {
          runs++
          commands += await runActions(actions)
        },
      ),
      {
        numRuns: size(12, 400),
        seed: size(424242, Date.now() % 1_000_000),
        endOnFailure: size(false, true),
      },
    )
    addTotals('fuzz', { rounds: runs, generatedCommands: commands, escapes: 0 })
  }, 3_600_000)
})
