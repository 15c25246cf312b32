import { chmod, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { MemoryEntry, MemorySearchHit, MemoryStats } from '../../shared/types'
import { createCore, type Core } from '../core'
import { openVersionedMemory } from '../history'
import { CLAUDE, memoryTestBed } from '../history/test-helpers'
import { nodeDisk, setDisk } from '../lib/disk'
import { asTheAccount, errnoError, hookDisk } from '../lib/disk-hooks'

// One folder or file in memories/ that Cairn may not read (another account's, mode 000)
// emptied the Memory tab: its tree, search and size meter failed whole, and Claude's `view` of
// the folder failed too (review hunt12-story D3). As in history's unreadable tests, the run is
// as root, who reads everything: the permission bits deny the account Cairn looks like (uid
// 4242), and the disk seam denies opening those entries as the system does.

const bed = memoryTestBed({ memory: false })
let undoDisk: () => void = () => {}
let core: Core | null = null

afterEach(async () => {
  await core?.close()
  core = null
  undoDisk()
  undoDisk = () => {}
  vi.restoreAllMocks()
})

async function put(relative: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(bed.dataDir, 'memories', relative)), { recursive: true })
  await writeFile(path.join(bed.dataDir, 'memories', relative), text)
}

/** `backup-tool/` and `private.md` at mode 000, beside readable notes; Cairn is not root. */
async function lockSome(): Promise<void> {
  await put('notes.md', 'notes: tea\n')
  await put('topics/cats.md', 'notes on cats\n')
  await put('backup-tool/state.md', 'notes of a backup tool\n')
  await put('private.md', 'private notes\n')
  await chmod(path.join(bed.dataDir, 'memories', 'backup-tool'), 0o000)
  await chmod(path.join(bed.dataDir, 'memories', 'private.md'), 0o000)
  const hooked = hookDisk(
    nodeDisk,
    asTheAccount((call) => {
      if (call.name !== 'openSync' && call.name !== 'readdirSync') return undefined
      const target = String(call.args[0])
      if (target.endsWith('/private.md') || target.endsWith('/backup-tool')) {
        return errnoError(call, 'EACCES')
      }
      return undefined
    }),
  )
  undoDisk = setDisk(hooked.disk)
  vi.spyOn(process, 'getuid').mockReturnValue(4242)
}

describe('memory Cairn may not read, in the Memory tab and in Claude’s view', () => {
  it('names it in the tree and keeps the tree, search and size meter working', async () => {
    await lockSome()
    core = await createCore({ dataDir: bed.dataDir })
    const call = async <T>(channel: string, payload: unknown): Promise<T> => {
      const result = await core!.dispatch(channel, payload)
      if (!result.ok) throw new Error(`${channel}: ${result.error.message}`)
      return result.value as T
    }
    const tree = await call<ReadonlyArray<MemoryEntry>>('memory:tree', undefined)
    expect(tree.map((e) => [e.path, e.unreadable ?? false])).toEqual([
      ['/memories/backup-tool', true],
      ['/memories/notes.md', false],
      ['/memories/private.md', true],
      ['/memories/topics', false],
      ['/memories/topics/cats.md', false],
    ])
    expect(JSON.stringify(tree)).not.toContain(bed.dataDir)

    const hits = await call<ReadonlyArray<MemorySearchHit>>('memory:search', { query: 'notes' })
    expect(hits.map((h) => h.path)).toEqual(['/memories/notes.md', '/memories/topics/cats.md'])

    const stats = await call<MemoryStats>('hygiene:stats', undefined)
    expect(stats.files.map((f) => f.path)).toEqual([
      '/memories/notes.md',
      '/memories/private.md',
      '/memories/topics/cats.md',
    ])
    expect(stats.files.find((f) => f.path === '/memories/notes.md')?.tokens).toBeGreaterThan(0)

    // Opening the file itself still says why, without a host path.
    const read = await core.dispatch('memory:read', { path: '/memories/private.md' })
    expect(read).toMatchObject({ ok: false, error: { code: 'access-denied' } })
    expect(JSON.stringify(read)).not.toContain(bed.dataDir)
  })

  it('lists the rest of the folder for Claude, naming what it cannot read', async () => {
    await lockSome()
    const memory = await openVersionedMemory({ dataDir: bed.dataDir, watch: false })
    try {
      const result = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
      expect(result.isError).toBe(false)
      const lines = String(result.content).split('\n').slice(1)
      expect(lines.map((line) => line.split('\t')[1])).toEqual([
        '/memories',
        '/memories/backup-tool/ (cannot be read: permission denied)',
        '/memories/notes.md',
        '/memories/private.md (cannot be read: permission denied)',
        '/memories/topics/',
        '/memories/topics/cats.md',
      ])
      expect(String(result.content)).not.toContain(bed.dataDir)
    } finally {
      await memory.close()
    }
  })
})

