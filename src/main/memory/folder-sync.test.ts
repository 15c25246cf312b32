import fs from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { settleFolderSyncs } from '../lib/folders'
import { makeSandbox, type Sandbox } from './test-support'

// Issue #3, D7 found by review: the standalone tool (no history) answered a change before
// the fsync of its folder had even started (a 50 ms timer), so an acknowledged change could be
// lost in a crash. Without a history to settle them before a commit, the command waits.

let box: Sandbox
let events: string[]
let restore: () => void

const isFolder = (fd: number): boolean => {
  try {
    return fs.fstatSync(fd).isDirectory()
  } catch {
    return false
  }
}

beforeEach(async () => {
  box = await makeSandbox()
  await box.write('d/old.md', 'old\n')
  await box.write('f.md', 'f\n')
  // Nothing left over from an earlier test may complete during this one.
  await settleFolderSyncs()
  events = []
  restore = setDisk({
    ...nodeDisk,
    fsync: async (fd) => {
      const folder = isFolder(fd)
      await nodeDisk.fsync(fd)
      if (folder) events.push('folder fsync done')
    },
  })
})
afterEach(async () => {
  restore()
  await box.cleanup()
})

/** Runs `input` and records when it was answered among the fsyncs. */
async function run(input: unknown): Promise<void> {
  const result = await box.run(input)
  expect(result.isError).toBe(false)
  events.push('answered')
}

describe('standalone tool: a write is durable before it is answered (D7)', () => {
  it.each([
    [
      'create in an existing folder',
      { command: 'create', path: '/memories/a.md', file_text: 'a\n' },
    ],
    ['create in new folders', { command: 'create', path: '/memories/n/e/w.md', file_text: 'w\n' }],
    ['str_replace', { command: 'str_replace', path: '/memories/f.md', old_str: 'f', new_str: 'g' }],
    ['insert', { command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: 'x' }],
  ])('%s waits for its folder fsync', async (_name, input) => {
    await run(input)
    expect(events.at(-1)).toBe('answered')
    expect(events).toContain('folder fsync done')
  })

  it.each([
    ['delete of a file', { command: 'delete', path: '/memories/f.md' }],
    ['delete of a folder', { command: 'delete', path: '/memories/d' }],
    ['rename', { command: 'rename', old_path: '/memories/f.md', new_path: '/memories/z/f.md' }],
  ])('%s answers at once, its folder fsync following', async (_name, input) => {
    await run(input)
    expect(events).toEqual(['answered'])
    await settleFolderSyncs()
    expect(events.at(-1)).toBe('folder fsync done')
  })

  it('a view waits for nothing', async () => {
    await run({ command: 'view', path: '/memories' })
    expect(events).toEqual(['answered'])
  })
})
