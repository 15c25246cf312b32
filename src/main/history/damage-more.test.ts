import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, readlinkSync, lstatSync } from 'node:fs'
import {
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  rm,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { VersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  indexDirIn,
  leftoverTempFiles,
  recoveryRepo,
} from './test-helpers'

// An acceptance check of issue #9 ("nothing lost, nothing escapes") on damage kinds that
// damage.test.ts does not list: main naming an object that is not a commit, a pack index cut
// short, a side index from another data folder, a packed-refs line disagreeing with the loose
// ref, and links where history.git holds its own files (HEAD, config, a part of the side
// index), each pointing outside the data folder. Open must repair what it can, never write
// through a link to a file outside, keep every file byte for byte, and the next command must
// commit on the history as it was.

const repo = recoveryRepo()

let outside = ''
beforeEach(async () => {
  outside = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-'))
})
afterEach(() => rm(outside, { recursive: true, force: true, maxRetries: 10 }))

interface Seeded {
  readonly commits: ReadonlyArray<string>
  readonly files: Map<string, string>
}

async function seed(): Promise<Seeded> {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'first notes\n')
  await repo.create(memory, 'dir/a.md', 'a\n')
  await repo.create(memory, 'dir/b.md', 'b\n')
  const edited = await memory.execute(
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'first', new_str: 'second' },
    { actor: 'claude', conversationId: 'c', toolUseId: 't' },
  )
  expect(edited.isError).toBe(false)
  await memory.close()
  return {
    commits: gitCli(repo.dataDir, 'rev-list', 'main').trim().split('\n'),
    files: await folderFiles(repo.dataDir),
  }
}

/** Every file under `dir` (recursively) as relative path -> SHA-1 of its bytes, links as links. */
function treeHashes(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (at: string, rel: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name)
      const relative = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isSymbolicLink()) out.set(relative, `link ${readlinkSync(full)}`)
      else if (entry.isDirectory()) walk(full, relative)
      else out.set(relative, createHash('sha1').update(readFileSync(full)).digest('hex'))
    }
  }
  walk(dir, '')
  return out
}

/**
 * Opens the damaged history and checks what issue #9 promises for any damage it can mend:
 * the files unchanged, main back at the newest commit, every commit in the log, the next
 * command committing on it, HEAD equal to the folder, `git fsck --strict` clean, no temp file.
 */
async function expectKept(s: Seeded): Promise<VersionedMemory> {
  const memory = await repo.open()
  try {
    if (memory.recovery) expect(memory.recovery.message).not.toContain(repo.dataDir)
    expect(await folderFiles(repo.dataDir)).toEqual(s.files)
    expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(s.commits[0])
    const log = await memory.log({ offset: 0, limit: 50 })
    expect(log.total).toBe(s.commits.length)
    expect(log.entries.map((entry) => entry.oid)).toEqual(s.commits)
    expect(await memory.readAt('/memories/notes.md', s.commits[1]!)).toBe('first notes\n')
    const next = await repo.create(memory, 'after.md', 'after\n')
    expect(next.commit?.parent).toBe(s.commits[0])
    expect(commitCount(repo.dataDir)).toBe(s.commits.length + 1)
    expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  } catch (error) {
    await memory.close()
    throw error
  }
  return memory
}

async function closeAndCheck(memory: VersionedMemory): Promise<void> {
  await memory.close()
  fsck(repo.dataDir)
  expect(leftoverTempFiles(repo.dataDir)).toEqual([])
}

describe('main naming an object that is not a commit', () => {
  it.each([
    ['a blob', 'main:notes.md'],
    ['a tree', 'main^{tree}'],
  ])('(%s) is taken as a lost main: found again, reported as a repair', async (_kind, spec) => {
    const s = await seed()
    const wrong = gitCli(repo.dataDir, 'rev-parse', spec).trim()
    await writeFile(repo.mainRef(), `${wrong}\n`)
    const memory = await expectKept(s)
    expect(memory.recovery?.kind).toBe('history-repaired')
    await closeAndCheck(memory)
  })
})

describe('a packed history with damage around its pack', () => {
  function packFiles(): { pack: string; idx: string } {
    const dir = path.join(repo.gitdir, 'objects', 'pack')
    const names = readdirSync(dir)
    const idx = names.find((name) => name.endsWith('.idx'))!
    return { pack: path.join(dir, idx.replace(/\.idx$/, '.pack')), idx: path.join(dir, idx) }
  }

  it('a pack index cut short: the history is kept or set aside, never destroyed', async () => {
    const s = await seed()
    gitCli(repo.dataDir, 'gc', '--quiet')
    const { pack, idx } = packFiles()
    const packBytes = readFileSync(pack)
    const idxSize = lstatSync(idx).size
    await truncate(idx, Math.floor(idxSize / 2))
    const memory = await repo.open()
    try {
      expect(await folderFiles(repo.dataDir)).toEqual(s.files)
      if (memory.recovery) expect(memory.recovery.message).not.toContain(repo.dataDir)
      // The pack's bytes are still somewhere in the data folder (moved aside, not deleted).
      const digest = createHash('sha1').update(packBytes).digest('hex')
      const everywhere = treeHashes(repo.dataDir)
      expect([...everywhere.values()]).toContain(digest)
      const next = await repo.create(memory, 'after.md', 'after\n')
      expect(next.commit).not.toBeNull()
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
    } finally {
      await memory.close()
    }
    fsck(repo.dataDir)
  })

  it('a packed-refs line naming a missing commit beside a sound loose ref changes nothing', async () => {
    const s = await seed()
    await writeFile(
      path.join(repo.gitdir, 'packed-refs'),
      `# pack-refs with: peeled fully-peeled sorted \n${'e'.repeat(40)} refs/heads/main\n`,
    )
    const memory = await expectKept(s)
    expect(memory.recovery).toBeNull()
    await closeAndCheck(memory)
  })
})

