import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HistorySearchHit } from '../../shared/types'
import { gitCli, memoryTestBed, userWrite } from './test-helpers'

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })

let toolUse = 0
async function run(input: Record<string, unknown>): Promise<string | null> {
  const outcome = await bed.memory.execute(input, {
    actor: 'claude',
    conversationId: 'conv-search',
    toolUseId: `toolu_${++toolUse}`,
  })
  return outcome.commit?.oid ?? null
}

/** Every page of a search, with a tiny budget so that it takes many pages. */
async function searchAll(text: string, matchCase: boolean): Promise<HistorySearchHit[]> {
  const hits: HistorySearchHit[] = []
  let before: string | undefined
  let scanned = 0
  for (;;) {
    const page = await bed.memory.searchHistory({ text, matchCase, before, budgetMs: 0 })
    expect(page.scanned).toBeGreaterThan(scanned)
    scanned = page.scanned
    hits.push(...page.hits)
    if (!page.next) {
      expect(page.scanned).toBe(page.total)
      return hits
    }
    before = page.next
  }
}

function gitPickaxe(text: string, matchCase: boolean): string[] {
  const args = ['log', `-S${text}`, '--format=%H', ...(matchCase ? [] : ['-i']), 'main']
  return gitCli(bed.dataDir, ...args)
    .split('\n')
    .filter(Boolean)
}

function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}

const WORDS = ['Apple', 'apple', 'pear', 'Plum', 'kiwi', 'fig', 'lime', 'date']

