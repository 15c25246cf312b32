import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { indexDirOf, IndexFile, writeIndex, type IndexEntry } from './index-file'
import { createObjectStore, type ObjectStore } from './object-store'
import { checkIndex, spreadPositions } from './side-index'
import { gitCli, tempDataDir } from './test-helpers'
import { openVersionedMemory } from './versioned-memory'

// The background check's spot checks compare index entries spread over the history with the
// entries rebuilt from their commits, which diffs each commit's trees with its parent's. At
// 20,000 files a folder's tree is 800 KB, and a spot check read its trees in one go, holding
// every answer 1–2 s (stop 31): it now gives the loop back before each tree it reads.

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)
const gitdir = () => path.join(dataDir, 'history.git')

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const COMMITS = 24

/** A history of `COMMITS` creates, alternating between `notes/` and `deep/x/`. */
async function seed(): Promise<IndexEntry[]> {
  const memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
  try {
    for (let i = 0; i < COMMITS; i++) {
      const file = i % 2 === 0 ? `/memories/notes/n-${i}.md` : `/memories/deep/x/d-${i}.md`
      await memory.execute(
        { command: 'create', path: file, file_text: `v${i}` },
        { actor: 'claude', conversationId: 'c', toolUseId: `t-${i}` },
      )
    }
  } finally {
    await memory.close()
  }
  const index = IndexFile.open(indexDirOf(gitdir()))
  try {
    return index.all()
  } finally {
    index.close()
  }
}

/** The store, with the ids of the trees read through it, in order. */
function watchedStore(): { store: ObjectStore; treesRead: string[]; plain: ObjectStore } {
  const plain = createObjectStore(gitdir())
  const treesRead: string[] = []
  const store: ObjectStore = {
    ...plain,
    readTree: (oid) => {
      treesRead.push(oid)
      return plain.readTree(oid)
    },
    readTreeEncoded: (oid) => {
      treesRead.push(oid)
      return plain.readTreeEncoded(oid)
    },
  }
  return { store, treesRead, plain }
}

describe('the background spot checks of the side index', () => {
  it('give the loop back between the trees of one commit: a read asked then answers', async () => {
    const entries = await seed()
    const roots = new Set(
      entries.map((entry) => gitCli(dataDir, 'rev-parse', `${entry.oid}^{tree}`).trim()),
    )
    const { store, treesRead, plain } = watchedStore()
    const index = IndexFile.open(indexDirOf(gitdir()))
    let release = (): void => undefined
    let reachedGate = (): void => undefined
    const held = new Promise<'held'>((resolve) => (reachedGate = () => resolve('held')))
    let gated = false
    // The gate: the first pause a spot check takes with its commit's and its parent's root
    // trees read and their folders (notes/ or deep/) not yet.
    const pause = async (): Promise<void> => {
      const last = treesRead.slice(-2)
      if (gated || last.length < 2 || !last.every((oid) => roots.has(oid))) return
      gated = true
      await new Promise<void>((resolve) => {
        release = resolve
        reachedGate()
      })
    }
    let finished = false
    const checking = checkIndex(store, index, pause).then((sound) => {
      finished = true
      return sound
    })
    try {
      expect(await Promise.race([held, checking.then(() => 'finished')])).toBe('held')
      const readsAtGate = treesRead.length
      // Asked while the check waits mid-commit: the newest entry and its commit's files.
      const newest = index.at(index.size - 1)
      expect(newest.files).toEqual(['/memories/deep/x/d-23.md'])
      const commit = await plain.readCommit(newest.oid)
      const top = await plain.readTree(commit.tree)
      expect(top.map((entry) => entry.name)).toEqual(['deep', 'notes'])
      expect(finished).toBe(false)
      expect(treesRead.length).toBe(readsAtGate)
      release()
      expect(await checking).toBe(true)
      // Every spot check was made after the gate: each reads its folders too.
      expect(treesRead.length).toBeGreaterThan(readsAtGate + 2)
    } finally {
      release()
      await checking.catch(() => undefined)
      index.close()
      plain.close()
    }
  })

  // What the spot checks are there to find: an entry sound in its structure and checksum (an
  // index written wrong, not torn) that does not say what its commit changed.
  describe.each([
    ['a file the commit did not change, in a folder it did', ['/memories/notes/n-0.md']],
    ['a file in a folder the commit did not touch', ['/memories/deep/x/d-1.md']],
    ['a file of no version at all', ['/memories/elsewhere.md']],
  ])('an older entry that names %s', (_what, extra) => {
    it('is found by the check', async () => {
      const entries = await seed()
      const at = spreadPositions(entries.length, 16).find((i) => i > 0 && i < entries.length - 1)
      expect(at).toBeDefined()
      const wrong = entries[at as number] as IndexEntry
      writeIndex(indexDirOf(gitdir()), [
        ...entries.slice(0, at),
        { ...wrong, files: [...wrong.files, ...extra].sort() },
        ...entries.slice((at as number) + 1),
      ])
      const { store, plain } = watchedStore()
      const index = IndexFile.open(indexDirOf(gitdir()))
      try {
        expect(await checkIndex(store, index, async () => undefined)).toBe(false)
      } finally {
        index.close()
        plain.close()
      }
    })
  })

  it('finds an older entry that leaves out a file its commit changed, and passes a right one', async () => {
    const entries = await seed()
    const { store, plain } = watchedStore()
    let index = IndexFile.open(indexDirOf(gitdir()))
    try {
      expect(await checkIndex(store, index, async () => undefined)).toBe(true)
    } finally {
      index.close()
    }
    const at = spreadPositions(entries.length, 16).find((i) => i > 0 && i < entries.length - 1)
    const wrong = entries[at as number] as IndexEntry
    writeIndex(indexDirOf(gitdir()), [
      ...entries.slice(0, at),
      { ...wrong, files: [] },
      ...entries.slice((at as number) + 1),
    ])
    index = IndexFile.open(indexDirOf(gitdir()))
    try {
      expect(await checkIndex(store, index, async () => undefined)).toBe(false)
    } finally {
      index.close()
      plain.close()
    }
  })
})
