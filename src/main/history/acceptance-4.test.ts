import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Origin, VersionedMemory } from './index'
import { folderFiles, fsck, gitCli, memoryTestBed } from './test-helpers'

// Issue #4's acceptance check, run again on what landed (probe29v). A long seeded sequence of
// Claude's and the person's commands and restores, over names and bytes the property test's
// small pools never reach (case-only renames, deep new folders, empty files grown, CRLF, a
// byte order mark, long lines), checked after every step against a plain model with the real
// git CLI as the second opinion: one commit per change and none otherwise, each commit's
// change exactly what `git diff-tree` sees, its parent the head before, and the history only
// ever extended. At the end every version reads back as `git cat-file` has it, and the side
// index's timeline and filters agree with `git rev-list`.

const bed = memoryTestBed()

/** A small seeded generator (mulberry32): the same sequence on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const FILES = [
  'Note.md',
  'note.md',
  'NOTE.md',
  'e.md',
  'crlf.md',
  'bom.md',
  'deep/a/b/c/d/e/f.md',
  'deep/a/b/x.md',
  'Deep/a.md',
  'new/sub/moved.md',
]
const DIRS = ['deep', 'deep/a', 'deep/a/b', 'Deep', 'new', 'new/sub', 'z/y']
const TEXTS = [
  '',
  'a',
  'a\r\nb\r\n',
  '\uFEFFbom\n',
  'line one\nline two\n',
  'é ü 中 🪨\n',
  'a\nb',
  `${'x'.repeat(3000)}\n`,
]
const OLDS = ['a', 'b', '\r\n', 'bom', 'line', '中', 'x', 'two\n']
const NEWS = ['a', 'B', '\n', '', 'r\r\ns', '🪨']

/** The folder: relative path -> text for a file, null for a folder. */
type Model = Map<string, string | null>

const parentsOf = (p: string) =>
  p
    .split('/')
    .slice(0, -1)
    .map((_, i, s) => s.slice(0, i + 1).join('/'))
const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`)
const folderOf = (p: string) => p.slice(0, Math.max(0, p.lastIndexOf('/')))

/**
 * Whether a create at `p` (or a rename to it from `except`) would make a case twin (handler31):
 * the first name along `p` the model lacks differs only in letter case from another entry of
 * its folder. Such a create or rename is refused; twins already there stay.
 */
function makesCaseTwin(model: Model, p: string, except?: string): boolean {
  const missing = [...parentsOf(p), p].find((q) => !model.has(q))
  if (missing === undefined) return false
  const folder = folderOf(missing)
  return [...model.keys()].some(
    (q) =>
      q !== missing &&
      q !== except &&
      folderOf(q) === folder &&
      q.toLowerCase() === missing.toLowerCase(),
  )
}

// The first line ending of `text` (the Memory tool's insert writes in the file's style).
function lineEnding(text: string): string | undefined {
  const at = text.indexOf('\n')
  if (at < 0) return undefined
  return at > 0 && text[at - 1] === '\r' ? '\r\n' : '\n'
}
const v = (p: string) => `/memories/${p}`

function filesOf(model: Model): Map<string, string> {
  return new Map(
    [...model]
      .filter((e): e is [string, string] => e[1] !== null)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}

const blobId = (text: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0`)
    .update(text)
    .digest('hex')

/** HEAD's files per the git CLI, as path -> blob id. */
function headBlobs(dataDir: string): Map<string, string> {
  const listing = revList(dataDir).length ? gitCli(dataDir, 'ls-tree', '-r', '-z', 'main') : ''
  return new Map(
    listing
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const [meta, name] = line.split('\t') as [string, string]
        return [name, meta.split(' ')[2] as string] as const
      }),
  )
}

/** What changed between two file maps, as `git diff-tree --no-renames --name-status` says it. */
function changesBetween(before: Map<string, string>, after: Map<string, string>): string[] {
  const lines: string[] = []
  for (const p of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(p)
    const b = after.get(p)
    if (a === b) continue
    lines.push(`${a === undefined ? 'A' : b === undefined ? 'D' : 'M'} ${p}`)
  }
  return lines.sort()
}

function changesPerGit(dataDir: string, parent: string, oid: string): string[] {
  const out = gitCli(dataDir, 'diff-tree', '-r', '-z', '--no-renames', '--name-status', parent, oid)
  const parts = out.split('\0').filter(Boolean)
  const lines: string[] = []
  for (let i = 0; i < parts.length; i += 2) lines.push(`${parts[i]} ${parts[i + 1]}`)
  return lines.sort()
}

