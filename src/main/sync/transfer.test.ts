/**
 * Export and import on real data folders, with the git CLI as the second opinion: bundles
 * verify and clone, a round trip into a fresh data folder reproduces every commit's tree, and
 * every import is one commit by You whose files passed the path and secret checks.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { LogPage } from '../../shared/types'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readZip, writeZip } from './zip'
import { dialogHost, linesOfHistory, startMachine, type Machine } from './test-support'

const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

let scratch: string
let machines: Machine[] = []

beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cairn-transfer-'))
})
afterEach(async () => {
  await Promise.all(machines.map((m) => m.close()))
  machines = []
  await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
})

async function machine(name: string) {
  const host = dialogHost()
  const m = await startMachine(name, { host })
  machines.push(m)
  return { m, host }
}

function git(...args: string[]): string {
  return execFileSync('git', args, {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: scratch,
      GIT_AUTHOR_NAME: 'Sam',
      GIT_AUTHOR_EMAIL: 'sam@example.com',
      GIT_COMMITTER_NAME: 'Sam',
      GIT_COMMITTER_EMAIL: 'sam@example.com',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** commit -> tree, for every commit of `main`. */
function treesOf(m: Machine): Map<string, string> {
  const lines = m.git('log', '--format=%H %T', 'main').trim().split('\n')
  return new Map(lines.map((line) => line.split(' ') as [string, string]))
}

async function richHistory(m: Machine): Promise<void> {
  await m.write('notes.md', '# Notes\nEditor: Helix\n')
  await m.write('projects/trailhead.md', 'A Rust CLI.\n')
  await m.write('notes.md', '# Notes\nEditor: Zed\n')
  await m.rename('projects/trailhead.md', 'work/trailhead.md')
  await m.write('tmp.md', 'short-lived\n')
  await m.remove('tmp.md')
  await m.write('preferences.md', 'Theme: dark\n')
}

describe('export', () => {
  it('writes the whole history as a bundle git verifies and clones', async () => {
    const { m, host } = await machine('laptop')
    await richHistory(m)
    const file = path.join(scratch, 'history.bundle')
    host.answer(file)
    const result = await m.call('sync:export', { kind: 'bundle' })
    expect(result).toMatchObject({ saved: true, fileName: 'history.bundle' })
    expect(result.message).not.toContain(scratch)
    git('bundle', 'verify', file)
    const clone = path.join(scratch, 'clone')
    git('clone', '--quiet', file, clone)
    git('-C', clone, 'fsck', '--strict', '--no-dangling')
    expect(git('-C', clone, 'log', '--format=%H %T').trim()).toBe(
      m.git('log', '--format=%H %T', 'main').trim(),
    )
    expect(await readFile(path.join(clone, 'notes.md'), 'utf8')).toBe('# Notes\nEditor: Zed\n')
  })

  it('writes the memory now, or at any commit, as a ZIP of its files', async () => {
    const { m, host } = await machine('laptop')
    await richHistory(m)
    const early = m.git('log', '--format=%H', '--reverse', 'main').trim().split('\n')[1] as string
    host.answer(path.join(scratch, 'now.zip'))
    host.answer(path.join(scratch, 'then.zip'))
    await m.call('sync:export', { kind: 'zip' })
    await m.call('sync:export', { kind: 'zip', at: early })
    const limits = { maxEntries: 100, maxEntryBytes: 1 << 20, maxTotalBytes: 1 << 24 }
    const text = (entries: ReturnType<typeof readZip>) =>
      Object.fromEntries(entries.map((e) => [e.name, Buffer.from(e.data ?? []).toString('utf8')]))
    expect(text(readZip(await readFile(path.join(scratch, 'now.zip')), limits))).toEqual(
      Object.fromEntries(await m.files()),
    )
    expect(text(readZip(await readFile(path.join(scratch, 'then.zip')), limits))).toEqual({
      'notes.md': '# Notes\nEditor: Helix\n',
      'projects/trailhead.md': 'A Rust CLI.\n',
    })
  })

  it('changes nothing when the save is cancelled, and refuses a commit not in the history', async () => {
    const { m, host } = await machine('laptop')
    await m.write('a.md', 'a\n')
    host.answer(null)
    expect(await m.call('sync:export', { kind: 'zip' })).toMatchObject({ saved: false })
    expect(await m.refused('sync:export', { kind: 'zip', at: 'f'.repeat(40) })).toBe('not-found')
  })
})

