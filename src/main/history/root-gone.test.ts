import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { fsck, gitCli, tempDataDir, CLAUDE } from './test-helpers'

// The memory folder removed while Cairn runs failed every command until a restart. Now it is
// made again, empty, before the next command, and the history records what went with it.

let dataDir: string
let root: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  root = path.join(dataDir, 'memories')
  memory = await openVersionedMemory({
    dataDir,
    watch: false,
    maintenance: false,
    logger: createRecordingLogger(),
  })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
  fs.rmSync(root, { recursive: true })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

describe('the memory folder removed while Cairn runs', () => {
  it('is made again for a view, and the deletion is committed', async () => {
    const listing = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
    expect(listing.isError).toBe(false)
    expect(String(listing.content)).not.toContain('a.md')
    expect(fs.readdirSync(root)).toEqual([])
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('')
    expect(gitCli(dataDir, 'log', '-1', '--format=%s', 'main').trim()).toBe(
      'Changes made outside Cairn',
    )
    fsck(dataDir)
  })

  it('is made again for a create, which is committed after the deletion', async () => {
    const created = await memory.execute(
      { command: 'create', path: '/memories/b.md', file_text: 'b\n' },
      CLAUDE,
    )
    expect(created.content).toBe('File created successfully at: /memories/b.md')
    expect(fs.readFileSync(path.join(root, 'b.md'), 'utf8')).toBe('b\n')
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('b.md')
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main~1').trim()).toBe('')
    fsck(dataDir)
  })
})

describe('the memory folder made again while Cairn watches it', () => {
  it('is watched again: an edit in it is committed without waiting for a command', async () => {
    await memory.close()
    memory = await openVersionedMemory({
      dataDir,
      watch: { debounceMs: 30 },
      maintenance: false,
      logger: createRecordingLogger(),
    })
    // Open found the folder gone too and made it again; remove the new one as well.
    fs.rmSync(root, { recursive: true })
    await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
    expect(fs.readdirSync(root)).toEqual([])

    fs.writeFileSync(path.join(root, 'typed.md'), 'typed in an editor\n')
    await vi.waitFor(
      () => expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('typed.md'),
      { timeout: 5000, interval: 50 },
    )
    expect(gitCli(dataDir, 'show', 'main:typed.md')).toBe('typed in an editor\n')
    fsck(dataDir)
  })
})
