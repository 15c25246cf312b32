import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { indexDirOf } from './index-file'
import { tempDataDir } from './test-helpers'
import { openVersionedMemory } from './versioned-memory'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const claude = { actor: 'claude', conversationId: 'c', toolUseId: 't' } as const

describe('the side index checked in the background', () => {
  it('finds a damaged entry, rebuilds the index from the commits and swaps it in', async () => {
    let memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    for (let i = 0; i < 12; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/n-${i % 4}.md`, file_text: `v${i}` },
        claude,
      )
    }
    const expected = await memory.log({ offset: 0, limit: 50 })
    await memory.close()

    // Flip a byte in the details of an old entry: the structure still holds, the checksum not.
    const details = path.join(indexDirOf(path.join(dataDir, 'history.git')), 'details')
    const bytes = await readFile(details)
    bytes[20] = (bytes[20] as number) ^ 0x01
    await writeFile(details, bytes)

    memory = await openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    // Reading the damaged entry fails clearly (and starts the rebuild)...
    await expect(memory.log({ offset: 0, limit: 50 })).rejects.toMatchObject({
      code: 'index-rebuilding',
    })
    // ...which a pass of maintenance finishes; then every entry reads as before.
    await memory.maintain()
    expect(await memory.log({ offset: 0, limit: 50 })).toEqual(expected)
    // Commits go on into the swapped-in index.
    await memory.execute({ command: 'create', path: '/memories/after.md', file_text: 'x' }, claude)
    expect((await memory.log({ offset: 0, limit: 1 })).entries[0]?.subject).toBe(
      'create /memories/after.md',
    )
    await memory.close()
  })
})
