import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeUse, gitCli, indexDirIn, testRepo } from './test-helpers'
import type { VersionedMemory } from './types'

// The names in the side index (`cairn-index/names`): every path and conversation id the
// records name by id. A record's checksum covers the ids only, so a damaged or zeroed name
// used to be read as true: a file's history came back empty, the timeline named a file that
// never existed, and blame credited an edit to another commit (hunt12-hist D1, D2).

const repo = testRepo({ maintenance: false })
const { open } = repo

const namesFile = () => path.join(indexDirIn(repo.dataDir), 'names')

/** The commits git lists for `file` (relative to the memory folder), newest first. */
function gitHistory(file: string): string[] {
  return gitCli(repo.dataDir, 'log', '--format=%H', 'main', '--', file).trim().split('\n')
}

/** Every commit as git lists it, newest first: `<oid> <subject>`. */
function gitTimeline(): string[] {
  return gitCli(repo.dataDir, 'log', '--format=%H %s', 'main').trim().split('\n')
}

/** Line -> commit, as `git blame` gives them for `file` at main. */
function gitBlame(file: string): string[] {
  return gitCli(repo.dataDir, 'blame', '--porcelain', 'main', '--', file)
    .split('\n')
    .filter((line) => /^[0-9a-f]{40} \d+ \d+/.test(line))
    .map((line) => `${line.split(' ')[2]} ${line.split(' ')[0]}`)
}

/** Every answer about `file` equals git's: its history, the path filter, the timeline, blame. */
async function expectSameAsGit(memory: VersionedMemory, file: string): Promise<void> {
  expect((await memory.fileHistory(`/memories/${file}`)).map((c) => c.oid)).toEqual(
    gitHistory(file),
  )
  const page = await memory.log({ offset: 0, limit: 500, path: `/memories/${file}` })
  expect(page.entries.map((c) => c.oid)).toEqual(gitHistory(file))
  const timeline = await memory.log({ offset: 0, limit: 500 })
  expect(timeline.entries.map((c) => `${c.oid} ${c.subject}`)).toEqual(gitTimeline())
  expect((await memory.blame(`/memories/${file}`)).map((l) => `${l.line} ${l.commit.oid}`)).toEqual(
    gitBlame(file),
  )
}

