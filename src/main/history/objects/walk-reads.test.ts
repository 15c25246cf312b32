import { execFileSync } from 'node:child_process'
import { cpSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../../lib/disk'
import { tempDataDir } from '../test-helpers'
import { ObjectDatabase } from './object-database'
import { repack, type RepackReport } from './repack'

// The pack walk reads loose objects on the main thread while that is quick, and through the
// thread pool once one read was slow (a disk busy discarding what a pass freed, or files long
// out of the page cache). A read that sleeps on the main thread holds the event loop, and any
// command that arrives meanwhile with it (stop 23: 40–70 ms at 100,000 commits). These tests
// put a disk in front of the walk whose loose reads are slow for a while, and count where the
// walk read each object: on the main thread (`openSync`) or through the pool (`readFile`).

let dir: string
let cleanup: () => Promise<void>
let gitdir: string
let tip: string

const COMMITS = 60
/** Longer than the walk's 10 ms that marks a read as slow. */
const SLOW_MS = 12
const LOOSE = /objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/

/**
 * A history of `COMMITS` commits, each changing two notes (a commit, three trees and two blobs
 * each, about 360 objects), all loose: written by `git fast-import`, then unpacked.
 */
function looseHistory(into: string): string {
  const scratch = path.join(dir, 'scratch.git')
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', scratch])
  const lines: string[] = []
  for (let i = 0; i < COMMITS; i++) {
    lines.push(
      'commit refs/heads/main',
      `committer A <a@example.invalid> ${1_700_000_000 + i} +0000`,
    )
    const message = `change ${i}`
    lines.push(`data ${Buffer.byteLength(message)}`, message)
    for (const name of [`area-${i % 3}/topic-${i % 5}/note-${i % 7}.md`, `top-${i % 4}.md`]) {
      const text = `# ${name}\n\nrevision ${i}\n${'Notes the walk packs as deltas of each other.\n'.repeat(8)}`
      lines.push(`M 100644 inline ${name}`, `data ${Buffer.byteLength(text)}`, text)
    }
    lines.push('')
  }
  execFileSync('git', ['--git-dir', scratch, 'fast-import', '--quiet'], {
    input: `${lines.join('\n')}\n`,
  })
  const pack = execFileSync(
    'git',
    ['--git-dir', scratch, 'pack-objects', '--all', '--revs', '--stdout'],
    {
      input: '',
      maxBuffer: 64 * 1024 * 1024,
    },
  )
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', into])
  execFileSync('git', ['--git-dir', into, 'unpack-objects', '-q'], { input: pack })
  const head = execFileSync('git', ['--git-dir', scratch, 'rev-parse', 'main'], {
    encoding: 'utf8',
  }).trim()
  execFileSync('git', ['--git-dir', into, 'update-ref', 'refs/heads/main', head])
  return head
}

beforeEach(async () => {
  ;({ dir, cleanup } = await tempDataDir())
  gitdir = path.join(dir, 'history.git')
  tip = looseHistory(gitdir)
})
afterEach(() => cleanup())

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

interface Reads {
  /** Where each loose object was read, in order: the main thread or the thread pool. */
  readonly where: Array<'main' | 'pool'>
  /** How many reads were slow (the disk busy) before it turned quick; -1: it stayed slow. */
  readonly quickFrom: number
}

/** Packs `gitdir` with every loose read slow for the first `slowReads` reads (all: Infinity). */
async function packWithSlowDisk(
  slowReads: number,
): Promise<{ report: RepackReport; reads: Reads }> {
  const where: Array<'main' | 'pool'> = []
  const slow = () => where.length <= slowReads
  const restore = setDisk({
    ...nodeDisk,
    openSync(file, flags, mode) {
      if (LOOSE.test(file)) {
        where.push('main')
        if (slow()) sleepSync(SLOW_MS)
      }
      return nodeDisk.openSync(file, flags, mode)
    },
    promises: {
      ...nodeDisk.promises,
      async readFile(file) {
        if (LOOSE.test(file)) {
          where.push('pool')
          if (slow()) await new Promise((resolve) => setTimeout(resolve, SLOW_MS))
        }
        return nodeDisk.promises.readFile(file)
      },
    },
  })
  const db = new ObjectDatabase(gitdir)
  try {
    const report = await repack(db, [tip])
    return { report, reads: { where, quickFrom: Number.isFinite(slowReads) ? slowReads : -1 } }
  } finally {
    db.close()
    restore()
  }
}

/** The pack a pass on a copy of the history makes with the plain disk. */
async function plainPackName(): Promise<string> {
  const copy = path.join(dir, 'copy.git')
  cpSync(gitdir, copy, { recursive: true })
  const db = new ObjectDatabase(copy)
  try {
    const report = await repack(db, [tip])
    return report.pack!.name
  } finally {
    db.close()
  }
}

/** git reads the pack whole and finds the repository sound. */
function gitChecks(): void {
  const packDir = path.join(gitdir, 'objects', 'pack')
  const idx = readdirSync(packDir).find((name) => name.endsWith('.idx'))!
  execFileSync('git', ['--git-dir', gitdir, 'verify-pack', path.join(packDir, idx)])
  execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'])
  const loose = readdirSync(path.join(gitdir, 'objects')).filter((name) =>
    /^[0-9a-f]{2}$/.test(name),
  )
  expect(loose.flatMap((folder) => readdirSync(path.join(gitdir, 'objects', folder)))).toEqual([])
}

describe('the pack walk on a slow disk', () => {
  it('reads through the thread pool for as long as the disk stays slow after one slow read', async () => {
    const plain = await plainPackName()
    const { report, reads } = await packWithSlowDisk(Infinity)
    // Every object read, each through the pool but the first (the slow one that told).
    expect(report.packed).toBeGreaterThan(300)
    expect(reads.where.length).toBeGreaterThanOrEqual(report.packed)
    expect(reads.where[0]).toBe('main')
    expect(reads.where.filter((at) => at === 'main')).toHaveLength(1)
    // The same pack as with a quick disk, byte for byte (its name is its checksum).
    expect(report.pack!.name).toBe(plain)
    expect(report.unreadable).toEqual([])
    gitChecks()
    // Each read sleeps 12 ms: a few seconds, more on a loaded machine.
  }, 90_000)

  it('goes back to the main thread once reads through the pool came back quick for a while', async () => {
    const plain = await plainPackName()
    const { report, reads } = await packWithSlowDisk(20)
    expect(reads.where.length).toBeGreaterThanOrEqual(report.packed)
    // The first read was slow: the next ones through the pool, the first 19 of them slow too.
    expect(reads.where[0]).toBe('main')
    // Back on the main thread, where a quick read costs no hop...
    const back = reads.where.indexOf('main', 1)
    expect(back).toBeGreaterThan(0)
    // ...but not before 64 quick reads in a row through the pool (the 20th read was the last
    // slow one; a read the machine's load made slow puts it off further, never sooner).
    expect(back).toBeGreaterThanOrEqual(reads.quickFrom + 64)
    expect(reads.where.slice(1, back).every((at) => at === 'pool')).toBe(true)
    expect(report.pack!.name).toBe(plain)
    gitChecks()
  }, 90_000)
})
