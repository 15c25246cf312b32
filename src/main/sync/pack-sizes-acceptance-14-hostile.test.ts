/**
 * `packSizeProblem` on packs git writes and on packs a hostile remote crafts: a header that
 * declares a huge object, a delta whose result is huge, and data that inflates past what its
 * header said, each found without inflating it whole.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchFs, PACK_CHAIN_BUDGET, PACK_OBJECT_CAP } from './git-fs'
import { packSizeProblem } from './pack-sizes'

const CAP = 32 * 2 ** 20

/** A pack object's header: type and size, as git writes them (4 bits, then 7 a byte). */
function header(type: number, size: number): Buffer {
  const out = [((type & 7) << 4) | (size & 15)]
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    out[out.length - 1]! |= 0x80
    out.push(rest & 0x7f)
    rest = Math.floor(rest / 128)
  }
  return Buffer.from(out)
}

/** git's delta size varint. */
function varint(value: number): Buffer {
  const out: number[] = []
  do {
    out.push((value & 0x7f) | (value >= 128 ? 0x80 : 0))
    value = Math.floor(value / 128)
  } while (value > 0)
  return Buffer.from(out)
}

/** git's ofs-delta base offset: 7 bits a byte, each further byte adding one first. */
function offsetVarint(value: number): Buffer {
  const out = [value & 0x7f]
  while ((value = Math.floor(value / 128)) > 0) out.unshift(0x80 | (--value & 0x7f))
  return Buffer.from(out)
}

function pack(...objects: Buffer[]): Buffer {
  const head = Buffer.alloc(12)
  head.write('PACK', 0, 'latin1')
  head.writeUInt32BE(2, 4)
  head.writeUInt32BE(objects.length, 8)
  return Buffer.concat([head, ...objects, Buffer.alloc(20)])
}

/**
 * A blob of `unit` bytes, then deltas each making `result(n)` bytes (copies of the blob's
 * first `unit`) from the one before.
 */
function chain(deltas: number, unit: number, result: (n: number) => number): Buffer {
  const copy = Buffer.from([0xf0, unit & 0xff, (unit >> 8) & 0xff, (unit >> 16) & 0xff])
  const objects = [header(3, unit), deflateSync(Buffer.alloc(unit))]
  let previous = 12
  let offset = 12 + objects[0]!.length + objects[1]!.length
  for (let n = 0; n < deltas; n++) {
    const data = Buffer.concat([
      varint(n === 0 ? unit : result(n - 1)),
      varint(result(n)),
      ...Array.from({ length: result(n) / unit }, () => copy),
    ])
    const delta = [header(6, data.length), offsetVarint(offset - previous), deflateSync(data)]
    objects.push(...delta)
    previous = offset
    offset += delta.reduce((sum, part) => sum + part.length, 0)
  }
  // As git writes it: its count of objects, and its checksum last.
  const built = pack(...objects)
  built.writeUInt32BE(deltas + 1, 8)
  const body = built.subarray(0, built.length - 20)
  createHash('sha1').update(body).digest().copy(built, body.length)
  return built
}

let scratch: string
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'probe34b-pack-'))
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
})

