import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import path from 'node:path'
import { nodeDisk, OPEN, setDisk, type Disk } from '../lib/disk'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, folderFiles, fsck, headMatchesFolder, tempDataDir } from './test-helpers'

// How often one command opens the memory folder's chain of folders and looks at its target,
// counted at the disk seam: the history's check of the paths a command touches, the command
// itself and its commit share one walk (one handle per folder, one `lstat` of the target).

let dataDir: string
let memories: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let restoreDisk: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memories = path.join(dataDir, 'memories')
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  for (const [file, text] of [
    ['area/topic/note.md', 'revision 1\nsecond line\n'],
    ['area/topic/other.md', 'other\n'],
    ['area/old/gone.md', 'gone\n'],
  ] as const) {
    const made = await memory.execute(
      { command: 'create', path: `/memories/${file}`, file_text: text },
      CLAUDE,
    )
    expect(made.isError).toBe(false)
  }
})

afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  await memory.close()
  await cleanup()
})

interface Calls {
  /** The memory folders opened as a walk opens them (O_DIRECTORY | O_NOFOLLOW), by name. */
  readonly folders: string[]
  /** Every `lstat` by the name it looked at (the last segment of its path). */
  readonly lstats: string[]
  /** Memory folders a walk tried to open and found missing, by name. */
  readonly missing: string[]
  /** `fstat`s of a memory write's temp file. */
  tempFstats: number
  /** Memory files opened to be read, by name. */
  readonly reads: string[]
}

// Memory folders are opened by their real path (the root) or through their parent's handle.
function isMemoryFolder(file: string): boolean {
  return file === memories || file.startsWith('/proc/self/fd/') || file.startsWith(`${memories}/`)
}

function countingDisk(calls: Calls): Disk {
  const temps = new Set<number>()
  const lstatOf = (file: string) => calls.lstats.push(path.basename(file))
  return {
    ...nodeDisk,
    openSync(file, flags, mode) {
      const walk = OPEN.DIRECTORY | OPEN.NOFOLLOW
      let fd: number
      try {
        fd = nodeDisk.openSync(file, flags, mode)
      } catch (error) {
        if ((flags & walk) === walk && isMemoryFolder(file)) calls.missing.push(path.basename(file))
        throw error
      }
      if ((flags & walk) === walk && isMemoryFolder(file)) {
        calls.folders.push(file === memories ? 'memories' : path.basename(file))
      }
      const writes = OPEN.WRITE_NEW | OPEN.READ_WRITE_NEW
      if (
        (flags & OPEN.DIRECTORY) === 0 &&
        (flags & writes) === 0 &&
        isMemoryFolder(file) &&
        !file.includes('.cairn-tmp-')
      ) {
        calls.reads.push(path.basename(file))
      }
      if (file.includes('.cairn-tmp-')) temps.add(fd)
      else temps.delete(fd)
      return fd
    },
    closeSync(fd) {
      temps.delete(fd)
      nodeDisk.closeSync(fd)
    },
    fstatSync(fd) {
      if (temps.has(fd)) calls.tempFstats++
      return nodeDisk.fstatSync(fd)
    },
    lstatSync(file) {
      lstatOf(file)
      return nodeDisk.lstatSync(file)
    },
    lstatIfThere(file) {
      lstatOf(file)
      return nodeDisk.lstatIfThere(file)
    },
  }
}

async function counted(input: Record<string, unknown>): Promise<Calls> {
  const calls: Calls = { folders: [], lstats: [], missing: [], tempFstats: 0, reads: [] }
  restoreDisk = setDisk(countingDisk(calls))
  try {
    const outcome = await memory.execute(input, CLAUDE)
    expect(outcome.isError, JSON.stringify(outcome.content)).toBe(false)
    if (input.command !== 'view') expect(outcome.commit).not.toBeNull()
  } finally {
    restoreDisk()
    restoreDisk = null
  }
  return calls
}

const note = '/memories/area/topic/note.md'

