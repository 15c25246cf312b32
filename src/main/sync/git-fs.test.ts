/** What a killed fetch leaves in the pack folder is cleared before the next one. */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import { cleanInterruptedFetch, gitFs } from './git-fs'

let dir: string | null = null
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10 })
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

  // rhist33: through a link at objects/pack (to another repository's packs), a pack whose
  // index that repository's git was still writing, and its temp files, were deleted.
  it('never clears through a link at objects/pack: the folder outside keeps every file', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-git-fs-'))
    const outside = path.join(dir, 'outside')
    await mkdir(outside, { recursive: true })
    const names = [
      `pack-${'b'.repeat(40)}.pack`,
      `pack-${'c'.repeat(40)}.idx`,
      `${TEMP_FILE_PREFIX}x`,
    ]
    for (const name of names) await writeFile(path.join(outside, name), 'x')
    const gitdir = path.join(dir, 'history.git')
    await mkdir(path.join(gitdir, 'objects'), { recursive: true })
    await symlink(outside, path.join(gitdir, 'objects', 'pack'))
    cleanInterruptedFetch(gitdir)
    expect((await readdir(outside)).sort()).toEqual([...names].sort())
  })
})

describe('a file a fetch writes, whose closes fail', () => {
  it('is written all the same: the temp file was fsynced, the folder only fsynced', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-git-fs-'))
    const refs = path.join(dir, 'refs', 'remotes', 'origin')
    await mkdir(refs, { recursive: true })
    const file = path.join(refs, 'main')
    const failing = closesFailing(
      (name) => name === refs || path.basename(name).startsWith(TEMP_FILE_PREFIX),
    )
    const restore = setDisk(failing.disk)
    try {
      await gitFs.promises.writeFile(file, `${'a'.repeat(40)}\n`)
    } finally {
      restore()
    }
    expect(failing.failed()).toBe(2)
    expect(await readFile(file, 'utf8')).toBe(`${'a'.repeat(40)}\n`)
    expect(await readdir(refs)).toEqual(['main'])
  })
})
