import { randomUUID } from 'node:crypto'
import { constants, existsSync, readdirSync, readlinkSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TEMP_FILE_PREFIX } from '../lib/atomic-write'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { openRepo } from './open-repo'
import type { CommitIntent } from './repo'
import { indexDirOf, IndexFile, writeIndex } from './index-file'
import { checkIndex, rebuildIndex } from './side-index'
import { commitCount, folderFiles, fsck, gitCli, headFiles, memoryTestBed } from './test-helpers'

const intent: CommitIntent = {
  actor: 'claude',
  command: 'create',
  subject: 'create',
  conversationId: 'conv',
  toolUseId: 'tool',
  overwrite: false,
  restoredFrom: null,
}

const bed = memoryTestBed({ memory: false })

// Every history a test opens, closed before the bed removes its folder (Vitest runs after-each
// hooks last registered first): an open object store makes its spare files in objects/ between
// commands, and one left open raced the removal (ENOTEMPTY).
const opened: Array<Awaited<ReturnType<typeof openRepo>>['repo']> = []
afterEach(() => {
  for (const repo of opened.splice(0)) {
    repo.store.close()
    repo.index.close()
  }
})

/** `openRepo`, the history it opens closed after the test. */
async function open(options: Parameters<typeof openRepo>[0]): ReturnType<typeof openRepo> {
  const result = await openRepo(options)
  opened.push(result.repo)
  return result
}
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

const memories = () => path.join(bed.dataDir, 'memories')
const gitdir = () => path.join(bed.dataDir, 'history.git')

async function put(relative: string, content: string): Promise<void> {
  const file = path.join(memories(), relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, content)
}

/** Opens, commits three files one by one, and returns the repo's entries. */
async function seed() {
  const { repo } = await open({ dataDir: bed.dataDir, now })
  for (const name of ['a.md', 'dir/b.md', 'c.md']) {
    await put(name, `content of ${name}`)
    await repo.commit([name], { ...intent, paths: [`/memories/${name}`] })
  }
  // Closed as the app closes a history: the write-ahead log checkpointed, its objects durable
  // (the damage below is then damage, not a power cut the log would undo).
  await repo.store.checkpoint({ durable: true })
  repo.store.close()
  return repo.index.all()
}

async function expectInSync(): Promise<void> {
  expect(headFiles(bed.dataDir)).toEqual(await folderFiles(bed.dataDir))
  fsck(bed.dataDir)
}

