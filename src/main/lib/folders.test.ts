import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { handlesNameEntries, nodeDisk, setDisk } from './disk'
import { errnoError, hookDisk } from './disk-hooks'
import {
  ChangedUnderfootError,
  FolderDeniedError,
  Folder,
  FolderTree,
  nameEntriesByHandle,
  readFileAndStats,
  readFileIn,
  removeTree,
  writeFileAtomically,
} from './folders'

// Folders held open by handle: the same behaviour whether entries are named through the
// handle (Linux) or by path with identity checks (macOS, Windows), which these tests force.

let base: string
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-folders-'))
  fs.mkdirSync(path.join(base, 'root', 'a', 'b'), { recursive: true })
  fs.writeFileSync(path.join(base, 'root', 'a', 'b', 'f.md'), 'inside\n')
  fs.mkdirSync(path.join(base, 'outside'))
  fs.writeFileSync(path.join(base, 'outside', 'f.md'), 'outside\n')
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10 }))

describe.each([
  ['named through handles', true],
  ['named by path', false],
] as const)('folders %s', (_name, byHandle) => {
  let restore: () => void
  beforeEach(() => {
    restore = nameEntriesByHandle(byHandle)
  })
  afterEach(() => restore())

  it('finds files, folders, missing names, files in the way and links', () => {
    fs.symlinkSync(path.join(base, 'outside'), path.join(base, 'root', 'link'))
    const tree = new FolderTree(path.join(base, 'root'))
    try {
      expect(tree.find('a/b/f.md').kind).toBe('file')
      expect(tree.find('a/b').kind).toBe('directory')
      expect(tree.find('a/b/none.md')).toMatchObject({ kind: 'missing', name: 'none.md' })
      expect(tree.find('a/b/f.md/x')).toMatchObject({ kind: 'under-file', at: 'a/b/f.md' })
      expect(tree.find('link/f.md')).toMatchObject({ kind: 'special', at: 'link' })
      expect(tree.find('link')).toMatchObject({ kind: 'special', at: 'link' })
    } finally {
      tree.close()
    }
  })

  it('refuses a link or a file as a folder, and gives a folder its identity only while open', () => {
    fs.symlinkSync(path.join(base, 'outside'), path.join(base, 'root', 'link'))
    const root = Folder.openRoot(path.join(base, 'root'))
    try {
      // Linux says ENOTDIR for a link opened as a folder without following it, macOS ELOOP.
      const viaLink = (() => {
        try {
          return root.openChild('link')
        } catch (error) {
          return error
        }
      })()
      expect(['ENOTDIR', 'ELOOP']).toContain((viaLink as NodeJS.ErrnoException).code)
      expect(root.openChildIfFolder('link')).toBeNull()
      const inFile = (() => {
        try {
          return root.openChild('a').openChild('b').openChild('f.md')
        } catch (error) {
          return error
        }
      })()
      expect(inFile).toMatchObject({ code: 'ENOTDIR' })
      const child = root.openChild('a')
      expect(child.stats.ino).toBe(fs.lstatSync(path.join(base, 'root', 'a')).ino)
      const unasked = root.openChild('a')
      unasked.close()
      // A closed handle's number may already name another file: never looked up through it.
      // (Named by path, a folder's identity is taken at open, to check the path against.)
      if (byHandle && handlesNameEntries) expect(() => unasked.stats).toThrow()
      else expect(unasked.stats.isDirectory()).toBe(true)
      child.close()
      expect(child.stats.isDirectory()).toBe(true)
    } finally {
      root.close()
    }
  })

  it('reads, writes atomically, creates folders and removes trees inside the root only', async () => {
    const tree = new FolderTree(path.join(base, 'root'))
    try {
      const found = tree.find('a/b/f.md')
      if (found.kind !== 'file') throw new Error('expected a file')
      expect(readFileIn(found.parent, found.name, found.stats).toString()).toBe('inside\n')
      const { folder, created } = tree.ensure('x/y')
      expect(created).toEqual(['x', 'x/y'])
      await writeFileAtomically(folder, 'n.md', 'new\n')
      expect(fs.readFileSync(path.join(base, 'root', 'x', 'y', 'n.md'), 'utf8')).toBe('new\n')
      expect(fs.statSync(path.join(base, 'root', 'x')).mode & 0o777).toBe(0o700)
      removeTree(tree.root(), 'x')
      expect(fs.existsSync(path.join(base, 'root', 'x'))).toBe(false)
    } finally {
      tree.close()
    }
    expect(fs.readFileSync(path.join(base, 'outside', 'f.md'), 'utf8')).toBe('outside\n')
  })

  it('hands a kept read to the next read of that same file only, once', () => {
    const file = path.join(base, 'root', 'a', 'b', 'f.md')
    const tree = new FolderTree(path.join(base, 'root'))
    try {
      const found = tree.find('a/b/f.md')
      if (found.kind !== 'file') throw new Error('expected a file')
      const kept = readFileAndStats(found.parent, found.name)
      tree.keepRead('a/b/f.md', found.parent, kept.stats, Buffer.from('as the check read it\n'))
      // The same file through the same handle: the kept bytes, once; then read again.
      const read = (stats: fs.Stats) => tree.readFile('a/b/f.md', found.parent, 'f.md', stats)
      expect(read(found.stats).toString()).toBe('as the check read it\n')
      expect(read(found.stats).toString()).toBe('inside\n')
      // Another file at that name (renamed over it since): read from the disk.
      tree.keepRead('a/b/f.md', found.parent, kept.stats, Buffer.from('stale\n'))
      fs.writeFileSync(`${file}.new`, 'replaced\n')
      fs.renameSync(`${file}.new`, file)
      expect(read(fs.lstatSync(file)).toString()).toBe('replaced\n')
      // Kept through another handle of the folder, or forgotten with its folder: not used.
      const other = Folder.openRoot(path.join(base, 'root', 'a', 'b'))
      try {
        tree.keepRead('a/b/f.md', other, fs.lstatSync(file), Buffer.from('stale\n'))
        expect(read(fs.lstatSync(file)).toString()).toBe('replaced\n')
      } finally {
        other.close()
      }
      tree.keepRead('a/b/f.md', found.parent, fs.lstatSync(file), Buffer.from('stale\n'))
      tree.forget('a')
      const again = tree.find('a/b/f.md')
      if (again.kind !== 'file') throw new Error('expected a file')
      expect(tree.readFile('a/b/f.md', again.parent, 'f.md', again.stats).toString()).toBe(
        'replaced\n',
      )
    } finally {
      tree.close()
    }
  })

  it('stages new folders under a hidden name: all shown by publish, none left by abort', async () => {
    const tree = new FolderTree(path.join(base, 'root'))
    try {
      const aborted = tree.stage('a/new/deeper')
      await writeFileAtomically(aborted.folder, 'x.md', 'x')
      expect(fs.readdirSync(path.join(base, 'root', 'a')).sort()).toEqual(
        expect.arrayContaining(['b']),
      )
      expect(fs.existsSync(path.join(base, 'root', 'a', 'new'))).toBe(false)
      aborted.abort()
      expect(fs.readdirSync(path.join(base, 'root', 'a'))).toEqual(['b'])

      const staged = tree.stage('a/new/deeper')
      await writeFileAtomically(staged.folder, 'x.md', 'x')
      staged.publish()
      expect(fs.readFileSync(path.join(base, 'root', 'a', 'new', 'deeper', 'x.md'), 'utf8')).toBe(
        'x',
      )
      expect(fs.readdirSync(path.join(base, 'root', 'a')).sort()).toEqual(['b', 'new'])
    } finally {
      tree.close()
    }
  })

  it("starts a staged write's flush when the stage gets it, and closes an abandoned one's file only once that flush is done", async () => {
    const tree = new FolderTree(path.join(base, 'root'))
    const events: string[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const temps = new Set<number>()
    let tempClosed: () => void = () => {}
    const closed = new Promise<void>((resolve) => (tempClosed = resolve))
    const restoreDisk = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        if (file.includes('.cairn-tmp-')) temps.add(fd)
        return fd
      },
      async fsync(fd) {
        if (!temps.has(fd)) return nodeDisk.fsync(fd)
        events.push('flush started')
        await held
        await nodeDisk.fsync(fd)
        events.push('flush done')
      },
      closeSync(fd) {
        if (temps.delete(fd)) {
          events.push('temp closed')
          tempClosed()
        }
        nodeDisk.closeSync(fd)
      },
    })
    try {
      const found = tree.find('a/b/f.md')
      if (found.kind !== 'file') throw new Error('expected a file')
      const written = writeFileAtomically(found.parent, 'f.md', 'replaced\n', {
        stage: async () => {
          // The stage has not asked for the flush: it is under way all the same.
          events.push('staged')
          throw new Error('the commit could not be built')
        },
      })
      await expect(written).rejects.toThrow('the commit could not be built')
      // The temp file is gone at once; its descriptor stays open under the flush in flight.
      expect(fs.readdirSync(path.join(base, 'root', 'a', 'b'))).toEqual(['f.md'])
      expect(events).toEqual(['flush started', 'staged'])
      release()
      // Waited for by the close itself, not polled against a clock.
      await closed
      expect(events).toEqual(['flush started', 'staged', 'flush done', 'temp closed'])
      expect(fs.readFileSync(path.join(base, 'root', 'a', 'b', 'f.md'), 'utf8')).toBe('inside\n')
    } finally {
      release()
      restoreDisk()
      tree.close()
    }
  })

  it("removes a staged write's temp file and closes it when its flush throws at once", async () => {
    const tree = new FolderTree(path.join(base, 'root'))
    const temps = new Set<number>()
    const closed: number[] = []
    let staged = false
    const restoreDisk = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        if (file.includes('.cairn-tmp-')) temps.add(fd)
        return fd
      },
      // A disk whose fsync fails before it returns a promise (none real does; a double may).
      fsync(fd) {
        if (!temps.has(fd)) return nodeDisk.fsync(fd)
        throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
      },
      closeSync(fd) {
        if (temps.delete(fd)) closed.push(fd)
        nodeDisk.closeSync(fd)
      },
    })
    try {
      const found = tree.find('a/b/f.md')
      if (found.kind !== 'file') throw new Error('expected a file')
      const written = writeFileAtomically(found.parent, 'f.md', 'replaced\n', {
        stage: async () => {
          staged = true
        },
      })
      await expect(written).rejects.toThrow('EIO')
      expect(staged).toBe(false)
      expect(fs.readdirSync(path.join(base, 'root', 'a', 'b'))).toEqual(['f.md'])
      expect(closed).toHaveLength(1)
      expect(temps.size).toBe(0)
      expect(fs.readFileSync(path.join(base, 'root', 'a', 'b', 'f.md'), 'utf8')).toBe('inside\n')
    } finally {
      restoreDisk()
      tree.close()
    }
  })

  it('refuses a root that is itself a symlink', () => {
    fs.symlinkSync(path.join(base, 'outside'), path.join(base, 'linked-root'))
    expect(() => Folder.openRoot(path.join(base, 'linked-root'))).toThrow()
  })
})