describe('history search', () => {
  it('finds the commits that add or remove a text, newest first, as git log -S does', async () => {
    const random = seeded(11)
    const sentence = () =>
      Array.from({ length: 3 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')
    const commits: string[] = []
    for (let step = 0; step < 80; step++) {
      const files =
        commits.length === 0
          ? []
          : gitCli(bed.dataDir, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n').filter(Boolean)
      const file = files[Math.floor(random() * files.length)]
      const roll = random()
      let oid: string | null = null
      try {
        if (!file || roll < 0.2) {
          oid = await run({
            command: 'create',
            path: `/memories/${random() < 0.3 ? 'd/' : ''}n${step}.md`,
            file_text: `${sentence()}\n${sentence()}\n`,
          })
        } else if (roll < 0.5) {
          const text = gitCli(bed.dataDir, 'show', `HEAD:${file}`)
          const lines = text.split('\n').filter(Boolean)
          const old = lines[Math.floor(random() * lines.length)] as string
          if (text.split(old).length === 2) {
            oid = await run({
              command: 'str_replace',
              path: `/memories/${file}`,
              old_str: old,
              new_str: sentence(),
            })
          }
        } else if (roll < 0.6) {
          oid =
            (await userWrite(bed.memory, `/memories/${file}`, `${sentence()}\n`)).commit?.oid ??
            null
        } else if (roll < 0.7) {
          const from = file.startsWith('d/') && random() < 0.5 ? 'd' : file
          oid = await run({
            command: 'rename',
            old_path: `/memories/${from}`,
            new_path: `/memories/${from === 'd' ? `d${step}` : `m${step}.md`}`,
          })
        } else if (roll < 0.78) {
          oid = await run({ command: 'delete', path: `/memories/${file}` })
        } else if (roll < 0.88 && commits.length > 2) {
          oid = (await bed.memory.revert(commits.at(-1) as string)).commit?.oid ?? null
        } else if (commits.length > 2) {
          const target = commits[Math.floor(random() * commits.length)] as string
          oid = (await bed.memory.restoreAll(target)).commit?.oid ?? null
        }
      } catch {
        // A refused change is no step.
      }
      if (oid) commits.push(oid)
    }
    expect(commits.length).toBeGreaterThan(40)
    expect(gitPickaxe('apple', false).length).toBeGreaterThan(5)
    const found = new Map<string, HistorySearchHit[]>()
    for (const text of ['apple', 'Apple', 'Plum kiwi', 'pear\n', 'date fig', 'absent']) {
      for (const matchCase of [true, false]) {
        const hits = await searchAll(text, matchCase)
        expect(
          hits.map((hit) => hit.commit.oid),
          `${JSON.stringify(text)} ${matchCase}`,
        ).toEqual(gitPickaxe(text, matchCase))
        found.set(`${text}\0${matchCase}`, hits)
      }
    }
    // A new session answers from the records kept (a commit's entry read for a hit only):
    // the same hits, each commit's summary and files as the session that read the trees.
    await bed.reopen()
    for (const [key, hits] of found) {
      const [text, matchCase] = key.split('\0') as [string, string]
      expect(await searchAll(text, matchCase === 'true'), key).toEqual(hits)
    }
  })

  it('says in which file the text appeared or disappeared', async () => {
    const added = await run({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'The user likes tea.\n',
    })
    await run({ command: 'create', path: '/memories/b.md', file_text: 'unrelated\n' })
    await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/c.md' })
    const removed = await run({
      command: 'str_replace',
      path: '/memories/c.md',
      old_str: 'likes tea',
      new_str: 'likes coffee',
    })
    const page = await bed.memory.searchHistory({ text: 'likes tea', matchCase: false })
    expect(page.next).toBeNull()
    expect(page.hits.map((hit) => [hit.commit.oid, hit.files])).toEqual([
      [removed, [{ path: '/memories/c.md', change: 'removed' }]],
      [added, [{ path: '/memories/a.md', change: 'added' }]],
    ])
  })

  it('keeps what it read for the next session, and ignores records it cannot trust', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'tea\n' })
    await run({ command: 'str_replace', path: '/memories/a.md', old_str: 'tea', new_str: 'coffee' })
    await run({ command: 'create', path: '/memories/b.md', file_text: 'more tea\n' })
    const first = (await searchAll('tea', true)).map((hit) => hit.commit.oid)
    expect(first).toEqual(gitPickaxe('tea', true))
    const file = path.join(bed.dataDir, 'history.git', 'cairn-changes.jsonl')
    const lines = (await readFile(file, 'utf8')).trim().split('\n')
    expect(lines).toHaveLength(3)

    // A torn line, a line for a commit of another history, a record with other paths.
    const [, second] = first
    const forged = JSON.stringify({ c: second, f: [['/memories/zzz.md', null, null]] })
    await writeFile(
      file,
      `${lines.join('\n')}\n{"c":"broken\n${JSON.stringify({ c: 'e'.repeat(40), f: [] })}\n${forged}\n`,
    )
    await bed.reopen()
    expect((await searchAll('tea', true)).map((hit) => hit.commit.oid)).toEqual(first)
  })

  it('starts its next records on a new line after a kill tore the last one', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'tea\n' })
    await run({ command: 'str_replace', path: '/memories/a.md', old_str: 'tea', new_str: 'coffee' })
    const first = (await searchAll('tea', true)).map((hit) => hit.commit.oid)
    await bed.close()
    const file = path.join(bed.dataDir, 'history.git', 'cairn-changes.jsonl')
    const text = await readFile(file, 'utf8')
    // Killed half-way through the last record's append.
    await writeFile(file, text.slice(0, text.length - 20))

    await bed.reopen()
    expect((await searchAll('tea', true)).map((hit) => hit.commit.oid)).toEqual(first)
    await bed.close()
    const kept = (await readFile(file, 'utf8')).split('\n').flatMap((line) => {
      try {
        return [(JSON.parse(line) as { c: string }).c]
      } catch {
        return []
      }
    })
    expect([...new Set(kept)].sort()).toEqual([...first].sort())
    await bed.reopen()
  })

  it('refuses to go on from a commit that is not in the history', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'x\n' })
    await expect(
      bed.memory.searchHistory({ text: 'x', matchCase: true, before: 'f'.repeat(40) }),
    ).rejects.toMatchObject({ code: 'not-found' })
  })
})