describe('one command, one walk of the memory folder', () => {
  it.each([
    ['str_replace', { command: 'str_replace', path: note, old_str: 'revision 1', new_str: 'r2' }],
    ['insert', { command: 'insert', path: note, insert_line: 1, insert_text: 'inserted' }],
    ['create over an existing file', { command: 'create', path: note, file_text: 'new\n' }],
    ['view', { command: 'view', path: note }],
  ] as const)(
    '%s opens each folder on the way once, reads the file once and looks at it once (a view: twice)',
    async (_, input) => {
      const calls = await counted(input)
      expect(calls.folders).toEqual(['memories', 'area', 'topic'])
      // A view looks at its file once more first, against the stat cache: whether another
      // program saved it since the watcher last said, so what Claude reads is in the history
      // (saw31's settleForView).
      const looks = input.command === 'view' ? ['note.md', 'note.md'] : ['note.md']
      expect(calls.lstats.filter((name) => name === 'note.md')).toEqual(looks)
      // What was written is known: its temp file is not asked about it before its rename.
      expect(calls.tempFstats).toBe(0)
      // The check of the path reads the file (Cairn wrote it last: the stat cache holds only its
      // size) to hash it; the command, an edit or a view, takes those bytes instead of reading
      // it again.
      expect(calls.reads.filter((name) => name === 'note.md')).toEqual(['note.md'])
      expect(await headMatchesFolder(dataDir)).toBe(true)
    },
  )

  it('a delete opens each folder once, its commit included', async () => {
    const calls = await counted({ command: 'delete', path: note })
    expect(calls.folders).toEqual(['memories', 'area', 'topic'])
    expect((await folderFiles(dataDir)).has('area/topic/note.md')).toBe(false)
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it('a rename into a new folder opens each existing folder once, its commit included', async () => {
    const calls = await counted({
      command: 'rename',
      old_path: note,
      new_path: '/memories/area/fresh/moved.md',
    })
    // `fresh` is found missing once, then made by the rename and opened once to put the file in.
    expect(calls.folders).toEqual(['memories', 'area', 'topic', 'fresh'])
    expect(calls.missing).toEqual(['fresh'])
    expect((await folderFiles(dataDir)).get('area/fresh/moved.md')).toBe(
      'revision 1\nsecond line\n',
    )
    expect(await headMatchesFolder(dataDir)).toBe(true)
    expect(fsck(dataDir)).toBe('')
  })

  it('a create in new folders looks for them once and opens each folder once', async () => {
    const calls = await counted({
      command: 'create',
      path: '/memories/area/fresh/deeper/new.md',
      file_text: 'new\n',
    })
    expect(calls.missing).toEqual(['fresh'])
    // The new folders are made under a temp name and renamed into place; the commit's scan goes
    // through the handles they were made with.
    expect(calls.folders.slice(0, 2)).toEqual(['memories', 'area'])
    expect(calls.folders.slice(2)).toEqual([expect.stringMatching(/^\.cairn-tmp-/), 'deeper'])
    expect((await folderFiles(dataDir)).get('area/fresh/deeper/new.md')).toBe('new\n')
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it('a delete of a folder looks at it once before it goes, and its commit once after', async () => {
    const calls = await counted({ command: 'delete', path: '/memories/area/old' })
    // The check and the command share one `lstat`; the commit's finds the folder gone.
    expect(calls.lstats.filter((name) => name === 'old')).toEqual(['old', 'old'])
    // Its contents are read once by the check, once for files history holds no copy of (a
    // delete keeps those: delete-keeps.test.ts), and once to remove them (renamed aside).
    expect(calls.folders.slice(0, 4)).toEqual(['memories', 'area', 'old', 'old'])
    expect(calls.folders.slice(4)).toEqual([expect.stringMatching(/^\.cairn-tmp-/)])
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it('still sees an edit made outside Cairn before the command, and commits it first', async () => {
    const { writeFileSync } = await import('node:fs')
    writeFileSync(path.join(memories, 'area/topic/note.md'), 'revision 1 by hand\n')
    const before = (await memory.log({ offset: 0, limit: 10 })).total
    const calls = await counted({
      command: 'str_replace',
      path: note,
      old_str: 'by hand',
      new_str: 'and by Claude',
    })
    expect(calls.folders.filter((name) => name === 'topic').length).toBeGreaterThanOrEqual(1)
    const log = await memory.log({ offset: 0, limit: 10 })
    expect(log.total).toBe(before + 2)
    expect(log.entries[1]!.actor).toBe('system')
    expect((await folderFiles(dataDir)).get('area/topic/note.md')).toBe(
      'revision 1 and by Claude\n',
    )
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })
})