describe('a side index copied from another data folder', () => {
  it('is not believed: the log shows this history only, and the next command commits', async () => {
    // Another history's side index, copied over this one's.
    const other = await seed()
    const otherIndex = path.join(outside, 'other-index')
    await copyDir(indexDirIn(repo.dataDir), otherIndex)
    await rm(repo.gitdir, { recursive: true })
    await rm(path.join(repo.dataDir, 'memories'), { recursive: true })
    // The same commands at other times: as many commits, none the same, so the copied index
    // cannot be told apart by its length.
    const mine = await seed()
    expect(mine.commits).toHaveLength(other.commits.length)
    expect(mine.commits.some((oid) => other.commits.includes(oid))).toBe(false)
    await rm(indexDirIn(repo.dataDir), { recursive: true })
    await copyDir(otherIndex, indexDirIn(repo.dataDir))
    const memory = await repo.open()
    try {
      const log = await memory.log({ offset: 0, limit: 50 })
      expect(log.entries.map((entry) => entry.oid)).toEqual(mine.commits)
      expect(await folderFiles(repo.dataDir)).toEqual(mine.files)
      const next = await repo.create(memory, 'after.md', 'after\n')
      expect(next.commit?.parent).toBe(mine.commits[0])
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
    } finally {
      await memory.close()
    }
    fsck(repo.dataDir)
  })
})

async function copyDir(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true })
  for (const name of await readdir(from)) await copyFile(path.join(from, name), path.join(to, name))
}

describe('links and folders where history.git keeps its own files (nothing escapes)', () => {
  it('HEAD a link to a file outside holding something else: the outside file is untouched', async () => {
    const s = await seed()
    const target = path.join(outside, 'not-a-head.txt')
    await writeFile(target, 'a person’s file, not a git HEAD\n')
    await rm(path.join(repo.gitdir, 'HEAD'))
    await symlink(target, path.join(repo.gitdir, 'HEAD'))
    const before = treeHashes(outside)
    const memory = await expectKept(s)
    expect(treeHashes(outside)).toEqual(before)
    await closeAndCheck(memory)
    expect(treeHashes(outside)).toEqual(before)
  })

  it('HEAD a dangling link to a path outside: nothing is made there', async () => {
    const s = await seed()
    const target = path.join(outside, 'made-by-cairn')
    await rm(path.join(repo.gitdir, 'HEAD'))
    await symlink(target, path.join(repo.gitdir, 'HEAD'))
    const memory = await expectKept(s)
    expect(existsSync(target)).toBe(false)
    await closeAndCheck(memory)
    expect(existsSync(target)).toBe(false)
  })

  it('HEAD a link to refs/heads/main (as old git made it): main is not written over', async () => {
    const s = await seed()
    await rm(path.join(repo.gitdir, 'HEAD'))
    await symlink('refs/heads/main', path.join(repo.gitdir, 'HEAD'))
    const memory = await expectKept(s)
    // Nothing to repair: main was never written over with HEAD's text and found again.
    expect(memory.recovery).toBeNull()
    await closeAndCheck(memory)
  })

  it('a folder where HEAD belongs: moved aside, the history kept', async () => {
    const s = await seed()
    await rm(path.join(repo.gitdir, 'HEAD'))
    await mkdir(path.join(repo.gitdir, 'HEAD'))
    await writeFile(path.join(repo.gitdir, 'HEAD', 'inside.txt'), 'kept\n')
    const memory = await expectKept(s)
    await closeAndCheck(memory)
    const aside = path.join(repo.gitdir, 'cairn-damaged')
    const kept = [...treeHashes(aside).keys()].filter((name) => name.endsWith('/inside.txt'))
    expect(kept).toHaveLength(1)
  })

  it('config a dangling link to a path outside: nothing is made there', async () => {
    const s = await seed()
    const target = path.join(outside, 'config-made-by-cairn')
    await rm(path.join(repo.gitdir, 'config'))
    await symlink(target, path.join(repo.gitdir, 'config'))
    const memory = await expectKept(s)
    expect(existsSync(target)).toBe(false)
    await closeAndCheck(memory)
    expect(existsSync(target)).toBe(false)
  })

  it('a part of the side index a link to a copy outside: the copy is never written', async () => {
    const s = await seed()
    const dir = indexDirIn(repo.dataDir)
    const parts = (await readdir(dir)).filter((name) => name !== 'format')
    for (const part of parts) {
      await copyFile(path.join(dir, part), path.join(outside, part))
      await rm(path.join(dir, part))
      await symlink(path.join(outside, part), path.join(dir, part))
    }
    const before = treeHashes(outside)
    const memory = await expectKept(s)
    expect(treeHashes(outside)).toEqual(before)
    await closeAndCheck(memory)
    expect(treeHashes(outside)).toEqual(before)
  })
})