/** Every commit of `main`, newest first, per the git CLI. */
const revList = (dataDir: string): string[] => {
  try {
    return gitCli(dataDir, 'rev-list', 'main').split('\n').filter(Boolean)
  } catch {
    return []
  }
}

/** Folders on disk: history keeps none, so after a restore the model takes them from disk. */
async function foldersOnDisk(root: string, prefix = ''): Promise<string[]> {
  const dirs: string[] = []
  for (const dirent of await readdir(path.join(root, prefix), { withFileTypes: true })) {
    if (!dirent.isDirectory()) continue
    const p = prefix ? `${prefix}/${dirent.name}` : dirent.name
    dirs.push(p, ...(await foldersOnDisk(root, p)))
  }
  return dirs
}

/** `git cat-file --batch` for many `<oid>:<path>` names in one call: name -> bytes. */
function catFiles(dataDir: string, names: ReadonlyArray<string>): Map<string, Buffer> {
  const out = execFileSync(
    'git',
    ['--git-dir', path.join(dataDir, 'history.git'), 'cat-file', '--batch'],
    {
      input: names.map((n) => `${n}\n`).join(''),
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
      maxBuffer: 256 * 1024 * 1024,
    },
  )
  const read = new Map<string, Buffer>()
  let at = 0
  for (const name of names) {
    const end = out.indexOf(0x0a, at)
    const header = out.subarray(at, end).toString('utf8')
    const [, type, size] = header.split(' ')
    if (type !== 'blob') throw new Error(`git cat-file: ${header}`)
    read.set(name, out.subarray(end + 1, end + 1 + Number(size)))
    at = end + 1 + Number(size) + 1
  }
  return read
}

type Step =
  | { kind: 'create'; path: string; text: string; origin: 'claude' | 'user' }
  | { kind: 'str_replace'; path: string; old: string; next: string }
  | { kind: 'insert'; path: string; line: number; text: string }
  | { kind: 'delete'; path: string }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'restoreFile'; path: string; pick: number }
  | { kind: 'restoreDeleted'; path: string }
  | { kind: 'revertHead' }
  | { kind: 'restoreAll'; pick: number }

function stepsFor(seed: number, count: number): Step[] {
  const next = random(seed)
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(next() * list.length)] as T
  const any = () => (next() < 0.8 ? pick(FILES) : pick(DIRS))
  const steps: Step[] = []
  for (let i = 0; i < count; i++) {
    const roll = next()
    if (roll < 0.28) {
      steps.push({
        kind: 'create',
        path: next() < 0.9 ? pick(FILES) : pick(DIRS),
        text: pick(TEXTS),
        origin: next() < 0.7 ? 'claude' : 'user',
      })
    } else if (roll < 0.42) {
      // Half the time a piece of the file as it will be then (often found once).
      const old = next() < 0.5 ? pick(OLDS) : `@${Math.floor(next() * 1000)}`
      steps.push({ kind: 'str_replace', path: pick(FILES), old, next: pick(NEWS) })
    } else if (roll < 0.54)
      steps.push({
        kind: 'insert',
        path: pick(FILES),
        line: next() < 0.85 ? 0 : 9999,
        text: pick(['x', 'y\n', 'z\r\n']),
      })
    else if (roll < 0.6) steps.push({ kind: 'delete', path: any() })
    else if (roll < 0.74) steps.push({ kind: 'rename', from: any(), to: any() })
    else if (roll < 0.82) steps.push({ kind: 'restoreFile', path: pick(FILES), pick: i })
    else if (roll < 0.88) steps.push({ kind: 'restoreDeleted', path: pick(FILES) })
    else if (roll < 0.94) steps.push({ kind: 'revertHead' })
    else steps.push({ kind: 'restoreAll', pick: i })
  }
  return steps
}

/**
 * What a step does to the model: the files it should leave and whether it must succeed
 * (`false`: refused, the model is unchanged). Restores read the snapshots of earlier commits.
 */
