import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../../lib/disk'
import { DAMAGED_FOLDER, moveIntoDamaged, NotKeptAsideError } from './damaged-folder'

// disk30: `moveIntoDamaged` chose a free name by looking at `name`, `name-2`, `name-3`… from
// the start each time (n moves of one name: n²/2 looks); a name past 255 bytes of UTF-8 with
// its suffix failed with ENAMETOOLONG; and a `cairn-damaged/` the system would not add to was
// told as any I/O error. Real folders; the mounts and `chattr` need root (never skipped).

let gitdir = ''
const mounts: string[] = []
const immutable: string[] = []
beforeEach(async () => {
  gitdir = await mkdtemp(path.join(os.tmpdir(), 'cairn-damaged-'))
})
afterEach(async () => {
  for (const dir of immutable.splice(0)) execFileSync('chattr', ['-i', dir])
  for (const dir of mounts.splice(0).reverse()) execFileSync('umount', [dir])
  await rm(gitdir, { recursive: true, force: true, maxRetries: 10 })
})

const aside = () => path.join(gitdir, DAMAGED_FOLDER)

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('nothing was thrown')
}

describe('names in cairn-damaged/', () => {
  it('many moves under one name: each kept, with a look or two each, not one per earlier', () => {
    const moves = 500
    let looks = 0
    const restore = setDisk({
      ...nodeDisk,
      lstatIfThere(file) {
        looks++
        return nodeDisk.lstatIfThere(file)
      },
    })
    try {
      for (let i = 0; i < moves; i++) {
        const file = path.join(gitdir, 'orphan.idx')
        writeFileSync(file, `${i}`)
        moveIntoDamaged(gitdir, file, 'orphan.idx')
      }
    } finally {
      restore()
    }
    const names = readdirSync(aside())
    expect(names).toHaveLength(moves)
    const texts = new Set(names.map((name) => readFileSync(path.join(aside(), name), 'utf8')))
    expect(texts.size).toBe(moves)
    expect(names).toContain('orphan.idx')
    for (const name of names) expect(name).toMatch(/^orphan\.idx(-[0-9a-f]{8})?$/)
    // Per move: the folder, the name, and (all but the first) one fresh name. A count of
    // calls, not a time: 125,250 looks at the names before (n²/2).
    expect(looks).toBeLessThanOrEqual(3 * moves)
  })

  it('a name past 255 bytes of UTF-8 (fewer characters) is cut to fit, twice over', () => {
    const long = 'é'.repeat(200)
    expect(long.length).toBeLessThan(255)
    for (const text of ['one', 'two']) {
      const file = path.join(gitdir, 'record')
      writeFileSync(file, text)
      const kept = moveIntoDamaged(gitdir, file, `${long}-1800000000000`)
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(255)
      expect(kept.startsWith('éé')).toBe(true)
    }
    const texts = readdirSync(aside()).map((name) => readFileSync(path.join(aside(), name), 'utf8'))
    expect(texts.sort()).toEqual(['one', 'two'])
  })
})

describe('a cairn-damaged/ that takes nothing: said plainly, the damaged file left where it was', () => {
  it('made immutable (chattr +i): permission, not an I/O error', async () => {
    await mkdir(aside())
    execFileSync('chattr', ['+i', aside()])
    immutable.push(aside())
    const file = path.join(gitdir, 'HEAD')
    writeFileSync(file, 'damaged')
    const error = thrown(() => moveIntoDamaged(gitdir, file, 'HEAD-1'))
    expect(error).toBeInstanceOf(NotKeptAsideError)
    expect(error).toMatchObject({ code: 'EPERM', what: 'HEAD' })
    expect((error as Error).message).toBe(
      'HEAD could not be kept aside in cairn-damaged/ because the system does not let Cairn add to cairn-damaged/ (permission denied, or the folder is made immutable)',
    )
    expect(readFileSync(file, 'utf8')).toBe('damaged')
  })

  it('a read-only mount of its own: a move there would cross file systems', async () => {
    await mkdir(aside())
    execFileSync('mount', ['--bind', aside(), aside()])
    mounts.push(aside())
    execFileSync('mount', ['-o', 'remount,ro,bind', aside()])
    const file = path.join(gitdir, 'cairn-command')
    writeFileSync(file, 'damaged')
    const error = thrown(() => moveIntoDamaged(gitdir, file, 'cairn-command-1'))
    expect(error).toMatchObject({ code: 'EXDEV', what: 'cairn-command' })
    expect((error as Error).message).toContain('is on another file system (a mount)')
    expect(readFileSync(file, 'utf8')).toBe('damaged')
  })

  it('a full disk (no inode left for the folder): said as a full disk', async () => {
    // A tmpfs with room for a handful of inodes, all taken before the folder is made.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,nr_inodes=8,mode=0700', 'tmpfs', gitdir])
    mounts.push(gitdir)
    const file = path.join(gitdir, 'HEAD')
    writeFileSync(file, 'damaged')
    for (let i = 0; ; i++) {
      try {
        writeFileSync(path.join(gitdir, `filler-${i}`), '')
      } catch {
        break
      }
    }
    const error = thrown(() => moveIntoDamaged(gitdir, file, 'HEAD-1'))
    expect(error).toMatchObject({ code: 'ENOSPC', what: 'HEAD' })
    expect((error as Error).message).toBe(
      'HEAD could not be kept aside in cairn-damaged/ because the disk is full',
    )
    expect(readFileSync(file, 'utf8')).toBe('damaged')
    expect(existsSync(aside())).toBe(false)
  })
})
