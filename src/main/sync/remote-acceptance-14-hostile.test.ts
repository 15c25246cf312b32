/**
 * Issue #14's remote, the unkind way: the address that now serves another repository, a
 * remote whose `main` was deleted, case-only renames between a machine whose names keep case
 * and one whose names fold it, and the token kept off every file Cairn writes. Real machines
 * through the real git server on loopback; the git CLI as second opinion.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  expectSound,
  linesOfHistory,
  otherClient,
  useSyncServer,
  type Machine,
} from './test-support'

const sync = useSyncServer()

/** Every file under `dir`, with its bytes. */
async function everyFile(dir: string): Promise<Array<[string, Buffer]>> {
  const out: Array<[string, Buffer]> = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const file = path.join(entry.parentPath, entry.name)
    out.push([path.relative(dir, file), await readFile(file)])
  }
  return out
}

describe('an address that now serves another repository', () => {
  it('asks before joining; nothing of either side is lost or pushed over', async () => {
    const { repo, laptop } = await sync.alone('swapped', {}, ['mine.md', 'written on the laptop\n'])
    // The server's repository is replaced by another person's memory, history unrelated.
    const stranger = await sync.machine('stranger')
    await stranger.write('theirs.md', 'a stranger’s memory\n')
    const other = sync.newRepo('stranger')
    await stranger.connect(sync.server, other)
    expect((await stranger.sync()).state).toBe('idle')
    const strangerTip = sync.server.git(other, 'rev-parse', 'main').trim()
    sync.server.git(repo, 'fetch', '--quiet', sync.server.gitdir(other), `+main:refs/heads/main`)
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(strangerTip)

    await laptop.write('mine.md', 'written on the laptop\nand more since\n')
    const head = laptop.git('rev-parse', 'main').trim()
    const status = await laptop.sync()
    expect(status.join).not.toBeNull()
    expect(laptop.git('rev-parse', 'main').trim()).toBe(head)
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(strangerTip)
    expect(Object.fromEntries(await laptop.files())).toEqual({
      'mine.md': 'written on the laptop\nand more since\n',
    })
    // Asked again, the same: nothing is chosen silently.
    expect((await laptop.sync()).join).not.toBeNull()
    const joined = await laptop.call('sync:join', { choice: 'merge' })
    expect(joined.state).toBe('idle')
    expect(Object.fromEntries(await laptop.files())).toEqual({
      'mine.md': 'written on the laptop\nand more since\n',
      'theirs.md': 'a stranger’s memory\n',
    })
    laptop.git('merge-base', '--is-ancestor', head, 'main')
    laptop.git('merge-base', '--is-ancestor', strangerTip, 'main')
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(
      laptop.git('rev-parse', 'main').trim(),
    )
    await expectSound(sync.server, repo, [laptop])
  }, 120_000)
})

describe('a remote whose main was deleted', () => {
  it('never loses this machine’s history: the next sync puts it back whole', async () => {
    const { repo, laptop } = await sync.alone('deleted-main')
    await laptop.write('b.md', 'b\n')
    expect((await laptop.sync()).state).toBe('idle')
    sync.server.git(repo, 'update-ref', '-d', 'refs/heads/main')
    await laptop.write('c.md', 'c\n')
    // An emptied remote is an empty one: this machine's history goes back whole.
    expect((await laptop.sync()).state).toBe('idle')
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(
      laptop.git('rev-parse', 'main').trim(),
    )
    expect(Object.fromEntries(await laptop.files())).toEqual({
      'a.md': 'a\n',
      'b.md': 'b\n',
      'c.md': 'c\n',
    })
    laptop.git('fsck', '--strict', '--no-dangling')
  }, 120_000)
})

describe('case-only renames between a machine that keeps case and one that folds it', () => {
  for (const renamer of ['linux', 'mac'] as const) {
    it(`(${renamer} renames notes.md to Notes.md, the other edits it) one file, both changes, nothing lost`, async () => {
      const repo = sync.newRepo(`case-${renamer}`)
      const linux = await sync.machine('linux', undefined, { namesFoldCase: false })
      const mac = await sync.machine('mac', undefined, { namesFoldCase: true })
      await linux.write('notes.md', 'one\ntwo\nthree\n')
      await linux.connect(sync.server, repo)
      expect((await linux.sync()).state).toBe('idle')
      await mac.connect(sync.server, repo)
      expect((await mac.sync()).state).toBe('idle')
      const [moving, editing]: [Machine, Machine] =
        renamer === 'linux' ? [linux, mac] : [mac, linux]
      await moving.rename('notes.md', 'Notes.md')
      await editing.write('notes.md', 'one\ntwo\nthree\nfour from the editor\n')
      expect((await moving.sync()).state).toBe('idle')
      for (let i = 0; i < 2; i++) {
        for (const m of [editing, moving]) expect((await m.sync()).state).toBe('idle')
      }
      for (const m of [linux, mac]) {
        const files = await m.files()
        const names = [...files.keys()]
        expect(names.map((n) => n.toLowerCase())).toEqual(['notes.md'])
        expect([...files.values()].join('')).toContain('four from the editor')
      }
      expect(linux.git('rev-parse', 'main')).toBe(mac.git('rev-parse', 'main'))
      const remoteNames = sync.server.git(repo, 'ls-tree', '--name-only', 'main').trim().split('\n')
      expect(remoteNames.map((n) => n.toLowerCase())).toEqual(['notes.md'])
      await expectSound(sync.server, repo, [linux, mac])
    }, 120_000)
  }
})

