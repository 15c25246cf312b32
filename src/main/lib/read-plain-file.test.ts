import { appendFileSync, truncateSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  errorCode,
  isNotPlainFile,
  nodeDisk,
  readPlainFile,
  readPlainFileAsync,
  setDisk,
  TOO_LARGE,
} from './disk'
import { OWN_FILE_CAP } from './own-file-caps'

// The review of disk29 (rdisk29): `readPlainFile` sized its reads by the file's size when it
// was opened, and once past it read one byte a call: a file that grew while read (the search
// records a second instance appends to, a log someone writes) took one read(2) per byte that
// came after the look, a megabyte a million calls.

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-plain-'))
})
afterEach(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))

describe('readPlainFile on a file that grows while read', () => {
  it('reads all of it, what came after the look in large reads, not a byte a call', () => {
    const file = path.join(dir, 'records')
    const first = Buffer.alloc(1000, 'a')
    const later = Buffer.alloc(1024 * 1024, 'b')
    writeFileSync(file, first)
    let reads = 0
    let grown = false
    const restore = setDisk({
      ...nodeDisk,
      fstatSync(fd) {
        const stats = nodeDisk.fstatSync(fd)
        // A writer appends a megabyte just after the size was looked at.
        if (!grown) {
          grown = true
          appendFileSync(file, later)
        }
        return stats
      },
      readSync(fd, buffer, offset, length, position) {
        reads++
        return nodeDisk.readSync(fd, buffer, offset, length, position)
      },
    })
    let bytes: Buffer
    try {
      bytes = readPlainFile(file, OWN_FILE_CAP.RECORDS)
    } finally {
      restore()
    }
    expect(bytes.equals(Buffer.concat([first, later]))).toBe(true)
    // A count of calls, not a time: 1,048,577 one-byte reads before the mend.
    expect(reads).toBeLessThan(100)
  })

  it('a file that does not grow: one read of it, one that finds its end', () => {
    const file = path.join(dir, 'records')
    writeFileSync(file, 'some records\n')
    let reads = 0
    const restore = setDisk({
      ...nodeDisk,
      readSync(fd, buffer, offset, length, position) {
        reads++
        return nodeDisk.readSync(fd, buffer, offset, length, position)
      },
    })
    try {
      expect(readPlainFile(file, OWN_FILE_CAP.RECORDS).toString()).toBe('some records\n')
    } finally {
      restore()
    }
    expect(reads).toBe(2)
  })
})

// disk30: `readPlainFile` read a file whole whatever its size (a 2 GB file at a ref: all of it
// into memory, seconds), and `readPlainFileAsync` went straight to node's file system, past
// the seam, so no test could fail it.

const GiB = 1024 * 1024 * 1024

// Counts the reads made through the seam, sync and async, until `restore()`.
function countingReads(): { reads: () => number; restore: () => void } {
  let reads = 0
  const restore = setDisk({
    ...nodeDisk,
    readSync(fd, buffer, offset, length, position) {
      reads++
      return nodeDisk.readSync(fd, buffer, offset, length, position)
    },
    promises: {
      ...nodeDisk.promises,
      async read(fd, buffer, offset, length, position) {
        reads++
        return nodeDisk.promises.read(fd, buffer, offset, length, position)
      },
    },
  })
  return { reads: () => reads, restore }
}

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('nothing was thrown')
}

describe('readPlainFile past its cap', () => {
  it('refuses a sparse 3 GB file as too large, damage, before a byte is read', async () => {
    const file = path.join(dir, 'state.json')
    writeFileSync(file, '')
    truncateSync(file, 3 * GiB)
    const counted = countingReads()
    try {
      const error = thrown(() => readPlainFile(file, OWN_FILE_CAP.RECORDS))
      expect(errorCode(error)).toBe(TOO_LARGE)
      expect(isNotPlainFile(error)).toBe(true)
      // On the code before, node's own read refused past 2 GiB: ERR_FS_FILE_TOO_LARGE, taken
      // by every caller for an I/O error.
      const late = await readPlainFileAsync(file, OWN_FILE_CAP.SYNC_STATE).catch((e) => e)
      expect(errorCode(late)).toBe(TOO_LARGE)
      expect(isNotPlainFile(late)).toBe(true)
    } finally {
      counted.restore()
    }
    expect(counted.reads()).toBe(0)
  })

  it('reads a file of exactly its cap, and refuses one a byte larger', async () => {
    const file = path.join(dir, 'main')
    writeFileSync(file, Buffer.alloc(OWN_FILE_CAP.TINY, 'a'))
    expect(readPlainFile(file, OWN_FILE_CAP.TINY).length).toBe(OWN_FILE_CAP.TINY)
    expect((await readPlainFileAsync(file, OWN_FILE_CAP.TINY)).length).toBe(OWN_FILE_CAP.TINY)
    appendFileSync(file, 'b')
    expect(errorCode(thrown(() => readPlainFile(file, OWN_FILE_CAP.TINY)))).toBe(TOO_LARGE)
    const late = await readPlainFileAsync(file, OWN_FILE_CAP.TINY).catch((e) => e)
    expect(errorCode(late)).toBe(TOO_LARGE)
  })

  it('refuses a file filled past its cap while it is read', () => {
    const file = path.join(dir, 'records')
    writeFileSync(file, 'small')
    let grown = false
    const restore = setDisk({
      ...nodeDisk,
      fstatSync(fd) {
        const stats = nodeDisk.fstatSync(fd)
        if (!grown) {
          grown = true
          appendFileSync(file, Buffer.alloc(OWN_FILE_CAP.TINY * 4, 'b'))
        }
        return stats
      },
    })
    try {
      expect(errorCode(thrown(() => readPlainFile(file, OWN_FILE_CAP.TINY)))).toBe(TOO_LARGE)
    } finally {
      restore()
    }
  })
})

describe('readPlainFileAsync through the seam', () => {
  it('meets a fault put in front of the file system, and closes what it opened', async () => {
    const file = path.join(dir, 'settings.json')
    writeFileSync(file, '{}')
    const open = new Set<number>()
    const restore = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        async open(target, flags, mode) {
          const fd = await nodeDisk.promises.open(target, flags, mode)
          open.add(fd)
          return fd
        },
        async read() {
          throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })
        },
        async close(fd) {
          open.delete(fd)
          return nodeDisk.promises.close(fd)
        },
      },
    })
    let error: unknown
    try {
      error = await readPlainFileAsync(file, OWN_FILE_CAP.SETTINGS).catch((e) => e)
    } finally {
      restore()
    }
    expect(errorCode(error)).toBe('EIO')
    expect(open.size).toBe(0)
    expect((await readPlainFileAsync(file, OWN_FILE_CAP.SETTINGS)).toString()).toBe('{}')
  })
})
