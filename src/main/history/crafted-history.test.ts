import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { snapshot } from '../memory/test-support'
import { openVersionedMemory, type VersionedMemory } from './index'
import { gitCli, tempDataDir, CLAUDE } from './test-helpers'

// Defect 8 of issue #9: tree entries named `..`, `../x`, `.git`, `.cairn-tmp-…` or holding a
// newline were refused only by isomorphic-git's own check (surfacing as `internal`), or not
// at all: a restore wrote them into the folder.

let dataDir: string
let cleanup: () => Promise<void>
const open = () => openVersionedMemory({ dataDir, watch: false })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

function gitWrite(type: 'tree' | 'blob', content: Buffer): string {
  return execFileSync(
    'git',
    [
      '--git-dir',
      path.join(dataDir, 'history.git'),
      'hash-object',
      '--literally',
      '-t',
      type,
      '-w',
      '--stdin',
    ],
    { input: content, encoding: 'utf8' },
  ).trim()
}

function tree(entries: ReadonlyArray<[mode: string, name: string, oid: string]>): string {
  const parts = entries.map(([mode, name, oid]) =>
    Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'utf8'), Buffer.from(oid, 'hex')]),
  )
  return gitWrite('tree', Buffer.concat(parts))
}

function commitTree(treeOid: string, parent: string, message: string): string {
  return execFileSync(
    'git',
    ['--git-dir', path.join(dataDir, 'history.git'), 'commit-tree', treeOid, '-p', parent],
    {
      input: message,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'x',
        GIT_AUTHOR_EMAIL: 'x@x',
        GIT_COMMITTER_NAME: 'x',
        GIT_COMMITTER_EMAIL: 'x@x',
      },
    },
  ).trim()
}

/**
 * A history of three commits whose middle one is crafted: its tree holds `name` (a file, or a
 * folder with a file in it) beside `a.md`. The newest commit is the first one's tree again.
 */
async function craft(name: string, asFolder: boolean): Promise<string> {
  const memory = await open()
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
  await memory.close()
  const first = gitCli(dataDir, 'rev-parse', 'main').trim()
  const good = gitCli(dataDir, 'rev-parse', 'main:a.md').trim()
  const evil = gitWrite('blob', Buffer.from('evil\n'))
  const entry: [string, string, string] = asFolder
    ? ['40000', name, tree([['100644', 'pwned.md', evil]])]
    : ['100644', name, evil]
  const crafted = commitTree(tree([['100644', 'a.md', good], entry]), first, 'crafted\n')
  const back = commitTree(gitCli(dataDir, 'rev-parse', 'main^{tree}').trim(), crafted, 'back\n')
  await writeFile(path.join(dataDir, 'history.git', 'refs', 'heads', 'main'), `${back}\n`)
  return crafted
}

const NAMES: ReadonlyArray<[string, string, boolean]> = [
  ['..', '..', true],
  ['../x', '../x', false],
  ['.git', '.git', true],
  ['.GIT', '.GIT', true],
  ['.cairn-tmp-…', '.cairn-tmp-0123', false],
  ['a newline', 'a\nb.md', false],
  ['a slash', 'x/y.md', false],
  ['.', '.', true],
]

async function expectDamaged(call: Promise<unknown>, crafted: string): Promise<void> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CairnError)
  expect(error).toMatchObject({ code: 'history-damaged' })
  expect((error as Error).message).toContain(`history is damaged at ${crafted.slice(0, 7)}`)
  expect((error as Error).message).not.toContain(dataDir)
}

