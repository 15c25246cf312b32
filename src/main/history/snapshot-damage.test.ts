import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { open as openFile, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MemoryEntry } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from './index'
import { serializeTree, type RawTreeEntry } from './object-store'
import { CLAUDE, gitCli, indexDirIn, tempDataDir } from './test-helpers'

// "Memory at this reply" took each version's size from its object's header (review12-story,
// item 7), which listed a version damaged past its header (a loose object cut short or
// corrupted, a damaged pack entry) as sound, with its size, and a tree entry naming a folder
// where a file should be with a size too (review13-story R5). Each must be marked Damaged,
// as git (the second opinion here) cannot read it as a file either.

let dataDir: string
let cleanup: () => Promise<void>
const open = () => openVersionedMemory({ dataDir, watch: false, maintenance: false })
const gitdir = () => path.join(dataDir, 'history.git')

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

/** About `bytes` of text, different for each `seed` (versions delta well against each other). */
function text(bytes: number, seed: number): string {
  const lines: string[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const line = i % 41 === seed % 41 ? `version ${seed}` : `line ${i} of a long note ${i * 7}`
    lines.push(line)
    length += line.length + 1
  }
  return `${lines.join('\n')}\n`
}

async function write(memory: VersionedMemory, relative: string, body: string): Promise<void> {
  const result = await memory.execute(
    { command: 'create', path: `/memories/${relative}`, file_text: body },
    CLAUDE,
  )
  expect(result.isError).toBe(false)
}

function blobAt(commit: string, relative: string): string {
  return gitCli(dataDir, 'rev-parse', `${commit}:${relative}`).trim()
}

function looseFile(oid: string): string {
  return path.join(gitdir(), 'objects', oid.slice(0, 2), oid.slice(2))
}

/** Whether git can read `oid` as a blob. */
function gitReadsBlob(oid: string): boolean {
  try {
    execFileSync('git', ['--git-dir', gitdir(), 'cat-file', 'blob', oid], { stdio: 'pipe' })
    return true
  } catch {
    return false
  }
}

async function listed(commit: string): Promise<Map<string, MemoryEntry>> {
  const memory = await open()
  try {
    const entries = await memory.listAt(commit)
    return new Map(entries.map((entry) => [entry.path, entry]))
  } finally {
    await memory.close()
  }
}