describe('start-up recovery', () => {
  it('creates the memory folder 0700 and reports nothing for a fresh start', async () => {
    const { recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery).toBeNull()
    const { statSync } = await import('node:fs')
    expect(statSync(memories()).mode & 0o777).toBe(0o700)
  })

  it('commits a write that was never committed as one recovery commit by the system author', async () => {
    await seed()
    await put('a.md', 'edited while Cairn was down')
    await put('new/file.md', 'new')
    await rm(path.join(memories(), 'c.md'))
    // The Cairn before was killed: these may be writes of its own whose commits never came.
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now, afterCrash: true })
    expect(recovery).toMatchObject({ kind: 'uncommitted-changes', commitOid: repo.head() })
    expect(recovery?.message).not.toContain(bed.dataDir)
    expect(commitCount(bed.dataDir)).toBe(4)
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%an').trim()).toBe('Cairn')
    expect(repo.index.all().at(-1)).toMatchObject({
      actor: 'system',
      command: 'recovery',
      files: ['/memories/a.md', '/memories/c.md', '/memories/new/file.md'],
    })
    await expectInSync()
  })

  it('commits what changed while Cairn was closed, cleanly, as edits made outside Cairn', async () => {
    await seed()
    await put('a.md', 'edited in another program')
    const closed = await open({ dataDir: bed.dataDir, now })
    expect(closed.recovery).toMatchObject({
      kind: 'outside-changes',
      commitOid: closed.repo.head(),
    })
    expect(closed.repo.index.all().at(-1)).toMatchObject({ actor: 'system', command: 'outside' })
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%an|%s').trim()).toBe(
      'Cairn|Changes made outside Cairn while it was closed',
    )
    closed.repo.store.close()
    closed.repo.index.close()
    // The Cairn before closed owing a commit: a recovery again.
    await put('a.md', 'edited again')
    const owed = await open({ dataDir: bed.dataDir, now, owed: true })
    expect(owed.repo.index.all().at(-1)).toMatchObject({ command: 'recovery' })
    expect(owed.recovery?.kind).toBe('uncommitted-changes')
    await expectInSync()
  })

  it('removes stray temp files of an interrupted write and commits nothing for them', async () => {
    await seed()
    // Named as Cairn names them: a person's look-alike is kept (own-temps.test.ts).
    await put(`dir/${TEMP_FILE_PREFIX}${randomUUID()}`, 'half a write')
    await put(`${TEMP_FILE_PREFIX}${randomUUID()}`, 'another')
    const { recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery).toBeNull()
    expect(commitCount(bed.dataDir)).toBe(3)
    expect(await readdir(path.join(memories(), 'dir'))).toEqual(['b.md'])
    await expectInSync()
  })

  it('rebuilds a damaged newest commit exactly, from the side index and the files', async () => {
    await seed()
    const head = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    const object = path.join(gitdir(), 'objects', head.slice(0, 2), head.slice(2))
    await chmod(object, 0o644)
    await truncate(object, 5)
    const before = await folderFiles(bed.dataDir)
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery).toMatchObject({ kind: 'history-repaired', commitOid: head })
    expect(recovery?.message).toMatch(/rebuilt/)
    expect(repo.head()).toBe(head)
    expect(await folderFiles(bed.dataDir)).toEqual(before)
    expect(commitCount(bed.dataDir)).toBe(3)
    await expectInSync()
  })

  it('continues from the newest intact commit when a damaged one cannot be rebuilt', async () => {
    await seed()
    const head = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    const parent = gitCli(bed.dataDir, 'rev-parse', 'main^').trim()
    const object = path.join(gitdir(), 'objects', head.slice(0, 2), head.slice(2))
    await chmod(object, 0o644)
    await truncate(object, 5)
    // The folder moved on since: the damaged commit's tree can no longer be rebuilt.
    await put('c.md', 'changed while Cairn was closed')
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery?.kind).toBe('history-repaired')
    expect(repo.index.all().at(-1)).toMatchObject({ parent, actor: 'system', command: 'recovery' })
    expect((await readdir(bed.dataDir)).filter((name) => name.startsWith('history.git.'))).toEqual(
      [],
    )
    expect(existsSync(path.join(gitdir(), 'cairn-damaged', head))).toBe(true)
    expect(commitCount(bed.dataDir)).toBe(3)
    await expectInSync()
  })

  it('moves a git directory with no objects aside and starts a fresh history', async () => {
    await seed()
    const before = await folderFiles(bed.dataDir)
    await rm(path.join(gitdir(), 'objects'), { recursive: true })
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery).toMatchObject({ kind: 'history-rebuilt', commitOid: repo.head() })
    expect(recovery?.message).toContain('3 files')
    expect(recovery?.message).toContain('set aside')
    expect(await folderFiles(bed.dataDir)).toEqual(before)
    const aside = (await readdir(bed.dataDir)).filter((name) =>
      name.startsWith('history.git.broken-'),
    )
    expect(aside).toHaveLength(1)
    expect(commitCount(bed.dataDir)).toBe(1)
    expect(repo.index.all()[0]).toMatchObject({ actor: 'system', command: 'init' })
    await expectInSync()
  })

  it('finds the tip again when the ref is unreadable', async () => {
    const entries = await seed()
    await writeFile(path.join(gitdir(), 'refs', 'heads', 'main'), 'garbage\n')
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery?.kind).toBe('history-repaired')
    expect(repo.index.all()).toEqual(entries)
    await expectInSync()
  })

  it('starts a history from existing files when the git directory is missing', async () => {
    await put('kept.md', 'kept')
    const { repo, recovery } = await open({ dataDir: bed.dataDir, now })
    expect(recovery).toMatchObject({ kind: 'history-rebuilt', commitOid: repo.head() })
    expect(recovery?.message).toContain('1 file')
    await expectInSync()
  })

  it('ignores symlinks and .git folders inside the memory folder', async () => {
    await put('real.md', 'real')
    await put('.git/config', 'not ours')
    const { symlink } = await import('node:fs/promises')
    await symlink('/etc/passwd', path.join(memories(), 'link.md'))
    await open({ dataDir: bed.dataDir, now })
    expect([...headFiles(bed.dataDir).keys()]).toEqual(['real.md'])
    fsck(bed.dataDir)
  })
})