describe('damaged names in the side index', () => {
  it('a byte changed in an old name is found when read, rebuilt, and never answered as true', async () => {
    // Long names, so the damaged one lies before the newest bytes open checks: it is found
    // when it is decoded.
    const long = `${'n'.repeat(100)}/${'n'.repeat(70)}`
    const file = (k: number) => `${long}-${String(k).padStart(2, '0')}.md`
    let memory = await open()
    for (let k = 0; k < 100; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/${file(k)}`, file_text: `v1 of ${k}\n` },
        claudeUse(`toolu_c${k}`),
      )
    }
    await memory.execute(
      { command: 'str_replace', path: `/memories/${file(3)}`, old_str: 'v1', new_str: 'v2' },
      claudeUse('toolu_e3'),
    )
    // The newest entry (which open reads) names another file.
    await memory.execute(
      { command: 'str_replace', path: `/memories/${file(50)}`, old_str: 'v1', new_str: 'v2' },
      claudeUse('toolu_e50'),
    )
    await memory.close()

    // `…-03.md` becomes `…-0X.md`: the same length, a name no file ever had.
    const names = await readFile(namesFile())
    const at = names.indexOf(Buffer.from(file(3)))
    expect(at).toBeGreaterThan(0)
    expect(names.length - at).toBeGreaterThan(16384)
    names[at + long.length + 2] = 'X'.charCodeAt(0)
    await writeFile(namesFile(), names)

    memory = await open()
    // Read before the background check: either right or a clear "rebuilding", never wrong.
    let refused = 0
    try {
      await expectSameAsGit(memory, file(3))
    } catch (error) {
      expect(error).toMatchObject({ code: 'index-rebuilding' })
      refused++
    }
    expect(refused).toBe(1)
    // Any query that reads the names says so until the rebuild is in.
    await expect(memory.fileHistory(`/memories/${long}-0X.md`)).rejects.toMatchObject({
      code: 'index-rebuilding',
    })
    // The rebuild (from the commits) is done by the next maintenance pass.
    await memory.maintain()
    await expectSameAsGit(memory, file(3))
    expect(await memory.fileHistory(`/memories/${long}-0X.md`)).toEqual([])
    expect(
      (await memory.log({ offset: 0, limit: 500, conversationId: 'conv-1' })).entries.length,
    ).toBe(102)
    await memory.close()

    memory = await open()
    await expectSameAsGit(memory, file(3))
    await memory.close()
  })

  it('the idle check finds a damaged name that nothing read', async () => {
    const long = `${'m'.repeat(100)}/${'m'.repeat(70)}`
    let memory = await open()
    for (let k = 0; k < 100; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/${long}-${k}.md`, file_text: `${k}\n` },
        claudeUse(`toolu_c${k}`),
      )
    }
    await memory.close()
    const names = await readFile(namesFile())
    const at = names.indexOf(Buffer.from(`${long}-5.md`))
    names[at + long.length + 1] ^= 0x04
    await writeFile(namesFile(), names)

    memory = await open()
    await memory.maintain()
    await expectSameAsGit(memory, `${long}-5.md`)
    await memory.close()
  })

  it('a zeroed tail of names (a power cut) is cut at open and caught up from the commits', async () => {
    let memory = await open()
    for (let i = 0; i < 40; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/old${i % 4}.md`, file_text: `v${i}\n` },
        claudeUse(`toolu_o${i}`),
      )
    }
    // A new name, then a commit that adds none: the newest entry's names are intact.
    await memory.execute(
      { command: 'create', path: '/memories/plans.md', file_text: 'new file\n' },
      claudeUse('toolu_new'),
    )
    await memory.execute(
      { command: 'create', path: '/memories/old1.md', file_text: 'last\n' },
      claudeUse('toolu_last'),
    )
    await memory.close()

    // What the power cut leaves: the file's size kept, its newest bytes read as zeroes (from
    // the new name's length word on; the records and other parts are intact).
    const names = await readFile(namesFile())
    const at = names.lastIndexOf(Buffer.from('/memories/plans.md'))
    names.fill(0, at - 8)
    await writeFile(namesFile(), names)

    memory = await open()
    await expectSameAsGit(memory, 'plans.md')
    const page = await memory.log({ offset: 0, limit: 3 })
    expect(page.entries[1]?.paths).toEqual(['/memories/plans.md'])
    await memory.close()
  })

  it('a commit that finds an old name damaged starts the rebuild: its own commit is never "not in the history" nor left off the log', async () => {
    // Long names, so the damaged one lies before the newest bytes open checks; nothing reads
    // it before the first commit's append builds the name map.
    const long = `${'k'.repeat(100)}/${'k'.repeat(70)}`
    const file = (k: number) => `${long}-${String(k).padStart(3, '0')}.md`
    let memory = await open()
    for (let k = 0; k < 110; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/${file(k)}`, file_text: `v1 of ${k}\n` },
        claudeUse(`toolu_c${k}`),
      )
    }
    await memory.close()
    const names = await readFile(namesFile())
    const at = names.indexOf(Buffer.from(file(5)))
    expect(names.length - at).toBeGreaterThan(16384)
    names[at + long.length + 3] = 'X'.charCodeAt(0)
    await writeFile(namesFile(), names)

    memory = await open()
    const answer = await memory.execute(
      { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
      claudeUse('toolu_plan'),
    )
    const made = answer.commit?.oid as string
    expect(made).toBe(gitCli(repo.dataDir, 'rev-parse', 'main').trim())
    // Right, or a clear "rebuilding": never "not in the history", never a stale log.
    const readBack = await memory.readAt('/memories/plan.md', made).then(
      (text) => text,
      (error: unknown) => {
        expect(error).toMatchObject({ code: 'index-rebuilding' })
        return null
      },
    )
    if (readBack !== null) expect(readBack).toBe('step 1\n')
    const newest = await memory.log({ offset: 0, limit: 1 }).then(
      (page) => page.entries[0]?.oid,
      (error: unknown) => {
        expect(error).toMatchObject({ code: 'index-rebuilding' })
        return made
      },
    )
    expect(newest).toBe(made)
    // A second command while the rebuild may still run, then the rebuild is in.
    await memory.execute(
      { command: 'str_replace', path: '/memories/plan.md', old_str: '1', new_str: '2' },
      claudeUse('toolu_plan2'),
    )
    await memory.maintain()
    expect(await memory.readAt('/memories/plan.md', made)).toBe('step 1\n')
    const timeline = await memory.log({ offset: 0, limit: 500 })
    expect(timeline.entries.map((c) => `${c.oid} ${c.subject}`)).toEqual(gitTimeline())
    await expectSameAsGit(memory, 'plan.md')
    await expectSameAsGit(memory, file(5))
    await memory.close()
  })
})
