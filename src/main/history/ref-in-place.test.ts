import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { prepareMainRef, writeMainRef } from './object-store'
import {
  CLAUDE,
  commitCount,
  fsck,
  gitCli,
  headMatchesFolder,
  leftoverTempFiles,
  tempDataDir,
} from './test-helpers'

// A commit whose ref value the write-ahead log holds moves `main` by writing its file in
// place (docs/durability.md, "Cost"): no file is created or freed. A ref file not of the usual
// form (packed away by git, another length, a link) is replaced as before; git reads every one.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

const refFile = () => path.join(dataDir, 'history.git', 'refs', 'heads', 'main')
const head = () => gitCli(dataDir, 'rev-parse', 'main').trim()

async function edit(from: string, to: string): Promise<string> {
  const outcome = await memory.execute(
    { command: 'str_replace', path: '/memories/a.md', old_str: from, new_str: to },
    CLAUDE,
  )
  expect(outcome.isError).toBe(false)
  expect(outcome.commit).not.toBeNull()
  return outcome.commit!.oid
}

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'v0\n' }, CLAUDE)
})

afterEach(async () => {
  await memory.close()
  await cleanup()
})

describe('moving main after a logged commit', () => {
  it('writes the ref file in place: the same file, the new value, git agrees', async () => {
    const before = fs.statSync(refFile()).ino
    let previous = head()
    for (let i = 1; i <= 5; i++) {
      const oid = await edit(`v${i - 1}`, `v${i}`)
      expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${oid}\n`)
      expect(head()).toBe(oid)
      expect(gitCli(dataDir, 'rev-parse', 'main^').trim()).toBe(previous)
      previous = oid
    }
    expect(fs.statSync(refFile()).ino).toBe(before)
    expect(gitCli(dataDir, 'show', 'main:a.md')).toBe('v5\n')
    expect(leftoverTempFiles(dataDir)).toEqual([])
    fsck(dataDir)
  })

  it('writes it anew when git packed it away (pack-refs removed the loose file)', async () => {
    gitCli(dataDir, 'pack-refs', '--all', '--prune')
    expect(fs.existsSync(refFile())).toBe(false)
    const oid = await edit('v0', 'v1')
    expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${oid}\n`)
    expect(head()).toBe(oid)
    expect(gitCli(dataDir, 'show', 'main:a.md')).toBe('v1\n')
    fsck(dataDir)
  })

  for (const [name, form] of [
    ['without its newline', (oid: string) => oid],
    ['with a CRLF', (oid: string) => `${oid}\r\n`],
  ] as const) {
    it(`replaces a ref file ${name} whole instead of writing over part of it`, async () => {
      fs.writeFileSync(refFile(), form(head()))
      const oid = await edit('v0', 'v1')
      expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${oid}\n`)
      expect(head()).toBe(oid)
      fsck(dataDir)
    })
  }

  it('never writes through a link at refs/heads/main: it is replaced by a file', async () => {
    const elsewhere = path.join(dataDir, 'elsewhere')
    fs.writeFileSync(elsewhere, `${head()}\n`)
    fs.rmSync(refFile())
    fs.symlinkSync(elsewhere, refFile())
    const before = fs.readFileSync(elsewhere, 'utf8')
    const oid = await edit('v0', 'v1')
    expect(fs.lstatSync(refFile()).isFile()).toBe(true)
    expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${oid}\n`)
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe(before)
    fsck(dataDir)
  })

  it('never writes through a hard link: the other name keeps its value (a cp -al snapshot)', async () => {
    const snapshot = path.join(dataDir, 'snapshot-main')
    fs.linkSync(refFile(), snapshot)
    const before = fs.readFileSync(snapshot, 'utf8')
    const oid = await edit('v0', 'v1')
    expect(fs.readFileSync(snapshot, 'utf8')).toBe(before)
    expect(fs.statSync(refFile()).nlink).toBe(1)
    expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${oid}\n`)
    expect(head()).toBe(oid)
    fsck(dataDir)
  })

  it('keeps every commit across a close and a reopen', async () => {
    const commits = commitCount(dataDir)
    const oid = await edit('v0', 'v1')
    await memory.close()
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    expect(memory.recovery).toBeNull()
    expect(head()).toBe(oid)
    expect(commitCount(dataDir)).toBe(commits + 1)
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })
})

// A read racing the in-place write may see part of each value: 40 hex digits and a newline
// naming no commit. At open the ref is read by the log's replay, by the search for the head and
// by an interrupted sync's move; each reads it again until two reads agree, so a torn read is
// never taken for a lost or damaged `main` (a search for the tip, a recovery report).
describe('a torn read of the ref file at open', () => {
  /** Opens with the `k`-th whole read of the ref file torn (half of `older`'s id); reads made. */
  async function openTearingRead(k: number, older: string): Promise<number> {
    let reads = 0
    // The ref file is read through a descriptor of its own (`readPlainFile`): the first read
    // of bytes from such a descriptor is a whole read of it.
    const refReads = new Set<number>()
    const undo = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        const reading = (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) === 0
        if (reading && file.endsWith(path.join('refs', 'heads', 'main'))) refReads.add(fd)
        return fd
      },
      closeSync(fd) {
        refReads.delete(fd)
        nodeDisk.closeSync(fd)
      },
      readSync(fd, buffer, offset, length, position) {
        const got = nodeDisk.readSync(fd, buffer, offset, length, position)
        if (got === 0 || !refReads.delete(fd)) return got
        if (++reads === k) buffer.set(Buffer.from(older.slice(0, 20)), offset)
        return got
      },
    })
    try {
      memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    } finally {
      undo()
    }
    return reads
  }

  it('opens at the same main, with no recovery, whichever read is torn', async () => {
    const older = head()
    await edit('v0', 'v1')
    const newest = head()
    const count = commitCount(dataDir)
    await memory.close()
    const reads = await openTearingRead(0, older)
    await memory.close()
    expect(reads).toBeGreaterThan(0)
    for (let k = 1; k <= reads; k++) {
      const made = await openTearingRead(k, older)
      expect(made).toBeGreaterThanOrEqual(k)
      expect(memory.head()).toBe(newest)
      expect(memory.recovery).toBeNull()
      await memory.close()
      expect(head()).toBe(newest)
      expect(commitCount(dataDir)).toBe(count)
      expect(fs.readFileSync(refFile(), 'utf8')).toBe(`${newest}\n`)
    }
    fsck(dataDir)
  })
})

// Before every change, and again just before `main` moves, the ref file is compared with
// the head Cairn holds (outside-move.ts). A first read that says that head is taken at once:
// one read a check, not two; a read that differs (torn, or a real move) is read again until
// two agree, as at open.
describe('the check of main before a change', () => {
  /** Runs one edit with the `k`-th whole read of the ref file torn (0: none); reads made. */
  async function editTearingRead(k: number, older: string, from: string, to: string) {
    let reads = 0
    const refReads = new Set<number>()
    const undo = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        const reading = (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) === 0
        if (reading && file.endsWith(path.join('refs', 'heads', 'main'))) refReads.add(fd)
        return fd
      },
      closeSync(fd) {
        refReads.delete(fd)
        nodeDisk.closeSync(fd)
      },
      readSync(fd, buffer, offset, length, position) {
        const got = nodeDisk.readSync(fd, buffer, offset, length, position)
        if (got === 0 || !refReads.delete(fd)) return got
        if (++reads === k) buffer.set(Buffer.from(older.slice(0, 20)), offset)
        return got
      },
    })
    try {
      return { oid: await edit(from, to), reads }
    } finally {
      undo()
    }
  }

  it('reads the ref file once a check when main is where Cairn left it', async () => {
    const before = head()
    const { oid, reads } = await editTearingRead(0, before, 'v0', 'v1')
    // One check before the change, one before main moves.
    expect(reads).toBe(2)
    expect(head()).toBe(oid)
    expect(gitCli(dataDir, 'rev-parse', 'main^').trim()).toBe(before)
    fsck(dataDir)
  })

  it('takes no torn read for a move: the change is committed on top, whichever read is torn', async () => {
    const older = head()
    let previous = (await editTearingRead(0, older, 'v0', 'v1')).oid
    for (let k = 1; k <= 2; k++) {
      const { oid, reads } = await editTearingRead(k, older, `v${k}`, `v${k + 1}`)
      // After the torn read the file is read until two reads agree: two reads more.
      expect(reads).toBe(4)
      expect(memory.head()).toBe(oid)
      expect(head()).toBe(oid)
      expect(gitCli(dataDir, 'rev-parse', 'main^').trim()).toBe(previous)
      expect(gitCli(dataDir, 'show', 'main:a.md')).toBe(`v${k + 1}\n`)
      previous = oid
    }
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })
})

describe('a ref temp file whose close fails', () => {
  const refTemps = () =>
    closesFailing((file) => file.startsWith(`${refFile()}.`) && file.endsWith('.lock'))

  it('moves main all the same once the file was fsynced', async () => {
    const before = head()
    const oid = await edit('v0', 'v1')
    const failing = refTemps()
    const restore = setDisk(failing.disk)
    try {
      await writeMainRef(path.join(dataDir, 'history.git'), before)
    } finally {
      restore()
    }
    expect(failing.failed()).toBe(1)
    expect(head()).toBe(before)
    await writeMainRef(path.join(dataDir, 'history.git'), oid)
    expect(head()).toBe(oid)
    expect(leftoverTempFiles(dataDir)).toEqual([])
  })

  it('fails the move, main unchanged, when the file was not fsynced', async () => {
    const before = head()
    const failing = refTemps()
    const restore = setDisk(failing.disk)
    try {
      const ref = prepareMainRef(path.join(dataDir, 'history.git'), '1'.repeat(40))
      expect(() => ref.move()).toThrow(/EIO/)
    } finally {
      restore()
    }
    expect(failing.failed()).toBe(1)
    expect(head()).toBe(before)
    expect(fs.readdirSync(path.dirname(refFile()))).toEqual(['main'])
  })
})