// issue #15 (loose ends): where the permission bits refuse, the kernel is asked (`access`), and
// a disk that failed that question (EIO, EMFILE) named a readable file unreadable. Only a
// refusal twice (EACCES, EPERM) does now; any other failure is the read error it is.
describe('a disk that fails when asked whether Cairn may read a file', () => {
  /** `notes.md` at 0600, refused by its bits to the account Cairn looks like (uid 4242). */
  async function askedOfTheKernel(): Promise<void> {
    await put('notes.md', 'notes: tea\n')
    await put('topics/cats.md', 'notes on cats\n')
    await chmod(path.join(bed.dataDir, 'memories', 'notes.md'), 0o600)
  }

  /** From now on `access` of notes.md fails with `codes[i]` at its i-th call, then passes. */
  function accessOfNotes(...codes: ReadonlyArray<string>): void {
    let calls = 0
    const hooked = hookDisk(nodeDisk, (call) => {
      if (call.name !== 'accessSync' || !String(call.args[0]).endsWith('/notes.md')) return
      const code = codes[calls++]
      return code === undefined ? undefined : errnoError(call, code)
    })
    undoDisk = setDisk(hooked.disk)
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
  }

  it('fails the Memory tab’s tree in plain words on EIO, and lists the file after one EACCES', async () => {
    await askedOfTheKernel()
    core = await createCore({ dataDir: bed.dataDir })
    accessOfNotes('EIO', 'EIO')
    const failed = await core.dispatch('memory:tree', undefined)
    expect(failed).toEqual({
      ok: false,
      error: {
        code: 'io-error',
        message: 'That could not be read because the disk reported a read or write error.',
      },
    })
    undoDisk()
    accessOfNotes('EACCES')
    const tree = await core.dispatch('memory:tree', undefined)
    if (!tree.ok) throw new Error(tree.error.message)
    expect(
      (tree.value as ReadonlyArray<MemoryEntry>).map((e) => [e.path, e.unreadable ?? false]),
    ).toEqual([
      ['/memories/notes.md', false],
      ['/memories/topics', false],
      ['/memories/topics/cats.md', false],
    ])
  })

  it('fails Claude’s view in plain words on EMFILE, and lists the file after one EPERM', async () => {
    await askedOfTheKernel()
    const memory = await openVersionedMemory({ dataDir: bed.dataDir, watch: false })
    try {
      accessOfNotes('EMFILE', 'EMFILE')
      const failed = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
      expect(failed.isError).toBe(true)
      expect(String(failed.content)).toBe(
        'Error: The memory command failed because too many files are open. Nothing was changed.',
      )
      undoDisk()
      accessOfNotes('EPERM')
      const listed = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
      expect(listed.isError).toBe(false)
      expect(
        String(listed.content)
          .split('\n')
          .slice(1)
          .map((line) => line.split('\t')[1]),
      ).toEqual([
        '/memories',
        '/memories/notes.md',
        '/memories/topics/',
        '/memories/topics/cats.md',
      ])
    } finally {
      await memory.close()
    }
  })
})
