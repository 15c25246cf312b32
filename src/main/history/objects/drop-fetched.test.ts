/**
 * Removing the packs a refused fetch brought (`HistorySession.dropFetchedPacks`): only what
 * nothing kept reaches goes; and `removePack`, which removes each, never through a link at
 * objects/pack. A real history, packs made by the git CLI, git as second opinion.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setDisk } from '../../lib/disk'
import { errnoError, hookDisk, openedOn } from '../../lib/disk-hooks'
import { createObjectStore } from '../object-store'
import { gitAsAnn, gitCli, memoryTestBed, runKilledChild, userWrite } from '../test-helpers'
import { dropFetchedPacks } from './drop-fetched'
import { removePack } from './pack-writer'

const bed = memoryTestBed()
let scratch = ''
beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cairn-drop-fetched-'))
  execFileSync('git', ['init', '--quiet', '--bare', scratch])
})
afterEach(() => rm(scratch, { recursive: true, force: true, maxRetries: 10 }))

/** A pack (made in a scratch repository) of blobs holding `texts`, put in the history's pack folder. */
function packOf(...texts: string[]): { name: string; oids: string[] } {
  const oids = texts.map((text) =>
    execFileSync('git', ['--git-dir', scratch, 'hash-object', '-w', '--stdin'], {
      input: text,
      encoding: 'utf8',
    }).trim(),
  )
  const base = path.join(scratch, 'out')
  const sum = execFileSync('git', ['--git-dir', scratch, 'pack-objects', base], {
    input: `${oids.join('\n')}\n`,
    encoding: 'utf8',
  }).trim()
  const packDir = path.join(bed.dataDir, 'history.git', 'objects', 'pack')
  for (const ext of ['pack', 'idx']) {
    copyFileSync(`${base}-${sum}.${ext}`, path.join(packDir, `pack-${sum}.${ext}`))
  }
  return { name: `pack-${sum}`, oids }
}

const packFiles = () => readdirSync(path.join(bed.dataDir, 'history.git', 'objects', 'pack'))

