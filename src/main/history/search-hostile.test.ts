import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HistorySearchHit } from '../../shared/types'
import { gitCli, memoryTestBed } from './test-helpers'

// Acceptance of issue #12 the hostile way: the full history's search and paging at their
// edges, with `git log -S` and `git log` as the second opinion.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })

let toolUse = 0
async function run(input: Record<string, unknown>): Promise<string> {
  const outcome = await bed.memory.execute(input, {
    actor: 'claude',
    conversationId: 'conv-search-hostile',
    toolUseId: `toolu_${++toolUse}`,
  })
  if (outcome.isError || !outcome.commit) throw new Error(String(outcome.content))
  return outcome.commit.oid
}

async function searchAll(text: string, matchCase = true): Promise<HistorySearchHit[]> {
  const hits: HistorySearchHit[] = []
  let before: string | undefined
  for (;;) {
    const page = await bed.memory.searchHistory({ text, matchCase, before, budgetMs: 0 })
    hits.push(...page.hits)
    if (!page.next) return hits
    before = page.next
  }
}

function pickaxe(text: string, matchCase = true): string[] {
  const args = ['log', `-S${text}`, '--format=%H', ...(matchCase ? [] : ['-i']), 'main']
  return gitCli(bed.dataDir, ...args)
    .split('\n')
    .filter(Boolean)
}

describe('history search and paging, the hostile way', () => {
  it('answers an empty history with no hits and an empty page, not an error', async () => {
    const page = await bed.memory.searchHistory({ text: 'anything', matchCase: false })
    expect(page.hits).toEqual([])
    expect(page.next).toBeNull()
    expect(page.damaged).toBe(0)
    const log = await bed.memory.log({ offset: 0, limit: 50 })
    expect(log.entries.length).toBe(log.total)
    expect(log.total).toBe(Number(gitCli(bed.dataDir, 'rev-list', '--count', '--all').trim() || 0))
  })

  it('takes regular-expression characters literally, as git log -S does', async () => {
    const texts = ['a.b', 'a*b', '(x)', '[y]', '^start', 'end$', 'back\\slash', 'q?', '{2}', 'a|b']
    let n = 0
    await run({ command: 'create', path: '/memories/r.md', file_text: 'aXb\naab\nx\ny\n' })
    for (const text of texts) {
      await run({
        command: 'insert',
        path: '/memories/r.md',
        insert_line: ++n,
        insert_text: `line with ${text} in it`,
      })
    }
    await run({
      command: 'str_replace',
      path: '/memories/r.md',
      old_str: 'line with a.b in it\n',
      new_str: '',
    })
    for (const text of [...texts, 'a', '.', '*', '\\', 'X']) {
      const ours = (await searchAll(text)).map((hit) => hit.commit.oid)
      expect(ours, text).toEqual(pickaxe(text))
    }
    // A text found nowhere, though its pattern would match many lines.
    expect(await searchAll('.*')).toEqual([])
    expect(pickaxe('.*')).toEqual([])
  })

  it('finds a text spanning lines and one with CRLF endings, as git log -S does', async () => {
    await run({ command: 'create', path: '/memories/m.md', file_text: 'first\r\nsecond\r\n' })
    await run({
      command: 'str_replace',
      path: '/memories/m.md',
      old_str: 'second',
      new_str: 'other',
    })
    await run({ command: 'create', path: '/memories/n.md', file_text: 'first\nsecond\n' })
    for (const text of ['first\r\nsecond', 'first\nsecond', '\r\n', 'second\r']) {
      expect(
        (await searchAll(text)).map((hit) => hit.commit.oid),
        JSON.stringify(text),
      ).toEqual(pickaxe(text))
    }
  })

  it('matches letters beyond ASCII without case as git log -S -i does', async () => {
    let n = 0
    for (const text of ['ÄPFEL one\n', 'äpfel two\n', 'STRASSE straße\n', 'ΣΟΦΙΑ\n', 'σοφια\n']) {
      await run({ command: 'create', path: `/memories/u${n++}.md`, file_text: text })
    }
    for (const text of ['äpfel', 'ÄPFEL', 'straße', 'σοφια', 'Σοφια']) {
      const ours = (await searchAll(text, false)).map((hit) => hit.commit.oid)
      expect(ours, text).toEqual(pickaxe(text, false))
      expect(ours.length, text).toBeGreaterThan(0)
    }
  })

  it('folds case one letter for one letter, as git log -S -i does: a dotted capital I is not i plus a dot', async () => {
    let n = 0
    for (const text of ['İstanbul by the sea\n', 'i̇stanbul spelt with a dot\n', 'ΟΔΟΣ\n']) {
      await run({ command: 'create', path: `/memories/t${n++}.md`, file_text: text })
    }
    const [dotted, combining, sigma] = gitCli(
      bed.dataDir,
      'log',
      '--format=%H',
      '--reverse',
      'main',
    )
      .split('\n')
      .filter(Boolean)
    const cases: Array<[string, string[]]> = [
      // JavaScript's toLowerCase makes "İ" two characters, "i" and a combining dot.
      ['i̇stanbul', [combining!]],
      ['İSTANBUL', [dotted!]],
      ['istanbul', []],
      // JavaScript lowers a closing capital sigma to "ς"; git, as every other, to "σ".
      ['οδοσ', [sigma!]],
      ['ΟΔΟΣ', [sigma!]],
    ]
    for (const [text, expected] of cases) {
      const ours = (await searchAll(text, false)).map((hit) => hit.commit.oid)
      expect(ours, text).toEqual(pickaxe(text, false))
      expect(ours, text).toEqual(expected)
    }
  })

  it('pages the timeline exactly at its edges, as git log counts it', async () => {
    for (let i = 0; i < 4; i++) {
      await run({ command: 'create', path: `/memories/p${i}.md`, file_text: `${i}\n` })
    }
    const git = gitCli(bed.dataDir, 'log', '--format=%H', 'main').split('\n').filter(Boolean)
    const whole = await bed.memory.log({ offset: 0, limit: git.length })
    expect(whole.total).toBe(git.length)
    expect(whole.entries.map((e) => e.oid)).toEqual(git)
    // One past the end, and the last page of one.
    expect((await bed.memory.log({ offset: git.length, limit: 10 })).entries).toEqual([])
    expect(
      (await bed.memory.log({ offset: git.length - 1, limit: 10 })).entries.map((e) => e.oid),
    ).toEqual(git.slice(-1))
    // Pages of every size put together give the whole, with nothing twice.
    for (let size = 1; size <= git.length; size++) {
      const oids: string[] = []
      for (let offset = 0; offset < git.length; offset += size) {
        oids.push(...(await bed.memory.log({ offset, limit: size })).entries.map((e) => e.oid))
      }
      expect(oids, `pages of ${size}`).toEqual(git)
    }
  })

  it('finds a text added by a commit another tool made with the git CLI', async () => {
    await run({ command: 'create', path: '/memories/g.md', file_text: 'a\n' })
    await bed.close()
    const work = path.join(bed.dataDir, 'memories')
    await writeFile(path.join(work, 'g.md'), 'a\nneedle from git\n')
    gitCli(bed.dataDir, '--work-tree', work, 'add', 'g.md')
    gitCli(
      bed.dataDir,
      ...['-c', 'user.name=Other Tool', '-c', 'user.email=tool@example.com'],
      ...['--work-tree', work, 'commit', '-q', '-m', 'by hand'],
    )
    await bed.reopen()
    const hits = await searchAll('needle')
    expect(hits.map((hit) => hit.commit.oid)).toEqual(pickaxe('needle'))
    expect(hits).toHaveLength(1)
  })
})
