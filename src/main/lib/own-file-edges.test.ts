import { appendFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { moveIntoDamaged, DAMAGED_FOLDER } from '../history/objects/damaged-folder'
import { errorCode, nodeDisk, readPlainFile, readPlainFileAsync, setDisk, TOO_LARGE } from './disk'
import { wellFormed } from './text'

// rdisk30, a hostile review of disk30's caps and cairn-damaged/ names at their edges: a file
// exactly at its cap, one under, one over; a file that grows past its cap between the look at
// its size and the read; names cut at 255 bytes inside a multi-byte letter or a combining
// sequence. All held on main; kept so that they keep holding.

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-own-edges-'))
})
afterEach(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))

const CAP = 64
const reads = [
  ['readPlainFile', async (file: string, cap: number) => readPlainFile(file, cap)],
  ['readPlainFileAsync', readPlainFileAsync],
] as const

for (const [name, read] of reads) {
  describe(`${name} at its cap`, () => {
    it('reads a file one under and exactly at the cap, and refuses one byte over', async () => {
      const file = path.join(dir, 'own')
      for (const size of [CAP - 1, CAP]) {
        writeFileSync(file, Buffer.alloc(size, 'x'))
        expect((await read(file, CAP)).length).toBe(size)
      }
      writeFileSync(file, Buffer.alloc(CAP + 1, 'x'))
      expect(errorCode(await read(file, CAP).catch((e: unknown) => e))).toBe(TOO_LARGE)
    })

    it('refuses a file grown past the cap after its size was looked at, and reads one grown to it', async () => {
      const file = path.join(dir, 'own')
      for (const [grownTo, refused] of [
        [CAP + 1, true],
        [CAP, false],
        [CAP * 100, true],
      ] as const) {
        writeFileSync(file, Buffer.alloc(10, 'a'))
        let grown = false
        const grow = (): void => {
          if (grown) return
          grown = true
          appendFileSync(file, Buffer.alloc(grownTo - 10, 'b'))
        }
        const restore = setDisk({
          ...nodeDisk,
          fstatSync(fd) {
            const stats = nodeDisk.fstatSync(fd)
            grow()
            return stats
          },
          promises: {
            ...nodeDisk.promises,
            async fstat(fd) {
              const stats = await nodeDisk.promises.fstat(fd)
              grow()
              return stats
            },
          },
        })
        let result: unknown
        try {
          result = await read(file, CAP).catch((e: unknown) => e)
        } finally {
          restore()
        }
        if (refused) expect(errorCode(result)).toBe(TOO_LARGE)
        else expect((result as Buffer).length).toBe(CAP)
      }
    })
  })
}

describe('cairn-damaged/ names cut at 255 bytes', () => {
  // 'é' as e + a combining acute (3 bytes), a 4-byte emoji with a skin tone (8 bytes), a CJK
  // letter (3 bytes): the cut falls inside a letter or a sequence at some offset of each.
  const stems = [
    'e\u0301'.repeat(120),
    '👍🏽'.repeat(60),
    'a' + '記'.repeat(120),
    'ab' + '記'.repeat(120),
  ]
  it('stays valid UTF-8 within 255 bytes, and two names alike up to the cut never collide', async () => {
    for (const [index, stem] of stems.entries()) {
      const gitdir = path.join(dir, `git-${index}`)
      const kept: string[] = []
      for (const ending of ['-first', '-second']) {
        const file = path.join(dir, `damaged-${index}${ending}`)
        writeFileSync(file, ending)
        kept.push(moveIntoDamaged(gitdir, file, stem + ending))
      }
      const names = await readdir(path.join(gitdir, DAMAGED_FOLDER))
      expect(names.sort()).toEqual([...kept].sort())
      expect(new Set(kept).size).toBe(2)
      for (const name of kept) {
        const bytes = Buffer.from(name, 'utf8')
        expect(bytes.length).toBeLessThanOrEqual(255)
        expect(bytes.toString('utf8')).toBe(name)
        expect(wellFormed(name)).toBe(name)
        // Cut on a letter's boundary: the stem kept is a start of the stem given.
        expect(stem.startsWith(name.replace(/-[0-9a-f]{8}$/, ''))).toBe(true)
      }
      const texts = await Promise.all(
        kept.map((name) => readFile(path.join(gitdir, DAMAGED_FOLDER, name), 'utf8')),
      )
      expect(texts.sort()).toEqual(['-first', '-second'])
    }
  })
})
