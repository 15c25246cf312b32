import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, fsck, gitCli, headFiles, tempDataDir } from './test-helpers'

// A file or folder in memories/ that Cairn may not read (another account's, mode 000) stopped
// Cairn from starting without naming it and, met while running, failed every later write
// until a restart (review hunt10 D3). The tests run as root, who reads a 000 file, so the
// disk seam denies opening those entries as the system does for any other account (the
// review's run as `nobody` showed the same errors).

let dataDir: string
let cleanup: () => Promise<void>
let undoDisk: () => void = () => {}
const open = () => openVersionedMemory({ dataDir, watch: false })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  undoDisk()
  undoDisk = () => {}
  await cleanup()
})

/** From now on, opening `private.md` or the folder `locked` anywhere is denied. */
function denyReading(): void {
  const hooked = hookDisk(nodeDisk, (call) => {
    if (call.name !== 'openSync') return undefined
    const target = String(call.args[0])
    if (target.endsWith('/private.md') || target.endsWith('/locked')) {
      return errnoError(call, 'EACCES')
    }
    return undefined
  })
  undoDisk = setDisk(hooked.disk)
}

async function put(relative: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(dataDir, 'memories', relative)), { recursive: true })
  await writeFile(path.join(dataDir, 'memories', relative), text)
}

async function strReplace(memory: VersionedMemory, from: string, to: string) {
  return memory.execute(
    { command: 'str_replace', path: '/memories/a.md', old_str: from, new_str: to },
    CLAUDE,
  )
}

function expectNamed(memory: VersionedMemory, virtual: string): void {
  const found = memory.notices().filter((notice) => notice.kind === 'unreadable')
  const one = found.filter((notice) => notice.path === virtual)
  expect(one).toHaveLength(1)
  expect(one[0]!.message).toContain(virtual)
  expect(one[0]!.message).toMatch(/cannot read it/)
  expect(one[0]!.message).not.toContain(dataDir)
}

describe('memory files Cairn may not read (D3)', () => {
  it('opens, names each once, keeps their last version and lets every write go on', async () => {
    let memory = await open()
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    await memory.close()
    await put('private.md', 'secret\n')
    await put('locked/inside.md', 'inside\n')
    await put('b.md', 'b\n')
    denyReading()
    memory = await open()
    try {
      expectNamed(memory, '/memories/private.md')
      expectNamed(memory, '/memories/locked')
      // The readable outside edit is saved; the unreadable entries are not.
      expect([...headFiles(dataDir).keys()].sort()).toEqual(['a.md', 'b.md'])
      expect((await strReplace(memory, 'a', 'a1')).isError).toBe(false)
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      await memory.restoreAll(head)
      expect((await strReplace(memory, 'a1', 'a2')).isError).toBe(false)
      expect(headFiles(dataDir).get('a.md')).toBe('a2\n')
      // Named once in the session, however many scans met them.
      expectNamed(memory, '/memories/private.md')
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(dataDir)
  })

  it('keeps a file that became unreadable while running at its last version', async () => {
    const memory = await open()
    try {
      await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
      await memory.execute(
        { command: 'create', path: '/memories/private.md', file_text: 'v1\n' },
        CLAUDE,
      )
      await put('private.md', 'v2, written by another account\n')
      denyReading()
      const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
      // A full scan meets it (a restore-all catches up with the whole folder first).
      await memory.restoreAll(head)
      for (let i = 0; i < 3; i++) {
        const result = await strReplace(memory, i === 0 ? 'a' : `a${i - 1}`, `a${i}`)
        expect(result.isError).toBe(false)
      }
      const created = await memory.execute(
        { command: 'create', path: '/memories/new.md', file_text: 'n\n' },
        CLAUDE,
      )
      expect(created.isError).toBe(false)
      expectNamed(memory, '/memories/private.md')
      expect(gitCli(dataDir, 'show', 'main:private.md')).toBe('v1\n')
    } finally {
      await memory.close()
    }
    undoDisk()
    fsck(dataDir)
  })
})
