import { rm } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import type { VersionedMemory } from '../index'
import { CLAUDE, commitElsewhere, gitCli, testRepo } from '../test-helpers'
import { reaches } from './reaches'

// Sync asks it of an object a fetch found missing (sync/engine.ts): one this machine's `main`
// reaches means its own history is damaged. `git rev-list --objects` is the second opinion.

const repo = testRepo({ maintenance: false })

/** Three commits: a/b/c.md created, top.md created, then a/b/c.md changed. */
async function seed(memory: VersionedMemory): Promise<{ first: string; head: string }> {
  await repo.create(memory, 'a/b/c.md', 'one\n')
  const first = memory.head()!
  await repo.create(memory, 'top.md', 'top\n')
  const edit = await memory.execute(
    { command: 'str_replace', path: '/memories/a/b/c.md', old_str: 'one', new_str: 'two' },
    CLAUDE,
  )
  expect(edit.isError).toBe(false)
  return { first, head: memory.head()! }
}

/** `git rev-list --objects main`: each object's id, and the path git found it at. */
function listed(): Map<string, string> {
  const out = gitCli(repo.dataDir, 'rev-list', '--objects', 'main')
  return new Map(
    out
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, 40), line.slice(41)] as const),
  )
}

describe('reaches', () => {
  it('finds every object git lists for main, through nested trees and older commits', async () => {
    const memory = await repo.open()
    try {
      const { head } = await seed(memory)
      const objects = listed()
      // Three commits, their three root trees, a and a/b at both versions, two versions of
      // c.md and one of top.md.
      expect(objects.size).toBe(3 + 3 + 4 + 3)
      // The first version of c.md: only a parent's tree names it, two folders down.
      const old = gitCli(repo.dataDir, 'rev-parse', 'main~2:a/b/c.md').trim()
      expect(objects.get(old)).toBe('a/b/c.md')
      expect(gitCli(repo.dataDir, 'rev-parse', 'main:a/b/c.md').trim()).not.toBe(old)
      for (const oid of objects.keys()) {
        expect(await reaches(memory.git.objects, head, oid), objects.get(oid)).toBe(true)
      }
    } finally {
      await memory.close()
    }
  })

  it('does not find an object main does not reach', async () => {
    const memory = await repo.open()
    try {
      const { head } = await seed(memory)
      // A file stored but never committed, and a commit made on top of main elsewhere.
      const stray = await memory.git.objects.write('blob', Buffer.from('never committed\n'))
      const later = await commitElsewhere(memory.git, { 'elsewhere.md': 'from afar\n' })
      const laterFile = gitCli(repo.dataDir, 'rev-parse', `${later}:elsewhere.md`).trim()
      const objects = listed()
      for (const oid of [stray, later, laterFile]) {
        expect(objects.has(oid)).toBe(false)
        expect(await reaches(memory.git.objects, head, oid)).toBe(false)
      }
      // From the later commit, main and all it holds are reached.
      expect(await reaches(memory.git.objects, later, head)).toBe(true)
      expect(await reaches(memory.git.objects, later, laterFile)).toBe(true)
    } finally {
      await memory.close()
    }
  })

  it('finds a missing object where it is named, and throws where one on the way is missing', async () => {
    const first = await repo.open()
    let seeded: { first: string; head: string }
    try {
      seeded = await seed(first)
    } finally {
      await first.close()
    }
    // The folder a/ as the first two commits had it: only their root trees name it.
    const oldFolder = gitCli(repo.dataDir, 'rev-parse', `${seeded.first}:a`).trim()
    const oldFile = gitCli(repo.dataDir, 'rev-parse', `${seeded.first}:a/b/c.md`).trim()
    expect(listed().has(oldFolder)).toBe(true)
    await rm(repo.objectFile(oldFolder))
    // git cannot list main's objects any more either.
    expect(() => gitCli(repo.dataDir, 'rev-list', '--objects', 'main')).toThrow()
    const memory = await repo.open()
    try {
      expect(memory.head()).toBe(seeded.head)
      expect(await reaches(memory.git.objects, seeded.head, oldFolder)).toBe(true)
      // What lies beyond it cannot be known: the read's own error, a damaged history's.
      const error = await reaches(memory.git.objects, seeded.head, oldFile).then(
        () => null,
        (caught: unknown) => caught,
      )
      expect(error).toMatchObject({ code: 'EDAMAGED', oid: oldFolder })
    } finally {
      await memory.close()
    }
  })
})