function expectFor(
  model: Model,
  s: Step,
  snapshots: ReadonlyArray<{ oid: string; files: Map<string, string> }>,
): { ok: boolean; target?: string } {
  const isFile = (p: string) => typeof model.get(p) === 'string'
  const fileCanGoAt = (p: string) => model.get(p) !== null && !parentsOf(p).some(isFile)
  switch (s.kind) {
    case 'create': {
      if (!fileCanGoAt(s.path) || makesCaseTwin(model, s.path)) return { ok: false }
      for (const dir of parentsOf(s.path)) model.set(dir, null)
      model.set(s.path, s.text)
      return { ok: true }
    }
    case 'str_replace': {
      const text = model.get(s.path)
      if (typeof text !== 'string' || text.split(s.old).length !== 2) return { ok: false }
      model.set(
        s.path,
        text.replace(s.old, () => s.next),
      )
      return { ok: true }
    }
    case 'insert': {
      const text = model.get(s.path)
      if (typeof text !== 'string' || s.line !== 0) return { ok: false }
      // One line ending ending the text is cut; its lines are written in the file's line
      // endings (else the text's, else \n), and one of those ends the inserted line.
      const eol = lineEnding(text) ?? lineEnding(s.text) ?? '\n'
      const body = s.text.replace(/\r?\n$/, '').replace(/\r?\n/g, eol)
      // A byte order mark stays first (the Memory tool's rule, issue #3).
      const bom = text.startsWith('\uFEFF') ? '\uFEFF' : ''
      model.set(s.path, text === '' ? s.text : `${bom}${body}${eol}${text.slice(bom.length)}`)
      return { ok: true }
    }
    case 'delete': {
      if (!model.has(s.path)) return { ok: false }
      for (const p of [...model.keys()]) if (under(p, s.path)) model.delete(p)
      return { ok: true }
    }
    case 'rename': {
      if (!model.has(s.from) || model.has(s.to) || under(s.to, s.from)) return { ok: false }
      if (parentsOf(s.to).some(isFile) || makesCaseTwin(model, s.to, s.from)) return { ok: false }
      const moved = [...model].filter(([p]) => under(p, s.from))
      for (const [p] of moved) model.delete(p)
      for (const dir of parentsOf(s.to)) model.set(dir, null)
      for (const [p, content] of moved) model.set(s.to + p.slice(s.from.length), content)
      return { ok: true }
    }
    case 'restoreFile': {
      const holding = snapshots.filter((snap) => snap.files.has(s.path))
      if (holding.length === 0 || !fileCanGoAt(s.path)) return { ok: false }
      const from = holding[s.pick % holding.length]!
      for (const dir of parentsOf(s.path)) model.set(dir, null)
      model.set(s.path, from.files.get(s.path)!)
      return { ok: true, target: from.oid }
    }
    case 'restoreDeleted': {
      // Its last version: a file, or a folder with the files it held then.
      const held = (snap: { files: Map<string, string> }) =>
        [...snap.files].filter(([p]) => under(p, s.path))
      const last = [...snapshots].reverse().find((snap) => held(snap).length > 0)
      if (!last || model.has(s.path) || parentsOf(s.path).some(isFile)) return { ok: false }
      for (const [p, text] of held(last)) {
        for (const dir of parentsOf(p)) model.set(dir, null)
        model.set(p, text)
      }
      return { ok: true }
    }
    case 'revertHead':
    case 'restoreAll':
      throw new Error('read from the snapshots in the loop')
  }
}

const ORIGINS: Record<'claude' | 'user', Origin> = {
  claude: { actor: 'claude', conversationId: 'conv-accept', toolUseId: 'toolu_accept' },
  user: { actor: 'user' },
}

async function runStep(
  memory: VersionedMemory,
  s: Step,
  target: string | undefined,
): Promise<{ ok: boolean; commit: string | null; said: string }> {
  const claude = ORIGINS.claude
  const change = async (
    run: () => Promise<{ commit: { oid: string } | null; message: string }>,
  ) => {
    try {
      const result = await run()
      return { ok: true, commit: result.commit?.oid ?? null, said: result.message }
    } catch (error) {
      return { ok: false, commit: null, said: String((error as Error).message) }
    }
  }
  const execute = async (input: Record<string, unknown>, origin: Origin) => {
    const outcome = await memory.execute(input, origin)
    return {
      ok: !outcome.isError,
      commit: outcome.commit?.oid ?? null,
      said: String(outcome.content),
    }
  }
  switch (s.kind) {
    case 'create':
      return execute({ command: 'create', path: v(s.path), file_text: s.text }, ORIGINS[s.origin])
    case 'str_replace':
      return execute(
        { command: 'str_replace', path: v(s.path), old_str: s.old, new_str: s.next },
        claude,
      )
    case 'insert':
      return execute(
        { command: 'insert', path: v(s.path), insert_line: s.line, insert_text: s.text },
        claude,
      )
    case 'delete':
      return execute({ command: 'delete', path: v(s.path) }, claude)
    case 'rename':
      return execute({ command: 'rename', old_path: v(s.from), new_path: v(s.to) }, claude)
    case 'restoreFile':
      return change(() => memory.restoreFile(v(s.path), target ?? 'f'.repeat(40)))
    case 'restoreDeleted':
      return change(() => memory.restoreDeleted(v(s.path)))
    case 'revertHead':
      return change(() => memory.revert(target!))
    case 'restoreAll':
      return change(() => memory.restoreAll(target!))
  }
}

