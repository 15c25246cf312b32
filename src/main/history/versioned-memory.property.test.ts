import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { commitCount, folderFiles, fsck, gitCli, tempDataDir } from './test-helpers'

// Small pools make collisions (existing targets, files in the way of folders) frequent.
const FILES = ['a.md', 'b.md', 'd/c.md', 'd/e/f.md', 'g/h.md']
const DIRS = ['d', 'd/e', 'g']
const ANY = [...FILES, ...DIRS]

type Step =
  | { kind: 'create'; path: string; text: string }
  | { kind: 'str_replace'; path: string; old: string; next: string }
  | { kind: 'insert'; path: string; line: number; text: string }
  | { kind: 'delete'; path: string }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'restoreAll'; pick: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      path: fc.constantFrom(...FILES, ...DIRS),
      text: fc.stringMatching(/^[ab\n]{1,8}$/),
    }),
  },
  fc.record({
    kind: fc.constant('str_replace' as const),
    path: fc.constantFrom(...FILES),
    // None of these can overlap itself, so "occurrences" is unambiguous.
    old: fc.constantFrom('a', 'b', 'ab', 'a\nb'),
    next: fc.constantFrom('a', 'b', 'ba', 'c'),
  }),
  fc.record({
    kind: fc.constant('insert' as const),
    path: fc.constantFrom(...FILES),
    line: fc.constantFrom(0, 999),
    text: fc.constantFrom('x', 'y\n'),
  }),
  fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...ANY) }),
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rename' as const),
      from: fc.constantFrom(...ANY),
      to: fc.constantFrom(...ANY, 'z.md', 'new/dir'),
    }),
  },
  fc.record({ kind: fc.constant('restoreAll' as const), pick: fc.nat() }),
)

/** The memory folder as a plain map: relative path -> file content, or null for a folder. */
type Model = Map<string, string | null>

const parentsOf = (p: string) =>
  p
    .split('/')
    .slice(0, -1)
    .map((_, i, s) => s.slice(0, i + 1).join('/'))
const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`)

function filesOf(model: Model): Map<string, string> {
  const files = new Map<string, string>()
  for (const [p, content] of [...model].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (content !== null) files.set(p, content)
  }
  return files
}

/** Applies a Memory tool command to the model; false when the tool must refuse it. */
function applyToModel(model: Model, s: Exclude<Step, { kind: 'restoreAll' }>): boolean {
  const isFile = (p: string) => typeof model.get(p) === 'string'
  switch (s.kind) {
    case 'create': {
      if (model.get(s.path) === null || parentsOf(s.path).some(isFile)) return false
      for (const dir of parentsOf(s.path)) model.set(dir, null)
      model.set(s.path, s.text)
      return true
    }
    case 'str_replace': {
      const text = model.get(s.path)
      if (typeof text !== 'string' || text.split(s.old).length !== 2) return false
      model.set(
        s.path,
        text.replace(s.old, () => s.next),
      )
      return true
    }
    case 'insert': {
      const text = model.get(s.path)
      if (typeof text !== 'string' || s.line !== 0) return false
      model.set(s.path, `${s.text.replace(/\n$/, '')}\n${text}`)
      return true
    }
    case 'delete': {
      if (!model.has(s.path)) return false
      for (const p of [...model.keys()]) if (under(p, s.path)) model.delete(p)
      return true
    }
    case 'rename': {
      if (!model.has(s.from) || model.has(s.to) || under(s.to, s.from)) return false
      if (parentsOf(s.to).some(isFile)) return false
      const moved = [...model].filter(([p]) => under(p, s.from))
      for (const [p] of moved) model.delete(p)
      for (const dir of parentsOf(s.to)) model.set(dir, null)
      for (const [p, content] of moved) model.set(s.to + p.slice(s.from.length), content)
      return true
    }
  }
}

function toInput(s: Exclude<Step, { kind: 'restoreAll' }>): Record<string, unknown> {
  const v = (p: string) => `/memories/${p}`
  switch (s.kind) {
    case 'create':
      return { command: 'create', path: v(s.path), file_text: s.text }
    case 'str_replace':
      return { command: 'str_replace', path: v(s.path), old_str: s.old, new_str: s.next }
    case 'insert':
      return { command: 'insert', path: v(s.path), insert_line: s.line, insert_text: s.text }
    case 'delete':
      return { command: 'delete', path: v(s.path) }
    case 'rename':
      return { command: 'rename', old_path: v(s.from), new_path: v(s.to) }
  }
}

/** Folders on disk: history does not track them, so after a restore the model takes them from disk. */
async function foldersOnDisk(root: string, prefix = ''): Promise<string[]> {
  const dirs: string[] = []
  for (const dirent of await readdir(path.join(root, prefix), { withFileTypes: true })) {
    if (!dirent.isDirectory()) continue
    const p = prefix ? `${prefix}/${dirent.name}` : dirent.name
    dirs.push(p, ...(await foldersOnDisk(root, p)))
  }
  return dirs
}

const blobId = (text: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0`)
    .update(text)
    .digest('hex')

