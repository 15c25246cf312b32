import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { listTree } from '../memory-browser'
import { setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { memoryStats } from './stats'

// The size meter reads the head of each image for its size: a close that fails after that read
// (EIO, the descriptor released all the same) counted the image as nothing.

let root: string
let undoDisk: () => void = () => {}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'cairn-meter-close-'))
})
afterEach(async () => {
  undoDisk()
  undoDisk = () => {}
  await rm(root, { recursive: true, force: true, maxRetries: 10 })
})

/** The first bytes of a PNG `width` by `height`: its signature and IHDR chunk. */
function pngHead(width: number, height: number): Buffer {
  const head = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head)
  head.writeUInt32BE(13, 8)
  head.write('IHDR', 12, 'latin1')
  head.writeUInt32BE(width, 16)
  head.writeUInt32BE(height, 20)
  return head
}

describe('the size meter, where closes fail after the read', () => {
  it('measures images and text files as it does when they close', async () => {
    await writeFile(path.join(root, 'map.png'), pngHead(300, 200))
    await writeFile(path.join(root, 'notes.md'), 'notes: tea\n'.repeat(40))
    const readLog = { get: () => undefined, since: 0 }
    const tokens = async () =>
      (await memoryStats(root, await listTree(root), readLog, new Map())).files.map((file) => [
        file.path,
        file.tokens,
      ])
    const expected = await tokens()
    expect(expected).toEqual([
      ['/memories/map.png', 80],
      ['/memories/notes.md', expect.any(Number)],
    ])
    const failing = closesFailing((file) => /\.(png|md)$/.test(file))
    undoDisk = setDisk(failing.disk)
    expect(await tokens()).toEqual(expected)
    expect(failing.failed()).toBe(2)
  })
})
