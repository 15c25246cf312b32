import { readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { IndexFile, writeIndex, type IndexEntry } from './index-file'
import { claudeUse, gitCli, indexDirIn, testRepo } from './test-helpers'
import type { VersionedMemory } from './types'

// An index of format 2 (names without checksums, what every existing install has) is
// migrated at open, not rebuilt from the commits: a rebuild made the first open after the
// upgrade wait 10 s at 10,000 commits and minutes at 100,000 (review12-hist R2).

const repo = testRepo({ maintenance: false })
const { open } = repo

const part = (name: string) => path.join(indexDirIn(repo.dataDir), name)

/**
 * Rewrites the names of the index in `dir` (default: this test's) as format 2 wrote them (u32
 * length + UTF-8) and says format 2.
 */
async function downToFormat2(dir = indexDirIn(repo.dataDir)): Promise<void> {
  const file = path.join(dir, 'names')
  const names = await readFile(file)
  const out: Buffer[] = []
  for (let at = 0; at + 8 <= names.length;) {
    const length = names.readUInt32LE(at)
    out.push(names.subarray(at, at + 4), names.subarray(at + 8, at + 8 + length))
    at += 8 + length
  }
  await writeFile(file, Buffer.concat(out))
  await writeFile(path.join(dir, 'format'), 'cairn-index 2\n')
}

/** Every commit as git lists it, newest first, with the files it changed. */
function gitTimeline(): string[] {
  return gitCli(repo.dataDir, 'log', '--format=%H %s', '--name-only', 'main')
    .trim()
    .split('\n')
    .filter((line) => line !== '')
}

async function timeline(memory: VersionedMemory): Promise<string[]> {
  const page = await memory.log({ offset: 0, limit: 500 })
  return page.entries.flatMap((c) => [
    `${c.oid} ${c.subject}`,
    ...(c.paths ?? []).map((p) => p.replace('/memories/', '')),
  ])
}

async function makeHistory(): Promise<void> {
  const memory = await open()
  for (let k = 0; k < 30; k++) {
    await memory.execute(
      { command: 'create', path: `/memories/notes/topic-${k % 12}.md`, file_text: `v${k}\n` },
      claudeUse(`toolu_c${k}`),
    )
  }
  await memory.close()
}

describe('a format-2 side index', () => {
  it('is migrated at open: the records kept as they are, only names rewritten, answers equal git', async () => {
    await makeHistory()
    await downToFormat2()
    const commitsBefore = await stat(part('commits'))

    const memory = await open()
    // Not rebuilt: the records are the same file (hard-linked into the migrated index).
    expect((await stat(part('commits'))).ino).toBe(commitsBefore.ino)
    expect(await readFile(part('format'), 'utf8')).toBe('cairn-index 4\n')
    const history = await memory.fileHistory('/memories/notes/topic-3.md')
    expect(history.map((c) => c.oid)).toEqual(
      gitCli(repo.dataDir, 'log', '--format=%H', 'main', '--', 'notes/topic-3.md')
        .trim()
        .split('\n'),
    )
    // A new name after the migration is appended in this format and read back.
    await memory.execute(
      { command: 'create', path: '/memories/plan.md', file_text: 'p\n' },
      claudeUse('toolu_plan'),
    )
    expect(await timeline(memory)).toEqual(gitTimeline())
    // The idle check passes over the migrated names (no rebuild: the records stay the file).
    await memory.maintain()
    expect((await stat(part('commits'))).ino).toBe(commitsBefore.ino)
    await memory.close()

    const again = await open()
    expect(await timeline(again)).toEqual(gitTimeline())
    await again.close()
  })

  // Its names another account's: the read to migrate them was refused and the open said only
  // "permission was denied" (review of stop 26). It names the part; nothing is migrated.
  it('names the part it may not read to migrate, inside the data folder; nothing migrated', async () => {
    await makeHistory()
    await downToFormat2()
    const names = part('names')
    const before = await readFile(names)
    let refused = 0
    const hooked = hookDisk(nodeDisk, (call) => {
      // Read by one open (readPlainFile): refused where it is opened.
      if (call.name !== 'openSync' || String(call.args[0]) !== names) return undefined
      refused++
      return errnoError(call, 'EACCES')
    })
    const undo = setDisk(hooked.disk)
    const opened = await open().then(
      async (memory) => {
        await memory.close()
        return null
      },
      (error: unknown) => error,
    )
    undo()
    expect(refused).toBe(1)
    expect(opened).toBeInstanceOf(CairnError)
    expect(opened).toMatchObject({ code: 'access-denied' })
    expect((opened as Error).message).toContain(
      "does not let it read history.git/cairn-index/names in Cairn's data folder",
    )
    expect((opened as Error).message).not.toContain(repo.dataDir)
    expect(await readFile(part('format'), 'utf8')).toBe('cairn-index 2\n')
    expect((await readFile(names)).equals(before)).toBe(true)
    // Let read again, the same index is migrated.
    const memory = await open()
    await memory.close()
    expect(await readFile(part('format'), 'utf8')).toBe('cairn-index 4\n')
  })

  it('a migration killed half-way leaves the format-2 index, which the next open migrates', async () => {
    await makeHistory()
    await downToFormat2()
    const commitsBefore = await stat(part('commits'))
    // What a kill mid-migration leaves: a half-written index beside the old one.
    const half = `${indexDirIn(repo.dataDir)}.tmp-999-1`
    await mkdir(half)
    await writeFile(path.join(half, 'names'), Buffer.alloc(10))

    const memory = await open()
    expect((await stat(part('commits'))).ino).toBe(commitsBefore.ino)
    expect(await timeline(memory)).toEqual(gitTimeline())
    await memory.close()
    await expect(stat(half)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('gets the names, byte for byte, that appending them writes and that the checks accept', async () => {
    // The three places that sum a name (append, the checks, this migration) share one function;
    // names of every shape, from a seeded generator so a failure can be run again.
    let seed = 0x2545f491
    const random = (below: number) => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % below
    }
    const alphabet = ['a', 'Z', '7', ' ', '-', '.', '/', 'é', 'ß', '漢', '字', '🪨', '\u200b']
    const name = (k: number) =>
      `/memories/${Array.from({ length: 1 + random(300) }, () => alphabet[random(alphabet.length)]).join('')}-${k}.md`
    const entries: IndexEntry[] = Array.from({ length: 40 }, (_, i) => {
      const files = Array.from({ length: 1 + random(4) }, (_, f) => name(i * 10 + f))
      return {
        oid: (i + 1).toString(16).padStart(40, '0'),
        parent: i === 0 ? null : i.toString(16).padStart(40, '0'),
        time: (1_700_000_000 + i) * 1000,
        actor: 'claude',
        command: 'create',
        subject: `create ${files[0]}`,
        paths: files,
        conversationId: `conv-${random(5)}`,
        toolUseId: null,
        overwrite: false,
        restoredFrom: null,
        files,
      }
    })
    const dir = path.join(repo.dataDir, 'cairn-index')
    writeIndex(dir, entries)
    const appended = await readFile(path.join(dir, 'names'))
    const fresh = IndexFile.open(dir)
    expect(fresh.namesRead).toBeGreaterThan(100)
    expect(() => fresh.checkNames()).not.toThrow()
    fresh.close()

    await downToFormat2(dir)
    const migrated = IndexFile.open(dir)
    expect(await readFile(path.join(dir, 'names'))).toEqual(appended)
    expect(() => migrated.checkNames()).not.toThrow()
    expect(migrated.all()).toEqual(entries)
    migrated.close()
  })

  // A folder where a part belongs (Cairn never writes one) is damage: rebuilt from the
  // commits, where its EISDIR was passed on as a failing disk and every open failed alike.
  it.each(['names', 'commits'])(
    'with a folder in place of its %s is rebuilt from the commits, not an open that fails',
    async (name) => {
      await makeHistory()
      await downToFormat2()
      await rm(part(name))
      await mkdir(part(name))
      const memory = await open()
      try {
        expect(await timeline(memory)).toEqual(gitTimeline())
      } finally {
        await memory.close()
      }
      expect((await stat(part(name))).isFile()).toBe(true)
      expect(await readFile(part('format'), 'utf8')).toBe('cairn-index 4\n')
    },
  )
})
