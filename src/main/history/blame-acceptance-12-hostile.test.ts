import { rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HistorySearchHit } from '../../shared/types'
import { claudeCommands, editWhileClosed, gitCli, memoryTestBed, userWrite } from './test-helpers'

// Issue #12 checked again the hostile way (probe34c): blame, search and the timeline's file
// filter on histories the earlier acceptance files did not build (a rename chain, lines that
// move, an empty file, CRLF churn, a file that became a folder and back, a version holding a
// NUL, restores across a rename, commits made while a blame runs), each against the git CLI.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })
const run = claudeCommands(bed, 'conv-h12', 'h12')

const lines = (text: string) => text.split('\n').filter(Boolean)

/** `git blame --porcelain` at `rev` (without the indent heuristic), as "commit text" per line. */
function gitBlame(file: string, rev = 'main'): string[] {
  const args = ['-c', 'diff.indentHeuristic=false', 'blame', '--porcelain', rev, '--', file]
  const out: string[] = []
  let sha = ''
  for (const line of gitCli(bed.dataDir, ...args).split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(line)
    if (header) sha = header[1] as string
    else if (line.startsWith('\t')) out.push(`${sha} ${line.slice(1)}`)
  }
  return out
}

async function ours(file: string, at?: string): Promise<string[]> {
  return (await bed.memory.blame(`/memories/${file}`, at)).map((l) => `${l.commit.oid} ${l.text}`)
}

async function searchAll(text: string): Promise<string[]> {
  const hits: HistorySearchHit[] = []
  let before: string | undefined
  for (;;) {
    const page = await bed.memory.searchHistory({ text, matchCase: true, before, budgetMs: 0 })
    hits.push(...page.hits)
    if (!page.next) return hits.map((hit) => hit.commit.oid)
    before = page.next
  }
}

/** The timeline filtered by `file`, page by page of `limit`, as one list of ids. */
async function fileLog(file: string, limit: number, actor?: 'claude' | 'user'): Promise<string[]> {
  const out: string[] = []
  for (let offset = 0; ; offset += limit) {
    const page = await bed.memory.log({ offset, limit, path: `/memories/${file}`, actor })
    out.push(...page.entries.map((entry) => entry.oid))
    if (page.entries.length < limit) {
      expect(out.length).toBe(page.total)
      return out
    }
  }
}

