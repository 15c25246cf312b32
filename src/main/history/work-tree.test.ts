import { execFileSync } from 'node:child_process'
import {
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { openRepo } from './open-repo'
import { MAX_VERSIONED_BYTES } from './work-tree'
import {
  commitCount,
  countIndexReads,
  fsck,
  gitCli,
  headFolderDifferences,
  tempDataDir,
} from './test-helpers'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const memories = () => path.join(dataDir, 'memories')
const objectFile = (oid: string) =>
  path.join(dataDir, 'history.git', 'objects', oid.slice(0, 2), oid.slice(2))
const blobOf = (relative: string) => gitCli(dataDir, 'rev-parse', `main:${relative}`).trim()

async function put(relative: string, content: string | Buffer): Promise<void> {
  const file = path.join(memories(), relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, content)
  // Far enough back that the stat cache trusts the file after one hash.
  const past = new Date(Date.now() - 10_000)
  utimesSync(file, past, past)
}

async function open() {
  const { repo, recovery } = await openRepo({ dataDir, now })
  repo.stats.save()
  const { hashed, trusted } = repo.stats
  repo.store.close()
  return { recovery, hashed, trusted }
}

describe('the scan of the folder at open', () => {
  it('trusts unchanged files, mends damaged stored copies and records changes, as git sees them', async () => {
    const names = ['a.md', 'b.md', 'c.md', 'd.md', 'e.md', 'deep/f.md', 'deep/er/g.md', 'h.md']
    for (const [i, relative] of names.entries()) await put(relative, `file ${i}\n`.repeat(i + 1))
    await put('huge.md', Buffer.alloc(MAX_VERSIONED_BYTES + 1, 0x61))
    symlinkSync('a.md', path.join(memories(), 'link.md'))
    await open()
    // Each file hashed once; then every loose copy checked whole once (its size remembered).
    const second = await open()
    expect(second.recovery).toBeNull()
    expect(second.trusted).toBe(names.length)
    const third = await open()
    expect([third.recovery, third.hashed, third.trusted]).toEqual([null, 0, names.length])

    // Damage to stored copies of unchanged files: cut short, emptied, gone; and one packed.
    const commitsBefore = commitCount(dataDir)
    truncateSync(objectFile(blobOf('a.md')), 5)
    truncateSync(objectFile(blobOf('deep/f.md')), 0)
    rmSync(objectFile(blobOf('deep/er/g.md')))
    // A change made outside, and a file gone.
    await put('b.md', 'changed outside\n')
    rmSync(path.join(memories(), 'c.md'))
    const fourth = await open()
    expect(fourth.recovery?.kind).toBe('history-repaired')
    expect(fourth.recovery?.message).toContain('3 damaged stored copies')
    expect(fourth.recovery?.message).toContain(
      '2 files were edited outside Cairn while it was closed',
    )
    expect(commitCount(dataDir)).toBe(commitsBefore + 1)
    expect(await headFolderDifferences(dataDir)).toEqual(['huge.md: - / folder'])
    fsck(dataDir)
    for (const relative of ['a.md', 'deep/f.md', 'deep/er/g.md']) {
      expect(statSync(objectFile(blobOf(relative))).size).toBeGreaterThan(0)
    }
    // Not versioned: the link and the file too large.
    const tracked = gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').split('\n')
    expect(tracked).not.toContain('link.md')
    expect(tracked).not.toContain('huge.md')

    // Packed by git: the stored copies are then checked by the pack index.
    execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), 'gc', '-q'])
    const packed = await open()
    expect([packed.recovery, packed.hashed, packed.trusted]).toEqual([null, 0, names.length - 1])
    expect(await headFolderDifferences(dataDir)).toEqual(['huge.md: - / folder'])
    fsck(dataDir)
  })

  it('reads a file whose stored copy is damaged again, and records it as the folder holds it then', async () => {
    const names = ['a.md', 'b.md', 'deep/er/x.md', 'deep/er/y.md', 'deep/gone/z.md']
    for (const [i, relative] of names.entries()) await put(relative, `file ${i}\n`)
    await open()
    await open()
    const x = blobOf('deep/er/x.md')
    const z = blobOf('deep/gone/z.md')
    truncateSync(objectFile(x), 5)
    truncateSync(objectFile(z), 0)
    // A change outside: open's shortcut misses, and the full scan checks the stored copies.
    await put('b.md', 'changed outside\n')
    // Between the walk that took them on the stat cache's word and the check that finds their
    // stored copies damaged (its look at their loose files): one file edited, the other deleted.
    const loose = (oid: string) => path.join(oid.slice(0, 2), oid.slice(2))
    const done = new Set<string>()
    setDisk({
      ...nodeDisk,
      lstatIfThere(target) {
        if (target.endsWith(loose(x)) && !done.has(x)) {
          done.add(x)
          writeFileSync(path.join(memories(), 'deep/er/x.md'), 'edited while open scanned\n')
        }
        if (target.endsWith(loose(z)) && !done.has(z)) {
          done.add(z)
          rmSync(path.join(memories(), 'deep/gone/z.md'))
        }
        return nodeDisk.lstatIfThere(target)
      },
    })
    try {
      await open()
    } finally {
      setDisk(nodeDisk)
    }
    expect([...done].sort()).toEqual([x, z].sort())
    expect(gitCli(dataDir, 'show', 'main:deep/er/x.md')).toBe('edited while open scanned\n')
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      'a.md',
      'b.md',
      'deep/er/x.md',
      'deep/er/y.md',
    ])
    expect(await headFolderDifferences(dataDir)).toEqual([])
    // The trees of the commit are whole (the blobs the edit and the deletion left behind stay
    // damaged in the earlier commits: their content is gone).
    const tree = gitCli(dataDir, 'rev-parse', 'main^{tree}').trim()
    expect(gitCli(dataDir, 'ls-tree', '-r', '-t', tree)).toContain('deep/er')
    const second = await open()
    expect(second.recovery).toBeNull()
  })

  it('drops a folder replaced by a file while its damaged file was checked, siblings and all', async () => {
    for (const [i, relative] of ['a.md', 'b.md', 'deep/er/x.md', 'deep/er/y.md'].entries()) {
      await put(relative, `file ${i}\n`)
    }
    await open()
    await open()
    const x = blobOf('deep/er/x.md')
    truncateSync(objectFile(x), 5)
    await put('b.md', 'changed outside\n')
    // After the walk took deep/er's files on the stat cache's word, at the check of x.md's
    // stored copy: the folder deep/er becomes a file.
    const loose = path.join(x.slice(0, 2), x.slice(2))
    let fired = false
    setDisk({
      ...nodeDisk,
      lstatIfThere(target) {
        if (target.endsWith(loose) && !fired) {
          fired = true
          rmSync(path.join(memories(), 'deep/er'), { recursive: true })
          writeFileSync(path.join(memories(), 'deep/er'), 'now a file\n')
        }
        return nodeDisk.lstatIfThere(target)
      },
    })
    try {
      await open()
    } finally {
      setDisk(nodeDisk)
    }
    expect(fired).toBe(true)
    // The commit holds no deep/er/y.md the folder no longer has (the file deep/er is the next
    // scan's, as any change made while one runs).
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      'a.md',
      'b.md',
    ])
    expect(await headFolderDifferences(dataDir)).toEqual(['deep/er: - / folder'])
    await open()
    expect(await headFolderDifferences(dataDir)).toEqual([])
    expect(gitCli(dataDir, 'show', 'main:deep/er')).toBe('now a file\n')
  })

  // review20-tidy R6: the check after the walk asks the packs for all its blobs in one batch
  // lookup (`inPackEach`), each slice of a pack's name table read once, not one lookup per file.
  it("looks up every unchanged file's blob in the pack index at once", async () => {
    const names = Array.from({ length: 40 }, (_, i) => `f${i % 4}/n${i}.md`)
    for (const [i, relative] of names.entries()) await put(relative, `file ${i}\n`)
    await open()
    await open()
    // 2,000 more objects in the pack (another branch's files): the name table (some 41 KB) is
    // then one slice for a batch lookup (64 KB) and four for single lookups (16 KB each), so a
    // read of the whole table tells the batch apart.
    const padding = Array.from({ length: 2_000 }, (_, i) => {
      const content = `padding ${i}\n`
      return `M 100644 inline pad/${i}.md\ndata ${Buffer.byteLength(content)}\n${content}\n`
    })
    const gitdir = path.join(dataDir, 'history.git')
    execFileSync('git', ['fast-import', '--quiet'], {
      cwd: gitdir,
      input: `commit refs/heads/padding\ncommitter P <p@example.com> 0 +0000\ndata 4\npad\n${padding.join('')}\n`,
    })
    execFileSync('git', ['--git-dir', gitdir, 'gc', '-q'])
    const packDir = path.join(gitdir, 'objects', 'pack')
    const [idx] = readdirSync(packDir).filter((name) => name.endsWith('.idx'))
    // Version 2: the names follow the 8-byte header and the fanout, whose last entry counts them.
    const namesStart = 8 + 256 * 4
    const namesLength = readFileSync(path.join(packDir, idx!)).readUInt32BE(8 + 255 * 4) * 20
    expect(namesLength).toBeGreaterThan(16 * 1024)
    expect(namesLength).toBeLessThan(64 * 1024)
    // A change outside: open's shortcut misses, and the full scan checks the stored copies.
    await put('f0/n0.md', 'changed outside\n')
    const indexReads = countIndexReads()
    let opened: Awaited<ReturnType<typeof open>>
    try {
      opened = await open()
    } finally {
      indexReads.stop()
    }
    expect(opened.recovery?.kind).toBe('outside-changes')
    expect(opened.trusted).toBe(names.length - 1)
    // The batch's one read of the whole table; single lookups read none (a second batch, two).
    const whole = indexReads.reads.filter(
      ({ position, length }) => position === namesStart && length === namesLength,
    )
    expect(whole).toHaveLength(1)
    expect(await headFolderDifferences(dataDir)).toEqual([])
  })
})