/** HEAD's tree per the git CLI equals the expected files (paths and bytes, via blob ids). */
function expectHead(dataDir: string, files: Map<string, string>): void {
  const listing = files.size || commitCount(dataDir) ? gitCli(dataDir, 'ls-tree', '-r', 'main') : ''
  const head = new Map(
    listing
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [meta, name] = line.split('\t') as [string, string]
        return [name, meta.split(' ')[2] as string] as const
      }),
  )
  expect(head).toEqual(new Map([...files].map(([p, text]) => [p, blobId(text)])))
}

async function restoreAndCheck(
  memory: VersionedMemory,
  dataDir: string,
  snapshot: { oid: string; files: Map<string, string> },
): Promise<void> {
  await memory.restoreAll(snapshot.oid)
  expect(await folderFiles(dataDir)).toEqual(snapshot.files)
  expectHead(dataDir, snapshot.files)
}

describe('versioned memory against a model', () => {
  it('keeps folder, model and HEAD equal; every restore reproduces its snapshot', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
        const { dir: dataDir, cleanup } = await tempDataDir()
        const memory = await openVersionedMemory({ dataDir, watch: false })
        try {
          const model: Model = new Map()
          const snapshots: Array<{ oid: string; files: Map<string, string> }> = []
          let commits = 0
          for (const s of steps) {
            const before = filesOf(model)
            if (s.kind === 'restoreAll') {
              if (snapshots.length === 0) continue
              const target = snapshots[s.pick % snapshots.length] as (typeof snapshots)[number]
              const result = await memory.restoreAll(target.oid)
              model.clear()
              for (const dir of await foldersOnDisk(path.join(dataDir, 'memories')))
                model.set(dir, null)
              for (const [p, text] of target.files) model.set(p, text)
              expect(result.commit !== null).toBe(!sameFiles(before, target.files))
            } else {
              const expectedOk = applyToModel(model, s)
              const outcome = await memory.execute(toInput(s), {
                actor: 'claude',
                conversationId: 'prop',
                toolUseId: `t${commits}`,
              })
              expect({ step: s, ok: !outcome.isError }).toEqual({ step: s, ok: expectedOk })
              expect(outcome.commit !== null).toBe(!sameFiles(before, filesOf(model)))
            }
            const files = filesOf(model)
            expect(await folderFiles(dataDir)).toEqual(files)
            expectHead(dataDir, files)
            if (!sameFiles(before, files)) {
              commits++
              snapshots.push({ oid: gitCli(dataDir, 'rev-parse', 'main').trim(), files })
            }
            expect(commitCount(dataDir)).toBe(commits)
          }
          for (const snapshot of [...snapshots].reverse()) {
            await restoreAndCheck(memory, dataDir, snapshot)
          }
          fsck(dataDir)
        } finally {
          await memory.close()
          await cleanup()
        }
      }),
      { numRuns: 20 },
    )
    // Twenty random runs, each with git fsck: about 11 s on a quiet machine, past the default
    // 30 s on a loaded one.
  }, 90_000)
})

function sameFiles(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false
  for (const [p, text] of a) if (b.get(p) !== text) return false
  return true
}
