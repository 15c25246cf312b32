import { execFileSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { gitCli, recoveryRepo } from './test-helpers'

// disk30: something damaged in history.git that could not be moved into `cairn-damaged/` (the
// folder made immutable, read-only, on a full disk) failed the open as "an unexpected problem"
// or as the whole data folder read-only. It is now said plainly, and left where it was. Needs
// root for `chattr` (never skipped).

const repo = recoveryRepo()
const immutable: string[] = []
afterEach(() => {
  for (const dir of immutable.splice(0)) execFileSync('chattr', ['-i', dir])
})

it('a HEAD folder with cairn-damaged/ immutable: open says so, HEAD stays, the next open mends it', async () => {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'notes\n')
  await memory.close()
  const head = path.join(repo.gitdir, 'HEAD')
  await rm(head)
  await mkdir(head)
  await writeFile(path.join(head, 'inside'), 'kept')
  const aside = path.join(repo.gitdir, 'cairn-damaged')
  await mkdir(aside, { recursive: true })
  execFileSync('chattr', ['+i', aside])
  immutable.push(aside)

  const error = await repo.open().catch((e: unknown) => e)
  expect(error).toBeInstanceOf(CairnError)
  expect(error).toMatchObject({
    code: 'access-denied',
    message:
      'Cairn could not open your memory history: it found history.git/HEAD damaged and could not move it into history.git/cairn-damaged because the system does not let Cairn add to cairn-damaged/ (permission denied, or the folder is made immutable). Nothing was lost: it is still where it was. Fix that and open Cairn again.',
  })
  expect(await readFile(path.join(head, 'inside'), 'utf8')).toBe('kept')

  execFileSync('chattr', ['-i', aside])
  immutable.splice(0)
  const again = await repo.open()
  await again.close()
  expect(lstatSync(head).isFile()).toBe(true)
  expect(gitCli(repo.dataDir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main')
})
