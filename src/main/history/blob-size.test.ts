import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { createObjectStore } from './object-store'
import { DamagedHistoryError } from './damage'
import { CLAUDE, tempDataDir } from './test-helpers'

// "Memory at this reply" read every old version whole only to show its size (review12-story,
// item 7): the size now comes from the object's header. It must be the size git reports for
// every blob, loose or packed, whole or stored as a delta.

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

function gitdir(): string {
  return path.join(dataDir, 'history.git')
}

function blobsOf(): Array<{ oid: string; size: number }> {
  const listed = execFileSync(
    'git',
    [
      '--git-dir',
      gitdir(),
      'cat-file',
      '--batch-all-objects',
      '--batch-check=%(objectname) %(objecttype) %(objectsize)',
    ],
    { encoding: 'utf8' },
  )
  return listed
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([, type]) => type === 'blob')
    .map(([oid, , size]) => ({ oid: oid!, size: Number(size) }))
}

/** A text of about `bytes`, different at `seed` (so versions delta well against each other). */
function text(bytes: number, seed: number): string {
  const lines: string[] = []
  let length = 0
  for (let i = 0; length < bytes; i++) {
    const line = i % 97 === seed % 97 ? `changed ${seed}` : `line ${i} of a long note`
    lines.push(line)
    length += line.length + 1
  }
  return `${lines.join('\n')}\n`
}

describe('a blob size read from its header', () => {
  it('is the size git reports, loose and then packed with deltas', async () => {
    const memory = await open()
    try {
      // Small, large enough for a loose file past the first read, and one past 64 KiB.
      for (const [name, bytes] of [
        ['tiny.md', 3],
        ['mid.md', 3000],
        ['large.md', 100_000],
      ] as const) {
        for (let version = 0; version < 4; version++) {
          await memory.execute(
            { command: 'create', path: `/memories/${name}`, file_text: text(bytes, version) },
            CLAUDE,
          )
        }
      }
      await memory.execute({ command: 'create', path: '/memories/empty.md', file_text: '' }, CLAUDE)
    } finally {
      await memory.close()
    }
    const check = () => {
      const store = createObjectStore(gitdir())
      try {
        const blobs = blobsOf()
        expect(blobs.length).toBeGreaterThanOrEqual(10)
        for (const { oid, size } of blobs) expect([oid, store.blobSize(oid)]).toEqual([oid, size])
      } finally {
        store.close()
      }
    }
    check()
    const again = await open()
    try {
      await again.maintain()
    } finally {
      await again.close()
    }
    // Packed now, versions of one file stored as deltas of each other: each size comes from
    // the pack entry itself (a delta's from its first bytes), never from a whole read.
    const store = createObjectStore(gitdir())
    try {
      let found = 0
      for (const { oid, size } of blobsOf()) {
        for (const { index, pack } of store.db.packs()) {
          const offset = index.find(Buffer.from(oid, 'hex'))
          if (offset < 0) continue
          expect([oid, pack.objectSize(offset)]).toEqual([oid, size])
          found++
        }
      }
      expect(found).toBeGreaterThanOrEqual(10)
    } finally {
      store.close()
    }
    const deltas = execFileSync('git', ['--git-dir', gitdir(), 'verify-pack', '-v', ...packs()], {
      encoding: 'utf8',
    })
    expect(deltas).toMatch(/blob\s+\d+\s+\d+\s+\d+\s+1\s+[0-9a-f]{40}/)
    check()
  })

  it('reports a missing version as damaged, as a read does', async () => {
    const memory = await open()
    try {
      await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    } finally {
      await memory.close()
    }
    const store = createObjectStore(gitdir())
    try {
      expect(() => store.blobSize('0'.repeat(40))).toThrow(DamagedHistoryError)
    } finally {
      store.close()
    }
  })
})

function open() {
  return openVersionedMemory({ dataDir, watch: false })
}

function packs(): string[] {
  const dir = path.join(gitdir(), 'objects', 'pack')
  return execFileSync('ls', [dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter((name) => name.endsWith('.idx'))
    .map((name) => path.join(dir, name))
}
