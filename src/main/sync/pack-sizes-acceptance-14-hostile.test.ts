/**
 * `packSizeProblem` on packs git writes and on packs a hostile remote crafts: a header that
 * declares a huge object, a delta whose result is huge, and data that inflates past what its
 * header said, each found without inflating it whole.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

function pack(...objects: Buffer[]): Buffer {
  const head = Buffer.alloc(12)
  head.write('PACK', 0, 'latin1')
  head.writeUInt32BE(2, 4)
  head.writeUInt32BE(objects.length, 8)
  return Buffer.concat([head, ...objects, Buffer.alloc(20)])
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
})