describe('crafted tree entries (defect 8)', () => {
  it.each(NAMES)('refuses an entry named %s on every read and restore', async (_, name, dir) => {
    const crafted = await craft(name, dir)
    let memory: VersionedMemory | null = null
    try {
      memory = await open()
      const before = await snapshot(dataDir)
      await expectDamaged(memory.readAt('/memories/a.md', crafted), crafted)
      await expectDamaged(memory.show(crafted), crafted)
      await expectDamaged(
        memory.diff(
          '/memories/a.md',
          crafted,
          (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid,
        ),
        crafted,
      )
      await expectDamaged(memory.restoreFile('/memories/a.md', crafted), crafted)
      await expectDamaged(memory.restoreAll(crafted), crafted)
      await expectDamaged(memory.revert(crafted), crafted)
      expect(await snapshot(dataDir)).toBe(before)
      // The rest of the history still works.
      const next = await memory.execute(
        {
          command: 'create',
          path: '/memories/b.md',
          file_text: 'b',
        },
        CLAUDE,
      )
      expect(next.commit).not.toBeNull()
    } finally {
      await memory?.close()
    }
  })
})

describe('a commit dated past what a date holds (review hunt12-story D6)', () => {
  it('is listed with a time a date can hold, and the history still reads', async () => {
    const memory = await open()
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    await memory.close()
    const head = gitCli(dataDir, 'rev-parse', 'main').trim()
    const treeOid = gitCli(dataDir, 'rev-parse', 'main^{tree}').trim()
    const person = 'You <you@cairn.invalid> 99999999999999 +0000'
    const raw = `tree ${treeOid}\nparent ${head}\nauthor ${person}\ncommitter ${person}\n\nfar away\n`
    const crafted = execFileSync(
      'git',
      [
        '--git-dir',
        path.join(dataDir, 'history.git'),
        'hash-object',
        '-t',
        'commit',
        '-w',
        '--stdin',
      ],
      { input: raw, encoding: 'utf8' },
    ).trim()
    await writeFile(path.join(dataDir, 'history.git', 'refs', 'heads', 'main'), `${crafted}\n`)
    // git itself calls the commit sound.
    expect(gitCli(dataDir, 'fsck', '--strict', '--no-dangling').trim()).toBe('')
    const reopened = await open()
    try {
      const { entries } = await reopened.log({ offset: 0, limit: 10 })
      expect(entries.map((e) => e.oid)).toEqual([crafted, head])
      for (const entry of entries)
        expect(Number.isFinite(new Date(entry.time).getTime())).toBe(true)
      expect(new Date(entries[0]!.time).toISOString()).toBe('+275760-09-13T00:00:00.000Z')
      expect((await reopened.show(crafted)).commit.time).toBe(entries[0]!.time)
      expect(await reopened.readAt('/memories/a.md', crafted)).toBe('a\n')
    } finally {
      await reopened.close()
    }
  })
})

// An acceptance check (probe28n) of the same promise through History's other channels: the
// version listing, its bytes, a comparison, blame and search, a file's history and bringing a
// deleted file back. Each either refuses the crafted version as "history is damaged at
// <commit>" or answers about the sound versions only, never `internal`, never a host path,
// and never names an entry a memory path cannot be.
async function damagedOrAnswer<T>(call: Promise<T>, crafted: string): Promise<T | null> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  )
  if ('value' in outcome) return outcome.value
  const { error } = outcome
  expect(error).toBeInstanceOf(CairnError)
  expect(error).toMatchObject({ code: 'history-damaged' })
  expect((error as Error).message).toContain(`history is damaged at ${crafted.slice(0, 7)}`)
  expect((error as Error).message).not.toContain(dataDir)
  return null
}

/** True for a memory path the tool could name: no `..`, `.`, `.git`, temp name or control. */
function soundPath(virtual: string): boolean {
  const parts = virtual.split('/').slice(2)
  return parts.every(
    (part) =>
      part !== '' &&
      part !== '.' &&
      part !== '..' &&
      part.toLowerCase() !== '.git' &&
      !part.startsWith('.cairn-tmp-') &&
      ![...part].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f' || c === '\\'),
  )
}

describe('crafted tree entries through the other channels (defect 8, probe28n)', () => {
  it.each(NAMES)('an entry named %s', async (_, name, dir) => {
    const crafted = await craft(name, dir)
    let memory: VersionedMemory | null = null
    try {
      memory = await open()
      // The memory folder and main; blame keeps its line provenance in history.git.
      const before = await snapshot(path.join(dataDir, 'memories'))
      const main = gitCli(dataDir, 'rev-parse', 'main')
      await expectDamaged(memory.listAt(crafted), crafted)
      await expectDamaged(memory.readBytesAt('/memories/a.md', crafted), crafted)
      await expectDamaged(memory.compare(crafted), crafted)
      await expectDamaged(memory.blame('/memories/a.md', crafted), crafted)
      // Whole-history walks: the crafted version is refused or passed over, never shown.
      const blame = await damagedOrAnswer(memory.blame('/memories/a.md'), crafted)
      if (blame) expect(blame.map((line) => line.text)).toEqual(['a'])
      const search = await damagedOrAnswer(
        memory.searchHistory({ text: 'evil', matchCase: true, budgetMs: 60_000 }),
        crafted,
      )
      if (search) {
        for (const hit of search.hits) {
          for (const file of hit.files) expect(soundPath(file.path), file.path).toBe(true)
        }
      }
      const history = await damagedOrAnswer(memory.fileHistory('/memories/a.md'), crafted)
      if (history) {
        for (const entry of history) {
          for (const changed of entry.paths) expect(soundPath(changed), changed).toBe(true)
        }
      }
      const page = await memory.log({ offset: 0, limit: 10 })
      for (const entry of page.entries) {
        for (const changed of entry.paths) expect(soundPath(changed), changed).toBe(true)
      }
      // The crafted entry was "deleted" by the commit after it: bringing it back is refused.
      const brought = await memory.restoreDeleted(`/memories/${name}`).then(
        () => null,
        (e: unknown) => e,
      )
      expect(brought).toBeInstanceOf(CairnError)
      expect((brought as CairnError).code).not.toBe('internal')
      expect((brought as Error).message).not.toContain(dataDir)
      expect(await snapshot(path.join(dataDir, 'memories'))).toBe(before)
      expect(gitCli(dataDir, 'rev-parse', 'main')).toBe(main)
    } finally {
      await memory?.close()
    }
  })
})
