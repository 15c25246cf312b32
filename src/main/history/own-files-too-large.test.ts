import { lstatSync, readdirSync, truncateSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { COMMAND_INTENT_FILE } from './command-intent'
import { commitCount, fsck, gitCli, recoveryRepo } from './test-helpers'

// disk30: history.git's own files were read whole whatever their size: a `HEAD` of garbage
// larger than any `HEAD` was read into memory and written over (its bytes lost, never kept
// aside), and a sparse file of gigabytes at a note was read whole at open (memory, seconds).
// Each kind now has a cap (lib/own-file-caps.ts); past it the file is damage of its kind.

const repo = recoveryRepo()
const GiB = 1024 * 1024 * 1024

// One commit; its id.
async function seed(): Promise<string> {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'first notes\n')
  await memory.close()
  expect(commitCount(repo.dataDir)).toBe(1)
  return gitCli(repo.dataDir, 'rev-parse', 'main').trim()
}

const damaged = (): string[] => readdirSync(path.join(repo.gitdir, 'cairn-damaged'))

// Asks git nothing before the open: git reads a ref file whole (a 3 GB one takes seconds).
async function opensAndCommits(): Promise<void> {
  const memory = await repo.open()
  await repo.create(memory, 'after.md', 'after\n')
  await memory.close()
  expect(commitCount(repo.dataDir)).toBe(2)
  expect(fsck(repo.dataDir)).not.toMatch(/error|missing|broken/i)
}

describe("history.git's own files larger than their kind can be", () => {
  it('a HEAD past its cap is kept aside whole and written again', async () => {
    await seed()
    const head = path.join(repo.gitdir, 'HEAD')
    const junk = Buffer.alloc(OWN_FILE_CAP.TINY + 1, 'x')
    await writeFile(head, junk)
    await opensAndCommits()
    expect(await readFile(head, 'utf8')).toBe('ref: refs/heads/main\n')
    const kept = damaged().filter((name) => name.startsWith('HEAD-'))
    expect(kept).toHaveLength(1)
    expect((await readFile(path.join(repo.gitdir, 'cairn-damaged', kept[0]!))).equals(junk)).toBe(
      true,
    )
  })

  it('a config past its cap is kept aside and written again', async () => {
    await seed()
    const config = path.join(repo.gitdir, 'config')
    await writeFile(config, `[core]\n\tbare = true\n# ${'x'.repeat(OWN_FILE_CAP.SMALL)}\n`)
    await opensAndCommits()
    expect(lstatSync(config).size).toBeLessThan(1024)
    expect(damaged().filter((name) => name.startsWith('config-'))).toHaveLength(1)
  })

  it('a sparse 3 GB file at the ref reads as a lost main, found again', async () => {
    const tip = await seed()
    truncateSync(repo.mainRef(), 3 * GiB)
    await opensAndCommits()
    expect(gitCli(repo.dataDir, 'rev-parse', 'main~1').trim()).toBe(tip)
  })

  it('a sparse 3 GB file at the note of a command in flight is kept aside, read as none', async () => {
    await seed()
    const note = path.join(repo.gitdir, COMMAND_INTENT_FILE)
    await writeFile(note, '')
    truncateSync(note, 3 * GiB)
    await opensAndCommits()
    expect(damaged().filter((name) => name.startsWith(`${COMMAND_INTENT_FILE}-`))).toHaveLength(1)
  })
})
