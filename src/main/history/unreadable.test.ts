import { existsSync, lstatSync } from 'node:fs'
import { chmod, chown, mkdir, readdir, readFile, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { asTheAccount, errnoError, hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { RESTORE_INTENT_FILE } from './restore-intent'
import {
  CLAUDE,
  fsck,
  gitCli,
  headFiles,
  memoryTestBed,
  recordInterruptedRestoreAll,
} from './test-helpers'

// A file or folder in memories/ that Cairn may not read (another account's, mode 000) stopped
// Cairn from starting without naming it and, met while running, failed every later write
// until a restart (review hunt10 D3). The tests run as root, who reads a 000 file, so the
// disk seam denies opening those entries as the system does for any other account (the
// review's run as `nobody` showed the same errors), and answers `access` as that account
// (asTheAccount: the kernel, asked by root, says yes).

const bed = memoryTestBed({ memory: false })
let undoDisk: () => void = () => {}
const open = () => openVersionedMemory({ dataDir: bed.dataDir, watch: false })

afterEach(() => {
  undoDisk()
  undoDisk = () => {}
})

/** From now on, opening `private.md` or the folder `locked` anywhere is denied. */
function denyReading(): void {
  const hooked = hookDisk(
    nodeDisk,
    asTheAccount((call) => {
      if (call.name !== 'openSync') return undefined
      const target = String(call.args[0])
      if (target.endsWith('/private.md') || target.endsWith('/locked')) {
        return errnoError(call, 'EACCES')
      }
      return undefined
    }),
  )
  undoDisk = setDisk(hooked.disk)
}

async function put(relative: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(bed.dataDir, 'memories', relative)), { recursive: true })
  await writeFile(path.join(bed.dataDir, 'memories', relative), text)
}

/** Claude creates `/memories/<relative>`. */
async function create(memory: VersionedMemory, relative: string, text: string): Promise<void> {
  const result = await memory.execute(
    { command: 'create', path: `/memories/${relative}`, file_text: text },
    CLAUDE,
  )
  expect(result.isError).toBe(false)
}

async function strReplace(memory: VersionedMemory, from: string, to: string) {
  return memory.execute(
    { command: 'str_replace', path: '/memories/a.md', old_str: from, new_str: to },
    CLAUDE,
  )
}

function expectNamed(memory: VersionedMemory, virtual: string): void {
  const found = memory.notices().filter((notice) => notice.kind === 'unreadable')
  const one = found.filter((notice) => notice.path === virtual)
  expect(one).toHaveLength(1)
  expect(one[0]!.message).toContain(virtual)
  expect(one[0]!.message).toMatch(/cannot read it/)
  expect(one[0]!.message).not.toContain(bed.dataDir)
}

