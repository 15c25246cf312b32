import { writeFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'

// rdisk30: the 8-hex suffix a taken name in cairn-damaged/ gets, forced to collide: the same
// four random bytes twice, then others. The colliding name is looked at again, never renamed
// over (a rename replaces what has its target's name). Held on main.
const draws: Buffer[] = []
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>()
  return {
    ...real,
    randomBytes: (size: number) => draws.shift() ?? real.randomBytes(size),
  }
})
const { DAMAGED_FOLDER, moveIntoDamaged } = await import('./damaged-folder')

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-damaged-suffix-'))
})
afterEach(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))

it('a suffix drawn again is not taken: the next draw is', async () => {
  const gitdir = path.join(dir, 'git')
  const move = (text: string): string => {
    const file = path.join(dir, `${text}.tmp`)
    writeFileSync(file, text)
    return moveIntoDamaged(gitdir, file, 'packed-refs')
  }
  expect(move('one')).toBe('packed-refs')
  draws.push(Buffer.from('0badcafe', 'hex'))
  expect(move('two')).toBe('packed-refs-0badcafe')
  draws.push(Buffer.from('0badcafe', 'hex'), Buffer.from('0badcafe', 'hex'))
  draws.push(Buffer.from('00c0ffee', 'hex'))
  expect(move('three')).toBe('packed-refs-00c0ffee')
  const aside = path.join(gitdir, DAMAGED_FOLDER)
  expect((await readdir(aside)).sort()).toEqual([
    'packed-refs',
    'packed-refs-00c0ffee',
    'packed-refs-0badcafe',
  ])
  expect(await readFile(path.join(aside, 'packed-refs-0badcafe'), 'utf8')).toBe('two')
  expect(draws).toEqual([])
})
