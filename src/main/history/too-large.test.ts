import { mkdir, open as openFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MemoryNotice } from '../../shared/types'
import { memoryBrowserHandlers } from '../memory-browser'
import { openVersionedMemory } from './index'
import { fsck, gitCli, tempDataDir, CLAUDE } from './test-helpers'

// Defect 5 of issue #9: a file over 2 GiB in memories/ stopped the app from starting
// (ERR_FS_FILE_TOO_LARGE from the history scan) and, appearing while running, made every
// later write fail as `internal`.

let dataDir: string
let cleanup: () => Promise<void>
const open = () => openVersionedMemory({ dataDir, watch: false })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

/** A sparse file of `bytes` (instant, takes no disk space). */
async function sparse(relative: string, bytes: number): Promise<void> {
  const handle = await openFile(path.join(dataDir, 'memories', relative), 'w')
  await handle.truncate(bytes)
  await handle.close()
}

const HUGE = 2.5 * 1024 ** 3

describe('files too large to version (defect 5)', () => {
  it('opens with a 2.5 GiB file in the folder, skips it and reports it once', async () => {
    let memory = await open()
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    await memory.close()
    await sparse('huge.bin', HUGE)

    memory = await open()
    try {
      const notices = memory.notices()
      expect(notices).toEqual([
        expect.objectContaining({ kind: 'too-large', path: '/memories/huge.bin' }),
      ])
      expect(notices[0]!.message).toMatch(/not versioned: too large/)
      expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('a.md')
      const next = await memory.execute(
        {
          command: 'create',
          path: '/memories/b.md',
          file_text: 'b',
        },
        CLAUDE,
      )
      expect(next.commit).not.toBeNull()
      expect(memory.notices()).toHaveLength(1)
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })

  it('keeps committing when such a file appears while running, reporting it once', async () => {
    const memory = await open()
    try {
      const seen: MemoryNotice[] = []
      memory.onNotice((notice) => seen.push(notice))
      await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
      await sparse('huge.bin', HUGE)
      for (const name of ['b', 'c', 'd']) {
        // A write there first commits what changed outside Cairn: the huge file is skipped.
        const outcome = await memory.execute(
          {
            command: 'create',
            path: `/memories/${name}.md`,
            file_text: name,
          },
          CLAUDE,
        )
        expect(outcome.isError).toBe(false)
        expect(outcome.commit).not.toBeNull()
      }
      const first = (await memory.log({ offset: 0, limit: 50 })).entries.at(-1)!.oid
      const restored = await memory.restoreAll(first)
      expect(restored.commit).not.toBeNull()
      expect(
        (await memoryBrowserHandlers(memory)['memory:tree'](undefined)).map((entry) => entry.path),
      ).toEqual(['/memories/a.md', '/memories/huge.bin'])
      expect(seen).toEqual([
        expect.objectContaining({ kind: 'too-large', path: '/memories/huge.bin' }),
      ])
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })
})

// polish26: a too-large file's notice went only when its file moved; deleted, it stayed for the
// run in every window, naming a file that was no longer there.
describe('the notice of a too-large file that was deleted (polish26)', () => {
  beforeEach(() => mkdir(path.join(dataDir, 'memories'), { recursive: true }))

  it('goes, told to every window, when the file is deleted outside Cairn (the watcher)', async () => {
    await sparse('huge.bin', HUGE)
    const memory = await openVersionedMemory({ dataDir, watch: { debounceMs: 20 } })
    try {
      const [notice] = memory.notices()
      expect(notice).toMatchObject({ kind: 'too-large', path: '/memories/huge.bin' })
      const cleared = new Promise<string>((resolve) => memory.onNoticeCleared(resolve))
      await rm(path.join(dataDir, 'memories', 'huge.bin'))
      // The watcher's save of the outside edit clears it; nothing else happens in between.
      expect(await cleared).toBe(notice!.id)
      expect(memory.notices()).toEqual([])
      // Nothing to commit: history never held it.
      expect((await memory.log({ offset: 0, limit: 50 })).entries).toEqual([])
    } finally {
      await memory.close()
    }
  })

  // A delete through Cairn (the tool, the Memory tab) keeps such a file aside, and its notice
  // follows it there (followMoves): only a delete outside Cairn takes the file away.
  it('goes when it is deleted outside Cairn and the next change saves that', async () => {
    await sparse('huge.bin', HUGE)
    const memory = await open()
    try {
      const [notice] = memory.notices()
      const cleared: string[] = []
      memory.onNoticeCleared((id) => cleared.push(id))
      await rm(path.join(dataDir, 'memories', 'huge.bin'))
      await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
      expect(cleared).toEqual([notice!.id])
      expect(memory.notices()).toEqual([])
    } finally {
      await memory.close()
    }
  })
})
