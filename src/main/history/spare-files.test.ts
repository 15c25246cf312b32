import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { openVersionedMemory, type VersionedMemory } from './index'
import { SPARE_FILES, SPARE_PREFIX } from './object-store'
import {
  CLAUDE,
  fsck,
  gitCli,
  headMatchesFolder,
  leftoverTempFiles,
  runKilledChild,
  tempDataDir,
} from './test-helpers'

// A command's objects are written into spare files the object store made between commands
// (object-store.ts, `makeSpares`): no file is created under objects/ on the command's path.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null
let undoDisk: (() => void) | null

const objectsDir = () => path.join(dataDir, 'history.git', 'objects')
const sparesThere = () => fs.readdirSync(objectsDir()).filter((n) => n.startsWith(SPARE_PREFIX))

// Symbolic links in objects/' folders (where objects are).
function linksUnderObjects(): string[] {
  return fs
    .readdirSync(objectsDir(), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.includes(path.sep))
    .filter((name) => fs.lstatSync(path.join(objectsDir(), name)).isSymbolicLink())
}

async function edit(from: string, to: string): Promise<string> {
  const outcome = await memory!.execute(
    { command: 'str_replace', path: '/memories/a.md', old_str: from, new_str: to },
    CLAUDE,
  )
  expect(outcome.isError).toBe(false)
  expect(outcome.commit).not.toBeNull()
  return outcome.commit!.oid
}

// Files created under objects/ while `run` runs (an open with O_CREAT).
async function createdDuring(run: () => Promise<unknown>): Promise<string[]> {
  const created: string[] = []
  undoDisk = setDisk({
    ...nodeDisk,
    openSync: (file, flags, mode) => {
      if (flags & fs.constants.O_CREAT && file.startsWith(objectsDir())) created.push(file)
      return nodeDisk.openSync(file, flags, mode)
    },
  })
  try {
    await run()
  } finally {
    undoDisk()
    undoDisk = null
  }
  return created
}

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'v0\n' }, CLAUDE)
  undoDisk = null
})

afterEach(async () => {
  undoDisk?.()
  await memory?.close()
  await cleanup()
})