describe('blame, the hostile way, again', () => {
  it('follows a chain of renames into a folder, with edits between, as git blame does', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\nthree\n' })
    await run({ command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'TWO' })
    await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })
    await run({ command: 'insert', path: '/memories/b.md', insert_line: 1, insert_text: 'ins\n' })
    await run({ command: 'rename', old_path: '/memories/b.md', new_path: '/memories/sub/c.md' })
    await run({
      command: 'str_replace',
      path: '/memories/sub/c.md',
      old_str: 'three',
      new_str: 'THREE',
    })
    const blamed = await ours('sub/c.md')
    expect(blamed).toEqual(gitBlame('sub/c.md'))
    expect(new Set(blamed.map((line) => line.split(' ')[0])).size).toBe(4)
  })

  it('gives lines that moved to the commit that moved them, as git blame does', async () => {
    await run({ command: 'create', path: '/memories/m.md', file_text: 'a\nb\nc\nd\ne\n' })
    await run({ command: 'create', path: '/memories/m.md', file_text: 'd\ne\nc\na\nb\n' })
    await userWrite(bed.memory, '/memories/m.md', 'e\nd\nc\nb\na\nx\n')
    expect(await ours('m.md')).toEqual(gitBlame('m.md'))
  })

  it('answers an empty file with no lines, and traces lines written after it', async () => {
    await run({ command: 'create', path: '/memories/e.md', file_text: '' })
    expect(await ours('e.md')).toEqual([])
    expect(gitBlame('e.md')).toEqual([])
    await run({ command: 'create', path: '/memories/e.md', file_text: 'x\n' })
    await run({ command: 'create', path: '/memories/e.md', file_text: '' })
    expect(await ours('e.md')).toEqual([])
    await run({ command: 'create', path: '/memories/e.md', file_text: 'x\ny\n' })
    expect(await ours('e.md')).toEqual(gitBlame('e.md'))
  })

  it('agrees with git through CRLF and LF churn, line by line', async () => {
    await run({ command: 'create', path: '/memories/c.md', file_text: 'a\nb\nc\n' })
    await editWhileClosed(bed, { 'c.md': 'a\r\nb\r\nc\r\n' })
    await editWhileClosed(bed, { 'c.md': 'a\nb\r\nc\n' })
    await editWhileClosed(bed, { 'c.md': 'a\r\nb\nc' })
    expect(await ours('c.md')).toEqual(gitBlame('c.md'))
  })

  it('traces a file that became a folder and a file again; a restore of it is a plain copy', async () => {
    const first = await run({ command: 'create', path: '/memories/x', file_text: 'p\nq\n' })
    await run({ command: 'delete', path: '/memories/x' })
    const folder = await run({ command: 'create', path: '/memories/x/y.md', file_text: 'p\nq\n' })
    // A folder has no lines: refused plainly, now and at that commit.
    for (const at of [undefined, folder.oid]) {
      await expect(bed.memory.blame('/memories/x', at)).rejects.toMatchObject({
        message: expect.not.stringContaining(bed.dataDir),
      })
    }
    await run({ command: 'delete', path: '/memories/x' })
    await run({ command: 'create', path: '/memories/x', file_text: 'p\nq\nr\n' })
    expect(await ours('x')).toEqual(gitBlame('x'))
    expect(await ours('x', first.oid)).toEqual(gitBlame('x', first.oid))
    // Restoring its first version hands both lines back to the commit that wrote them.
    const restored = await bed.memory.restoreFile('/memories/x', first.oid)
    expect(restored.commit).not.toBeNull()
    expect(await ours('x')).toEqual([`${first.oid} p`, `${first.oid} q`])
  })

  it('traces through an older version that held a NUL byte, as git blame does', async () => {
    const first = await run({ command: 'create', path: '/memories/b.md', file_text: 'a\nb\nc\n' })
    await editWhileClosed(bed, { 'b.md': Buffer.from('a\nb\0\nc\n') })
    await editWhileClosed(bed, { 'b.md': 'a\nb\nc\nd\n' })
    const blamed = await ours('b.md')
    expect(blamed).toEqual(gitBlame('b.md'))
    // Lines the last change did not touch keep the commit that wrote them.
    expect(blamed[0]).toBe(`${first.oid} a`)
    expect(blamed[2]).toBe(`${first.oid} c`)
  })

  it('never gives a file no indexed commit changed to the first commit of the history', async () => {
    const first = await run({ command: 'create', path: '/memories/other.md', file_text: 'x\n' })
    // A tool commits with git a link at l.md, then a file there: Cairn reads neither commit's
    // changes (a link is damage to it), so its index lists no commit that changed l.md.
    await bed.close()
    const work = path.join(bed.dataDir, 'memories')
    const env = ['-c', 'user.name=Other Tool', '-c', 'user.email=tool@example.com']
    const commit = (message: string) => {
      gitCli(bed.dataDir, '--work-tree', work, 'add', 'l.md')
      gitCli(bed.dataDir, ...env, '--work-tree', work, 'commit', '-q', '-m', message)
    }
    await symlink('a\nb', path.join(work, 'l.md'))
    commit('a link')
    await rm(path.join(work, 'l.md'))
    await writeFile(path.join(work, 'l.md'), 'a\nb\nc\n')
    commit('a file again')
    const file = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    await bed.reopen()
    await run({ command: 'create', path: '/memories/later.md', file_text: 'y\n' })

    const blamed = await bed.memory.blame('/memories/l.md')
    // git's answer, each line marked as possibly older: the index cannot say what came before.
    expect(blamed.map((l) => `${l.commit.oid} ${l.text}`)).toEqual(gitBlame('l.md'))
    expect(blamed.map((l) => l.commit.oid)).toEqual([file, file, file])
    expect(blamed.every((l) => l.damagedBefore)).toBe(true)
    expect(blamed.some((l) => l.commit.oid === first.oid)).toBe(false)
  })

  it('hands restored and reverted lines to their writers across a rename', async () => {
    const v1 = await run({ command: 'create', path: '/memories/r.md', file_text: 'a\nb\n' })
    const edit = await run({
      command: 'str_replace',
      path: '/memories/r.md',
      old_str: 'b',
      new_str: 'B',
    })
    const moved = await run({
      command: 'rename',
      old_path: '/memories/r.md',
      new_path: '/memories/s.md',
    })
    await bed.memory.restoreFile('/memories/r.md', v1.oid)
    expect(await ours('r.md')).toEqual([`${v1.oid} a`, `${v1.oid} b`])
    expect(await ours('s.md')).toEqual([`${v1.oid} a`, `${edit.oid} B`])
    await run({ command: 'delete', path: '/memories/r.md' })
    // Undoing the rename brings r.md back as it was before it: a plain copy.
    await bed.memory.revert(moved.oid)
    expect(await ours('r.md')).toEqual([`${v1.oid} a`, `${edit.oid} B`])
    await bed.memory.restoreAll(v1.oid)
    expect(await ours('r.md')).toEqual([`${v1.oid} a`, `${v1.oid} b`])
  })

  it('answers for the commit it was asked about while commits land during the walk', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join('')
    await run({ command: 'create', path: '/memories/k.md', file_text: text })
    for (let i = 0; i < 30; i++) {
      await run({
        command: 'str_replace',
        path: '/memories/k.md',
        old_str: `line ${i * 2}\n`,
        new_str: `L${i}\n`,
      })
    }
    const at = (await bed.memory.head()) as string
    const asked = bed.memory.blame('/memories/k.md', at)
    const now = bed.memory.blame('/memories/k.md')
    const edits = (async () => {
      for (let i = 0; i < 10; i++) {
        await run({
          command: 'str_replace',
          path: '/memories/k.md',
          old_str: `line ${i * 2 + 1}\n`,
          new_str: `M${i}\n`,
        })
      }
    })()
    const [atCommit, atNow] = await Promise.all([asked, now, edits])
    const expected = gitBlame('k.md', at)
    expect(atCommit.map((l) => `${l.commit.oid} ${l.text}`)).toEqual(expected)
    // Asked before the edits were queued: memory as it was then, not a mix.
    expect(atNow.map((l) => `${l.commit.oid} ${l.text}`)).toEqual(expected)
  }, 60_000)
})

