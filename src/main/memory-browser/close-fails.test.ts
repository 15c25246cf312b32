import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { readMemoryFile, searchMemories } from './browser'

// A file only read by the Memory tab whose close fails (EIO from the disk, the descriptor
// released all the same) is still shown and searched: what was read stands.

const LIMITS = { maxTextBytes: 1 << 20, maxImageBytes: 1 << 20, maxSearchBytes: 1 << 20 }

let root: string
let undoDisk: () => void = () => {}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'cairn-browser-close-'))
  await mkdir(path.join(root, 'topics'))
  await writeFile(path.join(root, 'notes.md'), 'notes: tea\nand cake\n')
  await writeFile(path.join(root, 'topics', 'cats.md'), 'notes on cats\n')
})
afterEach(async () => {
  undoDisk()
  undoDisk = () => {}
  await rm(root, { recursive: true, force: true, maxRetries: 10 })
})

describe('memory files whose close fails after they were read', () => {
  it('are shown and searched as they are', async () => {
    const failing = closesFailing((file) => file.endsWith('.md'))
    undoDisk = setDisk(failing.disk)
    const file = await readMemoryFile(root, '/memories/notes.md', LIMITS)
    expect(file).toMatchObject({ kind: 'text', text: 'notes: tea\nand cake\n' })
    const hits = await searchMemories(root, 'notes', LIMITS)
    expect(hits).toEqual([
      { path: '/memories/notes.md', line: 1, text: 'notes: tea' },
      { path: '/memories/topics/cats.md', line: 1, text: 'notes on cats' },
    ])
    expect(failing.failed()).toBe(3)
  })
})