describe('the token', () => {
  it('is written to no file but the secret store’s, nor sent to the window, nor in any error', async () => {
    const { repo, laptop } = await sync.alone('token-disk')
    const token = sync.server.token
    await laptop.write('b.md', 'b\n')
    expect((await laptop.sync()).state).toBe('idle')
    // A refused token: its error holds neither it nor the new one.
    const wrong = 'wrong-token-that-must-not-leak-1234'
    await laptop.connect(sync.server, repo, wrong)
    const refused = await laptop.sync()
    expect(refused.state).toBe('error')
    expect(JSON.stringify(refused)).not.toContain(wrong)
    expect(
      JSON.stringify(
        await laptop
          .call('sync:test', { url: sync.server.url(repo), username: sync.server.user })
          .catch((e: Error) => e.message),
      ),
    ).not.toContain(wrong)
    await laptop.connect(sync.server, repo, token)
    expect((await laptop.sync()).state).toBe('idle')
    const status = await laptop.call('sync:status')
    expect(JSON.stringify(status)).not.toContain(token)
    for (const [name, bytes] of await everyFile(laptop.dir)) {
      if (name === 'sync-token.json') continue
      for (const secret of [token, wrong]) {
        expect({ name, holds: bytes.includes(Buffer.from(secret)) }).toEqual({ name, holds: false })
        expect({
          name,
          holds: bytes.includes(Buffer.from(Buffer.from(secret).toString('base64'))),
        }).toEqual({ name, holds: false })
      }
    }
    expect(
      [...linesOfHistory(path.join(laptop.dir, 'history.git'))].filter((l) => l.includes(token)),
    ).toEqual([])
  }, 120_000)
})

describe('a remote whose main names no commit', () => {
  for (const kind of ['an annotated tag', 'a tree', 'a file'] as const) {
    it(`(${kind}) is refused plainly, changing nothing; once mended, the next sync completes`, async () => {
      const { repo, laptop } = await sync.alone(`not-a-commit-${kind.replace(/\W+/g, '-')}`)
      const tip = sync.server.git(repo, 'rev-parse', 'main').trim()
      const target =
        kind === 'a tree'
          ? sync.server.git(repo, 'rev-parse', 'main^{tree}').trim()
          : kind === 'a file'
            ? sync.server.git(repo, 'rev-parse', 'main:a.md').trim()
            : otherClient(
                sync.server.gitdir(repo),
                `object ${tip}\ntype commit\ntag v1\ntagger Other <o@x> 1700000000 +0000\n\na tag\n`,
                'mktag',
              )
      // git's own update-ref will not point a branch at what is not a commit; a hostile
      // server's file system will.
      await writeFile(path.join(sync.server.gitdir(repo), 'refs', 'heads', 'main'), `${target}\n`)
      await laptop.write('mine.md', 'written here\n')
      const head = laptop.git('rev-parse', 'main').trim()
      const status = await laptop.sync()
      // The remote's, never this machine's history called damaged: the object is sound, and
      // this machine's history holds it (the tree and the file it synced before).
      expect(status).toMatchObject({
        state: 'error',
        error: {
          code: 'sync-unsafe-content',
          message: expect.stringContaining('The remote holds a version Cairn cannot read'),
        },
      })
      expect(laptop.git('rev-parse', 'main').trim()).toBe(head)
      expect(Object.fromEntries(await laptop.files())).toEqual({
        'a.md': 'a\n',
        'mine.md': 'written here\n',
      })
      sync.server.git(repo, 'update-ref', 'refs/heads/main', tip)
      expect((await laptop.sync()).state).toBe('idle')
      expect(sync.server.git(repo, 'show', 'main:mine.md')).toBe('written here\n')
      laptop.git('fsck', '--strict', '--no-dangling')
    }, 120_000)
  }
})
