import { writeFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, fsck, gitCli, headMatchesFolder, tempDataDir } from './test-helpers'

// hunt13-tool D3 through the versioned memory, watcher on as in the app: the totals came from
// the last scan, so a write right after edits made outside (inside the watcher's debounce)
// could break maxFiles / maxTotalBytes. Near a limit the outside edits are saved first.
let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, limits: { maxFiles: 5, maxTotalBytes: 1000 } })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const outside = (name: string, text: string) =>
  writeFileSync(path.join(dataDir, 'memories', name), text)
const run = (input: Record<string, unknown>) => memory.execute(input, CLAUDE)
const message = (result: { content: unknown }) => JSON.stringify(result.content)

describe('limits right after edits made outside Cairn (hunt13-tool D3)', () => {
  it('refuses new files past maxFiles, and saves the outside files as their own change', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await run({ command: 'create', path: `/memories/f${i}.md`, file_text: 'x' })).isError,
      ).toBe(false)
    }
    for (let i = 0; i < 3; i++) outside(`o${i}.md`, 'y')
    const first = await run({ command: 'create', path: '/memories/new1.md', file_text: 'z' })
    const second = await run({ command: 'create', path: '/memories/new2.md', file_text: 'z' })
    for (const result of [first, second]) {
      expect(result.isError, message(result)).toBe(true)
      expect(message(result)).toContain('memory already holds 6 files, the limit is 5')
    }
    expect((await readdir(path.join(dataDir, 'memories'))).sort()).toEqual([
      'f0.md',
      'f1.md',
      'f2.md',
      'o0.md',
      'o1.md',
      'o2.md',
    ])
    expect(gitCli(dataDir, 'log', '-1', '--format=%an', '--', 'o0.md').trim()).not.toBe('')
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })

  it('refuses an edit past maxTotalBytes right after a file grew outside', async () => {
    expect((await run({ command: 'create', path: '/memories/f.md', file_text: 'x' })).isError).toBe(
      false,
    )
    outside('big.md', 'b'.repeat(900))
    const result = await run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'x',
      new_str: 'x'.repeat(300),
    })
    expect(result.isError, message(result)).toBe(true)
    expect(message(result)).toContain('over the limit of 1,000 bytes')
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })
})
