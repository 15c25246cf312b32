import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeCommands, gitAsAnn, gitCli, memoryTestBed, userWrite } from './test-helpers'

// Issue #12's blame promise checked again on current main (probe31b), against
// `git blame --porcelain` as the second opinion, on the histories the earlier checks did not
// build: a file whose every line is the same, a file of 12,000 lines, a restore of CRLF lines,
// and histories moved with `git reset` outside Cairn, open and closed, with the provenance
// Cairn keeps between sessions left behind from before the move.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })

const run = claudeCommands(bed, 'conv-second', 'second')

/** `git blame --porcelain` at `rev`, as "commit text" per line. */
function gitBlame(file: string, rev = 'main', extra: ReadonlyArray<string> = []): string[] {
  const out = gitCli(bed.dataDir, ...extra, 'blame', '--porcelain', rev, '--', file)
  const lines: string[] = []
  let sha = ''
  for (const line of out.split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(line)
    if (header) sha = header[1] as string
    else if (line.startsWith('\t')) lines.push(`${sha} ${line.slice(1)}`)
  }
  return lines
}

async function ours(file: string, at?: string): Promise<string[]> {
  return (await bed.memory.blame(`/memories/${file}`, at)).map((l) => `${l.commit.oid} ${l.text}`)
}

/** Runs git as Ann, with the memory folder as its work tree (as durability.md says). */
const asAnn = (...args: string[]) => gitAsAnn(bed.dataDir, ...args)

function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}

const showMain = (file: string) => gitCli(bed.dataDir, 'show', `main:${file}`)

describe('blame against git blame, on histories earlier checks did not build', () => {
  it('a file whose every line is the same, grown and cut by Claude and the person', async () => {
    const random = seeded(31)
    const same = '- [ ] todo'
    await run({ command: 'create', path: '/memories/same.md', file_text: `${same}\n`.repeat(12) })
    for (let step = 0; step < 30; step++) {
      const count = showMain('same.md').split('\n').length - 1
      const next = Math.max(1, count + Math.floor(random() * 7) - 3)
      const text = `${same}\n`.repeat(next === count ? next + 1 : next)
      if (step % 3 === 0) await userWrite(bed.memory, '/memories/same.md', text)
      else if (next > count) {
        await run({
          command: 'insert',
          path: '/memories/same.md',
          insert_line: Math.floor(random() * (count + 1)),
          insert_text: Array.from({ length: next - count }, () => same).join('\n'),
        })
      } else await run({ command: 'create', path: '/memories/same.md', file_text: text })
    }
    // Git's indent heuristic only chooses among equally small diffs; Cairn makes git's
    // choices without it (docs/history.md), so that is the second opinion here.
    expect(await ours('same.md')).toEqual(
      gitBlame('same.md', 'main', ['-c', 'diff.indentHeuristic=false']),
    )
  })

  it('a file of blank lines only, and one with no line ending at all', async () => {
    await run({ command: 'create', path: '/memories/blank.md', file_text: '\n\n\n' })
    await userWrite(bed.memory, '/memories/blank.md', '\n\n\n\n\n')
    await run({ command: 'create', path: '/memories/blank.md', file_text: '\n\n' })
    expect(await ours('blank.md')).toEqual(
      gitBlame('blank.md', 'main', ['-c', 'diff.indentHeuristic=false']),
    )
    await run({ command: 'create', path: '/memories/none.md', file_text: 'x' })
    await userWrite(bed.memory, '/memories/none.md', 'x\n')
    await run({ command: 'create', path: '/memories/none.md', file_text: 'x\ny' })
    expect(await ours('none.md')).toEqual(gitBlame('none.md'))
  })

  it('a file of 12,000 lines edited at its start, middle and end, renamed and moved by git', async () => {
    const big = Array.from({ length: 12_000 }, (_, i) => `fact ${i} ${(i * 7919) % 10007}`)
    await writeFile(path.join(bed.dataDir, 'memories', 'big.md'), `${big.join('\n')}\n`)
    await bed.reopen()
    await run({
      command: 'str_replace',
      path: '/memories/big.md',
      old_str: `${big[6000]}\n`,
      new_str: 'Claude changed the middle\nand added a line\n',
    })
    await run({ command: 'insert', path: '/memories/big.md', insert_line: 0, insert_text: 'top' })
    const lines = showMain('big.md').split('\n').slice(0, -1)
    lines.splice(11_000, 50, 'the person cut fifty lines here')
    lines.push('the person added the end')
    await userWrite(bed.memory, '/memories/big.md', `${lines.join('\n')}\n`)
    await run({ command: 'rename', old_path: '/memories/big.md', new_path: '/memories/huge.md' })
    // Ann moves it again with git, its content unchanged, and commits.
    asAnn('read-tree', 'main')
    asAnn('mv', 'huge.md', 'giant.md')
    asAnn('commit', '-q', '-m', 'Ann renames the big file')
    await bed.reopen()
    const ourLines = await ours('giant.md')
    expect(ourLines).toHaveLength(11_954)
    expect(ourLines).toEqual(gitBlame('giant.md'))
    // Most lines still belong to the commit that first saved them.
    const first = gitCli(bed.dataDir, 'rev-list', '--max-parents=0', 'main').trim()
    const owned = ourLines.filter((line) => !line.startsWith(first)).length
    expect(owned).toBe(2 + 1 + 1 + 1)
  }, 60_000)

  it('a restore of CRLF lines hands them back to the commit that wrote them', async () => {
    const first = await run({
      command: 'create',
      path: '/memories/w.md',
      file_text: 'one\r\ntwo\r\nthree\r\n',
    })
    const edit = await run({
      command: 'str_replace',
      path: '/memories/w.md',
      old_str: 'two\r\n',
      new_str: 'TWO\n',
    })
    const restore = await bed.memory.restoreFile('/memories/w.md', first.oid)
    expect(showMain('w.md')).toBe('one\r\ntwo\r\nthree\r\n')
    const git = gitBlame('w.md')
    // git gives the restored line to the restore; Cairn to the version it was copied from.
    expect(git.map((l) => l.slice(0, 40))).toEqual([first.oid, restore.commit?.oid, first.oid])
    expect(await ours('w.md')).toEqual(
      ['one\r', 'two\r', 'three\r'].map((text) => `${first.oid} ${text}`),
    )
    // At the edit, git and Cairn agree.
    expect(await ours('w.md', edit.oid)).toEqual(gitBlame('w.md', edit.oid))
  })
})

