import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { FollowProgress } from '../../shared/types'
import { PROGRESS_INTERVAL_MS } from '../lib/progress'
import { gitCli, memoryTestBed } from './test-helpers'

// Issue #15: a history of thousands of commits put in place with git while Cairn is open took
// seconds to follow with the window silent. The follow now tells how many of the commits git
// added it has read, a few times a second at most, and that it ended (also when it failed).

let clock = 1_700_000_000_000
let step = 0
const bed = memoryTestBed({ memory: { now: () => (clock += step), watch: false } })

const mainOid = () => gitCli(bed.dataDir, 'rev-parse', 'main').trim()

/** Adds `count` commits with `git fast-import`, on top of `main` or (`from` null) as a new history. */
function gitAdds(count: number, from: string | null): string {
  const chunks: string[] = []
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`
  for (let i = 1; i <= count; i++) {
    const person = `Ann Smith <ann@example.com> ${1_700_000_000 + i} +0000`
    chunks.push(
      `commit refs/heads/main\nauthor ${person}\ncommitter ${person}\n`,
      data(`note ${i}\n`),
      i === 1 && from !== null ? `from ${from}\n` : '',
      `M 100644 inline notes/n-${i % 20}.md\n`,
      data(`revision ${i}\n`),
    )
  }
  execFileSync(
    'git',
    ['--git-dir', path.join(bed.dataDir, 'history.git'), 'fast-import', '--quiet', '--force'],
    {
      input: chunks.join(''),
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir },
    },
  )
  return mainOid()
}

let changes = 0
async function change(): Promise<{ isError: boolean; content: unknown }> {
  changes += 1
  return bed.memory.execute(
    { command: 'create', path: `/memories/change-${changes}.md`, file_text: 'x\n' },
    { actor: 'claude', conversationId: 'conv-p', toolUseId: `toolu_${changes}` },
  )
}

/** Cairn's first commit, then a listener that keeps what the follow tells. */
async function recording(): Promise<FollowProgress[]> {
  expect((await change()).isError).toBe(false)
  const told: FollowProgress[] = []
  bed.memory.onFollowing((progress) => told.push({ ...progress }))
  return told
}

/** The reports of one follow: found, counted up to `total` in order, then ended once. */
function expectCountedUp(told: ReadonlyArray<FollowProgress>, total: number): void {
  expect(told[0]).toEqual({ done: 0, total: null, ended: false })
  const counting = told.slice(1, -1)
  expect(counting[0]).toEqual({ done: 0, total, ended: false })
  expect(counting.at(-1)).toEqual({ done: total, total, ended: false })
  for (let k = 1; k < counting.length; k++) {
    expect(counting[k]!.done).toBeGreaterThan(counting[k - 1]!.done)
  }
  expect(told.at(-1)).toEqual({ done: total, total, ended: true })
  expect(told.filter((progress) => progress.ended)).toHaveLength(1)
}

describe('following a long history git added tells how far it is', () => {
  it('counts the commits git added on top of main up to their number, then ends', async () => {
    const told = await recording()
    // Each reading of the clock 30 ms on: the count passes about every fourth commit.
    step = 30
    const added = gitAdds(300, mainOid())
    const outcome = await change()
    step = 0
    expect(outcome.isError).toBe(false)
    expectCountedUp(told, 300)
    const counting = told.slice(1, -1)
    // Thinned out, yet told along the way, not only at the start and the end.
    expect(counting.length).toBeGreaterThan(10)
    expect(counting.length).toBeLessThan(300)
    // The 300 commits are main's, under Cairn's change (git as a second opinion).
    gitCli(bed.dataDir, 'merge-base', '--is-ancestor', added, 'main')
  })

  it('tells no more than the first, a change of total and the last within one interval', async () => {
    const told = await recording()
    // A clock that does not move: every report falls in the same interval.
    step = 0
    gitAdds(200, mainOid())
    expect((await change()).isError).toBe(false)
    expect(told).toEqual([
      { done: 0, total: null, ended: false },
      { done: 0, total: 200, ended: false },
      { done: 200, total: 200, ended: false },
      { done: 200, total: 200, ended: true },
    ])
    expect(PROGRESS_INTERVAL_MS).toBe(100)
  })

  it('counts a history that replaced main whole', async () => {
    const told = await recording()
    gitAdds(250, null)
    expect((await change()).isError).toBe(false)
    expectCountedUp(told, 250)
  })

  it('ends when the follow fails, and tells nothing when main did not move', async () => {
    const told = await recording()
    expect((await change()).isError).toBe(false)
    expect(told).toEqual([])
    // A commit whose parent is nowhere: the follow refuses it.
    const tree = gitCli(bed.dataDir, 'rev-parse', 'main^{tree}').trim()
    const broken = execFileSync(
      'git',
      [
        '--git-dir',
        path.join(bed.dataDir, 'history.git'),
        'hash-object',
        '-t',
        'commit',
        '-w',
        '--stdin',
      ],
      {
        input: `tree ${tree}\nparent ${'1'.repeat(40)}\nauthor A <a@example.com> 1 +0000\ncommitter A <a@example.com> 1 +0000\n\nbroken\n`,
        encoding: 'utf8',
      },
    ).trim()
    gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', broken)
    const outcome = await change()
    expect(outcome.isError).toBe(true)
    expect(told[0]).toEqual({ done: 0, total: null, ended: false })
    expect(told.at(-1)?.ended).toBe(true)
    expect(told.filter((progress) => progress.ended)).toHaveLength(1)
  })
})
