/**
 * "Memory at this reply" checked again on current main (probe31b), with `git` as the second
 * opinion: the memory a reply's `memoryAt` opens is exactly the tree `git ls-tree` lists at
 * that commit, each file's size what `git cat-file -s` says and its text what `git show` says,
 * after memory moved on by every kind of change (Claude's edits, a delete, a folder renamed,
 * the person's writes, an edit outside Cairn, a restore).
 */
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-saw-git-' })
const { call } = cairn

function git(...args: string[]): string {
  return execFileSync('git', ['--git-dir', path.join(cairn.dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cairn.dataDir },
    maxBuffer: 16 * 1024 * 1024,
  })
}

/** Files at `rev` per git: path relative to the memory root, and size. */
function gitFiles(rev: string): Map<string, number> {
  const files = new Map<string, number>()
  for (const line of git('ls-tree', '-r', '-l', '-z', rev).split('\0').filter(Boolean)) {
    const [meta, name] = line.split('\t') as [string, string]
    files.set(`/memories/${name}`, Number(meta.trim().split(/\s+/)[3]))
  }
  return files
}

const write = (file: string, content: string) => call('memory:write', { path: file, content })

describe('memory at a reply, against git', () => {
  it('is exactly the tree, sizes and texts git holds at memoryAt, after memory moved on', async () => {
    await write('/memories/notes/trip plans.md', 'Go north.\nPack light.\n')
    await write('/memories/ünïcode/café.md', 'crème brûlée\n')
    await write('/memories/empty.md', '')
    await write('/memories/prefs.md', 'likes tea\n')
    // An editor writes CRLF lines and a binary file while Cairn is closed.
    await cairn.reopen(async () => {
      const root = path.join(cairn.dataDir, 'memories')
      await writeFile(path.join(root, 'windows.md'), 'one\r\ntwo\r\n')
      await mkdir(path.join(root, 'img'), { recursive: true })
      await writeFile(path.join(root, 'img', 'dot.bin'), Buffer.from([0, 1, 2, 255, 0]))
    })

    cairn.fake.script(
      reply.toolUse({ input: { command: 'view', path: '/memories/prefs.md' } }),
      reply.toolUse({
        input: {
          command: 'str_replace',
          path: '/memories/prefs.md',
          old_str: 'tea',
          new_str: 'coffee',
        },
      }),
      reply.toolUse({ input: { command: 'delete', path: '/memories/empty.md' } }),
      reply.toolUse({
        input: { command: 'rename', old_path: '/memories/notes', new_path: '/memories/travel' },
      }),
      reply.text('Done.'),
    )
    const { conversationId } = await cairn.turn(null, 'I drink coffee now.')
    const stored = await call('conversations:get', { id: conversationId })
    const at = stored.messages.find((m) => m.role === 'assistant')?.memoryAt as string
    expect(at).toMatch(/^[0-9a-f]{40}$/)

    // Memory moves on: the person writes, an edit outside Cairn, a restore.
    await write('/memories/ünïcode/café.md', 'tiramisu\n')
    await write('/memories/new.md', 'new\n')
    await cairn.reopen(async () => {
      await writeFile(path.join(cairn.dataDir, 'memories', 'windows.md'), 'ONE\r\ntwo\r\n')
    })
    const restored = await call('history:restoreFile', {
      path: '/memories/ünïcode/café.md',
      oid: at,
    })
    expect(restored.commit?.command).toBe('restore-file')

    const expected = gitFiles(at)
    expect([...expected.keys()].sort()).toEqual([
      '/memories/empty.md',
      '/memories/img/dot.bin',
      '/memories/notes/trip plans.md',
      '/memories/prefs.md',
      '/memories/windows.md',
      '/memories/ünïcode/café.md',
    ])
    const tree = await call('memory:tree', { at })
    const files = tree.filter((entry) => entry.kind === 'file')
    expect(new Map(files.map((entry) => [entry.path, entry.size]))).toEqual(expected)
    // Every folder listed holds a file git lists, and every file's folders are listed.
    const dirs = new Set(tree.filter((entry) => entry.kind === 'dir').map((entry) => entry.path))
    const parents = new Set(
      [...expected.keys()].flatMap((file) => {
        const parts = file.split('/').slice(2, -1)
        return parts.map((_, i) => `/memories/${parts.slice(0, i + 1).join('/')}`)
      }),
    )
    expect(dirs).toEqual(parents)

    for (const file of expected.keys()) {
      const read = await call('memory:read', { path: file, at })
      const bytes = execFileSync(
        'git',
        ['--git-dir', path.join(cairn.dataDir, 'history.git'), 'show', `${at}:${file.slice(10)}`],
        { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cairn.dataDir } },
      )
      expect(read.size, file).toBe(bytes.length)
      if (bytes.includes(0)) expect(read.kind, file).toBe('binary')
      else expect(read.text, file).toBe(bytes.toString('utf8'))
    }
    // What Claude viewed is the version git holds there, not memory now.
    expect((await call('memory:read', { path: '/memories/prefs.md', at })).text).toBe('likes tea\n')
  })
})