describe('search and the file filter, the hostile way, again', () => {
  it('counts a text inside a version that held a NUL byte, as git log -S does', async () => {
    await run({ command: 'create', path: '/memories/x', file_text: 'needle one\n' })
    await editWhileClosed(bed, { x: Buffer.from('needle one\0bin\n') })
    await editWhileClosed(bed, { x: null })
    await editWhileClosed(bed, { 'x/y.md': 'needle one\n' })
    await run({ command: 'delete', path: '/memories/x' })
    await run({ command: 'create', path: '/memories/x', file_text: 'needle two\n' })
    for (const text of ['needle', 'needle one', 'bin']) {
      const git = lines(gitCli(bed.dataDir, 'log', `-S${text}`, '--format=%H', 'main'))
      expect(await searchAll(text), text).toEqual(git)
    }
    // The file filter lists the file, the folder it became and the file again, at any page size.
    const git = lines(gitCli(bed.dataDir, 'log', '--format=%H', '--', 'x'))
    for (const limit of [1, 2, 3, 50]) expect(await fileLog('x', limit)).toEqual(git)
  })

  it('follows a name through renames and a file written again under the old name, page by page', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'A1\n' })
    await run({ command: 'create', path: '/memories/a.md', file_text: 'A2\n' })
    await run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' })
    await run({ command: 'create', path: '/memories/a.md', file_text: 'new a\n' })
    await userWrite(bed.memory, '/memories/b.md', 'B3\n')
    await run({ command: 'rename', old_path: '/memories/b.md', new_path: '/memories/d/c.md' })
    await run({ command: 'create', path: '/memories/d/c.md', file_text: 'C4\n' })
    for (const file of ['d/c.md', 'a.md', 'b.md']) {
      const git = lines(gitCli(bed.dataDir, 'log', '--follow', '--format=%H', '--', file))
      for (const limit of [1, 2, 5]) expect(await fileLog(file, limit), file).toEqual(git)
    }
    const args = ['log', '--follow', '--format=%H', '--author=Claude', '--', 'd/c.md']
    expect(await fileLog('d/c.md', 2, 'claude')).toEqual(lines(gitCli(bed.dataDir, ...args)))
  })
})
