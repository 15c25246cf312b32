import { rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { claudeCommands, editWhileClosed, gitCli, memoryTestBed } from './test-helpers'

// Acceptance of issue #12 the hostile way: cases the generated histories of blame.test.ts do
// not reach, each checked against `git blame --porcelain` where git and Cairn mean the same.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })

const run = claudeCommands(bed, 'conv-hostile')

/** `git blame --porcelain` at `rev`: each line's commit and its text, as git sees them. */
function gitBlame(file: string, rev = 'main'): Array<[sha: string, text: string]> {
  const out = gitCli(bed.dataDir, 'blame', '--porcelain', rev, '--', file)
  const lines: Array<[string, string]> = []
  let sha = ''
  for (const line of out.split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(line)
    if (header) sha = header[1] as string
    else if (line.startsWith('\t')) lines.push([sha, line.slice(1)])
  }
  return lines
}

async function ours(file: string, at?: string): Promise<Array<[string, string]>> {
  return (await bed.memory.blame(`/memories/${file}`, at)).map((l) => [l.commit.oid, l.text])
}

describe('blame, the hostile way', () => {
  it('gives a file deleted and written again from scratch to the new write, as git does', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'same\nlines\n' })
    await run({ command: 'delete', path: '/memories/a.md' })
    // Claude writes the very same text again: not a restore, so the lines are the new write's.
    const again = await run({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'same\nlines\n',
    })
    expect(await ours('a.md')).toEqual([
      [again.oid, 'same'],
      [again.oid, 'lines'],
    ])
    expect(await ours('a.md')).toEqual(gitBlame('a.md'))
  })

  it('follows a revert of a revert back to the lines each original change wrote', async () => {
    const first = await run({ command: 'create', path: '/memories/a.md', file_text: 'a\nb\nc\n' })
    const edit = await run({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'b\n',
      new_str: 'B\n',
    })
    const undo = (await bed.memory.revert(edit.oid)).commit as CommitSummary
    expect(await ours('a.md')).toEqual([
      [first.oid, 'a'],
      [first.oid, 'b'],
      [first.oid, 'c'],
    ])
    const redo = (await bed.memory.revert(undo.oid)).commit as CommitSummary
    expect(redo.oid).not.toBe(undo.oid)
    // The redo is a plain copy of the version before the undo: the edit's, line for line.
    expect(await ours('a.md')).toEqual([
      [first.oid, 'a'],
      [edit.oid, 'B'],
      [first.oid, 'c'],
    ])
    // git gives the lines to the revert commits themselves; the texts agree.
    expect((await ours('a.md')).map(([, text]) => text)).toEqual(
      gitBlame('a.md').map(([, text]) => text),
    )
    // At the undo, the whole file is the first version's again.
    expect(await ours('a.md', undo.oid)).toEqual([
      [first.oid, 'a'],
      [first.oid, 'b'],
      [first.oid, 'c'],
    ])
  })

  it('agrees with git on CRLF lines and a last line with no newline, edited outside Cairn', async () => {
    const first = await run({
      command: 'create',
      path: '/memories/w.md',
      file_text: 'one\r\ntwo\r\nthree',
    })
    expect(await ours('w.md')).toEqual(gitBlame('w.md'))
    expect((await ours('w.md')).map(([oid]) => oid)).toEqual([first.oid, first.oid, first.oid])
    // An editor adds a final line ending, and changes the middle line's ending only.
    await editWhileClosed(bed, { 'w.md': 'one\r\ntwo\nthree\r\n' })
    const lines = await ours('w.md')
    expect(lines).toEqual(gitBlame('w.md'))
    expect(lines[0]?.[0]).toBe(first.oid)
    expect(lines[1]?.[0]).not.toBe(first.oid)
    // Claude then edits across the mixed endings.
    await run({
      command: 'str_replace',
      path: '/memories/w.md',
      old_str: 'two\nthree',
      new_str: 'TWO\nthree',
    })
    expect(await ours('w.md')).toEqual(gitBlame('w.md'))
  })

  it('keeps invisible and bidi characters in the line text, byte for byte, as git does', async () => {
    const text = 'plain\nzero\u200bwidth\nrtl \u202eevil\u202c end\nbom\ufeff\nnbsp\u00a0here\n'
    const first = await run({ command: 'create', path: '/memories/i.md', file_text: text })
    await run({
      command: 'str_replace',
      path: '/memories/i.md',
      old_str: 'plain\n',
      new_str: 'plain\u2066x\u2069\n',
    })
    const lines = await ours('i.md')
    expect(lines).toEqual(gitBlame('i.md'))
    expect(lines.map(([, t]) => t).join('\n') + '\n').toBe(
      text.replace('plain\n', 'plain\u2066x\u2069\n'),
    )
    expect(lines.slice(1).every(([oid]) => oid === first.oid)).toBe(true)
  })

  it('follows a file moved outside Cairn with its content unchanged, as git does', async () => {
    const first = await run({ command: 'create', path: '/memories/old.md', file_text: 'x\ny\n' })
    const edit = await run({
      command: 'str_replace',
      path: '/memories/old.md',
      old_str: 'y',
      new_str: 'Y',
    })
    await bed.close()
    await rename(
      path.join(bed.dataDir, 'memories', 'old.md'),
      path.join(bed.dataDir, 'memories', 'new.md'),
    )
    await bed.reopen()
    expect(gitCli(bed.dataDir, 'ls-tree', '--name-only', 'main').trim()).toBe('new.md')
    expect(await ours('new.md')).toEqual([
      [first.oid, 'x'],
      [edit.oid, 'Y'],
    ])
    expect(await ours('new.md')).toEqual(gitBlame('new.md'))
  })

  it('traces a commit another tool wrote with the git CLI, with no Cairn trailers', async () => {
    const first = await run({ command: 'create', path: '/memories/g.md', file_text: 'a\nb\nc\n' })
    await bed.close()
    // Someone commits straight into Cairn's repository with git itself.
    const work = path.join(bed.dataDir, 'memories')
    await writeFile(path.join(work, 'g.md'), 'a\nB from git\nc\n')
    const env = ['-c', 'user.name=Other Tool', '-c', 'user.email=tool@example.com']
    gitCli(bed.dataDir, '--work-tree', work, 'add', 'g.md')
    gitCli(bed.dataDir, ...env, '--work-tree', work, 'commit', '-q', '-m', 'edited by hand')
    const foreign = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    await bed.reopen()
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.entries[0]?.oid).toBe(foreign)
    expect(log.total).toBe(2)
    const lines = await ours('g.md')
    expect(lines).toEqual(gitBlame('g.md'))
    expect(lines.map(([oid]) => oid)).toEqual([first.oid, foreign, first.oid])
    // Its summary is readable: no conversation, made outside Cairn by its author.
    const summary = (await bed.memory.blame('/memories/g.md'))[1]?.commit
    expect(summary?.conversationId ?? null).toBeNull()
    expect(summary).toMatchObject({ actor: 'outside', author: 'Other Tool', command: 'outside' })
    expect(summary?.subject).toBe('edited by hand')
  })
})
