import { chmod, rm } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import type { VersionedMemory } from './index'
import { gitCli, recoveryRepo, CLAUDE } from './test-helpers'

// Issue #12 review: one damaged old version made every history search fail ("the history is
// damaged") and the blame of the file as it is now fail too. Both now go on without it.

const repo = recoveryRepo()

async function edit(memory: VersionedMemory, from: string, to: string): Promise<void> {
  const outcome = await memory.execute(
    { command: 'str_replace', path: '/memories/n.md', old_str: from, new_str: to },
    CLAUDE,
  )
  expect(outcome.isError).toBe(false)
}

/** Three versions of n.md: "one two", "one TWO", "one three", after unrelated other.md. */
async function seed(): Promise<{ v1: string; v2: string; v3: string }> {
  const memory = await repo.open()
  await repo.create(memory, 'other.md', 'unrelated\n')
  await repo.create(memory, 'n.md', 'one\ntwo\n')
  await edit(memory, 'two', 'TWO')
  await edit(memory, 'TWO', 'three')
  await memory.close()
  const [v3, v2, v1] = gitCli(repo.dataDir, 'log', '--format=%H', 'main').split('\n')
  return { v1: v1!, v2: v2!, v3: v3! }
}

/** Loses the history's copy of n.md as `commit` wrote it. */
async function damage(commit: string): Promise<void> {
  const file = repo.objectFile(gitCli(repo.dataDir, 'rev-parse', `${commit}:n.md`).trim())
  await chmod(file, 0o644)
  await rm(file)
}

const pickaxe = (text: string) =>
  gitCli(repo.dataDir, 'log', `-S${text}`, '--format=%H', 'main').split('\n').filter(Boolean)

async function searchAll(memory: VersionedMemory, text: string) {
  const oids: string[] = []
  let damaged = 0
  let before: string | undefined
  for (;;) {
    const page = await memory.searchHistory({ text, matchCase: true, before, budgetMs: 0 })
    oids.push(...page.hits.map((hit) => hit.commit.oid))
    damaged += page.damaged
    if (!page.next) return { oids, damaged }
    before = page.next
  }
}

describe('a damaged old version in the history', () => {
  it('leaves search working: the changes it can read are found, the others counted', async () => {
    const { v1, v2, v3 } = await seed()
    // git's own answers, asked before the damage (git cannot read past it either).
    expect(pickaxe('three')).toEqual([v3])
    expect(pickaxe('TWO')).toEqual([v3, v2])
    expect(pickaxe('unrelated')).toHaveLength(1)
    await damage(v1)

    const memory = await repo.open()
    try {
      // The commit that wrote the lost version and the one that replaced it cannot be told,
      // whatever the text: both are passed over and counted, the rest searched as git does.
      expect(await searchAll(memory, 'three')).toEqual({ oids: [v3], damaged: 2 })
      expect(await searchAll(memory, 'TWO')).toEqual({ oids: [v3], damaged: 2 })
      // Text in another file is not affected at all.
      expect((await searchAll(memory, 'unrelated')).oids).toHaveLength(1)
    } finally {
      await memory.close()
    }
  })

  it('leaves blame working: the trace stops there and says so for the lines it stopped', async () => {
    const { v1, v2, v3 } = await seed()
    const git = gitCli(repo.dataDir, 'blame', '--porcelain', 'main', '--', 'n.md')
    expect(git.match(/^[0-9a-f]{40}(?= 1 1)/m)?.[0]).toBe(v1)
    await damage(v1)
    const memory = await repo.open()
    try {
      const lines = await memory.blame('/memories/n.md')
      expect(
        lines.map((line) => [line.text, line.commit.oid, line.damagedBefore ?? false]),
      ).toEqual([
        // git blame says v1 for "one" (above); that version is gone, so the trace ends at v2.
        ['one', v2, true],
        ['three', v3, false],
      ])
      // Asking again gives the same answer (a cut-short walk is not kept as if whole).
      const again = await memory.blame('/memories/n.md')
      expect(again.map((line) => line.damagedBefore ?? false)).toEqual([true, false])
    } finally {
      await memory.close()
    }
  })
})