describe('a long seeded run of commands and restores, checked step by step with git', () => {
  for (const seed of [29]) {
    it(`seed ${seed}: one commit per change, none otherwise, each the change git sees, history only extended`, async () => {
      const { memory, dataDir } = bed
      const root = path.join(dataDir, 'memories')
      const model: Model = new Map()
      const snapshots: Array<{ oid: string; files: Map<string, string> }> = []
      const authors = new Map<string, string>()
      const kinds = new Set<string>()
      let history: string[] = []
      for (const [index, planned] of stepsFor(seed, 140).entries()) {
        let s = planned
        const before = filesOf(model)
        const head = history[0] ?? null
        let expected: { ok: boolean; target?: string }
        if (s.kind === 'revertHead' || s.kind === 'restoreAll') {
          if (snapshots.length < 2) continue
          const to =
            s.kind === 'revertHead'
              ? snapshots[snapshots.length - 2]!
              : snapshots[s.pick % snapshots.length]!
          // A revert of a commit that changed nothing but folders is refused; there is none.
          expected = {
            ok: true,
            target: s.kind === 'revertHead' ? snapshots[snapshots.length - 1]!.oid : to.oid,
          }
          for (const p of [...model.keys()]) if (model.get(p) !== null) model.delete(p)
          for (const [p, text] of to.files) {
            for (const dir of parentsOf(p)) model.set(dir, null)
            model.set(p, text)
          }
        } else {
          const text = s.kind === 'str_replace' ? model.get(s.path) : null
          if (s.kind === 'str_replace' && s.old.startsWith('@') && text) {
            const chars = Array.from(text)
            const at = Number(s.old.slice(1)) % chars.length
            s = { ...s, old: chars.slice(at, at + 1 + (at % 4)).join('') }
          }
          expected = expectFor(model, s, snapshots)
        }
        const result = await runStep(memory, s, expected.target)
        const after = filesOf(model)
        const where = { index, step: s }
        expect({ ...where, ok: result.ok, said: result.ok ? '' : result.said }).toMatchObject({
          ...where,
          ok: expected.ok,
        })
        const changed = changesBetween(before, after)
        const now = revList(dataDir)
        if (changed.length === 0) {
          // Refused, or changed nothing: no commit, and the folder as it was.
          expect({ ...where, commit: result.commit }).toEqual({ ...where, commit: null })
          expect(now).toEqual(history)
        } else {
          kinds.add(s.kind)
          // Exactly one new commit on top of the old head, and it is the one reported.
          expect({ ...where, grown: now.length - history.length }).toEqual({ ...where, grown: 1 })
          expect(now.slice(1)).toEqual(history)
          expect(result.commit).toBe(now[0])
          const [parents, author] = gitCli(dataDir, 'log', '-1', '--format=%P%x00%an', 'main')
            .trim()
            .split('\0')
          expect(parents).toBe(head ?? '')
          const parent = head ?? gitCli(dataDir, 'hash-object', '-t', 'tree', '/dev/null').trim()
          expect({ ...where, git: changesPerGit(dataDir, parent, now[0]!) }).toEqual({
            ...where,
            git: changed,
          })
          authors.set(now[0]!, author!)
          snapshots.push({ oid: now[0]!, files: after })
        }
        if (s.kind === 'revertHead' || s.kind === 'restoreAll') {
          model.clear()
          for (const dir of await foldersOnDisk(root)) model.set(dir, null)
          for (const [p, text] of after) model.set(p, text)
        }
        history = now
        expect(await folderFiles(dataDir)).toEqual(after)
        expect(headBlobs(dataDir)).toEqual(new Map([...after].map(([p, t]) => [p, blobId(t)])))
      }
      // The run reached every kind of change (so no part of it passes by never happening).
      expect([...kinds].sort()).toEqual(
        [
          'create',
          'delete',
          'insert',
          'rename',
          'restoreAll',
          'restoreDeleted',
          'restoreFile',
          'revertHead',
          'str_replace',
        ].sort(),
      )

      // Every version of every file reads back as git has it, as text and as bytes.
      const names = snapshots.flatMap((snap) =>
        [...snap.files.keys()].map((p) => `${snap.oid}:${p}`),
      )
      const git = catFiles(dataDir, names)
      for (const snap of snapshots) {
        for (const [p, text] of snap.files) {
          const bytes = git.get(`${snap.oid}:${p}`)!
          expect(bytes.toString('utf8')).toBe(text)
          expect(await memory.readAt(v(p), snap.oid)).toBe(text)
          expect(Buffer.from((await memory.readBytesAt(v(p), snap.oid))!)).toEqual(bytes)
        }
      }

      // The side index's timeline is git's history, and its actor filters count as git does.
      const all = revList(dataDir)
      const page = await memory.log({ offset: 0, limit: 500 })
      expect(page.total).toBe(all.length)
      expect(page.entries.map((e) => e.oid)).toEqual(all)
      for (const entry of page.entries) {
        expect(entry.parent).toBe(all[all.indexOf(entry.oid) + 1] ?? null)
        expect(authors.get(entry.oid)).toBe(entry.actor === 'claude' ? 'Claude' : 'You')
      }
      const byClaude = gitCli(dataDir, 'rev-list', '--count', '--author=^Claude ', 'main').trim()
      expect((await memory.log({ offset: 0, limit: 1, actor: 'claude' })).total).toBe(
        Number(byClaude),
      )
      const byYou = gitCli(dataDir, 'rev-list', '--count', '--author=^You ', 'main').trim()
      expect((await memory.log({ offset: 0, limit: 1, actor: 'user' })).total).toBe(Number(byYou))
      fsck(dataDir)
    }, 240_000)
  }
})

