import { lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from './disk'
import { errnoError, hookDisk } from './disk-hooks'
import { mayNotRead } from './may-read'

// issue #15 (loose ends): where the permission bits say no, `mayNotRead` asks the kernel
// (`access`), and any failure of that question read as "may not read": an EIO or EMFILE there
// named a readable file unreadable (the scans keep its last version, the Memory tab says it
// cannot be read). Only EACCES or EPERM, twice, is a no, as for reads (lib/folders.ts); any
// other failure of the disk is thrown.
//
// The process looks like another account (uid 4242), and the entries are the real account's
// at mode 0600/0700: the bits refuse that account, the kernel (asked as the real one) grants,
// as a POSIX ACL would. The disk seam fails `access` as each case needs.

let dir: string
let undoDisk: () => void = () => {}
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-may-read-'))
  vi.spyOn(process, 'getuid').mockReturnValue(4242)
})
afterEach(async () => {
  undoDisk()
  undoDisk = () => {}
  vi.restoreAllMocks()
  await rm(dir, { recursive: true, force: true, maxRetries: 10 })
})

/** `access` failing with `codes[i]` at its i-th call (then passing); returns the calls made. */
function accessFailing(...codes: ReadonlyArray<string>): () => number {
  let calls = 0
  const hooked = hookDisk(nodeDisk, (call) => {
    if (call.name !== 'accessSync') return undefined
    const code = codes[calls++]
    return code === undefined ? undefined : errnoError(call, code)
  })
  undoDisk = setDisk(hooked.disk)
  return () => calls
}

function file(): string {
  const at = path.join(dir, 'notes.md')
  writeFileSync(at, 'notes\n', { mode: 0o600 })
  return at
}

function folder(): string {
  const at = path.join(dir, 'shared')
  mkdirSync(at, { mode: 0o700 })
  return at
}

describe('mayNotRead where the permission bits refuse and the kernel decides', () => {
  it('takes the kernel’s yes', () => {
    const at = file()
    const calls = accessFailing()
    expect(mayNotRead(lstatSync(at), at)).toBe(false)
    expect(calls()).toBe(1)
  })

  it.each(['EACCES', 'EPERM'])('asks once more after one %s, and takes the yes then', (code) => {
    for (const at of [file(), folder()]) {
      const calls = accessFailing(code)
      expect(mayNotRead(lstatSync(at), at)).toBe(false)
      expect(calls()).toBe(2)
      undoDisk()
    }
  })

  it.each(['EACCES', 'EPERM'])('takes %s twice as "may not read"', (code) => {
    for (const at of [file(), folder()]) {
      const calls = accessFailing(code, code)
      expect(mayNotRead(lstatSync(at), at)).toBe(true)
      expect(calls()).toBe(2)
      undoDisk()
    }
  })

  it.each(['EIO', 'EMFILE', 'ENFILE', 'ENOMEM', 'EBUSY'])(
    'passes %s on as the disk error it is, never "may not read"',
    (code) => {
      for (const at of [file(), folder()]) {
        const calls = accessFailing(code)
        expect(() => mayNotRead(lstatSync(at), at)).toThrow(expect.objectContaining({ code }))
        expect(calls()).toBe(1)
        undoDisk()
      }
    },
  )

  it('does not call an entry gone since its lstat unreadable: what follows finds it gone', () => {
    const at = file()
    const stats = lstatSync(at)
    rmSync(at)
    expect(mayNotRead(stats, at)).toBe(false)
  })
})
