import { describe, expect, it } from 'vitest'
import type { Comparison } from '../../shared/types'
import { claudeCommands, editWhileClosed, gitCli, memoryTestBed, userWrite } from './test-helpers'

// "Compare with now" (issue #12's "what Claude saw") checked the hostile way (probe34c), with
// `git diff --name-status -M100%` as the second opinion: files Claude renamed since the reply,
// moved outside Cairn, moved and edited, twins of the same content, empty and binary files, a
// file that became a folder. Before stop 34 every move read as one file deleted and another
// added, the whole text shown twice, though the panel has words for a rename.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })
const run = claudeCommands(bed, 'conv-compare-h12', 'cmp')

const relative = (virtual: string) => virtual.replace(/^\/memories\//, '')

function ours(comparison: Comparison): string[] {
  return comparison.changes
    .map((change) =>
      change.status === 'renamed'
        ? `R ${relative(change.oldPath ?? '')} ${relative(change.path)}`
        : `${change.status[0]?.toUpperCase()} ${relative(change.path)}`,
    )
    .sort()
}

function git(from: string, to = 'main'): string[] {
  return gitCli(bed.dataDir, 'diff', '--name-status', '-M100%', from, to)
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^R100\t/, 'R\t').replaceAll('\t', ' '))
    .sort()
}

describe('compare with now, the hostile way', () => {
  it('pairs files moved with their content unchanged as renamed, as git diff -M100% does', async () => {
    await run({ command: 'create', path: '/memories/mv.md', file_text: 'move me\n' })
    await run({ command: 'create', path: '/memories/edited.md', file_text: 'edit me\n' })
    await run({ command: 'create', path: '/memories/twin-1.md', file_text: 'twin\n' })
    await run({ command: 'create', path: '/memories/twin-2.md', file_text: 'twin\n' })
    await run({ command: 'create', path: '/memories/empty.md', file_text: '' })
    await run({ command: 'create', path: '/memories/x', file_text: 'was a file\n' })
    await editWhileClosed(bed, { 'blob.bin': Buffer.from([0, 1, 2, 3]) })
    const at = (await bed.memory.head()) as string

    await run({ command: 'rename', old_path: '/memories/mv.md', new_path: '/memories/d/moved.md' })
    await editWhileClosed(bed, {
      'edited.md': null,
      'elsewhere.md': 'edit me, edited\n',
      'twin-1.md': null,
      'twin-2.md': null,
      'far/twin-2.md': 'twin\n',
      'empty.md': null,
      'still-empty.md': '',
      'blob.bin': null,
      'bin/blob.bin': Buffer.from([0, 1, 2, 3]),
    })
    await run({ command: 'delete', path: '/memories/x' })
    await userWrite(bed.memory, '/memories/x/y.md', 'was a file\n')

    const compared = await bed.memory.compare(at)
    expect(ours(compared)).toEqual(git(at))
    expect(ours(compared)).toContain('R mv.md d/moved.md')
    expect(compared.totalChanges).toBe(compared.changes.length)
    // A renamed file's diff is empty: both sides the same text.
    const moved = compared.changes.find((change) => change.path === '/memories/d/moved.md')
    expect(moved).toMatchObject({ status: 'renamed', before: 'move me\n', after: 'move me\n' })
    // And the other way round, from now back to the reply.
    const now = (await bed.memory.head()) as string
    expect(ours(await bed.memory.compare(now, at))).toEqual(git(now, at))
  })
})