describe('spare files for objects', () => {
  it('are made between commands, so a command creates no file under objects/', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    let oid = ''
    const created = await createdDuring(async () => (oid = await edit('v0', 'v1')))
    expect(created).toEqual([])
    expect(gitCli(dataDir, 'show', `${oid}:a.md`)).toBe('v1\n')
    // The spares it used are made again once it has returned.
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    fsck(dataDir)
  })

  // Claude may send several memory commands in one message: they are queued back to back, with
  // no moment between them to make spares again. A nested edit writes five objects (the file,
  // three folders' trees, the commit); three of them in a row must still find a spare for each.
  it('are enough for three nested edits queued at once: none creates a file under objects/', async () => {
    for (const n of [1, 2, 3]) {
      const outcome = await memory!.execute(
        { command: 'create', path: `/memories/deep/er/x${n}.md`, file_text: `x${n} v0\n` },
        CLAUDE,
      )
      expect(outcome.commit).not.toBeNull()
    }
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    let outcomes: Awaited<ReturnType<VersionedMemory['execute']>>[] = []
    const created = await createdDuring(async () => {
      outcomes = await Promise.all(
        [1, 2, 3].map((n) =>
          memory!.execute(
            {
              command: 'str_replace',
              path: `/memories/deep/er/x${n}.md`,
              old_str: 'v0',
              new_str: 'v1',
            },
            CLAUDE,
          ),
        ),
      )
    })
    expect(created).toEqual([])
    const commits = outcomes.map((outcome) => outcome.commit?.oid)
    expect(new Set(commits).size).toBe(3)
    for (const [i, oid] of commits.entries()) {
      expect(gitCli(dataDir, 'show', `${oid}:deep/er/x${i + 1}.md`)).toBe(`x${i + 1} v1\n`)
    }
    fsck(dataDir)
  })

  it('are removed at close', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    await memory!.close()
    memory = null
    expect(sparesThere()).toEqual([])
    expect(leftoverTempFiles(dataDir)).toEqual([])
  })

  it('lose nothing when a spare was removed meanwhile (git prune): the object is written anew', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    for (const name of sparesThere()) fs.unlinkSync(path.join(objectsDir(), name))
    const oid = await edit('v0', 'v1')
    expect(gitCli(dataDir, 'show', `${oid}:a.md`)).toBe('v1\n')
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
    await memory!.close()
    memory = null
    expect(leftoverTempFiles(dataDir)).toEqual([])
    expect(sparesThere()).toEqual([])
  })

  it('are all made again after a git prune removed them, once a write found one gone', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    gitCli(dataDir, 'prune', '--expire=now')
    expect(sparesThere()).toEqual([])
    await edit('v0', 'v1')
    // The spares still held had lost their names too: they are not kept as ready.
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    let oid = ''
    expect(await createdDuring(async () => (oid = await edit('v1', 'v2')))).toEqual([])
    expect(gitCli(dataDir, 'show', `${oid}:a.md`)).toBe('v2\n')
    fsck(dataDir)
  })

  // A spare waits in objects/ for minutes, where a temp file lived for one call: another
  // process may put something else under its name meanwhile. The descriptor is what was
  // written, so the name renamed into place must still be that file, or the object's name
  // would hold bytes that are not the object (a link followed on every read).
  it('whose name now holds a link to another file are not renamed into place', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    const elsewhere = path.join(dataDir, 'elsewhere.txt')
    fs.writeFileSync(elsewhere, 'not an object\n')
    for (const name of sparesThere()) {
      fs.unlinkSync(path.join(objectsDir(), name))
      fs.symlinkSync(elsewhere, path.join(objectsDir(), name))
    }
    const oid = await edit('v0', 'v1')
    expect(gitCli(dataDir, 'show', `${oid}:a.md`)).toBe('v1\n')
    expect(linksUnderObjects()).toEqual([])
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe('not an object\n')
    fsck(dataDir)
    await memory!.close()
    memory = null
    expect(sparesThere()).toEqual([])
  })

  it('whose name now holds another file, or bytes written through it, are not renamed into place', async () => {
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    const names = sparesThere()
    names.forEach((name, i) => {
      const file = path.join(objectsDir(), name)
      if (i % 2 === 0) {
        // Another file under the name.
        fs.unlinkSync(file)
        fs.writeFileSync(file, 'x')
      } else {
        // The same file, filled through its name: longer than any object this edit writes.
        fs.chmodSync(file, 0o644)
        fs.writeFileSync(file, 'y'.repeat(4096))
      }
    })
    const oid = await edit('v0', 'v1')
    expect(gitCli(dataDir, 'show', `${oid}:a.md`)).toBe('v1\n')
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })

  it('left by a kill are removed by the next instance, at its first write', async () => {
    await memory!.close()
    memory = null
    const history = path.resolve('src/main/history/index.ts')
    await runKilledChild(`
      const { openVersionedMemory } = await import(${JSON.stringify(history)})
      const fs = await import('node:fs')
      const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
      await memory.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'v0', new_str: 'v1' }, { actor: 'claude', conversationId: 'c', toolUseId: 't' })
      const objects = ${JSON.stringify(objectsDir())}
      while (fs.readdirSync(objects).filter((n) => n.startsWith(${JSON.stringify(SPARE_PREFIX)})).length < ${SPARE_FILES}) {
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      process.kill(process.pid, 'SIGKILL')
    `)
    const left = sparesThere()
    expect(left.length).toBe(SPARE_FILES)
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    expect(fs.readFileSync(path.join(dataDir, 'memories', 'a.md'), 'utf8')).toBe('v1\n')
    // Its first write lists objects/ and removes them; its own are made after it.
    await edit('v1', 'v2')
    await vi.waitFor(() => expect(sparesThere().length).toBe(SPARE_FILES), { timeout: 30_000 })
    expect(sparesThere().filter((name) => left.includes(name))).toEqual([])
    fsck(dataDir)
  }, 60_000)
})