describe('memory files Cairn may not read (D3)', () => {
  it('opens, names each once, keeps their last version and lets every write go on', async () => {
    let memory = await open()
    await create(memory, 'a.md', 'a\n')
    await memory.close()
    await put('private.md', 'secret\n')
    await put('locked/inside.md', 'inside\n')
    await put('b.md', 'b\n')
    denyReading()
    memory = await open()
    try {
      expectNamed(memory, '/memories/private.md')
      expectNamed(memory, '/memories/locked')
      // The readable outside edit is saved; the unreadable entries are not.
      expect([...headFiles(bed.dataDir).keys()].sort()).toEqual(['a.md', 'b.md'])
      expect((await strReplace(memory, 'a', 'a1')).isError).toBe(false)
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      await memory.restoreAll(head)
      expect((await strReplace(memory, 'a1', 'a2')).isError).toBe(false)
      expect(headFiles(bed.dataDir).get('a.md')).toBe('a2\n')
      // Named once in the session, however many scans met them.
      expectNamed(memory, '/memories/private.md')
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })

  it('keeps a file that became unreadable while running at its last version', async () => {
    const memory = await open()
    try {
      await create(memory, 'a.md', 'a\n')
      await create(memory, 'private.md', 'v1\n')
      await put('private.md', 'v2, written by another account\n')
      denyReading()
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      // A full scan meets it (a restore-all catches up with the whole folder first).
      await memory.restoreAll(head)
      for (let i = 0; i < 3; i++) {
        const result = await strReplace(memory, i === 0 ? 'a' : `a${i - 1}`, `a${i}`)
        expect(result.isError).toBe(false)
      }
      await create(memory, 'new.md', 'n\n')
      expectNamed(memory, '/memories/private.md')
      expect(gitCli(bed.dataDir, 'show', 'main:private.md')).toBe('v1\n')
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })

  it('opens when the only change since the last session is a file it may not read', async () => {
    let memory = await open()
    await create(memory, 'a.md', 'a\n')
    await create(memory, 'private.md', 'v1\n')
    await memory.close()
    // Changed while Cairn was closed (so no stat vouches for it), then no longer readable.
    await put('private.md', 'v2, written by another account\n')
    denyReading()
    memory = await open()
    try {
      expectNamed(memory, '/memories/private.md')
      expect(headFiles(bed.dataDir).get('private.md')).toBe('v1\n')
      expect((await strReplace(memory, 'a', 'a1')).isError).toBe(false)
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })
})

// notices27: an `unreadable` notice was meant to go once a scan reads its file again, but only
// the file's deletion took it away: given back its permission (`chmod`), the file was versioned
// again while the notice still said Cairn could not read it, in every window, for the run.
describe('the notice of a file Cairn may not read, once it may again (notices27)', () => {
  /**
   * From now on, opening a file or folder whose permission bits let no one read it is denied,
   * as the system denies any account but root: a real `chmod` decides. (Files are opened
   * through their folder's handle, `/proc/self/fd/<fd>/<name>`: the bits are looked up there.)
   */
  function denyByMode(): void {
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        if (call.name !== 'openSync') return undefined
        try {
          return (nodeDisk.statSync(String(call.args[0])).mode & 0o444) === 0
            ? errnoError(call, 'EACCES')
            : undefined
        } catch {
          return undefined // The call itself fails as it should (ENOENT, ...).
        }
      }),
    )
    undoDisk = setDisk(hooked.disk)
  }
  const at = (relative: string) => path.join(bed.dataDir, 'memories', relative)

  it('goes, told to every window, when a full scan reads the file and the folder again', async () => {
    const memory = await open()
    const cleared: string[] = []
    memory.onNoticeCleared((id) => cleared.push(id))
    try {
      await create(memory, 'a.md', 'a\n')
      await create(memory, 'private.md', 'v1\n')
      await create(memory, 'locked/inside.md', 'inside\n')
      denyByMode()
      await put('private.md', 'v2\n')
      await chmod(at('private.md'), 0o000)
      await chmod(at('locked'), 0o000)
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      // A full scan meets them (a restore-all catches up with the whole folder first).
      await memory.restoreAll(head)
      expectNamed(memory, '/memories/private.md')
      expectNamed(memory, '/memories/locked')
      const ids = memory.notices().map((notice) => notice.id)
      // A change that does not read them leaves their notices as they are.
      expect((await strReplace(memory, 'a', 'a1')).isError).toBe(false)
      expect(memory.notices().map((notice) => notice.id)).toEqual(ids)
      expect(cleared).toEqual([])
      // Access given back: the next scan of them reads them, versions them, and they go.
      await chmod(at('private.md'), 0o600)
      await chmod(at('locked'), 0o700)
      await memory.restoreAll((await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid)
      expect(memory.notices()).toEqual([])
      expect(cleared.sort()).toEqual([...ids].sort())
      // Versioned before the restore (which then wrote back its version of it, v1).
      expect(gitCli(bed.dataDir, 'show', 'main~1:private.md')).toBe('v2\n')
      expect(gitCli(bed.dataDir, 'show', 'main:locked/inside.md')).toBe('inside\n')
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })

  it('goes when the watcher sees the permission given back', async () => {
    const memory = await openVersionedMemory({ dataDir: bed.dataDir, watch: { debounceMs: 20 } })
    try {
      await create(memory, 'private.md', 'v1\n')
      denyByMode()
      const raised = new Promise<string>((resolve) =>
        memory.onNotice((notice) => {
          if (notice.kind === 'unreadable') resolve(notice.id)
        }),
      )
      await chmod(at('private.md'), 0o000)
      const id = await raised
      expectNamed(memory, '/memories/private.md')
      const cleared = new Promise<string>((resolve) => memory.onNoticeCleared(resolve))
      await chmod(at('private.md'), 0o644)
      expect(await cleared).toBe(id)
      expect(memory.notices()).toEqual([])
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })

  // rnotices27: a scan that met the file without opening it (too large to version: only its
  // size is looked at) counted as one that read it, and the notice went while the file was as
  // unreadable as before, told to every window as mended.
  it('stays when a scan meets the file but does not read it (grown too large)', async () => {
    const memory = await openVersionedMemory({ dataDir: bed.dataDir, watch: { debounceMs: 20 } })
    const cleared: string[] = []
    memory.onNoticeCleared((id) => cleared.push(id))
    try {
      await create(memory, 'private.md', 'v1\n')
      denyByMode()
      const raised = (kind: string) =>
        new Promise<string>((resolve) =>
          memory.onNotice((notice) => {
            if (notice.kind === kind) resolve(notice.id)
          }),
        )
      const unreadable = raised('unreadable')
      await chmod(at('private.md'), 0o000)
      const id = await unreadable
      // Its other account writes it past the size History versions (root may, as it may).
      const tooLarge = raised('too-large')
      await truncate(at('private.md'), 33 * 1024 * 1024)
      await tooLarge
      expectNamed(memory, '/memories/private.md')
      expect(memory.notices().find((notice) => notice.kind === 'unreadable')?.id).toBe(id)
      expect(cleared).toEqual([])
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(bed.dataDir)
  })
})

// What a file Cairn may not read holds now was never read, so never versioned: Claude's
// `create` over it, `delete` of it or of its folder would lose it for good (review10 F1).
// As root reads everything, the process is made to look like another account (its uid) and
// the file's permission bits deny that account, while the disk seam denies the reads.
describe('a command on a file Cairn may not read (F1)', () => {
  async function unreadableAfterClaude(relative: string): Promise<VersionedMemory> {
    const memory = await open()
    await create(memory, relative, 'v1\n')
    await put(relative, 'v2, saved by the person\n')
    await chmod(path.join(bed.dataDir, 'memories', relative), 0o000)
    denyReading()
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
    return memory
  }
  afterEach(() => {
    vi.restoreAllMocks()
  })

  for (const command of ['delete', 'create'] as const) {
    it(`keeps it aside on ${command}`, async () => {
      const memory = await unreadableAfterClaude('private.md')
      try {
        const input =
          command === 'delete'
            ? { command, path: '/memories/private.md' }
            : { command, path: '/memories/private.md', file_text: 'from Claude\n' }
        const result = await memory.execute(input, CLAUDE)
        expect(result.isError).toBe(false)
        expect(String(result.content)).toContain('/memories/private (unreadable).md')
      } finally {
        await memory.close()
      }
      vi.restoreAllMocks()
      undoDisk()
      const kept = path.join(bed.dataDir, 'memories', 'private (unreadable).md')
      await chmod(kept, 0o644)
      expect(await readFile(kept, 'utf8')).toBe('v2, saved by the person\n')
    })
  }

  it('numbers the kept name when a create goes over the kept file, never labels it twice', async () => {
    const memory = await unreadableAfterClaude('private.md')
    try {
      await memory.execute({ command: 'delete', path: '/memories/private.md' }, CLAUDE)
      const result = await memory.execute(
        { command: 'create', path: '/memories/private (unreadable).md', file_text: 'mine\n' },
        CLAUDE,
      )
      expect(result.isError).toBe(false)
      // It was kept as "private (unreadable) (unreadable).md".
      expect(String(result.content)).toContain(
        'its previous content was kept as /memories/private (unreadable 2).md;',
      )
    } finally {
      await memory.close()
    }
    vi.restoreAllMocks()
    undoDisk()
    const kept = path.join(bed.dataDir, 'memories', 'private (unreadable 2).md')
    await chmod(kept, 0o644)
    expect(await readFile(kept, 'utf8')).toBe('v2, saved by the person\n')
    expect(
      await readFile(path.join(bed.dataDir, 'memories', 'private (unreadable).md'), 'utf8'),
    ).toBe('mine\n')
  })

  it('restores a version over it, keeping it aside, instead of saying it already matches', async () => {
    const memory = await unreadableAfterClaude('private.md')
    let message: string
    try {
      const v1 = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      const result = await memory.restoreFile('/memories/private.md', v1)
      message = result.message
    } finally {
      await memory.close()
    }
    // Review hunt12-story D8: history still names v1, so the restore said "already matches"
    // and did nothing while the folder held the other account's content.
    expect(message).not.toContain('already matches')
    expect(message).toContain('/memories/private (unreadable).md')
    expect(message).not.toContain(bed.dataDir)
    vi.restoreAllMocks()
    undoDisk()
    const kept = path.join(bed.dataDir, 'memories', 'private (unreadable).md')
    await chmod(kept, 0o644)
    expect(await readFile(kept, 'utf8')).toBe('v2, saved by the person\n')
    expect(await readFile(path.join(bed.dataDir, 'memories', 'private.md'), 'utf8')).toBe('v1\n')
    expect(gitCli(bed.dataDir, 'show', 'main:private.md')).toBe('v1\n')
  })

  it('keeps it when its folder is deleted', async () => {
    const memory = await unreadableAfterClaude('d/private.md')
    try {
      // Beside a file history holds (a folder of kept files only is not deleted at all).
      vi.restoreAllMocks()
      await create(memory, 'd/other.md', 'o\n')
      // Cairn's own files belong to the account it runs as (here, the one it looks like).
      await chown(path.join(bed.dataDir, 'memories', 'd', 'other.md'), 4242, 4242)
      // Its folder too: one Cairn's own account may not enter is not deleted at all.
      await chown(path.join(bed.dataDir, 'memories', 'd'), 4242, 4242)
      vi.spyOn(process, 'getuid').mockReturnValue(4242)
      const result = await memory.execute({ command: 'delete', path: '/memories/d' }, CLAUDE)
      expect(result.isError).toBe(false)
      expect(String(result.content)).toContain('kept in /memories/d (not in history)')
      expect(String(result.content)).toContain('(not in history)')
    } finally {
      await memory.close()
    }
    vi.restoreAllMocks()
    undoDisk()
    const kept = path.join(bed.dataDir, 'memories', 'd (not in history)', 'private.md')
    await chmod(kept, 0o644)
    expect(await readFile(kept, 'utf8')).toBe('v2, saved by the person\n')
    expect(await readdir(path.join(bed.dataDir, 'memories'))).toEqual(['d (not in history)'])
  })
})

// Review hunt12-story D7: a restore-all killed after its intent was written, then one file it
// touches turned unreadable before the restart: the open read that file to check it, the
// refusal failed the open and kept the intent, and so every later start failed, naming nothing.
describe('an interrupted restore over a file Cairn may not read', () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  /**
   * `relative` written twice (v1, v2) and a restore-all to v1 recorded as it is before it
   * touches any file (a kill came right after); returns the two commits.
   */
  async function interruptedRestoreOf(relative: string): Promise<{ first: string; head: string }> {
    const memory = await open()
    await create(memory, relative, 'v1\n')
    const first = memory.head()!
    await memory.execute(
      { command: 'str_replace', path: `/memories/${relative}`, old_str: 'v1', new_str: 'v2' },
      CLAUDE,
    )
    const head = memory.head()!
    await memory.close()
    await recordInterruptedRestoreAll(bed.dataDir, head, first, [relative])
    return { first, head }
  }

  /**
   * As the system treats an account other than root (the one Cairn is made to look like): a
   * file or folder with no read bit is refused, whatever its name.
   */
  function denyByMode(): void {
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        if (call.name !== 'openSync') return undefined
        const target = String(call.args[0])
        const mode = lstatSync(target, { throwIfNoEntry: false })?.mode ?? 0o777
        return mode & 0o444 ? undefined : errnoError(call, 'EACCES')
      }),
    )
    undoDisk = setDisk(hooked.disk)
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
  }

  it('is finished at the next open, keeping that file aside', async () => {
    const { first } = await interruptedRestoreOf('private.md')
    await chmod(path.join(bed.dataDir, 'memories', 'private.md'), 0o000)
    // The file the restore writes in its place is Cairn's own, readable.
    denyByMode()
    const again = await open()
    await again.close()
    vi.restoreAllMocks()
    undoDisk()
    expect(existsSync(path.join(bed.dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%s', 'main').trim()).toBe(
      `restore all memories to ${first.slice(0, 7)}`,
    )
    expect(await readFile(path.join(bed.dataDir, 'memories', 'private.md'), 'utf8')).toBe('v1\n')
    const kept = path.join(bed.dataDir, 'memories', 'private (unreadable).md')
    await chmod(kept, 0o644)
    expect(await readFile(kept, 'utf8')).toBe('v2\n')
    expect([...headFiles(bed.dataDir).keys()]).toEqual(['private.md'])
    fsck(bed.dataDir)
  })

  it('is given up, not a reason to stay closed, when its file sits in a folder Cairn may not enter', async () => {
    const { head } = await interruptedRestoreOf('d/a.md')
    await chmod(path.join(bed.dataDir, 'memories', 'd'), 0o000)
    denyByMode()
    const again = await open()
    try {
      expectNamed(again, '/memories/d')
    } finally {
      await again.close()
    }
    vi.restoreAllMocks()
    undoDisk()
    await chmod(path.join(bed.dataDir, 'memories', 'd'), 0o755)
    expect(existsSync(path.join(bed.dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
    // Nothing was restored: the folder and its history are as they were.
    expect(gitCli(bed.dataDir, 'rev-parse', 'main').trim()).toBe(head)
    expect(await readFile(path.join(bed.dataDir, 'memories', 'd', 'a.md'), 'utf8')).toBe('v2\n')
    fsck(bed.dataDir)
  })
})

// A folder Cairn may list but not enter (mode 0444, after `chmod -R 444 notes/`): opening and
// listing it work, and then every `lstat` inside it fails, so Cairn did not open and every
// write failed without naming it (review12-story R1). Root may enter anything, so the process
// looks like another account (its uid) and the disk seam denies the `lstat`s the system would.
describe('a folder Cairn may list but not enter', () => {
  async function listOnly(): Promise<void> {
    await chmod(path.join(bed.dataDir, 'memories', 'notes'), 0o444)
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        if (!['lstatSync', 'lstatIfThere', 'statSync'].includes(call.name)) return undefined
        return String(call.args[0]).endsWith('/inside.md') ? errnoError(call, 'EACCES') : undefined
      }),
    )
    undoDisk = setDisk(hooked.disk)
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
  }
  afterEach(async () => {
    vi.restoreAllMocks()
    await chmod(path.join(bed.dataDir, 'memories', 'notes'), 0o755).catch(() => {})
  })

  it('does not stop Cairn from opening: named, its last version kept', async () => {
    let memory = await open()
    await create(memory, 'a.md', 'a\n')
    await create(memory, 'notes/inside.md', 'v1\n')
    await memory.close()
    await put('notes/inside.md', 'v2, changed while Cairn was closed\n')
    await put('b.md', 'b\n')
    await listOnly()
    memory = await open()
    try {
      expectNamed(memory, '/memories/notes')
      expect(headFiles(bed.dataDir).get('notes/inside.md')).toBe('v1\n')
      expect(headFiles(bed.dataDir).get('b.md')).toBe('b\n')
      expect((await strReplace(memory, 'a', 'a1')).isError).toBe(false)
    } finally {
      await memory.close()
    }
    vi.restoreAllMocks()
    undoDisk()
    fsck(bed.dataDir)
  })

  it('opens by the quick path too when nothing changed, and lets every write go on while it lasts', async () => {
    let memory = await open()
    await create(memory, 'a.md', 'a\n')
    await create(memory, 'notes/inside.md', 'v1\n')
    await memory.close()
    await listOnly()
    memory = await open()
    try {
      expect(headFiles(bed.dataDir).get('notes/inside.md')).toBe('v1\n')
      for (let i = 0; i < 3; i++) {
        const result = await strReplace(memory, i === 0 ? 'a' : `a${i - 1}`, `a${i}`)
        expect(result.isError).toBe(false)
      }
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      await memory.restoreAll(head)
      expectNamed(memory, '/memories/notes')
      expect(headFiles(bed.dataDir).get('a.md')).toBe('a2\n')
      expect(headFiles(bed.dataDir).get('notes/inside.md')).toBe('v1\n')
    } finally {
      await memory.close()
    }
    vi.restoreAllMocks()
    undoDisk()
    fsck(bed.dataDir)
  })
})

// issue #15 (loose ends): where the permission bits refuse, the kernel is asked (`access`); a
// disk that failed that question (EIO) had the scan take a readable folder for one Cairn may
// not read: its last version kept, the person's edit in it left out of history and the folder
// named unreadable. Only a refusal twice (EACCES, EPERM) does that now.
describe('a disk that fails when asked whether Cairn may enter a folder', () => {
  /** `shared/notes.md` committed, then edited while Cairn was closed; `shared` at 0700. */
  async function editedInShared(): Promise<void> {
    const memory = await open()
    await create(memory, 'a.md', 'a\n')
    await create(memory, 'shared/notes.md', 'v1\n')
    await memory.close()
    await put('shared/notes.md', 'v2, edited while Cairn was closed\n')
    await chmod(path.join(bed.dataDir, 'memories', 'shared'), 0o700)
  }

  /** From now on `access` of `shared` fails with `codes[i]` at its i-th call, then passes. */
  function accessOfShared(...codes: ReadonlyArray<string>): void {
    let calls = 0
    const hooked = hookDisk(nodeDisk, (call) => {
      if (call.name !== 'accessSync' || !String(call.args[0]).endsWith('/shared')) return
      const code = codes[calls++]
      return code === undefined ? undefined : errnoError(call, code)
    })
    undoDisk = setDisk(hooked.disk)
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
  }
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('fails open in plain words on EIO, then saves the edit once the disk answers', async () => {
    await editedInShared()
    accessOfShared('EIO')
    const failed = await open().catch((error: unknown) => error)
    expect(failed).toMatchObject({
      code: 'io-error',
      message: expect.stringMatching(/because the disk reported a read or write error\./),
    })
    expect((failed as Error).message).not.toContain(bed.dataDir)
    expect(headFiles(bed.dataDir).get('shared/notes.md')).toBe('v1\n')
    const memory = await open()
    try {
      expect(memory.notices().filter((notice) => notice.kind === 'unreadable')).toEqual([])
      expect(headFiles(bed.dataDir).get('shared/notes.md')).toBe(
        'v2, edited while Cairn was closed\n',
      )
    } finally {
      await memory.close()
    }
    fsck(bed.dataDir)
  })

  it.each(['EACCES', 'EPERM'])('saves the edit after one %s, naming nothing', async (code) => {
    await editedInShared()
    accessOfShared(code)
    const memory = await open()
    try {
      expect(memory.notices().filter((notice) => notice.kind === 'unreadable')).toEqual([])
      expect(headFiles(bed.dataDir).get('shared/notes.md')).toBe(
        'v2, edited while Cairn was closed\n',
      )
    } finally {
      await memory.close()
    }
  })
})
