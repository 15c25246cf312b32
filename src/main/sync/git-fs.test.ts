/** What a killed fetch leaves in the pack folder is cleared before the next one. */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cleanInterruptedFetch } from './git-fs'

let dir: string | null = null
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = null
})

describe('clearing an interrupted fetch', () => {
  it('drops a pack without its index and an index without its pack, keeping whole pairs', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-git-fs-'))
    const packs = path.join(dir, 'objects', 'pack')
    await mkdir(packs, { recursive: true })
    const a = 'pack-' + 'a'.repeat(40)
    const b = 'pack-' + 'b'.repeat(40)
    const c = 'pack-' + 'c'.repeat(40)
    for (const name of [`${a}.pack`, `${a}.idx`, `${b}.pack`, `${c}.idx`]) {
      await writeFile(path.join(packs, name), 'x')
    }
    cleanInterruptedFetch(dir)
    expect((await readdir(packs)).sort()).toEqual([`${a}.idx`, `${a}.pack`])
  })
})
