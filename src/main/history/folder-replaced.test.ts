import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, folderFiles, fsck, gitCli, headFiles, tempDataDir } from './test-helpers'

// A folder replaced by another of the same name (the memory folder or any folder in it:
// `rm -rf` then `mkdir`, or the old one renamed away) was no longer watched, and the root's
// replacement was not noticed by the next command either: HEAD stayed apart from the folder
// until a restart (review hunt10 D1). ext4 gives the new folder the old inode number back.

let dataDir: string
let root: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  root = path.join(dataDir, 'memories')
})
afterEach(async () => {
  await memory?.close()
  memory = null
  await cleanup()
})

async function open(watch: boolean): Promise<VersionedMemory> {
  memory = await openVersionedMemory({
    dataDir,
    watch: watch ? { debounceMs: 30 } : false,
    maintenance: false,
    logger: createRecordingLogger(),
  })
  return memory
}

const create = (m: VersionedMemory, relative: string, text: string) =>
  m.execute({ command: 'create', path: `/memories/${relative}`, file_text: text }, CLAUDE)

const headNames = () =>
  gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n').filter(Boolean)

async function expectHeadIsFolder(): Promise<void> {
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
}

const replacements = {
  'rm -rf and mkdir': (dir: string) => {
    fs.rmSync(dir, { recursive: true })
    fs.mkdirSync(dir)
  },
  'renamed away and mkdir': (dir: string) => {
    fs.renameSync(dir, `${dir}.old`)
    fs.mkdirSync(dir)
  },
}

describe('the memory folder replaced while Cairn runs (D1)', () => {
  for (const [how, replace] of Object.entries(replacements)) {
    it(`reads the new one whole at the next command: ${how}`, async () => {
      const m = await open(false)
      await create(m, 'a.md', 'a\n')
      replace(root)
      fs.writeFileSync(path.join(root, 'b.md'), 'b\n')
      expect((await create(m, 'c.md', 'c\n')).isError).toBe(false)
      expect(headNames()).toEqual(['b.md', 'c.md'])
      await expectHeadIsFolder()
      fsck(dataDir)
    })

    it(`watches the new one: ${how}`, async () => {
      const m = await open(true)
      await create(m, 'a.md', 'a\n')
      replace(root)
      fs.writeFileSync(path.join(root, 'b.md'), 'b\n')
      // The next command (or the watcher's own save of the removal) notices the new folder.
      await vi.waitFor(() => expect(headNames()).toContain('b.md'), {
        timeout: 10_000,
        interval: 50,
      })
      fs.writeFileSync(path.join(root, 'b.md'), 'b edited\n')
      fs.writeFileSync(path.join(root, 'typed.md'), 'typed\n')
      await vi.waitFor(() => expect(gitCli(dataDir, 'show', 'main:typed.md')).toBe('typed\n'), {
        timeout: 10_000,
        interval: 50,
      })
      await vi.waitFor(() => expect(gitCli(dataDir, 'show', 'main:b.md')).toBe('b edited\n'), {
        timeout: 10_000,
        interval: 50,
      })
      await expectHeadIsFolder()
      fsck(dataDir)
    })
  }
})

describe('a folder in the memory folder replaced while Cairn watches (D1)', () => {
  for (const [how, replace] of Object.entries(replacements)) {
    it(`watches the new folder of the same name: ${how}`, async () => {
      const m = await open(true)
      await create(m, 'sub/a.md', 'a\n')
      replace(path.join(root, 'sub'))
      fs.writeFileSync(path.join(root, 'sub', 'b.md'), 'b\n')
      await vi.waitFor(() => expect(headNames()).toContain('sub/b.md'), {
        timeout: 10_000,
        interval: 50,
      })
      // Edits inside the new folder, and a folder made in it, are seen as they happen.
      fs.writeFileSync(path.join(root, 'sub', 'b.md'), 'b2\n')
      fs.mkdirSync(path.join(root, 'sub', 'deep'))
      fs.writeFileSync(path.join(root, 'sub', 'deep', 'c.md'), 'c\n')
      await vi.waitFor(
        () => {
          expect(headNames()).toContain('sub/deep/c.md')
          expect(gitCli(dataDir, 'show', 'main:sub/b.md')).toBe('b2\n')
        },
        { timeout: 10_000, interval: 50 },
      )
      await expectHeadIsFolder()
      fsck(dataDir)
    })
  }
})
