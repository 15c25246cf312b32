import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs'
import { mkdir, rm, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { openRepo, type OpenedRepo } from './open-repo'
import type { CommitIntent, Repo } from './repo'
import { sameLoose, StatCache, statCacheOf } from './stat-cache'
import { childrenOf, loadAll, treeFromOid, type Node } from './tree-state'
import { CLAUDE, folderFiles, fsck, gitCli, headFiles, tempDataDir } from './test-helpers'
import { openVersionedMemory } from './versioned-memory'

// Open makes HEAD's tree from the folder when the folder is exactly HEAD (head-match.ts): the
// state must be the one reading HEAD's trees gives, and a damaged or missing tree must still
// be found at open.

const intent: CommitIntent = {
  actor: 'claude',
  command: 'create',
  subject: 'create',
  conversationId: 'conv',
  toolUseId: 'tool',
  overwrite: false,
  restoredFrom: null,
}

// Names whose order differs between a plain sort and git's (a folder sorts as `name/`).
const FILES: Record<string, string> = {
  'a.md': 'a',
  'a/b.md': 'in a',
  'a-b.md': 'dash',
  'a/deep/c.md': 'deep',
  'zz/é.md': 'accent',
  'zz/x y.md': 'space',
  'top.md': 'top',
}

let dataDir: string
let cleanup: () => Promise<void>
const now = () => 1_700_000_000_000

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  setDisk(nodeDisk)
  await cleanup()
})

const gitdirOf = (dir: string) => path.join(dir, 'history.git')
const looseFile = (dir: string, oid: string) =>
  path.join(gitdirOf(dir), 'objects', oid.slice(0, 2), oid.slice(2))

async function put(dir: string, relative: string, content: string): Promise<void> {
  const file = path.join(dir, 'memories', relative)
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, content)
}

async function close(repo: Repo): Promise<void> {
  await repo.store.checkpoint({ durable: true })
  repo.store.close()
  repo.index.close()
}

/** The history of FILES, committed, then opened once more (its trees checked whole then). */
async function seed(): Promise<void> {
  const { repo } = await openRepo({ dataDir, now })
  for (const [name, content] of Object.entries(FILES)) await put(dataDir, name, content)
  await repo.commit('all', intent)
  // The newest commit changes one file at the top: the side index's check at open (which
  // reads the newest commit's changes) then reads the root trees only.
  await put(dataDir, 'top.md', 'top, edited')
  await repo.commit(['top.md'], intent)
  await close(repo)
  await close((await openRepo({ dataDir, now })).repo)
}

/** Writes `damage(bytes)` over `file` in place: same file, same size, new content. */
function damageInPlace(file: string, damage: (bytes: Buffer) => void): void {
  const bytes = readFileSync(file)
  const size = bytes.length
  damage(bytes)
  chmodSync(file, 0o644)
  const fd = openSync(file, 'r+')
  try {
    writeSync(fd, bytes, 0, size, 0)
  } finally {
    closeSync(fd)
  }
  expect(statSync(file).size).toBe(size)
}

const flipMiddle = (bytes: Buffer) => {
  const at = Math.floor(bytes.length / 2)
  bytes[at] = bytes[at]! ^ 0xff
}

/** The stamp of `oid`'s loose file is the one on record (the shortcut would trust it). */
function expectStampOnRecord(stats: StatCache, oid: string, record: 'tree' | string): void {
  const now = statSync(looseFile(dataDir, oid))
  const recorded = record === 'tree' ? stats.checkedTree(oid) : stats.checkedObject(record)
  expect(sameLoose(now, recorded), oid).toBe(true)
}

/** Commits a change of `top.md` (elsewhere than the damage), then asks git. */
async function commitElsewhereAndFsck(repo: Repo, dir = dataDir): Promise<void> {
  await put(dir, 'top.md', `top, at ${Date.now()}`)
  await repo.commit(['top.md'], intent)
  await close(repo)
  fsck(dir)
  expect(gitCli(dir, 'ls-tree', '-r', 'main')).toContain('c.md')
  expect(headFiles(dir)).toEqual(await folderFiles(dir))
}

