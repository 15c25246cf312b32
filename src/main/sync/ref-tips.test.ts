/**
 * The refs' commits every sync reads before it fetches (`refTips`), read the cheap way (a
 * packed ref from the one read of `packed-refs`, a loose id as a plain file), give what
 * `readRef` gives each ref: loose over packed, symbolic refs followed, damage left out. A real
 * repository made with git, git as second opinion.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { readRef, refNames, refTips } from './git-fs'
import { otherClient as git } from './test-support'

let gitdir = ''
beforeEach(async () => {
  gitdir = await mkdtemp(path.join(os.tmpdir(), 'cairn-ref-tips-'))
  git(gitdir, null, 'init', '-q', '--bare')
})
afterEach(() => rm(gitdir, { recursive: true, force: true, maxRetries: 10 }))

it('reads each ref as readRef does: packed, loose over packed, symbolic, a tag, damage', async () => {
  const tree = git(gitdir, '', 'mktree')
  const one = git(gitdir, null, 'commit-tree', tree, '-m', 'one')
  const two = git(gitdir, null, 'commit-tree', tree, '-p', one, '-m', 'two')
  git(gitdir, null, 'update-ref', 'refs/heads/main', two)
  for (let n = 0; n < 5; n++) git(gitdir, null, 'update-ref', `refs/cairn/backups/b-${n}`, one)
  git(gitdir, null, 'tag', '-a', '-m', 'tagged', 'v1', one)
  git(gitdir, null, 'pack-refs', '--all')
  // Loose over packed: the ref moved after it was packed.
  git(gitdir, null, 'update-ref', 'refs/cairn/backups/b-0', two)
  git(gitdir, null, 'update-ref', 'refs/remotes/cairn-sync/main', two)
  writeFileSync(path.join(gitdir, 'refs', 'sym'), 'ref: refs/heads/main\n')
  writeFileSync(path.join(gitdir, 'refs', 'loop'), 'ref: refs/loop\n')
  writeFileSync(path.join(gitdir, 'refs', 'spaced'), `${one}  \n`)
  writeFileSync(path.join(gitdir, 'refs', 'huge'), `${one}\n${' '.repeat(OWN_FILE_CAP.TINY)}`)
  writeFileSync(path.join(gitdir, 'refs', 'garbage'), 'not a ref\n')
  mkdirSync(path.join(gitdir, 'refs', 'empty-folder'))

  const names = await refNames(gitdir, 'refs/', true)
  const byReadRef: string[] = []
  for (const name of names) {
    if (name === 'refs/remotes/cairn-sync/main') continue
    const oid = await readRef(gitdir, name)
    if (oid !== null) byReadRef.push(oid)
  }
  const tips = await refTips(gitdir, 'refs/remotes/cairn-sync/main')
  expect(tips).toEqual(byReadRef)
  // What git itself says of the refs it reads (it reads no loop, no garbage, nothing past a ref).
  expect(tips).toEqual(
    expect.arrayContaining([
      git(gitdir, null, 'rev-parse', 'refs/cairn/backups/b-0'),
      git(gitdir, null, 'rev-parse', 'refs/cairn/backups/b-1'),
      git(gitdir, null, 'rev-parse', 'refs/tags/v1'),
      git(gitdir, null, 'rev-parse', 'refs/sym'),
    ]),
  )
  expect(tips).toContain(two)
  // b-1 to b-4, and `spaced` (git trims it too); `huge` is damage, past its cap.
  expect(tips.filter((oid) => oid === one).length).toBe(5)
  expect(await refTips(gitdir, null)).toHaveLength(tips.length + 1)
})
