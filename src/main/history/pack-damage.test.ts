import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { fsck, gitCli, tempDataDir, CLAUDE } from './test-helpers'

// Issue #9, damage: bit rot inside a pack (its index intact) on the blob of a file the folder
// still holds. Reading it failed its check, as it should, but writing the same content again
// skipped the write (the pack "had" it), so nothing ever mended it, and maintenance carried on
// without a word.

let dataDir: string
let cleanup: () => Promise<void>
let logger: RecordingLogger
const opened: VersionedMemory[] = []

const TEXT =
  Array.from({ length: 200 }, (_, i) => `line ${i} of the notes, unique-${i * 7919}`).join('\n') +
  '\n'

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  logger = createRecordingLogger()
})
afterEach(async () => {
  for (const memory of opened.splice(0)) await memory.close()
  await cleanup()
})

async function open(): Promise<VersionedMemory> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false, logger })
  opened.push(memory)
  return memory
}

async function close(memory: VersionedMemory): Promise<void> {
  opened.splice(opened.indexOf(memory), 1)
  await memory.close()
}

/** Packs everything, then flips one bit in the middle of `notes.md`'s packed blob. */
async function packAndRot(): Promise<string> {
  const memory = await open()
  await memory.execute({ command: 'create', path: '/memories/notes.md', file_text: TEXT }, CLAUDE)
  await memory.execute({ command: 'create', path: '/memories/other.md', file_text: 'o\n' }, CLAUDE)
  await memory.maintain({ mergeAll: true })
  await close(memory)
  const blob = gitCli(dataDir, 'rev-parse', 'main:notes.md').trim()
  const packDir = path.join(dataDir, 'history.git', 'objects', 'pack')
  const idx = fs.readdirSync(packDir).find((name) => name.endsWith('.idx'))!
  const line = gitCli(dataDir, 'verify-pack', '-v', path.join(packDir, idx))
    .split('\n')
    .find((l) => l.startsWith(blob))!
  const [, , , inPack, offset] = line.split(/\s+/)
  const file = path.join(packDir, idx.replace(/\.idx$/, '.pack'))
  fs.chmodSync(file, 0o644)
  const fd = fs.openSync(file, 'r+')
  const at = Number(offset) + Math.floor(Number(inPack) / 2)
  const byte = Buffer.alloc(1)
  fs.readSync(fd, byte, 0, 1, at)
  byte[0] = byte[0]! ^ 0x10
  fs.writeSync(fd, byte, 0, 1, at)
  fs.closeSync(fd)
  expect(() => fsck(dataDir)).toThrow()
  return blob
}

async function editAwayAndBack(memory: VersionedMemory): Promise<void> {
  for (const [from, to] of [
    ['line 0 ', 'LINE 0 '],
    ['LINE 0 ', 'line 0 '],
  ]) {
    const result = await memory.execute(
      { command: 'str_replace', path: '/memories/notes.md', old_str: from, new_str: to },
      CLAUDE,
    )
    expect(result.isError, String(result.content)).toBe(false)
  }
}

describe('a damaged object inside a pack', () => {
  it('is mended by writing the same content again, and maintenance then rewrites its pack', async () => {
    const blob = await packAndRot()
    let memory = await open()
    const head = memory.head()!
    await expect(memory.readAt('/memories/notes.md', head)).rejects.toMatchObject({
      code: 'history-damaged',
    })
    await editAwayAndBack(memory)
    // The same blob again: a loose copy now, which reads take instead of the packed one.
    expect(gitCli(dataDir, 'rev-parse', 'main:notes.md').trim()).toBe(blob)
    expect(await memory.readAt('/memories/notes.md', head)).toBe(TEXT)
    expect(await memory.readAt('/memories/notes.md', memory.head()!)).toBe(TEXT)
    // git reads it too (it falls back from a bad packed copy the same way).
    expect(gitCli(dataDir, 'show', 'main:notes.md')).toBe(TEXT)
    await close(memory)

    // A later session, which never read the damaged copy: its maintenance checks the packed
    // copy of a loose object before removing the loose file, finds it damaged, and rewrites
    // the pack from sound copies. The damaged bytes are gone; git fsck is clean again.
    memory = await open()
    await memory.maintain()
    expect(fsck(dataDir)).not.toMatch(/error/)
    expect(await memory.readAt('/memories/notes.md', head)).toBe(TEXT)
    const looseFile = path.join(dataDir, 'history.git', 'objects', blob.slice(0, 2), blob.slice(2))
    expect(fs.existsSync(looseFile)).toBe(false)
    await close(memory)
  })

  it('is reported by maintenance when there is no sound copy, and left in place', async () => {
    const blob = await packAndRot()
    const memory = await open()
    // Something new to pack, so that the pass merges the pack and reads all it holds.
    await memory.execute({ command: 'create', path: '/memories/new.md', file_text: 'n\n' }, CLAUDE)
    const report = await memory.maintain({ mergeAll: true })
    expect(report.unreadable).toContain(blob)
    expect(logger.entries.map((entry) => entry.message).join('\n')).toMatch(
      /maintenance found 1 damaged object/,
    )
    // Nothing was removed: the damaged pack is still the only copy of everything else too.
    expect(gitCli(dataDir, 'show', 'main:other.md')).toBe('o\n')
  })
})