describe('import', () => {
  it('round-trips a bundle into a fresh data folder, every commit’s tree reproduced', async () => {
    const { m: laptop, host: laptopHost } = await machine('laptop')
    await richHistory(laptop)
    const file = path.join(scratch, 'history.bundle')
    laptopHost.answer(file)
    await laptop.call('sync:export', { kind: 'bundle' })

    const { m: fresh, host } = await machine('desktop')
    host.answer(file)
    const result = await fresh.call('sync:import', { kind: 'bundle' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(result.skipped).toEqual([])
    const original = treesOf(laptop)
    const imported = treesOf(fresh)
    for (const [commit, tree] of original) expect(imported.get(commit)).toBe(tree)
    expect(await fresh.files()).toEqual(await laptop.files())
    fresh.git('fsck', '--strict', '--no-dangling')
    // The timeline holds the imported commits and the import itself.
    const page = await fresh.call('history:log', { offset: 0, limit: 100 })
    expect(page.total).toBe(original.size + 1)
    // Importing it again brings nothing new.
    host.answer(file)
    expect((await fresh.call('sync:import', { kind: 'bundle' })).commit).toBeNull()
  })

  it('joins an imported history to existing memory in one commit by You, same paths kept both ways', async () => {
    const { m: laptop, host: laptopHost } = await machine('laptop')
    await laptop.write('shared.md', 'Name: Sam\nLikes: tea\n')
    await laptop.write('laptop.md', 'laptop\n')
    const file = path.join(scratch, 'history.bundle')
    laptopHost.answer(file)
    await laptop.call('sync:export', { kind: 'bundle' })

    const { m: desktop, host } = await machine('desktop')
    await desktop.write('shared.md', 'Name: Sam\nLikes: coffee\n')
    const before = desktop.git('rev-parse', 'main').trim()
    host.answer(file)
    const result = await desktop.call('sync:import', { kind: 'bundle' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import', parent: before })
    expect(result.commit?.otherParents).toHaveLength(1)
    const files = await desktop.files()
    expect(files.get('laptop.md')).toBe('laptop\n')
    expect(files.get('shared.md')).toContain('Likes: coffee\n=======\nLikes: tea\n')
    const status = await desktop.call('sync:status')
    expect(status.conflicts.map((c) => c.path)).toEqual(['/memories/shared.md'])
    // Restorable: reverting the import takes memory back to what it was.
    await desktop.call('history:revert', { oid: result.commit!.oid })
    expect(Object.fromEntries(await desktop.files())).toEqual({
      'shared.md': 'Name: Sam\nLikes: coffee\n',
    })
    desktop.git('fsck', '--strict', '--no-dangling')
  })

  it('round-trips what the folder versioned but Claude may not write: hidden files, large notes', async () => {
    const dataDir = path.join(scratch, 'laptop-data')
    let laptop = await startMachine('laptop', { dataDir })
    await laptop.write('notes.md', '# Notes\nEditor: Helix\n')
    await laptop.close()
    // Edited outside Cairn: an Obsidian vault's settings, a 1.6 MB note pasted in an editor.
    const memories = path.join(dataDir, 'memories')
    await mkdir(path.join(memories, '.obsidian'), { recursive: true })
    await writeFile(path.join(memories, '.obsidian', 'app.json'), '{"theme":"dark"}\n')
    await writeFile(path.join(memories, 'journal.md'), 'day one\n'.repeat(200_000))
    const laptopHost = dialogHost()
    laptop = await startMachine('laptop', { dataDir, host: laptopHost })
    machines.push(laptop)
    await laptop.write('notes.md', '# Notes\nEditor: Zed\n')
    expect(laptop.git('ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      '.obsidian/app.json',
      'journal.md',
      'notes.md',
    ])
    const file = path.join(scratch, 'history.bundle')
    laptopHost.answer(file)
    await laptop.call('sync:export', { kind: 'bundle' })

    const { m: fresh, host } = await machine('desktop')
    host.answer(file)
    const result = await fresh.call('sync:import', { kind: 'bundle' })
    expect(result.skipped).toEqual([])
    const original = treesOf(laptop)
    const imported = treesOf(fresh)
    for (const [commit, tree] of original) expect(imported.get(commit)).toBe(tree)
    expect(fresh.git('ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      '.obsidian/app.json',
      'journal.md',
      'notes.md',
    ])
    expect(await readFile(path.join(fresh.dir, 'memories', 'journal.md'), 'utf8')).toBe(
      'day one\n'.repeat(200_000),
    )
    fresh.git('fsck', '--strict', '--no-dangling')
  }, 60_000)

  it('imports a git repository’s history re-rooted under /memories, leaving out what history refuses', async () => {
    const repo = path.join(scratch, 'vault')
    git('init', '--quiet', '--initial-branch=main', repo)
    await mkdir(path.join(repo, '.obsidian'))
    await writeFile(path.join(repo, '.obsidian', 'app.json'), '{}\n')
    await writeFile(path.join(repo, 'ideas.md'), 'first idea\n')
    await writeFile(path.join(repo, 'keys.md'), `github: ${GITHUB_TOKEN}\n`)
    git('-C', repo, 'add', '-A')
    git('-C', repo, 'commit', '--quiet', '-m', 'start the vault')
    await mkdir(path.join(repo, 'people'))
    await writeFile(path.join(repo, 'people', 'ana.md'), 'Ana likes maps.\n')
    await symlink('/etc/passwd', path.join(repo, 'passwd.md'))
    await writeFile(path.join(repo, 'ideas.md'), 'first idea\nsecond idea\n')
    git('-C', repo, 'add', '-A')
    git('-C', repo, 'commit', '--quiet', '-m', 'more ideas')

    const { m, host } = await machine('laptop')
    host.answer(repo)
    const result = await m.call('sync:import', { kind: 'repository' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    // A hidden settings file is history like any other (the folder scan versions it too).
    expect(Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]))).toEqual({
      'keys.md': expect.stringContaining('credential'),
      'passwd.md': 'a symbolic link',
    })
    expect(result.message).not.toContain(GITHUB_TOKEN)
    expect(Object.fromEntries(await m.files())).toEqual({
      '.obsidian/app.json': '{}\n',
      'ideas.md': 'first idea\nsecond idea\n',
      'people/ana.md': 'Ana likes maps.\n',
    })
    // Both commits kept (their subjects), and nothing refused in any of them.
    const subjects = m.git('log', '--format=%s', 'main').trim().split('\n')
    expect(subjects).toContain('start the vault')
    expect(subjects).toContain('more ideas')
    const everything = m.git('log', '--all', '--name-only', '--format=', 'main')
    expect(everything).not.toMatch(/keys\.md|passwd/)
    // The secret never entered the repository, not even as an unreachable object.
    const stored = [...linesOfHistory(path.join(m.dir, 'history.git'))]
    expect(stored.filter((line) => line.includes('ghp_'))).toEqual([])
  }, 60_000)

  it('keeps the committer of a commit it rewrites: Cairn’s commit amended with git stays outside Cairn', async () => {
    const repo = path.join(scratch, 'amended')
    git('init', '--quiet', '--initial-branch=main', repo)
    await writeFile(path.join(repo, 'notes.md'), 'edited by Ann\n')
    await symlink('/etc/passwd', path.join(repo, 'passwd.md'))
    git('-C', repo, 'add', '-A')
    // Claude's commit, as `git commit --amend` by Ann leaves it: Claude still its author, its
    // trailers kept, Ann its committer. Its link left out, the import rewrites it.
    const message =
      'str_replace /memories/notes.md\n\nCommand: str_replace\nTool-Use-Id: toolu_forged'
    execFileSync('git', ['-C', repo, 'commit', '--quiet', '-m', message], {
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: scratch,
        GIT_AUTHOR_NAME: 'Claude',
        GIT_AUTHOR_EMAIL: 'claude@cairn.invalid',
        GIT_COMMITTER_NAME: 'Ann Smith',
        GIT_COMMITTER_EMAIL: 'ann@example.com',
      },
    })

    const { m, host } = await machine('laptop')
    host.answer(repo)
    await m.call('sync:import', { kind: 'repository' })
    const people = m.git('log', '--format=%an <%ae>|%cn <%ce>|%s', 'main').trim().split('\n')
    expect(people).toContain(
      'Claude <claude@cairn.invalid>|Ann Smith <ann@example.com>|str_replace /memories/notes.md',
    )
    const log = (await m.call('history:log', { offset: 0, limit: 10 })) as LogPage
    const amended = log.entries.find((c) => c.subject === 'str_replace /memories/notes.md')
    expect(amended).toMatchObject({ actor: 'outside', author: 'Ann Smith', toolUseId: null })
  })

  it('leaves out a name that displays as another, as Claude’s paths refuse it, naming it in escapes', async () => {
    const repo = path.join(scratch, 'disguised')
    git('init', '--quiet', '--initial-branch=main', repo)
    // "evil\u202Egpj.md" shows as "evildm.jpg": a bidi override or isolate reorders the name.
    const names = ['evil\u202Egpj.md', 'a\u2066b.md']
    // An emoji sequence's joiner, a right-to-left mark, a zero-width space and a byte-order
    // mark reorder nothing: carried, as the other machine's folder scan versioned them.
    const family = 'family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}.md'
    const hebrew = '\u05E9\u05DC\u05D5\u05DD\u200F.md'
    const spaced = 'notes\u200b.md'
    const marked = '\ufeffplan.md'
    await writeFile(path.join(repo, spaced), 'spaced\n')
    await writeFile(path.join(repo, marked), 'marked\n')
    await writeFile(path.join(repo, 'notes.md'), 'the real notes\n')
    await writeFile(path.join(repo, family), 'the family\n')
    await writeFile(path.join(repo, hebrew), 'shalom\n')
    await mkdir(path.join(repo, 'dir\u202Eoof'))
    await writeFile(path.join(repo, 'dir\u202Eoof', 'inside.md'), 'inside\n')
    for (const name of names) await writeFile(path.join(repo, name), 'disguised\n')
    git('-C', repo, 'add', '-A')
    git('-C', repo, 'commit', '--quiet', '-m', 'start')

    const { m, host } = await machine('laptop')
    host.answer(repo)
    const result = await m.call('sync:import', { kind: 'repository' })
    expect(Object.fromEntries(await m.files())).toEqual({
      'notes.md': 'the real notes\n',
      [family]: 'the family\n',
      [hebrew]: 'shalom\n',
      [spaced]: 'spaced\n',
      [marked]: 'marked\n',
    })
    const reason = 'a name holding an invisible formatting character'
    expect(Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]))).toEqual({
      'evil\\u202Egpj.md': reason,
      'a\\u2066b.md': reason,
      'dir\\u202Eoof/inside.md': reason,
    })
    // Nothing shown carries the characters themselves.
    expect(JSON.stringify(result.skipped)).not.toMatch(
      /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/,
    )
    expect(
      m.git('ls-tree', '-r', '--name-only', '-z', 'main').split('\0').filter(Boolean).sort(),
    ).toEqual([family, hebrew, 'notes.md', spaced, marked].sort())
  }, 60_000)

  it('imports a folder of Markdown files as one commit, merging a file that exists', async () => {
    const { m, host } = await machine('laptop')
    await m.write('me.md', '# Me\nName: Sam\nLikes: tea\n')
    const folder = path.join(scratch, 'notes')
    await mkdir(path.join(folder, 'sub'), { recursive: true })
    await mkdir(path.join(folder, '.git'))
    await writeFile(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    await writeFile(path.join(folder, 'me.md'), '# Me\nName: Sam\nLikes: coffee\n')
    await writeFile(path.join(folder, 'sub', 'book.md'), 'Reading: Dune\n')
    await writeFile(path.join(folder, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
    await writeFile(path.join(folder, 'secret.md'), `token ${GITHUB_TOKEN}\n`)
    host.answer(folder)
    const before = m.git('rev-list', '--count', 'main').trim()
    const result = await m.call('sync:import', { kind: 'folder' })
    expect(Number(m.git('rev-list', '--count', 'main').trim())).toBe(Number(before) + 1)
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(result.skipped.map((s) => s.path).sort()).toEqual(['.git', 'photo.png', 'secret.md'])
    const files = await m.files()
    expect(files.get('sub/book.md')).toBe('Reading: Dune\n')
    expect(files.get('me.md')).toBe(
      '# Me\nName: Sam\n<<<<<<< laptop\nLikes: tea\n=======\nLikes: coffee\n>>>>>>> imported from notes\n',
    )
    const status = await m.call('sync:status')
    expect(status.conflicts).toEqual([expect.objectContaining({ path: '/memories/me.md' })])
    await m.call('sync:resolve', { path: '/memories/me.md', choice: 'theirs' })
    expect((await m.files()).get('me.md')).toBe('# Me\nName: Sam\nLikes: coffee\n')
  })

  it('imports a ZIP of Markdown files and refuses paths that would leave memory', async () => {
    const { m, host } = await machine('laptop')
    const zip = path.join(scratch, 'export.zip')
    const now = Date.now()
    const entry = (name: string, text: string) => ({ name, data: Buffer.from(text), time: now })
    await writeFile(
      zip,
      writeZip([
        entry('notes/a.md', 'alpha\n'),
        entry('../escape.md', 'outside\n'),
        entry('.hidden.md', 'hidden\n'),
        entry('notes/b.txt', 'beta\n'),
      ]),
    )
    host.answer(zip)
    const result = await m.call('sync:import', { kind: 'zip' })
    expect(Object.fromEntries(await m.files())).toEqual({
      'notes/a.md': 'alpha\n',
      'notes/b.txt': 'beta\n',
    })
    expect(result.skipped.map((s) => s.path).sort()).toEqual(['../escape.md', '.hidden.md'])
  })

  it('refuses a file that is not what it claims, changing nothing', async () => {
    const { m, host } = await machine('laptop')
    await m.write('a.md', 'a\n')
    const head = m.git('rev-parse', 'main')
    const junk = path.join(scratch, 'junk.bundle')
    await writeFile(junk, 'not a bundle at all')
    host.answer(junk)
    expect(await m.refused('sync:import', { kind: 'bundle' })).toBe('import-invalid')
    host.answer(junk)
    expect(await m.refused('sync:import', { kind: 'zip' })).toBe('import-invalid')
    host.answer(scratch)
    expect(await m.refused('sync:import', { kind: 'repository' })).toBe('import-invalid')
    host.answer(null)
    expect((await m.call('sync:import', { kind: 'bundle' })).commit).toBeNull()
    expect(m.git('rev-parse', 'main')).toBe(head)
  })

  it('saves a pasted memory export as one file, with the same secret check as Claude’s writes', async () => {
    const { m } = await machine('laptop')
    const pasted = '- Prefers short answers\n- Works on trailhead, a Rust CLI\n'
    const result = await m.call('sync:import', { kind: 'text', text: pasted })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    const saved = (await m.files()).get('imported-memory.md') ?? ''
    expect(saved).toContain(pasted.trim())
    const again = await m.call('sync:import', { kind: 'text', text: 'Second export\n' })
    expect(again.message).toContain('/memories/imported-memory-2.md')
    const head = m.git('rev-parse', 'main')
    expect(
      await m.refused('sync:import', { kind: 'text', text: `my token: ${GITHUB_TOKEN}` }),
    ).toBe('secret-detected')
    expect(await m.refused('sync:import', { kind: 'text', text: '   ' })).toBe('import-empty')
    expect(m.git('rev-parse', 'main')).toBe(head)
  })
})