describe('reading a version back as git has it', () => {
  it('keeps a leading byte order mark in readAt, as in show, diff and git show', async () => {
    const { memory, dataDir } = bed
    const claude = ORIGINS.claude
    const created = await memory.execute(
      { command: 'create', path: '/memories/bom.md', file_text: '\uFEFFfirst\n' },
      claude,
    )
    const edited = await memory.execute(
      { command: 'str_replace', path: '/memories/bom.md', old_str: 'first', new_str: 'second' },
      claude,
    )
    const [one, two] = [created.commit!.oid, edited.commit!.oid]
    for (const oid of [one, two]) {
      const git = gitCli(dataDir, 'show', `${oid}:bom.md`)
      expect(git.startsWith('\uFEFF')).toBe(true)
      expect(await memory.readAt('/memories/bom.md', oid)).toBe(git)
    }
    const diff = await memory.diff('/memories/bom.md', one, two)
    expect([diff.before, diff.after]).toEqual(['\uFEFFfirst\n', '\uFEFFsecond\n'])
    const shown = await memory.show(two)
    expect(shown.changes.map((c) => [c.before, c.after])).toEqual([
      ['\uFEFFfirst\n', '\uFEFFsecond\n'],
    ])
  })
})

describe("a file's history against git log --follow", () => {
  it('follows a chain of renames, a case-only folder rename, the deletion and a name used again', async () => {
    const { memory, dataDir } = bed
    const body = (n: string) => Array.from({ length: 12 }, (_, i) => `${n} line ${i}`).join('\n')
    const ids: Record<string, string> = {}
    const run = async (key: string, input: Record<string, unknown>) => {
      const outcome = await memory.execute(input, ORIGINS.claude)
      expect(outcome.isError, String(outcome.content)).toBe(false)
      ids[key] = outcome.commit!.oid
    }
    await run('c1', { command: 'create', path: '/memories/a.md', file_text: `${body('a')}\n` })
    await run('other', { command: 'create', path: '/memories/o.md', file_text: 'other\n' })
    const a3 = { old_str: 'a line 3', new_str: 'A LINE 3' }
    await run('e1', { command: 'str_replace', path: '/memories/a.md', ...a3 })
    await run('r1', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })
    await run('e2', {
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 0,
      insert_text: 'top',
    })
    const deep = '/memories/x/y/c.md'
    await run('r2', { command: 'rename', old_path: '/memories/b.md', new_path: deep })
    await run('r3', { command: 'rename', old_path: '/memories/x', new_path: '/memories/X' })
    const now = '/memories/X/y/c.md'
    const a5 = { old_str: 'a line 5', new_str: 'five' }
    await run('e3', { command: 'str_replace', path: now, ...a5 })
    await run('d', { command: 'delete', path: now })
    await run('c2', { command: 'create', path: now, file_text: 'brand new\n' })
    await run('c3', { command: 'create', path: '/memories/a.md', file_text: 'a reborn\n' })
    const names = new Map(Object.entries(ids).map(([k, oid]) => [oid, k]))
    const named = (oids: ReadonlyArray<string>) => oids.map((oid) => names.get(oid) ?? oid)
    for (const [file, expected] of [
      ['X/y/c.md', 'c2 d e3 r3 r2 e2 r1 e1 c1'],
      ['a.md', 'c3 r1 e1 c1'],
      ['b.md', 'r2 e2 r1 e1 c1'],
    ] as const) {
      const git = gitCli(dataDir, 'log', '--follow', '--format=%H', 'main', '--', file)
      const ours = (await memory.fileHistory(v(file))).map((c) => c.oid)
      expect({ file, ours: named(ours) }).toEqual({ file, ours: expected.split(' ') })
      expect({ file, ours: named(ours) }).toEqual({
        file,
        ours: named(git.split('\n').filter(Boolean)),
      })
      // The timeline filtered by the path pages through the same commits.
      const page = await memory.log({ offset: 1, limit: 2, path: v(file) })
      expect(page.total).toBe(ours.length)
      expect(page.entries.map((e) => e.oid)).toEqual(ours.slice(1, 3))
    }
    // b.md left by a rename: it comes back as it was just before, and history only grows.
    const before = revList(dataDir)
    const back = await memory.restoreDeleted('/memories/b.md')
    expect(back.commit?.restoredFrom).toBe(ids.e2)
    expect(gitCli(dataDir, 'show', 'main:b.md')).toBe(gitCli(dataDir, 'show', `${ids.e2}:b.md`))
    expect(revList(dataDir).slice(1)).toEqual(before)
    fsck(dataDir)
  })
})

