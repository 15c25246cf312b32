import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import {
  IndexDamagedError,
  IndexFile,
  IndexReplacedError,
  replaceIndexDir,
  writeIndex,
  writeIndexBeside,
  type IndexEntry,
} from './index-file'
import { readIndexed } from './read'

// A read of the history holds the side index it started with. A rebuild (or a sync that
// switched the history) may swap another in meanwhile, closing the one the read holds: the
// read is not reading damage, and must neither say so nor have the index checked again (the
// check it set going found nothing, and took a pass over every record), but answer from the
// index in use.

let root: string
let dir: string
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'cairn-replaced-'))
  dir = path.join(root, 'cairn-index')
})
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 10 }))

const oid = (i: number) => i.toString(16).padStart(40, 'b')
// 3,000 entries: open reads the newest 1,024 records, the rest when first asked for.
const entries: IndexEntry[] = Array.from({ length: 3000 }, (_, i) => ({
  oid: oid(i),
  parent: i === 0 ? null : oid(i - 1),
  time: (1_700_000_000 + i) * 1000,
  actor: 'claude',
  command: 'str_replace',
  subject: `str_replace /memories/n${i % 5}.md`,
  paths: [`/memories/n${i % 5}.md`],
  conversationId: 'conv',
  toolUseId: `toolu_${i}`,
  overwrite: false,
  restoredFrom: null,
  files: [`/memories/n${i % 5}.md`],
}))

/** The history's hold on its index, swapped as a rebuild swaps it (repo.replaceIndex). */
function history(): { index: IndexFile; swap(): void } {
  writeIndex(dir, entries)
  const held = {
    index: IndexFile.open(dir),
    swap() {
      // Written beside from the commits, the old index closed, moved into place, opened.
      const temp = writeIndexBeside(dir, entries)
      held.index.close()
      replaceIndexDir(temp, dir)
      held.index = IndexFile.open(dir)
    },
  }
  return held
}

async function outcome<T>(read: Promise<T>): Promise<T | string> {
  try {
    return await read
  } catch (error) {
    if (error instanceof CairnError) return error.code
    throw error
  }
}

describe('a read holding an index swapped out under it', () => {
  it('is read again on the index in use: the right answer, no damage said, nothing checked', async () => {
    const repo = history()
    const damaged: unknown[] = []
    let runs = 0
    const answer = await outcome(
      readIndexed(
        repo,
        async () => {
          runs++
          const index = repo.index
          const newest = index.at(index.size - 1).oid
          // A page's first part read; the rebuild swaps its index in (at the first run only).
          await Promise.resolve()
          if (runs === 1) repo.swap()
          // Then an older record, and an entry whose details were not read yet.
          return [newest, index.oidAt(5), index.timeAt(5), index.at(2990).oid]
        },
        (error) => damaged.push(error),
      ),
    )
    expect(answer).toEqual([oid(2999), oid(5), entries[5]!.time, oid(2990)])
    expect(runs).toBe(2)
    expect(damaged).toEqual([])
    repo.index.close()
  })

  it('answers "being rebuilt", quietly, when swapped again under the second read or when it may not run twice', async () => {
    const repo = history()
    const damaged: unknown[] = []
    let runs = 0
    const swappedEachTime = async () => {
      runs++
      const index = repo.index
      repo.swap()
      return index.oidAt(5)
    }
    expect(await outcome(readIndexed(repo, swappedEachTime, (e) => damaged.push(e)))).toBe(
      'index-rebuilding',
    )
    expect(runs).toBe(2)
    runs = 0
    expect(await outcome(readIndexed(repo, swappedEachTime, (e) => damaged.push(e), false))).toBe(
      'index-rebuilding',
    )
    expect(runs).toBe(1)
    expect(damaged).toEqual([])
    repo.index.close()
  })

  it('is damage when the closed index is still the one in use (a swap that failed after closing it)', async () => {
    const repo = history()
    const damaged: unknown[] = []
    repo.index.close()
    let runs = 0
    const read = async () => {
      runs++
      return repo.index.oidAt(5)
    }
    expect(await outcome(readIndexed(repo, read, (e) => damaged.push(e)))).toBe('index-rebuilding')
    expect(runs).toBe(1)
    expect(damaged).toHaveLength(1)
    expect(damaged[0]).toBeInstanceOf(IndexReplacedError)
  })

  it('still finds a damaged entry as such, and closed indexes refuse every read from disk', async () => {
    writeIndex(dir, entries)
    const commits = path.join(dir, 'commits')
    const bytes = readFileSync(commits)
    bytes[64 * 7 + 24] ^= 0x01 // entry 7's time: its checksum no longer holds
    writeFileSync(commits, bytes)
    const repo = { index: IndexFile.open(dir) }
    const damaged: unknown[] = []
    expect(
      await outcome(
        readIndexed(
          repo,
          async () => repo.index.at(7),
          (e) => damaged.push(e),
        ),
      ),
    ).toBe('index-rebuilding')
    expect(damaged).toHaveLength(1)
    expect(damaged[0]).toBeInstanceOf(IndexDamagedError)
    expect(damaged[0]).not.toBeInstanceOf(IndexReplacedError)
    // Closed: an older record, an entry's details, the checksums: never read through a
    // descriptor that may name another file now.
    const closed = repo.index
    closed.close()
    expect(() => closed.oidAt(3)).toThrow(IndexReplacedError)
    expect(() => closed.at(2995)).toThrow(IndexReplacedError)
    expect(() => closed.firstDamaged(2000, 2990)).toThrow(IndexReplacedError)
    // Read before the close: kept, and still answered.
    expect(closed.oidAt(2999)).toBe(oid(2999))
  })
})
