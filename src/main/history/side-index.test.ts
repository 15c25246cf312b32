import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import {
  chmodSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { LogPage } from '../../shared/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { closesFailing, errnoError, hookDisk, openedOn, type DiskCall } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { indexDirOf, IndexFile, writeIndex, type IndexEntry } from './index-file'
import { gitCli, tempDataDir } from './test-helpers'
import { openVersionedMemory } from './versioned-memory'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const claude = { actor: 'claude', conversationId: 'c', toolUseId: 't' } as const

describe('the side index checked in the background', () => {
  it('finds a damaged entry, rebuilds the index from the commits and swaps it in', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (let i = 0; i < 12; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/n-${i % 4}.md`, file_text: `v${i}` },
        claude,
      )
    }
    const expected = await memory.log({ offset: 0, limit: 50 })
    await memory.close()

    // Flip a byte in the details of an old entry: the structure still holds, the checksum not.
    const details = path.join(indexDirOf(path.join(dataDir, 'history.git')), 'details')
    const bytes = await readFile(details)
    bytes[20] = (bytes[20] as number) ^ 0x01
    await writeFile(details, bytes)

    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    // Reading the damaged entry fails clearly (and starts the rebuild)...
    await expect(memory.log({ offset: 0, limit: 50 })).rejects.toMatchObject({
      code: 'index-rebuilding',
    })
    // ...which a pass of maintenance finishes; then every entry reads as before.
    await memory.maintain()
    expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
    // Commits go on into the swapped-in index.
    await memory.execute({ command: 'create', path: '/memories/after.md', file_text: 'x' }, claude)
    expect((await memory.log({ offset: 0, limit: 1 })).entries[0]?.subject).toBe(
      'create /memories/after.md',
    )
    await memory.close()
  })

  it('reads records older than open read when a page reaches them; one damaged there is rebuilt', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    await memory.execute({ command: 'create', path: '/memories/n.md', file_text: 'v0' }, claude)
    await memory.close()
    // 1,200 commits on top, made by git itself (fast): open reads the newest 1,024 records.
    const gitdir = path.join(dataDir, 'history.git')
    const parent = gitCli(dataDir, 'rev-parse', 'main').trim()
    let stream = ''
    for (let i = 1; i <= 1200; i++) {
      const text = `v${i}`
      const message = `str_replace /memories/n.md`
      stream +=
        `commit refs/heads/main\ncommitter A <a@example.invalid> ${1_700_000_000 + i} +0000\n` +
        `data ${message.length}\n${message}\n${i === 1 ? `from ${parent}\n` : ''}` +
        `M 100644 inline n.md\ndata ${text.length}\n${text}\n\n`
    }
    execFileSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], {
      input: stream,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
    })
    await writeFile(path.join(dataDir, 'memories', 'n.md'), 'v1200')
    // The git CLI's history, newest first: the second opinion.
    const gitOids = gitCli(dataDir, 'rev-list', 'main').trim().split('\n')
    expect(gitOids).toHaveLength(1201)

    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    const oids = async (offset: number, limit: number) =>
      (await memory.log({ offset, limit })).entries.map((entry) => entry.oid)
    expect(await oids(0, 50)).toEqual(gitOids.slice(0, 50))
    await memory.close()
    // A fresh open, then a page far below the records open read.
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    const deep = await memory.log({ offset: 1150, limit: 50 })
    expect(deep.total).toBe(1201)
    expect(deep.entries.map((entry) => entry.oid)).toEqual(gitOids.slice(1150, 1200))
    expect(deep.entries.map((entry) => entry.time)).toEqual(
      gitCli(dataDir, 'log', '--format=%ct', '--skip=1150', '-n', '50', 'main')
        .trim()
        .split('\n')
        .map((seconds) => Number(seconds) * 1000),
    )
    const expected = await memory.log({ offset: 0, limit: 1201 })
    await memory.close()

    // An old record (entry 5, far below the newest 1,024) damaged on disk: open does not read
    // it, the first page does not either; the page that reaches it fails clearly and starts the
    // rebuild, as a damaged entry read at open did.
    const commits = path.join(indexDirOf(gitdir), 'commits')
    const bytes = await readFile(commits)
    bytes[64 * 5 + 24] ^= 0x01
    await writeFile(commits, bytes)
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    expect(await oids(0, 50)).toEqual(gitOids.slice(0, 50))
    await expect(memory.log({ offset: 1150, limit: 52 })).rejects.toMatchObject({
      code: 'index-rebuilding',
    })
    await memory.maintain()
    expect(await memory.log({ offset: 0, limit: 1201 })).toEqual(expected)
    await memory.close()
  })
})

describe('the side index whose closes fail', () => {
  it('is rebuilt at open and swapped in all the same, and read and appended to after', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (let i = 0; i < 5; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/n-${i % 2}.md`, file_text: `v${i}` },
        claude,
      )
    }
    const expected = await memory.log({ offset: 0, limit: 50 })
    await memory.close()
    const dir = indexDirOf(path.join(dataDir, 'history.git'))
    rmSync(dir, { recursive: true })

    // Every close of an index part fails (the descriptor released all the same): the rebuilt
    // index's, fsynced before it is closed and swapped in, and the open index's at close.
    const failing = closesFailing((file) => file.startsWith(dir))
    const restore = setDisk(failing.disk)
    try {
      memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
      expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
      await memory.execute({ command: 'create', path: '/memories/x.md', file_text: 'x' }, claude)
      await memory.close()
    } finally {
      restore()
    }
    expect(failing.failed()).toBeGreaterThanOrEqual(8)
    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    const log = await memory.log({ offset: 0, limit: 50 })
    expect(log.entries.map((entry) => entry.oid)).toEqual(
      gitCli(dataDir, 'log', '--format=%H', 'main').trim().split('\n'),
    )
    expect(memory.recovery).toBeNull()
    await memory.close()
  })
})

