import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitCli, headFolderDifferences } from './test-helpers'

// The harness's second opinion on HEAD (the git CLI) must not turn a failure of git into an
// empty HEAD: the fault run then reported "HEAD is the folder: false" for a run that injected
// nothing, with no word of what failed.

let dataDir: string

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-helpers-'))
  fs.mkdirSync(path.join(dataDir, 'memories'))
  fs.writeFileSync(path.join(dataDir, 'memories', 'a.md'), 'alpha\n')
  gitCli(dataDir, 'init', '--quiet', '--bare')
})
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 }))

/** Commits the folder's a.md as `main` with the git CLI; returns its tree's id. */
function commitA(): string {
  const blob = gitCli(dataDir, 'hash-object', '-w', path.join(dataDir, 'memories', 'a.md')).trim()
  // mktree reads its listing on stdin, which `gitCli` leaves closed.
  const tree = execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), 'mktree'], {
    input: `100644 blob ${blob}\ta.md\n`,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
  }).trim()
  const who = ['-c', 'user.name=A', '-c', 'user.email=a@example.invalid']
  const commit = gitCli(dataDir, ...who, 'commit-tree', tree, '-m', 'a').trim()
  gitCli(dataDir, 'update-ref', 'refs/heads/main', commit)
  return tree
}

describe('headFolderDifferences', () => {
  it('takes a history with no commit yet for an empty HEAD', async () => {
    expect(await headFolderDifferences(dataDir)).toEqual(['a.md: - / folder'])
  })

  it('finds HEAD and the folder alike when they are', async () => {
    commitA()
    expect(await headFolderDifferences(dataDir)).toEqual([])
  })

  it('throws git’s words when git cannot read HEAD, not an empty HEAD', async () => {
    const tree = commitA()
    fs.rmSync(path.join(dataDir, 'history.git', 'objects', tree.slice(0, 2), tree.slice(2)))
    await expect(headFolderDifferences(dataDir)).rejects.toThrow(/git ls-tree failed: .*tree/)
  })
})