describe('restores racing commands in the one queue', () => {
  it('gives a linear history, each commit on the head before it, with no update lost', async () => {
    const { memory, dataDir } = bed
    const claude = (n: number): Origin => ({
      actor: 'claude',
      conversationId: 'race',
      toolUseId: `toolu_${n}`,
    })
    const first = await memory.execute(
      { command: 'create', path: '/memories/r.md', file_text: 'one\n' },
      claude(0),
    )
    await memory.execute(
      { command: 'create', path: '/memories/r.md', file_text: 'two\n' },
      claude(1),
    )
    await memory.execute(
      { command: 'create', path: '/memories/gone.md', file_text: 'g\n' },
      claude(2),
    )
    await memory.execute({ command: 'delete', path: '/memories/gone.md' }, claude(3))
    await memory.execute(
      { command: 'create', path: '/memories/log.md', file_text: 'start\n' },
      claude(4),
    )
    const start = revList(dataDir)
    const work: Array<Promise<unknown>> = []
    for (let i = 0; i < 12; i++) {
      // Claude's lines and the person's, each at the top: all of them must survive.
      work.push(
        memory.execute(
          { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: `c${i}` },
          claude(10 + i),
        ),
        memory.execute(
          { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: `u${i}` },
          { actor: 'user' },
        ),
        i % 2 === 0
          ? memory.restoreFile('/memories/r.md', first.commit!.oid)
          : memory.execute(
              { command: 'create', path: '/memories/r.md', file_text: `claude ${i}\n` },
              claude(100 + i),
            ),
      )
      if (i === 5) work.push(memory.restoreDeleted('/memories/gone.md'))
    }
    const results = await Promise.allSettled(work)
    expect(results.filter((r) => r.status === 'rejected')).toEqual([])
    const made = results
      .map((r) => (r as PromiseFulfilledResult<{ commit: { oid: string } | null }>).value.commit)
      .filter((c) => c !== null)
    const history = gitCli(dataDir, 'rev-list', '--parents', 'main').trim().split('\n')
    expect(history.length).toBe(start.length + made.length)
    // Each commit has one parent, the one made just before it; the old history is untouched.
    for (let i = 0; i < history.length; i++) {
      const [oid, ...parents] = history[i]!.split(' ')
      const older = history[i + 1]?.split(' ')[0]
      expect({ oid, parents }).toEqual({ oid, parents: older ? [older] : [] })
    }
    expect(history.map((l) => l.split(' ')[0]).slice(made.length)).toEqual(start)
    expect(new Set(made.map((c) => c!.oid))).toEqual(
      new Set(history.slice(0, made.length).map((l) => l.split(' ')[0])),
    )
    const log = gitCli(dataDir, 'show', 'main:log.md').split('\n')
    for (let i = 0; i < 12; i++) expect(log).toEqual(expect.arrayContaining([`c${i}`, `u${i}`]))
    expect(gitCli(dataDir, 'show', 'main:gone.md')).toBe('g\n')
    expect(gitCli(dataDir, 'show', 'main:r.md')).toBe('claude 11\n')
    expect(await folderFiles(dataDir)).toEqual(
      new Map([
        ['gone.md', 'g\n'],
        ['log.md', gitCli(dataDir, 'show', 'main:log.md')],
        ['r.md', 'claude 11\n'],
      ]),
    )
    fsck(dataDir)
  })
})

