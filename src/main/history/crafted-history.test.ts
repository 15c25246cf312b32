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
