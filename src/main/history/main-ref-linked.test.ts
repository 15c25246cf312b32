import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { readMainRef } from './main-ref'

// fold32 made one reader of a branch (readBranch) of main's and a linked branch's: a branch a
// link names whose loose file could not be read (an I/O error) was then taken as having none,
// and its `packed-refs` line, older than the loose file, read in its place. git does not read
// past a loose ref it cannot read, and the reader before fold32 left main missing then.

let gitdir: string
let restoreDisk: (() => void) | null = null

const git = (...args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: gitdir },
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim()

beforeEach(() => {
  gitdir = mkdtempSync(path.join(os.tmpdir(), 'cairn-main-ref-'))
  git('init', '-q', '--bare', '-b', 'main')
})
afterEach(() => {
  restoreDisk?.()
  restoreDisk = null
  rmSync(gitdir, { recursive: true, force: true, maxRetries: 10 })
})

/** The linked branch's packed-refs line names `old`; its loose file names a newer commit. */
function linkedAhead(): { old: string; loose: string } {
  const tree = git('mktree')
  const commit = (parent?: string) =>
    git(
      '-c',
      'user.name=Ann',
      '-c',
      'user.email=ann@x',
      'commit-tree',
      tree,
      ...(parent ? ['-p', parent] : []),
      '-m',
      'work',
    )
  const old = commit()
  git('update-ref', 'refs/heads/work', old)
  git('pack-refs', '--all')
  const loose = commit(old)
  git('update-ref', 'refs/heads/work', loose)
  git('symbolic-ref', 'refs/heads/main', 'refs/heads/work')
  return { old, loose }
}

describe('main linked to a branch whose loose file cannot be read', () => {
  it('is missing, never the older commit its packed-refs line names', () => {
    const { old, loose } = linkedAhead()
    expect(git('rev-parse', '--verify', 'main')).toBe(loose)
    expect(readMainRef(gitdir)).toEqual({ kind: 'ok', oid: loose, symbolic: 'refs/heads/work' })
    const work = path.join(gitdir, 'refs', 'heads', 'work')
    restoreDisk = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        if (file === work) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })
        return nodeDisk.openSync(file, flags, mode)
      },
    })
    const reading = readMainRef(gitdir)
    expect(reading).toEqual({ kind: 'lost', why: 'missing' })
    expect(JSON.stringify(reading)).not.toContain(old)
  })

  it('is read from packed-refs when the branch has no loose file, as git reads it', () => {
    const { loose } = linkedAhead()
    git('pack-refs', '--all')
    expect(git('rev-parse', '--verify', 'main')).toBe(loose)
    expect(readMainRef(gitdir)).toEqual({ kind: 'ok', oid: loose, symbolic: 'refs/heads/work' })
  })
})