/**
 * Opens `dir`, counting the reads of the loose files of HEAD's trees below its root (the side
 * index's check of the newest commit reads the root's, see `seed`).
 */
async function openCountingTreeReads(dir: string): Promise<OpenedRepo & { treeReads: number }> {
  const trees = new Set(
    gitCli(dir, 'ls-tree', '-r', '-d', 'main')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/\s+/)[2]!)
      .map((oid) => looseFile(dir, oid)),
  )
  let treeReads = 0
  setDisk(
    hookDisk(nodeDisk, (call) => {
      if (call.name === 'openSync' && trees.has(call.args[0] as string)) treeReads++
    }).disk,
  )
  try {
    return { ...(await openRepo({ dataDir: dir, now })), treeReads }
  } finally {
    setDisk(nodeDisk)
  }
}

/** Each folder's id, entries and stored bytes as a tree read from the store has them. */
async function expectSameAsStored(repo: Repo, made: Node, prefix = ''): Promise<void> {
  if (made.kind === 'blob') return
  const stored = treeFromOid(made.oid!)
  await loadAll(repo.store, stored)
  const children = await childrenOf(repo.store, stored)
  expect([...made.children!.keys()].sort(), prefix).toEqual([...children.keys()].sort())
  expect(made.encoding?.bytes.equals(stored.encoding!.bytes), prefix).toBe(true)
  expect([...made.encoding!.idAt]).toEqual([...stored.encoding!.idAt])
  for (const [name, child] of made.children!) {
    const other = children.get(name)!
    expect({ kind: child.kind, oid: child.oid }).toEqual({ kind: other.kind, oid: other.oid })
    if (child.kind === 'blob' && other.kind === 'blob') expect(child.mode).toBe(other.mode)
    await expectSameAsStored(repo, child, `${prefix}/${name}`)
  }
}