describe('a fetched pack’s sizes', () => {
  it('passes a pack git wrote, deltas and all, and one cut short (left to the indexer)', () => {
    const gitdir = path.join(scratch, 'repo.git')
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: scratch }
    const git = (input: string | null, ...args: string[]) =>
      execFileSync('git', ['--git-dir', gitdir, ...args], {
        env,
        ...(input !== null ? { input } : {}),
      })
    execFileSync('git', ['init', '--quiet', '--bare', gitdir], { env })
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} of a long note`).join('\n')
    const ids = [text, `${text}\none more`, `${text}\ntwo more`].map((t) =>
      git(t, 'hash-object', '-w', '--stdin').toString().trim(),
    )
    const packed = git(`${ids.join('\n')}\n`, 'pack-objects', '--stdout', '--window=10')
    // git's own reading of it: it holds deltas.
    const file = path.join(scratch, 'deltas.pack')
    writeFileSync(file, packed)
    execFileSync('git', ['index-pack', file], { env })
    expect(
      execFileSync('git', ['verify-pack', '-v', file.replace(/\.pack$/, '.idx')], {
        env,
      }).toString(),
    ).toMatch(/chain length = 1: 2 objects/)
    expect(packSizeProblem(packed, CAP)).toBeNull()
    expect(packSizeProblem(packed.subarray(0, packed.length - 200), CAP)).toBeNull()
  })

  it('finds a whole object declared over the cap without inflating it', () => {
    // Its data is 17 bytes: only the header says 200 MB.
    const huge = pack(header(3, 200 * 2 ** 20), deflateSync(Buffer.from('tiny')))
    expect(packSizeProblem(huge, CAP)).toEqual({ kind: 'too-large', size: 200 * 2 ** 20 })
  })

  it('finds a delta whose result is over the cap, though its data is small', () => {
    const base = Buffer.from('base\n')
    const delta = Buffer.concat([
      varint(base.length),
      varint(3 * 2 ** 30),
      Buffer.from([0x91, 0, 5]),
    ])
    const bomb = pack(
      header(3, base.length),
      deflateSync(base),
      // An ofs-delta: its base 1 object back (offset varint), then the delta's data.
      header(6, delta.length),
      Buffer.from([12]),
      deflateSync(delta),
    )
    expect(packSizeProblem(bomb, CAP)).toEqual({ kind: 'too-large', size: 3 * 2 ** 30 })
  })

  it('refuses data that inflates past the size its header gave', () => {
    const liar = pack(header(3, 10), deflateSync(Buffer.alloc(1024 * 1024)))
    expect(packSizeProblem(liar, CAP)).toEqual({ kind: 'unreadable' })
  })

  it('refuses a size written longer than git writes it (padded), in a header or a delta', () => {
    // Size 10, then eight more bytes of nothing: isomorphic-git's indexer reads it as 10 (its
    // shifts wrap at 32 bits) and inflated all 1 MiB before finding it wrong; this check gave
    // up on it (null), so a file of some GB packed small passed.
    const padded = Buffer.concat([
      Buffer.from([(3 << 4) | 10 | 0x80]),
      Buffer.alloc(8, 0x80),
      Buffer.from([0]),
    ])
    const liar = pack(padded, deflateSync(Buffer.alloc(1024 * 1024)))
    expect(packSizeProblem(liar, CAP)).toEqual({ kind: 'unreadable' })
    // The same header written as git writes it is refused as before.
    expect(
      packSizeProblem(pack(header(3, 10), deflateSync(Buffer.alloc(1024 * 1024))), CAP),
    ).toEqual({ kind: 'unreadable' })
    // A delta whose result size is padded past 64 bits.
    const base = Buffer.from('base\n')
    const delta = Buffer.concat([
      varint(base.length),
      Buffer.alloc(9, 0x80),
      Buffer.from([1]),
      Buffer.from([0x91, 0, 5]),
    ])
    const padDelta = pack(
      header(3, base.length),
      deflateSync(base),
      header(6, delta.length),
      Buffer.from([12]),
      deflateSync(delta),
    )
    expect(packSizeProblem(padDelta, CAP)).toEqual({ kind: 'unreadable' })
  })

  it('refuses a chain of deltas whose results add up past the budget, each under the cap', () => {
    // git reads the builder's packs as built: a chain of three deltas on the blob.
    const file = path.join(scratch, 'chain.pack')
    writeFileSync(
      file,
      chain(3, 1000, (n) => (n + 2) * 1000),
    )
    execFileSync('git', ['index-pack', file])
    expect(
      execFileSync('git', ['verify-pack', '-v', file.replace(/\.pack$/, '.idx')]).toString(),
    ).toMatch(/chain length = 3: 1 object/)
    // An 8 MiB blob, then deltas of 128 MiB results (the cap, so each passed): a few KB on
    // disk. isomorphic-git's indexer keeps every result along the chain (551 MB more for the
    // process at one delta, 1.45 GB at eight); the old check passed it.
    const MiB = 2 ** 20
    const cap = 128 * MiB
    const budget = 256 * MiB
    const one = chain(1, 8 * MiB, () => cap)
    // 8 + 128 MiB: within the budget.
    expect(packSizeProblem(one, cap, budget)).toBeNull()
    const eight = chain(8, 8 * MiB, () => cap)
    expect(eight.length).toBeLessThan(16 * 1024)
    expect(packSizeProblem(eight, cap)).toBeNull()
    // 8 + 128 + 128 MiB at the second delta already.
    expect(packSizeProblem(eight, cap, budget)).toEqual({
      kind: 'chain',
      size: 8 * MiB + 2 * cap,
      budget,
    })
  })

  it('counts a ref-delta’s base as every object the pack holds', () => {
    const base = Buffer.from('base\n')
    const delta = Buffer.concat([varint(base.length), varint(1000), Buffer.from([0x91, 0, 5])])
    const refd = pack(
      header(3, 600),
      deflateSync(Buffer.alloc(600)),
      header(7, delta.length),
      Buffer.alloc(20, 0xab),
      deflateSync(delta),
    )
    // Its own 1000 bytes, and all 1600 the pack holds.
    expect(packSizeProblem(refd, 2000, 2600)).toBeNull()
    expect(packSizeProblem(refd, 2000, 2500)).toEqual({ kind: 'chain', size: 2600, budget: 2500 })
  })

  it('refuses such a chain in a fetch before it is written, naming what it would take', async () => {
    const gitdir = path.join(scratch, 'fetched.git')
    const packs = path.join(gitdir, 'objects', 'pack')
    await mkdir(packs, { recursive: true })
    const { fs } = fetchFs(gitdir)
    const hostile = chain(2, 8 * 2 ** 20, () => PACK_OBJECT_CAP)
    await expect(
      fs.promises.writeFile(path.join(packs, `pack-${'a'.repeat(40)}.pack`), hostile),
    ).rejects.toMatchObject({
      code: 'sync-unsafe-content',
      message: `The remote holds versions of a file stacked on one another that would take 264 MB to unpack (Cairn unpacks up to ${PACK_CHAIN_BUDGET / 2 ** 20} MB at once). Nothing was changed.`,
    })
    expect(await readdir(packs)).toEqual([])
  })
})