// issue #15 (loose ends): an I/O error while open read the side index was taken for damage,
// and the index rebuilt (written again over a sound one) instead of the open failing clearly.
describe('the side index the disk fails to read at open', () => {
  const gitdir = () => path.join(dataDir, 'history.git')

  /** Three commits, closed; what `log` answers for them. */
  async function seed(): Promise<LogPage> {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (let i = 0; i < 3; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/n-${i}.md`, file_text: `v${i}` },
        claude,
      )
    }
    const expected = await memory.log({ offset: 0, limit: 50 })
    await memory.close()
    return expected
  }

  /** Every part of the index: its inode (a rebuild swaps in new files) and its bytes. */
  function indexOnDisk(): Map<string, { readonly ino: number; readonly bytes: string }> {
    const dir = indexDirOf(gitdir())
    return new Map(
      readdirSync(dir)
        .sort()
        .map((name) => [
          name,
          {
            ino: statSync(path.join(dir, name)).ino,
            bytes: readFileSync(path.join(dir, name)).toString('hex'),
          },
        ]),
    )
  }

  /**
   * The disk seam with the first `call` on an index part failing with `code`: an `openSync` of
   * one, or a `readSync` or `fstatSync` of a descriptor open on one.
   */
  function failFirst(call: 'openSync' | 'readSync' | 'fstatSync', code: string) {
    const dir = indexDirOf(gitdir())
    const part = (file: unknown) =>
      typeof file === 'string' && file.startsWith(`${dir}${path.sep}`) && !file.endsWith('format')
    const { disk: recording, opened: onIndex } = openedOn(part)
    let failed = 0
    const hooked = hookDisk(recording, (made) => {
      if (failed > 0 || made.name !== call) return undefined
      const [first] = made.args
      if (call === 'openSync' ? !part(first) : !onIndex.has(first as number)) return undefined
      failed++
      return errnoError(made, code)
    })
    return { undo: setDisk(hooked.disk), failed: () => failed }
  }

  /** The disk seam with every call `when` picks refused with `code`, and how many were. */
  function refusing(code: string, when: (call: DiskCall) => boolean) {
    let refused = 0
    const hooked = hookDisk(nodeDisk, (call) => {
      if (!when(call)) return undefined
      refused++
      return errnoError(call, code)
    })
    return { undo: setDisk(hooked.disk), refused: () => refused }
  }

  /** The open's refusal with the disk as a fault left it (undone once the open is over). */
  async function refusedOpen(fault: { readonly undo: () => void }): Promise<CairnError> {
    let opened: unknown
    try {
      opened = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    } catch (error) {
      opened = error
    } finally {
      fault.undo()
    }
    if (!(opened instanceof CairnError)) {
      await (opened as { close?: () => Promise<void> }).close?.()
      throw new Error(`open did not fail: ${String(opened)}`)
    }
    return opened
  }

  /** Opened again, the memory reads `expected` from the same index, nothing rebuilt. */
  async function readsAsBefore(
    expected: LogPage,
    before: ReturnType<typeof indexOnDisk>,
  ): Promise<void> {
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    try {
      expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
      expect(memory.recovery).toBeNull()
    } finally {
      await memory.close()
    }
    expect(indexOnDisk()).toEqual(before)
  }

  /** The tree of the newest commit's parent cut short on disk: damaged. */
  function damageParentTree(): void {
    const tree = gitCli(dataDir, 'rev-parse', 'main~1^{tree}').trim()
    const file = path.join(gitdir(), 'objects', tree.slice(0, 2), tree.slice(2))
    chmodSync(file, 0o644)
    writeFileSync(file, readFileSync(file).subarray(0, 6))
  }

  it.each([
    ['readSync', 'EIO', 'the disk reported a read or write error'],
    ['fstatSync', 'EIO', 'the disk reported a read or write error'],
    ['openSync', 'EIO', 'the disk reported a read or write error'],
    ['readSync', 'EMFILE', 'too many files are open'],
    ['readSync', 'EACCES', 'permission was denied by the operating system'],
    // A read-only file system is no permission a person can give a file: not named as one. The
    // index is in the data folder, not the memory folder (notices27).
    ['openSync', 'EROFS', "Cairn's data folder is read-only"],
  ] as const)(
    'fails open in plain words on %s %s, the index neither rebuilt nor changed',
    async (call, code, reason) => {
      const expected = await seed()
      const before = indexOnDisk()
      const fault = failFirst(call, code)
      const opened = await refusedOpen(fault)
      expect(fault.failed()).toBe(1)
      expect(opened.message).toBe(
        `Cairn could not open your memory history because ${reason}. Nothing was changed; fix the problem and open Cairn again.`,
      )
      expect(opened.message).not.toContain(dataDir)
      expect(indexOnDisk()).toEqual(before)
      // The disk well again, the same index is read as it was: nothing was rebuilt.
      await readsAsBefore(expected, before)
    },
  )

  // A part made read-only (`chmod 444`, or another account's file): the open failed saying
  // only "permission was denied", naming neither the file nor what to do (issue #15, stop 26).
  it.each(['commits', 'details'] as const)(
    'names the part %s it may not write, inside the data folder, and what to do; nothing rebuilt',
    async (part) => {
      const expected = await seed()
      const file = path.join(indexDirOf(gitdir()), part)
      chmodSync(file, 0o444)
      const before = indexOnDisk()
      // Root opens any file for writing: the seam refuses as the system refuses any other
      // account, by the file's real mode.
      const fault = refusing('EACCES', (call) => {
        if (call.name !== 'openSync') return false
        const flags = Number(call.args[1] ?? 0)
        const writes = (flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0
        const mode = lstatSync(String(call.args[0]), { throwIfNoEntry: false })?.mode
        return writes && mode !== undefined && (mode & 0o222) === 0
      })
      const opened = await refusedOpen(fault)
      expect(fault.refused()).toBe(1)
      expect(opened.code).toBe('access-denied')
      expect(opened.message).toBe(
        `Cairn could not open your memory history because the system does not let it write to history.git/cairn-index/${part} in Cairn's data folder (permission was denied; the file may belong to another account or be read-only). Nothing was changed; give the account Cairn runs as permission to read and write that file, then open Cairn again.`,
      )
      expect(opened.message).not.toContain(dataDir)
      expect(indexOnDisk()).toEqual(before)
      expect(statSync(file).mode & 0o777).toBe(0o444)
      // Given the permission back, the same index is read as it was: nothing was rebuilt.
      chmodSync(file, 0o644)
      await readsAsBefore(expected, before)
    },
  )

  // The index's folder another account's (Cairn run once with sudo: 0700, root's): reading
  // `format`, the first step, was refused and the open said only "permission was denied"
  // (review of stop 26, which named the part only when opening it for writing was refused).
  it.each(['EACCES', 'EPERM'] as const)(
    'names the format it may not read (%s), inside the data folder; nothing rebuilt',
    async (code) => {
      await seed()
      const format = path.join(indexDirOf(gitdir()), 'format')
      const before = indexOnDisk()
      const fault = refusing(
        code,
        // Read by one open (readPlainFile): refused where it is opened.
        (call) => call.name === 'openSync' && String(call.args[0]) === format,
      )
      const opened = await refusedOpen(fault)
      expect(fault.refused()).toBe(1)
      expect(opened.code).toBe('access-denied')
      expect(opened.message).toBe(
        "Cairn could not open your memory history because the system does not let it read history.git/cairn-index/format in Cairn's data folder (permission was denied; the file or the folder it is in may belong to another account). Nothing was changed; give the account Cairn runs as permission to read and write that file and its folder, then open Cairn again.",
      )
      expect(opened.message).not.toContain(dataDir)
      expect(indexOnDisk()).toEqual(before)
    },
  )

  // The newest entry is checked against its commit at open; its parent's tree damaged, the
  // commit could not say which files it changed, and the whole index was rebuilt (once, but
  // at 100,000 commits that is a long open), its entry then without its files (stop 26).
  it("keeps the index when the tree of the newest commit's parent is damaged", async () => {
    const expected = await seed()
    damageParentTree()
    const before = indexOnDisk()
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    try {
      expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
      expect(indexOnDisk()).toEqual(before)
    } finally {
      await memory.close()
    }
    expect(indexOnDisk()).toEqual(before)
  })

  // Damaged trees leave the newest commit unable to say which files it changed, so stop 26
  // compared the rest of its entry only; but the paths it names are in the commit's message,
  // and the files it changed lie within them: an entry wrong in either is still the index's
  // error, rebuilt from the commits as it is when the trees are intact (review of stop 26).
  describe.each([
    ['its paths', (entry: IndexEntry) => ({ ...entry, paths: ['/memories/elsewhere.md'] })],
    [
      'its files',
      (entry: IndexEntry) => ({ ...entry, files: ['/memories/elsewhere.md', ...entry.files] }),
    ],
  ] as const)('an index whose newest entry is wrong in %s', (_what, wrong) => {
    /** Writes the seeded index again with its newest entry made wrong; that entry as it was. */
    function makeNewestWrong(): IndexEntry {
      const dir = indexDirOf(gitdir())
      const index = IndexFile.open(dir)
      const entries = index.all()
      index.close()
      const right = entries[entries.length - 1]!
      writeIndex(dir, [...entries.slice(0, -1), wrong(right)])
      return right
    }

    it.each(['intact', 'damaged'] as const)(
      "is rebuilt from the commits with the parent's trees %s",
      async (trees) => {
        await seed()
        const right = makeNewestWrong()
        if (trees === 'damaged') damageParentTree()
        const before = indexOnDisk()
        const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
        try {
          const [newest] = (await memory.log({ offset: 0, limit: 1 })).entries
          expect(newest?.oid).toBe(right.oid)
          expect(newest?.paths).toEqual(['/memories/n-2.md'])
        } finally {
          await memory.close()
        }
        expect(indexOnDisk()).not.toEqual(before)
        const index = IndexFile.open(indexDirOf(gitdir()))
        try {
          const rebuilt = index.at(index.size - 1)
          expect(rebuilt.paths).toEqual(['/memories/n-2.md'])
          // The commit says which files it changed only when it can read its trees.
          expect(rebuilt.files).toEqual(trees === 'intact' ? ['/memories/n-2.md'] : [])
        } finally {
          index.close()
        }
      },
    )
  })

  it('still mends an index whose content is garbled, from the commits', async () => {
    const expected = await seed()
    const names = path.join(indexDirOf(gitdir()), 'names')
    const garbled = Buffer.alloc(statSync(names).size, 0xff)
    writeFileSync(names, garbled)
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    try {
      expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
    } finally {
      await memory.close()
    }
    expect(readFileSync(names).equals(garbled)).toBe(false)
  })

  // Cairn never puts a folder or a link where a part of the index belongs: what is there is
  // damage, not a failing disk, and the index is rebuilt from the commits, never an open that
  // fails at every start (its EISDIR or ELOOP once passed through as if the disk failed).
  it.each([
    ['a folder', (file: string) => mkdirSync(file)],
    ['a link to itself', (file: string) => symlinkSync(path.basename(file), file)],
  ] as const)('rebuilds an index with %s in place of one of its parts', async (_label, put) => {
    const expected = await seed()
    const part = path.join(indexDirOf(gitdir()), 'commits')
    rmSync(part)
    put(part)
    const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    try {
      expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
    } finally {
      await memory.close()
    }
    expect(lstatSync(part).isFile()).toBe(true)
  })
})
