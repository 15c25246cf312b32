import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { commitCount, folderFiles, fsck, gitCli, headFiles, recoveryRepo } from './test-helpers'

// `refs/heads/main` replaced by a folder, or `refs` by a file, made every start fail: the
// first with a raw EISDIR naming a host path (the lost tip found, then written onto the
// folder), the second as a disk problem (review hunt10 D5). Now what is in the way is moved
// aside into cairn-damaged/ and `main` is found again.

const repo = recoveryRepo()

async function threeCommits(): Promise<string> {
  const memory = await repo.open()
  for (let i = 0; i < 3; i++) await repo.create(memory, `n${i}.md`, `note ${i}\n`)
  const tip = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
  await memory.close()
  return tip
}

async function expectFoundAgain(tip: string, asideName: RegExp): Promise<void> {
  const memory = await repo.open()
  try {
    expect(memory.recovery?.kind).toBe('history-repaired')
    expect(memory.recovery?.message).not.toContain(repo.dataDir)
    expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(tip)
    const next = await repo.create(memory, 'after.md', 'after\n')
    expect(next.commit?.parent).toBe(tip)
    expect(commitCount(repo.dataDir)).toBe(4)
    expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  } finally {
    await memory.close()
  }
  // Set aside, never deleted.
  const aside = readdirSync(path.join(repo.gitdir, 'cairn-damaged'))
  expect(aside.some((name) => asideName.test(name))).toBe(true)
  fsck(repo.dataDir)
}

describe('something in the way of the ref (D5)', () => {
  it('moves a folder at refs/heads/main aside and finds main again', async () => {
    const tip = await threeCommits()
    await rm(repo.mainRef())
    await mkdir(repo.mainRef())
    await writeFile(path.join(repo.mainRef(), 'junk'), 'junk\n')
    await expectFoundAgain(tip, /^refs-heads-main-/)
    expect(existsSync(repo.mainRef())).toBe(true)
  })

  it('moves a file at refs aside and finds main again', async () => {
    const tip = await threeCommits()
    await rm(path.join(repo.gitdir, 'refs'), { recursive: true })
    await writeFile(path.join(repo.gitdir, 'refs'), 'not a folder\n')
    await expectFoundAgain(tip, /^refs-/)
  })
})

describe('a history.git/config git cannot parse (D6)', () => {
  it('is moved aside and written again, so the git CLI reads the history', async () => {
    await threeCommits()
    const config = path.join(repo.gitdir, 'config')
    await writeFile(config, '[core\n\u0000\u0001garbage')
    expect(() => gitCli(repo.dataDir, 'rev-list', 'main')).toThrow(/bad config/)
    const memory = await repo.open()
    await memory.close()
    expect(gitCli(repo.dataDir, 'rev-list', '--count', 'main').trim()).toBe('3')
    const aside = readdirSync(path.join(repo.gitdir, 'cairn-damaged'))
    expect(aside.some((name) => name.startsWith('config-'))).toBe(true)
    fsck(repo.dataDir)
  })

  it('keeps a config git reads, whatever it holds', async () => {
    await threeCommits()
    const config = path.join(repo.gitdir, 'config')
    const mine =
      '[core]\n\trepositoryformatversion = 0\n\tbare = true\n; a comment\n[remote "origin"]\n\turl = https://example.invalid/a \\\n\t\tb\n[core]\n\tlogallrefupdates\n'
    await writeFile(config, mine)
    gitCli(repo.dataDir, 'rev-list', 'main')
    const memory = await repo.open()
    await memory.close()
    expect(readFileSync(config, 'utf8')).toBe(mine)
  })
})
