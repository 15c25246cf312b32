import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { CLAUDE, fsck, gitCli, tempDataDir } from './test-helpers'

// Issue #3, left by the last acceptance probe: a decomposed `café.md` put in the folder
// outside Cairn, then Claude's composed `create` made a look-alike second file, which the
// folder, the Memory tab and `git` all showed twice. The git CLI is the second opinion.

const NFD = 'cafe\u0301.md'

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

it('leaves one café.md in the folder and in git when Claude creates the composed one', async () => {
  let memory = await openVersionedMemory({ dataDir, watch: false })
  await memory.close()
  await fs.writeFile(path.join(dataDir, 'memories', NFD), 'Flat white.\n')
  memory = await openVersionedMemory({ dataDir, watch: false })
  try {
    const names = () =>
      gitCli(dataDir, '-c', 'core.quotePath=false', 'ls-tree', '-r', '--name-only', 'main')
    expect(names()).toBe(`${NFD}\n`)
    const result = await memory.execute(
      { command: 'create', path: '/memories/caf\u00e9.md', file_text: 'Espresso.\n' },
      CLAUDE,
    )
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('conflict')
    expect(result.commit).toBeNull()
    expect(await fs.readdir(path.join(dataDir, 'memories'))).toEqual([NFD])
    expect(names()).toBe(`${NFD}\n`)
    expect(await fs.readFile(path.join(dataDir, 'memories', NFD), 'utf8')).toBe('Flat white.\n')
    fsck(dataDir)
  } finally {
    await memory.close()
  }
})

it('never lets Claude name the decomposed file: its delete and rename stay refused, nothing committed', async () => {
  let memory = await openVersionedMemory({ dataDir, watch: false })
  await memory.close()
  await fs.writeFile(path.join(dataDir, 'memories', NFD), 'Flat white.\n')
  memory = await openVersionedMemory({ dataDir, watch: false })
  try {
    const head = gitCli(dataDir, 'rev-parse', 'main')
    // Claude sends the decomposed spelling itself: made NFC, it names nothing there.
    for (const input of [
      { command: 'delete', path: `/memories/${NFD}` },
      { command: 'rename', old_path: `/memories/${NFD}`, new_path: '/memories/tea.md' },
    ]) {
      const result = await memory.execute(input, CLAUDE)
      expect(result.isError).toBe(true)
      expect(result.errorCode).toBe('not-found')
      expect(result.content).toContain('Ask the person to rename it outside Cairn')
    }
    expect(gitCli(dataDir, 'rev-parse', 'main')).toBe(head)
    expect(await fs.readdir(path.join(dataDir, 'memories'))).toEqual([NFD])
  } finally {
    await memory.close()
  }
})