describe('the side index', () => {
  const dir = () => indexDirOf(gitdir())
  const part = (name: string) => path.join(dir(), name)

  it('is rebuilt from the commit trailers when missing', async () => {
    const entries = await seed()
    await rm(dir(), { recursive: true })
    const { repo } = await open({ dataDir: bed.dataDir, now })
    expect(repo.index.all()).toEqual(entries)
    const again = IndexFile.open(dir())
    expect(again.all()).toEqual(entries)
    again.close()
  })

  it('catches up when a commit landed but its index entry did not', async () => {
    const entries = await seed()
    await truncate(part('commits'), 2 * 64)
    const { repo } = await open({ dataDir: bed.dataDir, now })
    expect(repo.index.all()).toEqual(entries)
  })

  it('drops a torn append and re-adds the entry', async () => {
    const entries = await seed()
    await truncate(part('commits'), 3 * 64 - 20)
    const { repo } = await open({ dataDir: bed.dataDir, now })
    expect(repo.index.all()).toEqual(entries)
    expect((await readFile(part('commits'))).length).toBe(3 * 64)
  })

  it('is rebuilt when it belongs to another history', async () => {
    const entries = await seed()
    writeIndex(dir(), [{ ...entries[0]!, oid: 'f'.repeat(40) }])
    const { repo } = await open({ dataDir: bed.dataDir, now })
    expect(repo.index.all()).toEqual(entries)
  })

  it('is found out when damaged in the middle (at open or by the background check)', async () => {
    const entries = await seed()
    // Entry 1's details offset, then its flags (it would claim to have no parent).
    for (const at of [64 + 33, 64 + 58]) {
      const bytes = await readFile(part('commits'))
      bytes[at] = (bytes[at] as number) ^ 0x22
      await writeFile(part('commits'), bytes)
      const { repo } = await open({ dataDir: bed.dataDir, now })
      // Either open saw it and rebuilt, or the check run when idle reports it.
      if (!(await checkIndex(repo.store, repo.index))) {
        const rebuilt = await rebuildIndex(repo.store, repo.index.dir, repo.head())
        expect(rebuilt.all()).toEqual(entries)
        rebuilt.close()
      } else {
        expect(repo.index.all()).toEqual(entries)
      }
      repo.index.close()
    }
  })

  it('takes over the JSON-lines index of earlier versions', async () => {
    const entries = await seed()
    await rm(dir(), { recursive: true })
    const legacy = path.join(gitdir(), 'cairn-index.jsonl')
    await writeFile(legacy, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''))
    const { repo } = await open({ dataDir: bed.dataDir, now })
    expect(repo.index.all()).toEqual(entries)
    expect(existsSync(legacy)).toBe(false)
  })

  it('rebuilt from the commits equals the one kept commit by commit', async () => {
    const { repo } = await open({ dataDir: bed.dataDir, now })
    const commit = (paths: ReadonlyArray<string> | 'all', extra: Partial<CommitIntent> = {}) =>
      repo.commit(paths, { ...intent, ...extra })
    await put('a.md', 'a')
    await put('dir/ü nicode.md', 'u')
    await commit(['a.md', 'dir'], {
      command: 'create',
      paths: ['/memories/a.md'],
      conversationId: 'c-1',
    })
    await put('a.md', 'a2')
    await commit(['a.md'], {
      command: 'str_replace',
      overwrite: true,
      toolUseId: null,
      review: 'edited',
      flags: [
        { rule: 'instructions', path: '/memories/a.md', line: 1, message: 'Reads as an order' },
      ],
    })
    await rm(path.join(memories(), 'dir'), { recursive: true })
    await put('moved/ü nicode.md', 'u')
    await commit(['dir', 'moved'], {
      command: 'rename',
      subject: 'rename /memories/dir -> /memories/moved',
      paths: ['/memories/dir', '/memories/moved'],
    })
    await put('b.md', 'b')
    await commit('all', { actor: 'system', command: 'recovery', conversationId: null })
    await rm(path.join(memories(), 'a.md'))
    await commit(['a.md'], {
      actor: 'user',
      command: 'delete',
      conversationId: null,
      restoredFrom: repo.head(),
    })
    const incremental = repo.index.all()
    expect(incremental).toHaveLength(5)
    expect(incremental[1]).toMatchObject({ review: 'edited', flags: [{ rule: 'instructions' }] })

    const rebuilt = await rebuildIndex(repo.store, path.join(bed.dataDir, 'rebuilt'), repo.head())
    expect(rebuilt.all()).toEqual(incremental)
    rebuilt.close()
    for (const name of ['commits', 'files', 'names', 'details']) {
      expect(await readFile(path.join(bed.dataDir, 'rebuilt', name))).toEqual(
        await readFile(part(name)),
      )
    }
  })

  it('is never written inside the memory folder', async () => {
    await seed()
    expect(existsSync(dir())).toBe(true)
    expect(dir().startsWith(memories())).toBe(false)
  })
})