describe('blame after main was moved with git reset outside Cairn', () => {
  it('while Cairn is open: blame follows the history main holds now, as git blame', async () => {
    const first = await run({ command: 'create', path: '/memories/p.md', file_text: 'a\nb\nc\n' })
    await run({ command: 'str_replace', path: '/memories/p.md', old_str: 'b', new_str: 'B' })
    await run({ command: 'str_replace', path: '/memories/p.md', old_str: 'c', new_str: 'C' })
    // Blame is asked (and kept) before the reset.
    expect((await ours('p.md')).map((l) => l.slice(0, 40))).not.toContain(undefined)
    asAnn('reset', '-q', '--hard', first.oid)
    // The next change writes a version whose text one dropped commit had.
    await run({ command: 'str_replace', path: '/memories/p.md', old_str: 'b', new_str: 'B' })
    expect(await ours('p.md')).toEqual(gitBlame('p.md'))
  })

  it('while Cairn is closed, its kept provenance from before the reset left behind', async () => {
    const first = await run({ command: 'create', path: '/memories/p.md', file_text: 'a\nb\nc\n' })
    await run({ command: 'str_replace', path: '/memories/p.md', old_str: 'b', new_str: 'B' })
    await run({ command: 'str_replace', path: '/memories/p.md', old_str: 'c', new_str: 'C' })
    await ours('p.md')
    await bed.close()
    asAnn('reset', '-q', '--hard', first.oid)
    // Ann writes, with git, the very text main had before the reset, line by line anew.
    await writeFile(path.join(bed.dataDir, 'memories', 'p.md'), 'a\nB\nC\n')
    asAnn('commit', '-q', '-am', 'Ann writes B and C herself')
    await bed.reopen()
    expect(await ours('p.md')).toEqual(gitBlame('p.md'))
    const ann = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    const summary = (await bed.memory.blame('/memories/p.md'))[1]?.commit
    expect(summary).toMatchObject({ oid: ann, actor: 'outside', author: 'Ann Smith' })
  })
})

/** Every page of a history search, as git log -S lists it: commit ids, newest first. */
async function searchAll(text: string): Promise<string[]> {
  const found: string[] = []
  let before: string | undefined
  for (;;) {
    const page = await bed.memory.searchHistory({ text, matchCase: true, before })
    found.push(...page.hits.map((hit) => hit.commit.oid))
    if (!page.next) return found
    before = page.next
  }
}

const pickaxe = (text: string) =>
  gitCli(bed.dataDir, 'log', `-S${text}`, '--format=%H', 'main').split('\n').filter(Boolean)

describe('history search against git log -S, on the same histories', () => {
  it('counts a repeated line as git does, in a file whose every line is the same', async () => {
    await run({ command: 'create', path: '/memories/same.md', file_text: 'same\n'.repeat(3) })
    await userWrite(bed.memory, '/memories/same.md', 'same\n'.repeat(5))
    // The count is unchanged by a rename and by a rewrite with the same number of lines.
    await run({ command: 'rename', old_path: '/memories/same.md', new_path: '/memories/s.md' })
    await run({ command: 'create', path: '/memories/s.md', file_text: 'same.\n'.repeat(5) })
    await run({ command: 'create', path: '/memories/s.md', file_text: 'same\n' })
    expect(await searchAll('same')).toEqual(pickaxe('same'))
    expect(await searchAll('same')).toHaveLength(3)
  })

  it('after main was moved with git reset while Cairn was closed, its kept records left behind', async () => {
    const first = await run({ command: 'create', path: '/memories/p.md', file_text: 'a\n' })
    await run({ command: 'create', path: '/memories/p.md', file_text: 'a\nzebra\n' })
    await run({ command: 'create', path: '/memories/q.md', file_text: 'zebra too\n' })
    expect(await searchAll('zebra')).toEqual(pickaxe('zebra'))
    await bed.close()
    asAnn('reset', '-q', '--hard', first.oid)
    await writeFile(path.join(bed.dataDir, 'memories', 'p.md'), 'a\nzebra crossing\n')
    asAnn('commit', '-q', '-am', 'Ann writes of a zebra')
    await bed.reopen()
    const found = await searchAll('zebra')
    expect(found).toEqual(pickaxe('zebra'))
    expect(found).toEqual([gitCli(bed.dataDir, 'rev-parse', 'main').trim()])
  })
})