describe('dropFetchedPacks', () => {
  it('removes a pack of objects nothing reaches; git fsck --strict stays clean', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    const { name, oids } = packOf('theirs, refused\n', 'more of theirs\n')
    const dropped = await bed.memory.git.exclusive((session) =>
      session.dropFetchedPacks([name], []),
    )
    expect(dropped).toEqual([name])
    expect(packFiles().filter((f) => f.startsWith(name))).toEqual([])
    for (const oid of oids) {
      expect(() => gitCli(bed.dataDir, 'cat-file', '-e', oid)).toThrow()
    }
    gitCli(bed.dataDir, 'fsck', '--strict')
    // The memory still works on.
    await userWrite(bed.memory, '/memories/b.md', 'more\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('keeps a pack holding the only copy of an object main reaches (a command that raced the fetch)', async () => {
    const { name } = packOf('mine\n', 'theirs\n')
    // A command wrote the same file while the fetch ran; its loose copy gone (as when it found
    // the object already stored): main reaches an object only the fetched pack holds.
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    gitCli(bed.dataDir, 'prune-packed')
    const blob = gitCli(bed.dataDir, 'rev-parse', 'main:a.md').trim()
    expect(
      existsSync(path.join(bed.dataDir, 'history.git', 'objects', blob.slice(0, 2), blob.slice(2))),
    ).toBe(false)
    const dropped = await bed.memory.git.exclusive((session) =>
      session.dropFetchedPacks([name], []),
    )
    expect(dropped).toEqual([])
    expect(packFiles()).toContain(`${name}.pack`)
    expect(gitCli(bed.dataDir, 'cat-file', 'blob', blob)).toBe('mine\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('keeps a pack whose only copy a kept ref reaches (a backup), and drops one whose objects are also loose', async () => {
    const theirs = packOf('kept by a backup\n')
    const blob = theirs.oids[0]!
    const tree = execFileSync(
      'git',
      ['--git-dir', path.join(bed.dataDir, 'history.git'), 'mktree'],
      {
        input: `100644 blob ${blob}\tb.md\n`,
        encoding: 'utf8',
      },
    ).trim()
    const commit = gitAsAnn(bed.dataDir, 'commit-tree', tree, '-m', 'backup').trim()
    expect(
      await bed.memory.git.exclusive((session) =>
        session.dropFetchedPacks([theirs.name], [commit]),
      ),
    ).toEqual([])
    // The same objects also loose: the pack goes, the object stays readable.
    await userWrite(bed.memory, '/memories/c.md', 'also loose\n')
    const loose = packOf('also loose\n')
    expect(
      await bed.memory.git.exclusive((session) => session.dropFetchedPacks([loose.name], [])),
    ).toEqual([loose.name])
    expect(gitCli(bed.dataDir, 'show', 'main:c.md')).toBe('also loose\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('walks back only to the refs seen before the fetch, and still keeps what a commit made since needs', async () => {
    for (let i = 0; i < 8; i++) await userWrite(bed.memory, '/memories/a.md', `edit ${i}\n`)
    const before = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    // The fetch brings a pack; a command racing it writes content the pack already holds.
    const { name } = packOf('raced\n', 'theirs alone\n')
    await userWrite(bed.memory, '/memories/b.md', 'raced\n')
    await userWrite(bed.memory, '/memories/a.md', 'after\n')
    gitCli(bed.dataDir, 'prune-packed')
    const head = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    // Only the two commits made since the fetch began are read: before, every commit ever
    // made was (100,000 commits held commands for half a minute).
    const store = createObjectStore(path.join(bed.dataDir, 'history.git'))
    const read: string[] = []
    const counting = {
      db: store.db,
      readForeignTree: store.readForeignTree,
      readCommit: (oid: string) => {
        read.push(oid)
        return store.readCommit(oid)
      },
    }
    try {
      expect(await dropFetchedPacks(counting, [name], [head], [before])).toEqual([])
    } finally {
      store.close()
    }
    expect(read.length).toBe(2)
    expect(read).not.toContain(before)
    expect(packFiles()).toContain(`${name}.pack`)
    expect(gitCli(bed.dataDir, 'show', 'main:b.md')).toBe('raced\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
    // Through the session (main added to the heads): kept while main needs it.
    expect(
      await bed.memory.git.exclusive((session) => session.dropFetchedPacks([name], [], [before])),
    ).toEqual([])
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('is not stopped by a ref made before the fetch that names no commit (an annotated tag, a tree, a file)', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    gitAsAnn(bed.dataDir, 'tag', '-a', '-m', 'a tag', 'annotated', 'main')
    gitCli(bed.dataDir, 'update-ref', 'refs/odd/tree', 'main^{tree}')
    gitCli(bed.dataDir, 'update-ref', 'refs/odd/file', 'main:a.md')
    const refs = gitCli(bed.dataDir, 'for-each-ref', '--format=%(objectname)').trim().split('\n')
    expect(refs.length).toBe(4)
    const { name, oids } = packOf('theirs, refused\n')
    // Before, reading the tag, the tree or the file as a commit failed the check: nothing went.
    expect(
      await bed.memory.git.exclusive((session) => session.dropFetchedPacks([name], refs, refs)),
    ).toEqual([name])
    expect(() => gitCli(bed.dataDir, 'cat-file', '-e', oids[0]!)).toThrow()
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('is not stopped by a ref made while the fetch ran that names no commit, and keeps what a tag made then reaches', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    const before = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    const refused = packOf('theirs, refused\n')
    const tagged = packOf('only the tag reaches it\n')
    // While the fetch ran, a person made refs with git: a tag, a tree and a file named by refs,
    // and an annotated tag on a commit (not on main) holding an object only a fetched pack has.
    const tree = execFileSync(
      'git',
      ['--git-dir', path.join(bed.dataDir, 'history.git'), 'mktree'],
      { input: `100644 blob ${tagged.oids[0]!}\tt.md\n`, encoding: 'utf8' },
    ).trim()
    const commit = gitAsAnn(bed.dataDir, 'commit-tree', tree, '-m', 'tagged').trim()
    gitAsAnn(bed.dataDir, 'tag', '-a', '-m', 'main', 'on-main', 'main')
    gitAsAnn(bed.dataDir, 'tag', '-a', '-m', 'elsewhere', 'elsewhere', commit)
    gitCli(bed.dataDir, 'update-ref', 'refs/odd/tree', 'main^{tree}')
    gitCli(bed.dataDir, 'update-ref', 'refs/odd/file', 'main:a.md')
    const refs = gitCli(bed.dataDir, 'for-each-ref', '--format=%(objectname)').trim().split('\n')
    expect(refs.length).toBe(5)
    // Made since the fetch began: none of them among the refs read before it (`since`).
    const dropped = await bed.memory.git.exclusive((session) =>
      session.dropFetchedPacks([refused.name, tagged.name], refs, [before]),
    )
    // Before, reading the tags, the tree or the file as a commit failed: both packs were kept.
    expect(dropped).toEqual([refused.name])
    expect(() => gitCli(bed.dataDir, 'cat-file', '-e', refused.oids[0]!)).toThrow()
    expect(gitCli(bed.dataDir, 'show', 'elsewhere:t.md')).toBe('only the tag reaches it\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
  })

  it('leaves nothing of a refused pack when killed after its mark, before its index went: the next open removes it whole', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    const { name, oids } = packOf('theirs, refused\n', 'more of theirs\n')
    await bed.close()
    // A Cairn that removes the pack and is killed (SIGKILL) at the unlink of its index.
    await runKilledChild(`
      const { openVersionedMemory } = await import(${JSON.stringify(path.resolve('src/main/history/index.ts'))})
      const { nodeDisk, setDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk.ts'))})
      const { hookDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))})
      const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(bed.dataDir)}, watch: false, maintenance: false })
      setDisk(hookDisk(nodeDisk, (call) => {
        if (call.name === 'promises.unlink' && String(call.args[0]).endsWith(${JSON.stringify(`${name}.idx`)})) {
          process.kill(process.pid, 'SIGKILL')
        }
      }).disk)
      await memory.git.exclusive((session) => session.dropFetchedPacks([${JSON.stringify(name)}], []))
    `)
    // The kill came with the pack whole, index and all, beside the removal's mark.
    expect(packFiles().filter((f) => f.startsWith(name))).toEqual(
      expect.arrayContaining([`${name}.idx`, `${name}.pack`]),
    )
    // Before, the next open took the mark for a fold that had not begun and kept the pack.
    await bed.reopen()
    expect(packFiles().filter((f) => f.startsWith(name))).toEqual([])
    for (const oid of oids) {
      expect(() => gitCli(bed.dataDir, 'cat-file', '-e', oid)).toThrow()
    }
    expect(gitCli(bed.dataDir, 'show', 'main:a.md')).toBe('mine\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
  }, 60_000)

  it("never takes a pack main needs for a mark it did not write: a person's pack-X.dropped (empty, text, a folder) changes nothing", async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    await userWrite(bed.memory, '/memories/b.md', 'more\n')
    await bed.close()
    // main's objects only in packs the person made with git, each beside a file of the mark's
    // name that Cairn did not write.
    gitCli(bed.dataDir, 'repack', '-a', '-d', '-q')
    gitCli(bed.dataDir, 'prune-packed')
    const packDir = path.join(bed.dataDir, 'history.git', 'objects', 'pack')
    const [pack] = packFiles().filter((f) => f.endsWith('.pack'))
    const name = pack!.slice(0, -'.pack'.length)
    const other = packOf("the person's own\n")
    writeFileSync(path.join(packDir, `${name}.dropped`), '')
    writeFileSync(path.join(packDir, `${other.name}.dropped`), 'mine, keep it\n')
    const third = packOf('a third of my own\n')
    mkdirSync(path.join(packDir, `${third.name}.dropped`))
    const before = packFiles().sort()
    await bed.reopen()
    // Before, the next open removed each pack whole, index and all: main's files unreadable.
    expect(packFiles().sort()).toEqual(before)
    expect(gitCli(bed.dataDir, 'show', 'main:a.md')).toBe('mine\n')
    expect(gitCli(bed.dataDir, 'cat-file', '-p', other.oids[0]!)).toBe("the person's own\n")
    expect(gitCli(bed.dataDir, 'cat-file', '-p', third.oids[0]!)).toBe('a third of my own\n')
    gitCli(bed.dataDir, 'fsck', '--strict')
    // The memory works on.
    await userWrite(bed.memory, '/memories/c.md', 'on\n')
    expect(gitCli(bed.dataDir, 'show', 'main:b.md')).toBe('more\n')
  }, 60_000)

  // Stop 33 (mendA): a mark's read that failed (EIO, EACCES) threw out of the leftovers' sweep
  // and stopped the open.
  it('keeps a pack beside a pack-X.dropped that cannot be read (EIO), and the open goes on', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    await bed.close()
    const packDir = path.join(bed.dataDir, 'history.git', 'objects', 'pack')
    const other = packOf("the person's own\n")
    const mark = `${other.name}.dropped`
    writeFileSync(path.join(packDir, mark), 'mine, keep it\n')
    const before = packFiles().sort()
    const { disk: recording, opened } = openedOn((file) => path.basename(file) === mark)
    let reads = 0
    const failing = hookDisk(recording, (call) => {
      if (call.name !== 'readSync' || !opened.has(call.args[0] as number)) return undefined
      reads++
      return errnoError(call, 'EIO')
    })
    const restore = setDisk(failing.disk)
    try {
      await bed.reopen()
    } finally {
      restore()
    }
    expect(reads).toBeGreaterThan(0)
    expect(packFiles().sort()).toEqual(before)
    expect(gitCli(bed.dataDir, 'cat-file', '-p', other.oids[0]!)).toBe("the person's own\n")
    await userWrite(bed.memory, '/memories/b.md', 'on\n')
    expect(gitCli(bed.dataDir, 'show', 'main:b.md')).toBe('on\n')
  }, 60_000)
})

describe('removePack', () => {
  /** Every name in `dir` with a hash of its bytes: what was written or removed there shows. */
  const contentsOf = (dir: string) =>
    Object.fromEntries(
      readdirSync(dir)
        .sort()
        .map((name) => [
          name,
          createHash('sha256')
            .update(readFileSync(path.join(dir, name)))
            .digest('hex'),
        ]),
    )

  it('refuses a link at objects/pack (to a folder outside), writing and removing nothing there', async () => {
    await userWrite(bed.memory, '/memories/a.md', 'mine\n')
    const { name, oids } = packOf('theirs, refused\n')
    await bed.close()
    // objects/pack made a link to a folder outside the data folder, the pack in it.
    const gitdir = path.join(bed.dataDir, 'history.git')
    const packDir = path.join(gitdir, 'objects', 'pack')
    const outside = path.join(scratch, 'outside')
    renameSync(packDir, outside)
    symlinkSync(outside, packDir)
    const before = contentsOf(outside)
    expect(Object.keys(before)).toEqual(expect.arrayContaining([`${name}.idx`, `${name}.pack`]))
    const store = createObjectStore(gitdir)
    try {
      expect(store.db.packDir).toBe(packDir)
      // Before: the .folded marker was written there and the pack's files unlinked.
      await expect(removePack(store.db, name)).rejects.toThrow(/objects\/pack is not a folder/)
    } finally {
      store.close()
    }
    expect(contentsOf(outside)).toEqual(before)
    expect(readdirSync(outside)).not.toContain(`${name}.folded`)
    expect(
      execFileSync('git', ['--git-dir', gitdir, 'cat-file', 'blob', oids[0]!], {
        encoding: 'utf8',
      }),
    ).toBe('theirs, refused\n')
  })
})