describe('a history grown by the git CLI while Cairn runs', () => {
  it('reads every version right after a commit made with git, a gc and a repack -ad', async () => {
    const { dataDir } = bed
    let memory = bed.memory
    const work = path.join(dataDir, 'memories')
    const run = async (input: Record<string, unknown>) => {
      const outcome = await memory.execute(input, ORIGINS.claude)
      expect(outcome.isError, String(outcome.content)).toBe(false)
      return outcome.commit!
    }
    await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\nb\nc\n' })
    await run({ command: 'create', path: '/memories/deep/er/n.md', file_text: 'n\n' })
    // Ann commits an edit with git itself, into the same folder and history, while Cairn is
    // closed (one writer at a time: see the report of probe29v for a commit made while open).
    await bed.close()
    await writeFile(path.join(work, 'plan.md'), 'a\nB by Ann\nc\n')
    gitCli(dataDir, 'read-tree', 'main')
    gitCli(dataDir, '--work-tree', work, 'add', 'plan.md')
    gitCli(
      dataDir,
      '-c',
      'user.name=Ann',
      '-c',
      'user.email=ann@example.invalid',
      '--work-tree',
      work,
      'commit',
      '-q',
      '-m',
      'Ann edits the plan',
    )
    const ann = gitCli(dataDir, 'rev-parse', 'main').trim()
    memory = await bed.reopen()
    expect(memory.recovery).toBeNull()
    // Claude's next command builds on Ann's commit: nothing of hers is lost or undone.
    const next = await run({
      command: 'str_replace',
      path: '/memories/plan.md',
      old_str: 'c\n',
      new_str: 'C\n',
    })
    expect(next.parent).toBe(ann)
    expect(gitCli(dataDir, 'show', 'main:plan.md')).toBe('a\nB by Ann\nC\n')
    // git packs the objects and the refs, then folds every pack into one, while Cairn runs.
    gitCli(dataDir, 'gc', '-q', '--prune=now')
    await run({ command: 'rename', old_path: '/memories/deep', new_path: '/memories/Deep' })
    gitCli(dataDir, 'repack', '-a', '-d', '-q')
    await run({ command: 'delete', path: '/memories/Deep/er/n.md' })
    await memory.restoreDeleted('/memories/Deep/er/n.md')
    await memory.restoreFile('/memories/plan.md', ann)

    const all = revList(dataDir)
    const page = await memory.log({ offset: 0, limit: 500 })
    expect(page.entries.map((e) => e.oid)).toEqual(all)
    expect(page.entries.find((e) => e.oid === ann)).toMatchObject({ actor: 'outside' })
    expect((await memory.log({ offset: 0, limit: 50, actor: 'outside' })).total).toBe(1)
    const names = all.flatMap((oid) =>
      gitCli(dataDir, 'ls-tree', '-r', '-z', '--name-only', oid)
        .split('\0')
        .filter(Boolean)
        .map((p) => `${oid}:${p}`),
    )
    const git = catFiles(dataDir, names)
    for (const name of names) {
      const [oid, p] = name.split(':') as [string, string]
      expect(await memory.readAt(v(p), oid)).toBe(git.get(name)!.toString('utf8'))
    }
    const follow = gitCli(dataDir, 'log', '--follow', '--format=%H', 'main', '--', 'plan.md')
    expect((await memory.fileHistory('/memories/plan.md')).map((c) => c.oid)).toEqual(
      follow.split('\n').filter(Boolean),
    )
    // Opened again on the repacked history: the side index checked, nothing to recover.
    const again = await bed.reopen()
    expect(again.recovery).toBeNull()
    expect((await again.log({ offset: 0, limit: 500 })).entries.map((e) => e.oid)).toEqual(all)
    expect(await folderFiles(dataDir)).toEqual(
      new Map([
        ['Deep/er/n.md', 'n\n'],
        ['plan.md', 'a\nB by Ann\nc\n'],
      ]),
    )
    fsck(dataDir)
  })
})

