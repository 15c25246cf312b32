import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { disk } from '../lib/disk'
import { gitCli, indexDirIn, tempDataDir } from './test-helpers'
import type { VersionedMemory } from './types'
import { openVersionedMemory } from './versioned-memory'

// The idle check finds real damage in the side index and rebuilds it; the swap closes the old
// index, then fails once (a transient disk error: ENOSPC, a virus scanner's EBUSY). The closed
// old index is still the one in use: the next idle check must rebuild, not pass it as "closed
// under the check, nothing left to check" (review18-open2 R1).
let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())
const claude = (id: string) =>
  ({ actor: 'claude', conversationId: 'conv-1', toolUseId: id }) as const
const open = (): Promise<VersionedMemory> =>
  openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
// Long names, so that the oldest are well below the newest bytes of `names` open checks.
const long = (k: number) => `/memories/${'d'.repeat(60)}/file-${String(k).padStart(4, '0')}.md`
const gitLog = () => gitCli(dataDir, 'log', '--format=%H', 'main').trim().split('\n')

describe('a rebuilt index whose swap fails once', () => {
  it('is rebuilt at the next idle check, and reads and commits work again', async () => {
    const first = await open()
    for (let k = 0; k < 260; k++) {
      await first.execute(
        { command: 'create', path: long(k), file_text: `v${k}\n` },
        claude(`t${k}`),
      )
    }
    await first.close()
    // One flipped byte in the oldest name: open does not check it, the idle check does.
    const namesFile = path.join(indexDirIn(dataDir), 'names')
    const damaged = await readFile(namesFile)
    damaged[8 + 12]! ^= 0x20
    await writeFile(namesFile, damaged)

    const memory = await open()
    const rename = disk.renameSync
    let failed = 0
    disk.renameSync = (from, to) => {
      // The old index moved aside: fails once, after the swap closed it.
      if (String(to).includes('.old-') && failed === 0) {
        failed++
        throw Object.assign(new Error('ENOSPC: no space left on device, rename'), {
          code: 'ENOSPC',
        })
      }
      return rename(from, to)
    }
    try {
      await memory.maintain().catch(() => undefined)
      expect(failed).toBe(1)
      await memory.maintain()
      expect((await readFile(namesFile)).equals(damaged)).toBe(false)
      await memory.execute(
        { command: 'create', path: '/memories/after.md', file_text: 'a\n' },
        claude('after'),
      )
      await memory.maintain()
      const log = await memory.log({ offset: 0, limit: 100_000 })
      expect(log.entries.map((c) => c.oid)).toEqual(gitLog())
      expect(await memory.fileHistory(long(0))).toHaveLength(1)
    } finally {
      disk.renameSync = rename
      await memory.close()
    }
  })
})
