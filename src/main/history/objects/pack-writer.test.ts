import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../../lib/disk'
import { closesFailing, errnoError, hookDisk } from '../../lib/disk-hooks'
import { gitIn, tempDataDir } from '../test-helpers'
import { OFS_DELTA, TYPE_CODES } from './pack-file'
import { entryHeader, PackWriter, removePackLeftovers, type DeltaBase } from './pack-writer'

// The pack writer writes each entry's header into one buffer of its own (stop 18) instead of
// building an array of bytes per entry: the bytes must be what git's format (and the writer
// before) made, for every size and every distance back to a delta's base.

// The header as the writer built it before: type and size, then an OFS_DELTA's distance in
// big-endian groups of 7 bits, each but the last adding one.
function reference(code: number, size: number, distance: number): Buffer {
  const bytes: number[] = []
  let byte = (code << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    bytes.push(byte | 0x80)
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  bytes.push(byte)
  if (code === OFS_DELTA) {
    const groups = [distance & 0x7f]
    let value = Math.floor(distance / 128)
    while (value > 0) {
      value -= 1
      groups.unshift((value & 0x7f) | 0x80)
      value = Math.floor(value / 128)
    }
    bytes.push(...groups)
  }
  return Buffer.from(bytes)
}

describe('entryHeader', () => {
  // Each side of every boundary where a varint grows by a group.
  const edges = [0, 1, 15, 16, 127, 128, 2047, 2048, 16_383, 16_384, 16_511, 16_512, 2_113_663]
    .concat([2_113_664, 2 ** 28, 2 ** 31 + 5, 2 ** 35 + 12_345, 2 ** 40 - 1])
    .flatMap((n) => [n - 1, n, n + 1])
    .filter((n) => n >= 0)

  it('writes whole entries of every kind and size as before', () => {
    for (const code of Object.values(TYPE_CODES)) {
      for (const size of edges) expect(entryHeader(code, size, 0)).toEqual(reference(code, size, 0))
    }
  })

  it('writes a delta at every distance from its base as before', () => {
    for (const size of [0, 100, 70_000]) {
      for (const distance of edges.filter((n) => n > 0)) {
        expect(entryHeader(OFS_DELTA, size, distance)).toEqual(reference(OFS_DELTA, size, distance))
      }
    }
  })
})

// `add` answers at once when nothing had to wait (stop 19: a promise per entry was garbage),
// and with a promise when something did: a large object compressed on the thread pool, or the
// write buffer full and written out. Either way the entry lands in the pack where the index
// says, and nothing may be written in between: an `add` or `finish` while one is under way is
// refused.
describe('PackWriter.add', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let gitdir: string

  beforeEach(async () => {
    ;({ dir, cleanup } = await tempDataDir())
    gitdir = path.join(dir, 'history.git')
    execFileSync('git', ['init', '--quiet', '--bare', gitdir])
  })
  afterEach(() => cleanup())

  const blobId = (content: Buffer) =>
    createHash('sha1')
      .update(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]))
      .digest('hex')

  /** `bytes` that do not compress (a counter through SHA-1): each fills its share of the pack. */
  function noise(seed: number, bytes: number): Buffer {
    const out = Buffer.alloc(bytes)
    for (let at = 0, n = 0; at < bytes; at += 20, n++) {
      createHash('sha1').update(`${seed}:${n}`).digest().copy(out, at)
    }
    return out
  }

  /** Every object git reads from the pack, by id, as `git cat-file` gives it. */
  function packedObjects(): Map<string, Buffer> {
    const packDir = path.join(gitdir, 'objects', 'pack')
    const idx = readdirSync(packDir).filter((name) => name.endsWith('.idx'))
    expect(idx).toHaveLength(1)
    execFileSync('git', ['--git-dir', gitdir, 'verify-pack', path.join(packDir, idx[0]!)])
    const ids = gitIn(gitdir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
      .trim()
      .split('\n')
    return new Map(
      ids.map((id) => [id, execFileSync('git', ['--git-dir', gitdir, 'cat-file', 'blob', id])]),
    )
  }

  it('writes what fits its buffer at once, and the rest after a wait, where the index says', async () => {
    const writer = PackWriter.create(path.join(gitdir, 'objects', 'pack'))
    const written = new Map<string, Buffer>()
    const kinds: string[] = []
    const add = async (content: Buffer, base?: DeltaBase) => {
      const added = writer.add(blobId(content), 'blob', content, base)
      kinds.push(added instanceof Promise ? 'waited' : 'at once')
      written.set(blobId(content), content)
      return { content, ...(added instanceof Promise ? await added : added) }
    }
    // Small entries, whole and as deltas, then one large enough for the thread pool, then
    // entries of 60 KB (compressed here) until the 1 MB buffer has been written out twice.
    const notes = Buffer.from('Notes the writer stores whole, then as a delta.\n'.repeat(40))
    const first = await add(notes)
    await add(Buffer.concat([notes, Buffer.from('one more line\n')]), { ...first, depth: 0 })
    await add(noise(1, 200_000))
    for (let n = 0; n < 40; n++) await add(noise(100 + n, 60_000))
    expect(kinds.slice(0, 3)).toEqual(['at once', 'at once', 'waited'])
    const overflows = kinds.slice(3).filter((kind) => kind === 'waited').length
    expect(overflows).toBeGreaterThanOrEqual(2)
    expect(overflows).toBeLessThan(10)
    const pack = await writer.finish()
    expect(pack.objects).toBe(written.size)
    const read = packedObjects()
    expect([...read.keys()].sort()).toEqual([...written.keys()].sort())
    for (const [id, content] of written) expect(read.get(id)!.equals(content)).toBe(true)
  })

  it('refuses an entry, or finishing, while the last entry is still being written', async () => {
    const writer = PackWriter.create(path.join(gitdir, 'objects', 'pack'))
    const large = noise(2, 100_000)
    const small = Buffer.from('a small note\n')
    const pending = writer.add(blobId(large), 'blob', large)
    expect(pending).toBeInstanceOf(Promise)
    expect(() => writer.add(blobId(small), 'blob', small)).toThrow(/still being written/)
    await expect(writer.finish()).rejects.toThrow(/still being written/)
    await pending
    expect(writer.add(blobId(small), 'blob', small)).not.toBeInstanceOf(Promise)
    await writer.finish()
    const read = packedObjects()
    expect([...read.keys()].sort()).toEqual([blobId(large), blobId(small)].sort())
    expect(read.get(blobId(large))!.equals(large)).toBe(true)
  })

  /** A writer holding 20 blobs of 3 KB that do not compress. */
  async function twentyBlobs(packDir: string): Promise<PackWriter> {
    const writer = PackWriter.create(packDir)
    for (let n = 0; n < 20; n++) {
      const content = noise(n, 3_000)
      const added = writer.add(blobId(content), 'blob', content)
      if (added instanceof Promise) await added
    }
    return writer
  }

  it('renames and clears on the thread pool on the success path too', async () => {
    const packDir = path.join(gitdir, 'objects', 'pack')
    const writer = await twentyBlobs(packDir)
    const onPool: string[] = []
    const onLoop: string[] = []
    const hooked = hookDisk(nodeDisk, (call) => {
      if (call.name === 'renameSync' || call.name === 'unlinkSync') onLoop.push(call.name)
      if (call.name === 'promises.rename') onPool.push(call.name)
      return undefined
    })
    const restore = setDisk(hooked.disk)
    try {
      expect((await writer.finish()).objects).toBe(20)
    } finally {
      restore()
    }
    expect(onPool).toEqual(['promises.rename', 'promises.rename'])
    expect(onLoop).toEqual([])
    expect(packedObjects().size).toBe(20)
  })

  it('installs a pack whose temp files fail to close after their fsync', async () => {
    const packDir = path.join(gitdir, 'objects', 'pack')
    const failing = closesFailing((file) => /^tmp_(pack|idx)_/.test(path.basename(file)))
    const restore = setDisk(failing.disk)
    try {
      expect((await (await twentyBlobs(packDir)).finish()).objects).toBe(20)
    } finally {
      restore()
    }
    expect(failing.failed()).toBe(2)
    expect(packedObjects().size).toBe(20)
    expect(readdirSync(packDir).filter((name) => name.startsWith('tmp_'))).toEqual([])
  })

  // How a rename of `finish` fails: the pack's rename; the index's; the index's with the unlink
  // of the renamed pack refused too (a second failure during the clearing); the index's after
  // it happened (the index arrived, the error came after).
  const failures = [
    'pack',
    'index',
    'index, then the unlink of the pack',
    'index, arrived',
  ] as const
  for (const which of failures) {
    it(`leaves a pack whole or nothing of it when the rename of its ${which} fails`, async () => {
      const packDir = path.join(gitdir, 'objects', 'pack')
      const writer = await twentyBlobs(packDir)
      // The first rename names the pack, the second its index (`tmp_idx_*` -> `pack-X.idx`).
      const renames: string[] = []
      const onLoop: string[] = []
      const hooked = hookDisk(nodeDisk, (call) => {
        if (call.name === 'renameSync' || call.name === 'unlinkSync') onLoop.push(call.name)
        const file = String(call.args[0])
        if (which === 'index, then the unlink of the pack' && call.name === 'promises.unlink') {
          return file.endsWith('.pack') ? errnoError(call, 'EIO') : undefined
        }
        if (call.name !== 'promises.rename') return undefined
        const to = String(call.args[1])
        renames.push(path.basename(to))
        if (!to.endsWith(which === 'pack' ? '.pack' : '.idx')) return undefined
        if (which === 'index, arrived') nodeDisk.renameSync(file, to)
        return errnoError(call, 'EIO')
      })
      const restore = setDisk(hooked.disk)
      try {
        await expect(writer.finish()).rejects.toMatchObject({ code: 'EIO' })
      } finally {
        restore()
      }
      expect(renames).toHaveLength(which === 'pack' ? 1 : 2)
      // The renames, and the unlinks that clear the pack, on the thread pool.
      expect(onLoop).toEqual([])
      const left = readdirSync(packDir).map((name) => name.replace(/[0-9a-f]{16,}/, 'X'))
      if (which === 'pack' || which === 'index') {
        // Cleared on the failure path itself: no temp index, no pack without its index.
        expect(left).toEqual([])
      } else if (which === 'index, arrived') {
        // Whole: kept.
        expect(left.sort()).toEqual(['pack-X.idx', 'pack-X.pack'])
      } else {
        // The pack could not go, so its durable temp index stays with it: the state a kill
        // between the renames leaves, which the next pass finishes (never a pack with neither).
        expect(left.sort()).toEqual(['pack-X.pack', 'tmp_idx_X'])
      }
      // The caller's abort after the failure, and the next pass's clearing, file nothing as
      // damaged (it finishes the install the unlink refused left).
      await writer.abort()
      expect(removePackLeftovers(packDir)).toEqual([])
      expect(existsSync(path.join(gitdir, 'cairn-damaged'))).toBe(false)
      if (which === 'pack' || which === 'index') {
        // Written again, the same objects make a whole pack git reads.
        expect((await (await twentyBlobs(packDir)).finish()).objects).toBe(20)
      }
      expect(
        readdirSync(packDir).filter((name) => !/^pack-[0-9a-f]{40}\.(pack|idx)$/.test(name)),
      ).toEqual([])
      expect(packedObjects().size).toBe(20)
      gitIn(gitdir, 'fsck', '--strict', '--no-dangling')
      expect(removePackLeftovers(packDir)).toEqual([])
    })
  }

  // Before either rename: the write (or fsync) of the temp index fails, a full disk. Both files
  // are temp files still; the temp index is cleared on the thread pool, and an unlink refused
  // too leaves it to the next pass. The write's error is the one told either way.
  for (const unlinkRefused of [false, true]) {
    it(`clears its temp index when writing it fails${unlinkRefused ? ', the unlink refused too' : ''}`, async () => {
      const packDir = path.join(gitdir, 'objects', 'pack')
      const writer = await twentyBlobs(packDir)
      let indexOpened = false
      const onLoop: string[] = []
      const onPool: string[] = []
      const hooked = hookDisk(nodeDisk, (call) => {
        const file = String(call.args[0])
        if (call.name === 'unlinkSync' || call.name === 'renameSync') onLoop.push(call.name)
        if (call.name === 'openSync' && path.basename(file).startsWith('tmp_idx_')) {
          indexOpened = true
        }
        // Every write after the temp index is opened is one of the index's.
        if (call.name === 'write' && indexOpened) return errnoError(call, 'ENOSPC')
        if (call.name === 'promises.unlink' && path.basename(file).startsWith('tmp_idx_')) {
          onPool.push(call.name)
          if (unlinkRefused) return errnoError(call, 'EIO')
        }
        return undefined
      })
      const restore = setDisk(hooked.disk)
      try {
        await expect(writer.finish()).rejects.toMatchObject({ code: 'ENOSPC' })
      } finally {
        restore()
      }
      expect(indexOpened).toBe(true)
      expect(onPool).toEqual(['promises.unlink'])
      expect(onLoop).toEqual([])
      const left = readdirSync(packDir).map((name) => name.replace(/[0-9a-f]{16,}/, 'X'))
      expect(left.sort()).toEqual(unlinkRefused ? ['tmp_idx_X', 'tmp_pack_X'] : ['tmp_pack_X'])
      await writer.abort()
      expect(
        removePackLeftovers(packDir).map((name) => name.replace(/[0-9a-f]{16,}/, 'X')),
      ).toEqual(unlinkRefused ? ['tmp_idx_X'] : [])
      expect(readdirSync(packDir)).toEqual([])
      expect(existsSync(path.join(gitdir, 'cairn-damaged'))).toBe(false)
      // Written again, the same objects make a whole pack git reads.
      expect((await (await twentyBlobs(packDir)).finish()).objects).toBe(20)
      expect(packedObjects().size).toBe(20)
      gitIn(gitdir, 'fsck', '--strict', '--no-dangling')
    })
  }
})