describe('binary files through the history', () => {
  it('keeps an image’s exact bytes through rename, delete, bring back, restore and revert', async () => {
    const { dataDir } = bed
    const work = path.join(dataDir, 'memories')
    // A PNG's signature and header (NUL bytes, bytes no UTF-8 allows), and a second version.
    const png = (n: number) =>
      Buffer.concat([
        Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
        Buffer.from([0, 0, 0, n, 0xff, 0xfe, 0x80, 0x00, n]),
      ])
    await bed.close()
    await writeFile(path.join(work, 'photo.png'), png(1))
    let memory = await bed.reopen()
    expect(memory.recovery?.kind).toBe('outside-changes')
    const first = revList(dataDir)[0]!
    await bed.close()
    await writeFile(path.join(work, 'photo.png'), png(2))
    memory = await bed.reopen()
    const second = revList(dataDir)[0]!
    const bytesAt = (oid: string, p: string) =>
      catFiles(dataDir, [`${oid}:${p}`]).get(`${oid}:${p}`)!
    expect(bytesAt(first, 'photo.png')).toEqual(png(1))
    expect(Buffer.from((await memory.readBytesAt('/memories/photo.png', first))!)).toEqual(png(1))
    expect(Buffer.from((await memory.readBytesAt('/memories/photo.png', second))!)).toEqual(png(2))
    const change = await memory.diff('/memories/photo.png', first, second)
    expect(change).toMatchObject({ binary: true, before: null, after: null })

    const moved = await memory.execute(
      { command: 'rename', old_path: '/memories/photo.png', new_path: '/memories/a/b/c/Photo.png' },
      ORIGINS.claude,
    )
    expect(moved.isError, String(moved.content)).toBe(false)
    expect(changesPerGit(dataDir, second, moved.commit!.oid)).toEqual([
      'A a/b/c/Photo.png',
      'D photo.png',
    ])
    expect((await memory.fileHistory('/memories/a/b/c/Photo.png')).map((c) => c.oid)).toEqual(
      gitCli(dataDir, 'log', '--follow', '--format=%H', 'main', '--', 'a/b/c/Photo.png')
        .split('\n')
        .filter(Boolean),
    )
    const gone = await memory.execute(
      { command: 'delete', path: '/memories/a/b/c/Photo.png' },
      ORIGINS.claude,
    )
    expect(gone.isError, String(gone.content)).toBe(false)
    const readPhoto = () => readFile(path.join(work, 'a/b/c/Photo.png'))
    await memory.restoreDeleted('/memories/a/b/c/Photo.png')
    expect(await readPhoto()).toEqual(png(2))
    const restored = await memory.restoreFile('/memories/a/b/c/Photo.png', moved.commit!.oid)
    expect(restored.commit).toBeNull() // the same bytes: nothing to commit
    // Its first version, by the name it had then, comes back beside it.
    await memory.restoreFile('/memories/photo.png', first)
    expect(await readFile(path.join(work, 'photo.png'))).toEqual(png(1))
    expect(bytesAt('main', 'photo.png')).toEqual(png(1))
    expect(await readPhoto()).toEqual(png(2))
    // Undoing that restore removes it again, as a new commit on top.
    const before = revList(dataDir)
    await memory.revert(before[0]!)
    expect(revList(dataDir).slice(1)).toEqual(before)
    expect(changesPerGit(dataDir, before[0]!, 'main')).toEqual(['D photo.png'])
    expect(await folderFiles(dataDir)).toEqual(
      new Map([['a/b/c/Photo.png', png(2).toString('utf8')]]),
    )
    fsck(dataDir)
  })
})
