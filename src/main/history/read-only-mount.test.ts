import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, commitCount, expectWholeOnReopen, folderFiles, tempDataDir } from './test-helpers'

// An acceptance check of issue #9 (probe28n) on a REAL read-only file system: a read-only
// bind mount over the whole data folder, over `history.git/objects` alone, or over the memory
// folder alone. read-only.test.ts fails write-opens and `mkdir`s at the disk seam; a real
// mount also refuses every rename, unlink, link and truncate, which a delete, a rename and
// the object log's emptying reach. Each change is refused in plain words with the folder as it
// was, or made with its commit owed; reads keep working; once the mount is gone the next open
// commits what was owed, HEAD is the folder and `git fsck --strict` is clean. Needs root with
// mount allowed (mounting throws otherwise, never skips).

let dataDir = ''
let cleanup: () => Promise<void> = async () => {}
const mounts: string[] = []

function bindReadOnly(dir: string): void {
  execFileSync('mount', ['--bind', dir, dir])
  mounts.push(dir)
  execFileSync('mount', ['-o', 'remount,ro,bind', dir])
}

function unbind(dir: string): void {
  execFileSync('umount', [dir])
  mounts.splice(mounts.indexOf(dir), 1)
}

const open = () => openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  const memory = await open()
  for (const [file, text] of [
    ['a.md', 'alpha\n'],
    ['d/b.md', 'beta\n'],
    ['d/c.md', 'gamma\n'],
  ] as const) {
    const made = await memory.execute(
      { command: 'create', path: `/memories/${file}`, file_text: text },
      CLAUDE,
    )
    expect(made.isError).toBe(false)
  }
  await memory.close()
})

afterEach(async () => {
  try {
    for (const dir of [...mounts].reverse()) unbind(dir)
  } finally {
    await cleanup()
  }
})

function expectPlain(message: string, place: RegExp): void {
  expect(message).toMatch(place)
  expect(message).not.toContain(dataDir)
  expect(message).not.toMatch(/EROFS|\n\s+at /)
}

/** Every kind of change, each refused plainly (folder unchanged) or made as asked. */
async function changeEach(memory: VersionedMemory, place: RegExp): Promise<string[]> {
  const first = memory.head()!
  const outcomes: string[] = []
  const inputs: Array<Record<string, unknown>> = [
    { command: 'create', path: '/memories/new.md', file_text: 'new\n' },
    { command: 'create', path: '/memories/x/y.md', file_text: 'y\n' },
    { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'ALPHA' },
    { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'top' },
    { command: 'rename', old_path: '/memories/d/b.md', new_path: '/memories/d/bb.md' },
    { command: 'delete', path: '/memories/d/c.md' },
    { command: 'delete', path: '/memories/d' },
  ]
  for (const input of inputs) {
    const before = await folderFiles(dataDir)
    const result = await memory.execute(input, CLAUDE)
    const label = `${String(input.command)} ${String(input.path ?? input.old_path)}`
    if (result.isError) {
      expectPlain(String(result.content), place)
      expect(await folderFiles(dataDir), label).toEqual(before)
    }
    outcomes.push(`${label}: ${result.isError ? 'refused' : 'made'}`)
    const viewed = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
    expect(viewed.isError, String(viewed.content)).toBe(false)
    expect(await memory.readAt('/memories/a.md', first)).not.toBeNull()
  }
  const before = await folderFiles(dataDir)
  const restored = await memory.restoreAll(first).then(
    () => null,
    (error: unknown) => error,
  )
  if (restored) {
    expect(restored).toBeInstanceOf(CairnError)
    expectPlain((restored as Error).message, place)
    expect(await folderFiles(dataDir)).toEqual(before)
  }
  return outcomes
}

describe('a real read-only mount (probe28n)', () => {
  it('over the whole data folder: open refuses plainly and changes nothing', async () => {
    const files = await folderFiles(dataDir)
    const commits = commitCount(dataDir)
    bindReadOnly(dataDir)
    const error = await open().then(
      async (memory) => {
        await memory.close()
        return null
      },
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(CairnError)
    expect((error as CairnError).code).toBe('read-only')
    expectPlain((error as Error).message, /data folder is read-only/)
    unbind(dataDir)
    expect(await folderFiles(dataDir)).toEqual(files)
    await expectWholeOnReopen(dataDir, files, commits)
  })

  it('over history.git/objects alone: every change refused or owed, all committed after', async () => {
    const commits = commitCount(dataDir)
    const memory = await open()
    let atClose: Map<string, string>
    try {
      bindReadOnly(path.join(dataDir, 'history.git', 'objects'))
      await changeEach(memory, /read-only/)
      atClose = await folderFiles(dataDir)
    } finally {
      await memory.close().catch((error: unknown) => {
        expectPlain((error as Error).message, /read-only/)
      })
    }
    unbind(path.join(dataDir, 'history.git', 'objects'))
    await expectWholeOnReopen(dataDir, atClose, commits)
  })

  it('over the memory folder alone: every change refused, nothing changed', async () => {
    const commits = commitCount(dataDir)
    const files = await folderFiles(dataDir)
    const memory = await open()
    try {
      bindReadOnly(path.join(dataDir, 'memories'))
      const outcomes = await changeEach(memory, /memory folder is read-only/)
      expect(
        outcomes.every((o) => o.endsWith('refused')),
        outcomes.join('\n'),
      ).toBe(true)
    } finally {
      await memory.close()
    }
    unbind(path.join(dataDir, 'memories'))
    expect(commitCount(dataDir)).toBe(commits)
    await expectWholeOnReopen(dataDir, files, commits)
  })
})