it('names entries through handles on Linux', () => {
  expect(handlesNameEntries).toBe(process.platform === 'linux')
})

it("gives what it read when the descriptor's close fails, and the read's own error when both fail", () => {
  fs.writeFileSync(path.join(base, 'root', 'r.md'), 'read\n')
  const tree = new FolderTree(path.join(base, 'root'))
  // Every close fails; with `failRead`, every read too.
  let failRead = false
  const faulty = hookDisk(nodeDisk, (call) => {
    if (call.name === 'closeSync') return errnoError(call, 'EACCES')
    if (failRead && call.name === 'readSync') return errnoError(call, 'EIO')
    return undefined
  })
  const found = tree.find('r.md')
  if (found.kind !== 'file') throw new Error('expected a file')
  const restoreDisk = setDisk(faulty.disk)
  try {
    expect(readFileIn(found.parent, found.name, found.stats).toString()).toBe('read\n')
    failRead = true
    expect(() => readFileIn(found.parent, found.name, found.stats)).toThrow(/EIO/)
  } finally {
    restoreDisk()
    tree.close()
  }
})

it('reads whole files of any size with one fstat, and refuses one swapped meanwhile', () => {
  const sizes = [0, 1, 8_191, 200_000]
  for (const size of sizes) {
    fs.writeFileSync(path.join(base, 'root', `s${size}.bin`), crypto.randomBytes(size))
  }
  const names: string[] = []
  const counting = hookDisk(nodeDisk, ({ name }) => {
    names.push(name)
  })
  const tree = new FolderTree(path.join(base, 'root'))
  const restoreDisk = setDisk(counting.disk)
  try {
    for (const size of sizes) {
      const found = tree.find(`s${size}.bin`)
      if (found.kind !== 'file') throw new Error('expected a file')
      names.length = 0
      const read = readFileIn(found.parent, found.name, found.stats)
      expect(read.equals(fs.readFileSync(path.join(base, 'root', `s${size}.bin`)))).toBe(true)
      // The size comes from the one fstat that also checks the file's identity.
      expect(names.filter((name) => name === 'fstatSync')).toEqual(['fstatSync'])
      if (size > 0) expect(names).not.toContain('readFileSync')
    }
    const found = tree.find('s1.bin')
    if (found.kind !== 'file') throw new Error('expected a file')
    fs.renameSync(path.join(base, 'root', 's8191.bin'), path.join(base, 'root', 's1.bin'))
    expect(() => readFileIn(found.parent, found.name, found.stats)).toThrow(ChangedUnderfootError)
  } finally {
    restoreDisk()
    tree.close()
  }
})