describe('memory at this reply, over versions damaged past their header', () => {
  it('marks a loose version cut short or corrupted Damaged, the others with their sizes', async () => {
    const memory = await open()
    let reply: string
    try {
      for (const name of ['cut', 'flipped', 'sound'])
        await write(memory, `${name}.md`, text(20_000, 1))
      for (const name of ['cut', 'flipped', 'sound'])
        await write(memory, `${name}.md`, text(20_000, name.length))
      reply = memory.head()!
      // Later versions, so that the reply's are old ones.
      await write(memory, 'cut.md', 'now\n')
      await write(memory, 'flipped.md', 'now\n')
    } finally {
      await memory.close()
    }
    const cut = blobAt(reply, 'cut.md')
    const flipped = blobAt(reply, 'flipped.md')
    const sound = blobAt(reply, 'sound.md')
    // Cut to its first 600 bytes: the `blob <size>` header still inflates.
    await truncate(looseFile(cut), 600)
    const bytes = await readFile(looseFile(flipped))
    bytes[bytes.length - 40] = (bytes[bytes.length - 40] as number) ^ 0xff
    await writeFile(looseFile(flipped), bytes)
    expect([gitReadsBlob(cut), gitReadsBlob(flipped), gitReadsBlob(sound)]).toEqual([
      false,
      false,
      true,
    ])

    const entries = await listed(reply)
    expect(entries.get('/memories/cut.md')).toMatchObject({ damaged: true, size: 0 })
    expect(entries.get('/memories/flipped.md')).toMatchObject({ damaged: true, size: 0 })
    const healthy = entries.get('/memories/sound.md')!
    expect(healthy.damaged).toBeUndefined()
    expect(healthy.size).toBe(Number(gitCli(dataDir, 'cat-file', '-s', sound).trim()))
  })

  it('marks a version whose pack entry (or a delta base of it) is damaged, as git cannot read it', async () => {
    const memory = await open()
    let reply: string
    try {
      for (let version = 0; version < 4; version++) {
        for (let file = 0; file < 6; file++)
          await write(memory, `n${file}.md`, text(30_000, file * 10 + version))
        if (version === 2) reply = memory.head()!
      }
      // Packed: versions stored as deltas against each other.
      await memory.maintain()
    } finally {
      await memory.close()
    }
    const packs = readdirSync(path.join(gitdir(), 'objects', 'pack')).filter((name) =>
      name.endsWith('.pack'),
    )
    expect(packs).toHaveLength(1)
    const pack = path.join(gitdir(), 'objects', 'pack', packs[0]!)
    // Where each object lies (git's own reading of the pack): `oid type size packed offset …`.
    const records = gitCli(dataDir, 'verify-pack', '-v', pack.replace(/\.pack$/, '.idx'))
      .split('\n')
      .map((line) => line.split(/\s+/))
      .filter((fields) => /^[0-9a-f]{40}$/.test(fields[0] ?? '') && fields[1] === 'blob')
      .map(([oid, , , packed, offset, depth, base]) => ({
        oid: oid!,
        packed: Number(packed),
        offset: Number(offset),
        base: depth !== undefined ? base! : null,
      }))
    const blobs = Array.from({ length: 6 }, (_, file) => blobAt(reply!, `n${file}.md`))
    // A whole record the reply's versions are built from (one of them, or the base of one
    // stored as a delta), damaged near its end: its header, and a delta's start, read well.
    const victim =
      records.find((record) => record.base === null && blobs.includes(record.oid)) ??
      records.find(
        (record) =>
          record.oid ===
          records.find((delta) => delta.base !== null && blobs.includes(delta.oid))?.base,
      )
    expect(victim).toBeDefined()
    expect(victim!.packed).toBeGreaterThan(600)
    const handle = await openFile(pack, 'r+')
    try {
      const at = victim!.offset + victim!.packed - 12
      const byte = Buffer.alloc(1)
      await handle.read(byte, 0, 1, at)
      byte[0] = (byte[0] as number) ^ 0x55
      await handle.write(byte, 0, 1, at)
    } finally {
      await handle.close()
    }
    expect(gitReadsBlob(victim!.oid)).toBe(false)
    const unreadable = blobs.filter((oid) => !gitReadsBlob(oid))
    expect(unreadable.length).toBeGreaterThan(0)

    const entries = await listed(reply!)
    for (let file = 0; file < 6; file++) {
      const oid = blobs[file]!
      const entry = entries.get(`/memories/n${file}.md`)!
      // Exactly what git cannot read is Damaged; the rest has git's size.
      if (gitReadsBlob(oid)) {
        expect(entry.damaged, `n${file}.md`).toBeUndefined()
        expect(entry.size).toBe(Number(gitCli(dataDir, 'cat-file', '-s', oid).trim()))
      } else {
        expect(entry, `n${file}.md`).toMatchObject({ damaged: true, size: 0 })
      }
    }
    const damaged = blobs.filter((_, file) => entries.get(`/memories/n${file}.md`)?.damaged)
    expect(damaged).toEqual(unreadable)
  })

  it('marks a tree entry that names a folder where a file should be', async () => {
    const memory = await open()
    try {
      await write(memory, 'a.md', 'a\n')
      await write(memory, 'd/b.md', 'b\n')
    } finally {
      await memory.close()
    }
    const base = gitCli(dataDir, 'rev-parse', 'main').trim()
    const folder = gitCli(dataDir, 'rev-parse', 'main:d').trim()
    // A commit whose tree lists the folder `d`'s tree as the file `odd.md` (git's own tools
    // refuse to write it; `hash-object --literally` stores it as given), then one that takes
    // it away again.
    const treeEntries: RawTreeEntry[] = gitCli(dataDir, 'ls-tree', 'main')
      .trim()
      .split('\n')
      .map((line) => {
        const [meta, name] = line.split('\t') as [string, string]
        const [mode, kind, oid] = meta.split(' ') as [string, 'blob' | 'tree', string]
        return { name, kind, oid, mode: mode === '040000' ? '40000' : mode }
      })
    treeEntries.push({ name: 'odd.md', kind: 'blob', oid: folder, mode: '100644' })
    const odd = execFileSync(
      'git',
      ['--git-dir', gitdir(), 'hash-object', '-t', 'tree', '-w', '--literally', '--stdin'],
      { input: serializeTree(treeEntries), encoding: 'utf8' },
    ).trim()
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'Claude',
      GIT_AUTHOR_EMAIL: 'claude@cairn.local',
      GIT_COMMITTER_NAME: 'Claude',
      GIT_COMMITTER_EMAIL: 'claude@cairn.local',
    }
    const withOdd = execFileSync(
      'git',
      ['--git-dir', gitdir(), 'commit-tree', odd, '-p', base, '-m', 'odd'],
      { encoding: 'utf8', env },
    ).trim()
    const after = execFileSync(
      'git',
      ['--git-dir', gitdir(), 'commit-tree', `${base}^{tree}`, '-p', withOdd, '-m', 'back'],
      { encoding: 'utf8', env },
    ).trim()
    gitCli(dataDir, 'update-ref', 'refs/heads/main', after)
    // The side index rebuilt at open, from git's commits.
    await rm(indexDirIn(dataDir), { recursive: true, force: true, maxRetries: 10 })

    const entries = await listed(withOdd)
    expect(entries.get('/memories/odd.md')).toMatchObject({ kind: 'file', damaged: true, size: 0 })
    expect(entries.get('/memories/a.md')).toMatchObject({ size: 2 })
    expect(entries.get('/memories/a.md')?.damaged).toBeUndefined()
  })
})
