import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UnlinkWorker } from '../../lib/unlink-worker'
import { gitIn, tempDataDir } from '../test-helpers'
import { ObjectDatabase } from './object-database'
import { repack, type RepackStep } from './repack'

// A pass removes what its new pack holds through one routine: a batch of up to 256 at a time
// on the removals' thread when it has one (and found at least 256 loose), otherwise one file
// at a time on the thread pool. Both ways must remove the same files and count them the same.

let dir: string
let cleanup: () => Promise<void>
let gitdir: string
let worker: UnlinkWorker | null = null

beforeEach(async () => {
  ;({ dir, cleanup } = await tempDataDir())
  gitdir = path.join(dir, 'history.git')
  execFileSync('git', ['init', '--quiet', '--bare', gitdir])
})
afterEach(async () => {
  await worker?.close()
  worker = null
  await cleanup()
})

/** `count` loose blobs in `gitdir`, through git; their ids. */
function looseBlobs(count: number): string[] {
  const files = path.join(dir, 'files')
  mkdirSync(files)
  const names = Array.from({ length: count }, (_, i) => {
    const file = path.join(files, `f-${i}`)
    writeFileSync(file, `note ${i}\n`)
    return file
  })
  return gitIn(dir, '--git-dir', gitdir, 'hash-object', '-w', '--', ...names)
    .trim()
    .split('\n')
}

function looseLeft(gitdirOf: string): string[] {
  const objects = path.join(gitdirOf, 'objects')
  return readdirSync(objects)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .flatMap((prefix) => readdirSync(path.join(objects, prefix)).map((name) => prefix + name))
}

/**
 * Packs a copy of the history, with the thread's batches or one file at a time; `goneFirst`
 * are unlinked from under the pass at its first removal (as if by another hand). Returns the
 * report, the steps said, and how often the pass waited before a removal.
 */
async function packCopy(name: string, threaded: boolean, goneFirst: ReadonlyArray<string>) {
  const copy = path.join(dir, name)
  cpSync(gitdir, copy, { recursive: true })
  const db = new ObjectDatabase(copy)
  const steps: RepackStep[] = []
  let waits = 0
  const own = threaded ? new UnlinkWorker() : null
  worker = own
  try {
    const report = await repack(db, [], {
      onStep: (step) => steps.push(step),
      beforeRemoval: async () => {
        if (waits++ === 0) for (const oid of goneFirst) unlinkSync(db.loosePath(oid))
        return true
      },
      removeBatch: own ? (paths) => own.unlink(paths) : undefined,
    })
    return { copy, report, steps, waits }
  } finally {
    db.close()
  }
}

describe('removing what a new pack holds', () => {
  it('removes and counts the same on the thread, a batch at a time, as one file at a time', async () => {
    const oids = looseBlobs(300)
    const gone = [oids[7]!, oids[150]!, oids[299]!]
    const thread = await packCopy('thread', true, gone)
    const single = await packCopy('single', false, gone)

    for (const run of [thread, single]) {
      expect(run.report.loose).toBe(300)
      expect(run.report.packed).toBe(300)
      // The three removed from under the pass are not counted as its removals.
      expect(run.report.removedLoose).toBe(297)
      expect(looseLeft(run.copy)).toEqual([])
      const count = gitIn(dir, '--git-dir', run.copy, 'count-objects', '-v')
      expect(count).toMatch(/^count: 0$/m)
      expect(count).toMatch(/^in-pack: 300$/m)
      gitIn(dir, '--git-dir', run.copy, 'fsck', '--strict', '--no-dangling')
    }
    // Two batches (256, then 44) on the thread, each said as it goes; one wait per file
    // otherwise, the three already gone included.
    expect(thread.steps.filter((step) => step === 'batch-sent')).toHaveLength(2)
    expect(thread.steps.filter((step) => step === 'batch-done')).toHaveLength(2)
    expect(thread.waits).toBe(2)
    expect(single.steps).not.toContain('batch-sent')
    expect(single.waits).toBe(300)
    // Emptied folders stay (none grew): the next commits find theirs.
    for (const oid of oids)
      expect(existsSync(path.join(thread.copy, 'objects', oid.slice(0, 2)))).toBe(true)
  })

  it('stops where the caller says, both ways, and the next pass removes the rest', async () => {
    looseBlobs(300)
    for (const threaded of [true, false]) {
      const copy = path.join(dir, `stop-${threaded}`)
      cpSync(gitdir, copy, { recursive: true })
      const db = new ObjectDatabase(copy)
      const own = threaded ? new UnlinkWorker() : null
      worker = own
      try {
        let waits = 0
        // A transfer wants the pack folder after the first removal (a batch, or a file).
        const first = await repack(db, [], {
          beforeRemoval: async () => waits++ === 0,
          removeBatch: own ? (paths) => own.unlink(paths) : undefined,
        })
        expect(first.removedLoose).toBe(threaded ? 256 : 1)
        expect(looseLeft(copy)).toHaveLength(300 - first.removedLoose)
        const second = await repack(db, [], {
          removeBatch: own ? (paths) => own.unlink(paths) : undefined,
        })
        expect(second.packed).toBe(0)
        expect(second.removedLoose).toBe(300 - first.removedLoose)
        expect(looseLeft(copy)).toEqual([])
        gitIn(dir, '--git-dir', copy, 'fsck', '--strict', '--no-dangling')
      } finally {
        db.close()
        await own?.close()
        worker = null
      }
    }
  })
})