// The fault-injection run: one refused read or folder open (EACCES) had open, restore, rename
// and revert take a readable file for unreadable (left out of history, or kept aside).
describe('a read, folder open or listing the system refuses', () => {
  // Refuses the first `times` calls named `name` on `target` (on any, when null) with `code`.
  function refusing(name: string, target: string | null, times: number, code: string) {
    let left = times
    return setDisk(
      hookDisk(nodeDisk, (call) => {
        if (call.name !== name || left === 0) return undefined
        const at = String(call.args[0])
        // Through a handle (`/proc/self/fd/N/name`) or by path: the same entry.
        if (target !== null && at !== target && !at.endsWith(`/${path.basename(target)}`)) {
          return undefined
        }
        left--
        return errnoError(call, code)
      }).disk,
    )
  }
  const root = () => path.join(base, 'root')

  for (const code of ['EACCES', 'EPERM']) {
    it(`is tried once more (${code}): once refused it reads, twice refused it fails`, () => {
      for (const [times, works] of [
        [1, true],
        [2, false],
      ] as const) {
        const tree = new FolderTree(root())
        const b = tree.folder('a/b')
        if (!(b instanceof Folder)) throw new Error('expected a folder')
        let restoreDisk = refusing('openSync', path.join(root(), 'a/b/f.md'), times, code)
        try {
          const read = () => readFileIn(b, 'f.md').toString()
          if (works) expect(read()).toBe('inside\n')
          else expect(read).toThrow(code)
        } finally {
          restoreDisk()
        }
        restoreDisk = refusing('readdirSync', null, times, code)
        try {
          const list = () => b.list().map((entry) => entry.name)
          if (works) expect(list()).toEqual(['f.md'])
          else expect(list).toThrow(code)
        } finally {
          restoreDisk()
          tree.close()
        }
        const again = new FolderTree(root())
        restoreDisk = refusing('openSync', path.join(root(), 'a'), times, code)
        try {
          const open = () => again.folder('a')
          if (works) expect(open()).toBeInstanceOf(Folder)
          else expect(open).toThrow(FolderDeniedError)
        } finally {
          restoreDisk()
          again.close()
        }
      }
    })
  }
})
