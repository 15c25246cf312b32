import { appendFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, readPlainFile, setDisk } from './disk'

// The review of disk29 (rdisk29): `readPlainFile` sized its reads by the file's size when it
// was opened, and once past it read one byte a call: a file that grew while read (the search
// records a second instance appends to, a log someone writes) took one read(2) per byte that
// came after the look, a megabyte a million calls.

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-plain-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

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
      bytes = readPlainFile(file)
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
      expect(readPlainFile(file).toString()).toBe('some records\n')
    } finally {
      restore()
    }
    expect(reads).toBe(2)
  })
})