describe('an open that fails after its recovery commit was logged', () => {
  // The files of the history this process holds open (descriptors into its git directory).
  const openFiles = (): string[] =>
    readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`)
        return target.startsWith(gitdir() + path.sep) ? [target] : []
      } catch {
        return []
      }
    })

  it('leaves nothing of it open: no descriptor, no checkpoint to come', async () => {
    await seed()
    await put('a.md', 'edited outside\n')
    const before = openFiles()
    // The recovery commit's objects and value are logged, then the ref's move fails: its
    // write in place (the ref opened by its name to write) and the rename it falls back to.
    let failed = 0
    const isRef = (value: unknown) =>
      typeof value === 'string' && value.endsWith(path.join('refs', 'heads', 'main'))
    // Only the write: the ref is read through an open too (read one way since disk29).
    const forWriting = (flags: unknown) =>
      typeof flags === 'number'
        ? (flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0
        : /[wa+]/.test(String(flags))
    const restore = setDisk(
      hookDisk(nodeDisk, (call) => {
        const [first, second] = call.args
        if (call.name === 'openSync' && isRef(first) && forWriting(second)) {
          return errnoError(call, 'EIO')
        }
        if (call.name !== 'renameSync' || !isRef(second) || failed++ > 0) return undefined
        return errnoError(call, 'EIO')
      }).disk,
    )
    try {
      await expect(openRepo({ dataDir: bed.dataDir, now })).rejects.toThrow()
    } finally {
      restore()
    }
    expect(failed).toBeGreaterThan(0)
    // Left open, the log (its idle checkpoint armed by the append) would run later, with
    // whatever instance holds the folder by then.
    expect(openFiles().filter((file) => !before.includes(file))).toEqual([])
    const { repo } = await open({ dataDir: bed.dataDir, now })
    repo.store.close()
    await expectInSync()
  })
})