describe('open when the folder is exactly HEAD', () => {
  it("reads none of HEAD's trees, and holds the state reading them gives", async () => {
    await seed()
    const { repo, recovery, treeReads } = await openCountingTreeReads(dataDir)
    expect(recovery).toBeNull()
    expect(treeReads).toBe(0)
    expect(repo.root().oid).toBe(gitCli(dataDir, 'rev-parse', 'main^{tree}').trim())
    await expectSameAsStored(repo, repo.root())
    await close(repo)
  })

  it('takes the shortcut after a session of commands (files the cache knows by size only)', async () => {
    const memory = await openVersionedMemory({ dataDir, watch: false, now })
    const run = (input: Record<string, unknown>) => memory.execute(input, CLAUDE)
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'one\n' })
    await run({ command: 'create', path: '/memories/dir/deep/a.md', file_text: 'a\n' })
    await run({ command: 'create', path: '/memories/dir/b.md', file_text: 'b\n' })
    await run({ command: 'str_replace', path: '/memories/notes.md', old_str: 'one', new_str: '1' })
    await memory.close()
    // Older than the stat cache's racy window, so that one hash makes them trusted.
    const past = new Date(Date.now() - 10_000)
    for (const file of ['notes.md', 'dir/deep/a.md', 'dir/b.md']) {
      utimesSync(path.join(dataDir, 'memories', file), past, past)
    }
    const { repo, recovery } = await openCountingTreeReads(dataDir)
    expect(recovery).toBeNull()
    // Each file Cairn wrote was read and hashed once, and is trusted by its stat from now on.
    expect(repo.stats.hashed).toBe(3)
    await expectSameAsStored(repo, repo.root())
    await close(repo)
    // HEAD's new trees were read whole once (only the shortcut records their sizes) ...
    const stats = StatCache.load(statCacheOf(gitdirOf(dataDir)))
    for (const folder of ['dir', 'dir/deep']) {
      const oid = gitCli(dataDir, 'rev-parse', `main:${folder}`).trim()
      expectStampOnRecord(stats, oid, 'tree')
    }
    // ... and not again.
    const again = await openCountingTreeReads(dataDir)
    expect([again.recovery, again.treeReads, again.repo.stats.hashed]).toEqual([null, 0, 0])
    await close(again.repo)
  })

  it('keeps the stamp of each blob it reads whole at open: the next open reads none again', async () => {
    const memory = await openVersionedMemory({ dataDir, watch: false, now })
    const run = (input: Record<string, unknown>) => memory.execute(input, CLAUDE)
    await run({ command: 'create', path: '/memories/notes.md', file_text: 'one\n' })
    await run({ command: 'create', path: '/memories/dir/b.md', file_text: 'b\n' })
    await memory.close()
    const past = new Date(Date.now() - 10_000)
    for (const file of ['notes.md', 'dir/b.md']) {
      utimesSync(path.join(dataDir, 'memories', file), past, past)
    }
    const blobs = new Set(
      ['notes.md', 'dir/b.md'].map((file) =>
        looseFile(dataDir, gitCli(dataDir, 'rev-parse', `main:${file}`).trim()),
      ),
    )
    // Opens, counting the reads of the two files' loose blobs (an `lstat` is not a read).
    const openCountingBlobReads = async () => {
      let reads = 0
      setDisk(
        hookDisk(nodeDisk, (call) => {
          if (call.name !== 'lstatIfThere' && blobs.has(call.args[0] as string)) reads++
        }).disk,
      )
      try {
        const { repo, recovery } = await openRepo({ dataDir, now })
        expect(recovery).toBeNull()
        await close(repo)
        return { reads, hashed: repo.stats.hashed }
      } finally {
        setDisk(nodeDisk)
      }
    }
    // Cairn wrote them: read and hashed, and their blobs read whole, once ...
    const first = await openCountingBlobReads()
    expect(first.hashed).toBe(2)
    expect(first.reads).toBeGreaterThanOrEqual(2)
    // ... with their stamps kept, so the next open checks them by an `lstat` each.
    const stats = StatCache.load(statCacheOf(gitdirOf(dataDir)))
    for (const file of ['notes.md', 'dir/b.md']) {
      expectStampOnRecord(stats, gitCli(dataDir, 'rev-parse', `main:${file}`).trim(), file)
    }
    expect(await openCountingBlobReads()).toEqual({ reads: 0, hashed: 0 })
  })

  it('leads to the same next commit as the full path, byte for byte', async () => {
    await seed()
    const slow = `${dataDir}-slow`
    cpSync(dataDir, slow, { recursive: true })
    try {
      // A stray temp file sends open down the full path (it removes it, changing nothing else).
      await writeFile(
        path.join(slow, 'memories', 'a', `${TEMP_FILE_PREFIX}${randomUUID()}`),
        'half',
      )
      const fast = await openCountingTreeReads(dataDir)
      const full = await openCountingTreeReads(slow)
      expect(fast.treeReads).toBe(0)
      expect(full.treeReads).toBeGreaterThan(0)
      expect(fast.recovery).toBeNull()
      expect(full.recovery).toBeNull()
      const commits: string[] = []
      for (const [dir, { repo }] of [
        [dataDir, fast],
        [slow, full],
      ] as const) {
        await put(dir, 'a/deep/c.md', 'changed')
        await put(dir, 'zz/new.md', 'new')
        await rm(path.join(dir, 'memories', 'a-b.md'))
        const entry = await repo.commit(['a/deep/c.md', 'zz/new.md', 'a-b.md'], intent)
        commits.push(entry!.oid)
        await close(repo)
        fsck(dir)
        expect(headFiles(dir)).toEqual(await folderFiles(dir))
      }
      expect(commits[0]).toBe(commits[1])
      expect(gitCli(dataDir, 'show', '--stat', 'main')).toBe(gitCli(slow, 'show', '--stat', 'main'))
    } finally {
      await rm(slow, { recursive: true, force: true })
    }
  })

  const damages = {
    'truncated root tree (its checked stamp on record)': async (oid: { root: string }) =>
      truncate(looseFile(dataDir, oid.root), 4),
    'truncated folder tree': async (oid: { sub: string }) =>
      truncate(looseFile(dataDir, oid.sub), 9),
    'missing folder tree': async (oid: { sub: string }) => rm(looseFile(dataDir, oid.sub)),
    // Damage in place that keeps the file's size (found by its ctime, not its size).
    'folder tree with one byte flipped mid-file': async (oid: { sub: string }) =>
      damageInPlace(looseFile(dataDir, oid.sub), flipMiddle),
    'folder tree with its tail zeroed (zlib header kept)': async (oid: { sub: string }) =>
      damageInPlace(looseFile(dataDir, oid.sub), (bytes) => bytes.fill(0, 2)),
    'root tree with one byte flipped mid-file': async (oid: { root: string }) =>
      damageInPlace(looseFile(dataDir, oid.root), flipMiddle),
  }
  for (const [name, damage] of Object.entries(damages)) {
    it(`still finds a ${name} at open, and rebuilds it from the folder`, async () => {
      await seed()
      const root = gitCli(dataDir, 'rev-parse', 'main^{tree}').trim()
      const sub = gitCli(dataDir, 'rev-parse', 'main:a/deep').trim()
      // The shortcut would be taken: the trees' checked stamps are on record.
      const stats = StatCache.load(statCacheOf(gitdirOf(dataDir)))
      for (const oid of [root, sub]) expectStampOnRecord(stats, oid, 'tree')
      await damage({ root, sub })
      const { repo, recovery } = await openRepo({ dataDir, now })
      expect(recovery?.kind).toBe('history-repaired')
      expect(recovery?.message).toContain('list of files in the history was damaged')
      expect(repo.root().oid).toBe(root)
      // The next commit builds on sound trees: git reads all of it.
      await commitElsewhereAndFsck(repo)
      // Mended: the next open takes the shortcut again.
      const again = await openCountingTreeReads(dataDir)
      expect(again.recovery).toBeNull()
      await close(again.repo)
      const third = await openCountingTreeReads(dataDir)
      expect(third.treeReads).toBe(0)
      await close(third.repo)
    })
  }
  it('finds a folder tree another valid tree of the same size was copied over', async () => {
    // Twelve one-file folders: two of their trees' loose files share a size.
    const { repo: first } = await openRepo({ dataDir, now })
    for (let i = 0; i < 12; i++) await put(dataDir, `d${i}/c.md`, `content ${i}`)
    await put(dataDir, 'top.md', 'top')
    await first.commit('all', intent)
    await close(first)
    await close((await openRepo({ dataDir, now })).repo)
    const ids = Array.from({ length: 12 }, (_, i) =>
      gitCli(dataDir, 'rev-parse', `main:d${i}`).trim(),
    )
    const sizeOf = (oid: string) => statSync(looseFile(dataDir, oid)).size
    const victim = ids.find((a) => ids.some((b) => b !== a && sizeOf(b) === sizeOf(a)))!
    const other = ids.find((b) => b !== victim && sizeOf(b) === sizeOf(victim))!
    expectStampOnRecord(StatCache.load(statCacheOf(gitdirOf(dataDir))), victim, 'tree')
    chmodSync(looseFile(dataDir, victim), 0o644)
    copyFileSync(looseFile(dataDir, other), looseFile(dataDir, victim))
    const { repo, recovery } = await openRepo({ dataDir, now })
    expect(recovery?.kind).toBe('history-repaired')
    expect(recovery?.message).toContain('list of files in the history was damaged')
    await commitElsewhereAndFsck(repo)
  })

  const packers = {
    'git gc': async () => void gitCli(dataDir, 'gc', '--quiet'),
    "Cairn's maintenance": async () => {
      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false, now })
      await memory.maintain({ mergeAll: true })
      await memory.close()
    },
  }
  for (const [packer, packUp] of Object.entries(packers)) {
    it(`finds a packed folder tree damaged inside a pack ${packer} made`, async () => {
      await seed()
      await packUp()
      expect(
        existsSync(looseFile(dataDir, gitCli(dataDir, 'rev-parse', 'main:a/deep').trim())),
      ).toBe(false)
      await close((await openRepo({ dataDir, now })).repo)
      const sub = gitCli(dataDir, 'rev-parse', 'main:a/deep').trim()
      const packDir = path.join(gitdirOf(dataDir), 'objects', 'pack')
      const idx = readdirSync(packDir).find((name) => name.endsWith('.idx'))!
      const line = gitCli(dataDir, 'verify-pack', '-v', path.join(packDir, idx))
        .split('\n')
        .find((entry) => entry.startsWith(sub))!
      const [, type, , inPack, offset] = line.split(/\s+/)
      expect(type).toBe('tree')
      const pack = path.join(packDir, idx.replace(/\.idx$/, '.pack'))
      damageInPlace(pack, (bytes) => {
        const at = Number(offset) + Math.floor(Number(inPack) / 2)
        bytes[at] = bytes[at]! ^ 0xff
      })
      const { repo, recovery } = await openRepo({ dataDir, now })
      expect(recovery?.kind).toBe('history-repaired')
      expect(recovery?.message).toContain('list of files in the history was damaged')
      await put(dataDir, 'top.md', 'top, once more')
      await repo.commit(['top.md'], intent)
      await close(repo)
      // git reads every version through the sound loose copy the repair wrote ...
      expect(gitCli(dataDir, 'ls-tree', '-r', 'main')).toContain('a/deep/c.md')
      expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
      // ... and maintenance rewrites the pack from it: git fsck is clean again.
      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false, now })
      await memory.maintain()
      await memory.close()
      fsck(dataDir)
    })
  }

  /**
   * Flips a byte of `main:a/deep`'s loose tree as damage beneath the file system (a disk's own
   * bit rot) would: its stamp stays, so the disk seam hands out the one it had (until the
   * caller puts `nodeDisk` back).
   */
  function rotUnderStamp(): void {
    const file = looseFile(dataDir, gitCli(dataDir, 'rev-parse', 'main:a/deep').trim())
    const stamp = statSync(file)
    damageInPlace(file, flipMiddle)
    setDisk({
      ...nodeDisk,
      lstatIfThere: (at) => (at === file ? stamp : nodeDisk.lstatIfThere(at)),
    })
  }

  it('reads a tree taken on its stamp before the first commit, and mends it', async () => {
    await seed()
    rotUnderStamp()
    let opened: OpenedRepo
    try {
      opened = await openRepo({ dataDir, now })
    } finally {
      setDisk(nodeDisk)
    }
    // Open could not see it, so it says nothing; the damage is still on disk.
    expect(opened.recovery).toBeNull()
    expect(() => gitCli(dataDir, 'ls-tree', '-r', 'main')).toThrow()
    // The first commit reads the tree before it builds on it, and writes it again.
    await commitElsewhereAndFsck(opened.repo)
  })

  it('reads a tree taken on its stamp when idle, before any commit', async () => {
    await seed()
    rotUnderStamp()
    let memory
    try {
      memory = await openVersionedMemory({
        dataDir,
        watch: false,
        maintenance: { looseThreshold: Infinity, idleMs: 10 },
      })
    } finally {
      setDisk(nodeDisk)
    }
    try {
      await expect.poll(() => gitCli(dataDir, 'ls-tree', '-r', 'main').includes('c.md')).toBe(true)
    } finally {
      await memory.close()
    }
    fsck(dataDir)
  })

  it("finds a file's loose blob changed in place (same size) once trusted by its stamp", async () => {
    await seed()
    // Older than the stat cache's racy window: trusted by their stat from the next open on;
    // the open after that records their blobs' stamps.
    const past = new Date(Date.now() - 10_000)
    for (const file of Object.keys(FILES)) {
      utimesSync(path.join(dataDir, 'memories', file), past, past)
    }
    for (let i = 0; i < 2; i++) await close((await openRepo({ dataDir, now })).repo)
    const blob = gitCli(dataDir, 'rev-parse', 'main:a/deep/c.md').trim()
    expectStampOnRecord(StatCache.load(statCacheOf(gitdirOf(dataDir))), blob, 'a/deep/c.md')
    damageInPlace(looseFile(dataDir, blob), flipMiddle)
    const { repo, recovery } = await openRepo({ dataDir, now })
    expect(recovery?.kind).toBe('history-repaired')
    expect(recovery?.message).toContain('damaged stored copy of your files was repaired')
    await commitElsewhereAndFsck(repo)
  })
})
