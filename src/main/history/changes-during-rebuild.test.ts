import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CommitCommand } from '../../shared/types'
import { createAncestry } from './ancestry'
import { AUTHORS, formatCommitMessage } from './commit-message'
import { createObjectStore, serializeCommit, serializeTree } from './object-store'
import { changesSince, OLD_RUN_LIMIT } from './queries'
import { createCommitTimeline } from './changes-in-commits'
import { IndexFile } from './index-file'
import { openIndex } from './side-index'
import { gitCli, indexDirIn, tempDataDir, userWrite } from './test-helpers'
import type { VersionedMemory } from './types'
import { openVersionedMemory } from './versioned-memory'

// `changesSince` (the review's "the person edited this file" check, asked before each of
// Claude's writes) while the side index is found damaged and rebuilt: answered from the
// commits instead of refused, so that Claude's write is neither refused for the rebuild
// (review on) nor committed without its flags (review off).

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 60_000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const claude = (toolUseId: string) =>
  ({ actor: 'claude', conversationId: 'conv-1', toolUseId }) as const

const open = (): Promise<VersionedMemory> =>
  openVersionedMemory({ dataDir, now, watch: false, maintenance: false })

/** The commits git lists for `paths` (relative, followed as one) since `since` ms, newest first. */
function gitSince(since: number, ...paths: string[]): string[] {
  const after = since > 0 ? [`--since=${Math.floor(since / 1000)}`] : []
  const out = gitCli(dataDir, 'log', '--format=%H', ...after, 'main', '--', ...paths).trim()
  return out ? out.split('\n') : []
}

// Long names, so that the one damaged below lies before the newest bytes open checks: it is
// found when the names are first read, by this very query.
const long = `${'p'.repeat(100)}/${'p'.repeat(70)}`
const file = (k: number) => `${long}-${String(k).padStart(2, '0')}.md`

/**
 * A bare history in the data folder and commits written into it straight (any time, any
 * parents), as another machine's merge may bring them.
 */
async function crafted() {
  execFileSync('git', ['init', '-q', '--bare', path.join(dataDir, 'history.git')])
  const store = createObjectStore(path.join(dataDir, 'history.git'))
  const tree = async (files: Record<string, string>) =>
    store.write(
      'tree',
      serializeTree(
        await Promise.all(
          Object.entries(files).map(async ([name, text]) => ({
            name,
            kind: 'blob' as const,
            oid: await store.write('blob', Buffer.from(text)),
            mode: '100644',
          })),
        ),
      ),
    )
  const commitTree = async (
    treeOid: string,
    parents: string[],
    timestamp: number,
    command: CommitCommand,
    paths: string[],
    actor: 'claude' | 'user' = 'claude',
  ) =>
    store.write(
      'commit',
      serializeCommit({
        tree: treeOid,
        parent: parents[0] ?? null,
        otherParents: parents.slice(1),
        author: AUTHORS[actor],
        timestamp,
        message: formatCommitMessage({
          actor,
          command,
          subject: `${command} ${paths.join(' ')}`,
          paths,
          conversationId: null,
          toolUseId: null,
          overwrite: false,
          restoredFrom: null,
          machine: null,
        }),
      }),
    )
  const commit = async (
    files: Record<string, string>,
    parents: string[],
    timestamp: number,
    command: CommitCommand,
    paths: string[],
    actor: 'claude' | 'user' = 'claude',
  ) => commitTree(await tree(files), parents, timestamp, command, paths, actor)
  return { store, tree, commit, commitTree }
}

describe('changes since a moment, while the side index is rebuilt', () => {
  it('are answered from the commits, as the index answers them and as git lists them', async () => {
    let memory = await open()
    for (let k = 0; k < 100; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/${file(k)}`, file_text: `v1 of ${k}\n` },
        claude(`toolu_c${k}`),
      )
    }
    const windowStart = clock + 30_000
    await userWrite(memory, `/memories/${file(3)}`, 'v2 of 3, the person’s\n')
    await memory.execute(
      { command: 'rename', old_path: `/memories/${file(3)}`, new_path: '/memories/kept.md' },
      claude('toolu_mv'),
    )
    await memory.execute(
      { command: 'str_replace', path: '/memories/kept.md', old_str: 'v2', new_str: 'v3' },
      claude('toolu_e'),
    )
    await memory.execute(
      { command: 'str_replace', path: `/memories/${file(50)}`, old_str: 'v1', new_str: 'v2' },
      claude('toolu_e50'),
    )
    const answers = async () =>
      Promise.all([
        memory.changesSince('/memories/kept.md', windowStart),
        memory.changesSince('/memories', windowStart),
        memory.changesSince(`/memories/${file(50)}`, 0),
        memory.changesSince('/memories/none.md', 0),
      ])
    const fromIndex = await answers()
    // Git's second opinion: the renamed file's two names, the folder, one file since ever.
    expect(fromIndex.map((list) => list.map((c) => c.oid))).toEqual([
      gitSince(windowStart, 'kept.md', file(3)),
      gitSince(windowStart),
      gitSince(0, file(50)),
      [],
    ])
    expect(fromIndex[0]?.map((c) => c.actor)).toEqual(['claude', 'claude', 'user'])
    await memory.close()

    // `…-03.md` becomes `…-0X.md` in the index's names: a name no file ever had.
    const namesFile = path.join(indexDirIn(dataDir), 'names')
    const names = await readFile(namesFile)
    const at = names.indexOf(Buffer.from(file(3)))
    expect(names.length - at).toBeGreaterThan(16384)
    names[at + long.length + 2] = 'X'.charCodeAt(0)
    await writeFile(namesFile, names)

    memory = await open()
    // The first query reads the names, meets the damage, and answers from the commits.
    expect(await answers()).toEqual(fromIndex)
    // Every later one too, until the rebuild is in; then from the index again.
    expect(await answers()).toEqual(fromIndex)
    await memory.maintain()
    expect(await answers()).toEqual(fromIndex)
    await memory.close()
  })

  it('reads the same as the index over a history with its clock set back', async () => {
    const memory = await open()
    for (let k = 0; k < 5; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/n${k}.md`, file_text: `${k}\n` },
        claude(`toolu_${k}`),
      )
      // Every other commit dated an hour before the one under it.
      clock += k % 2 === 0 ? -3_600_000 : 3_600_000
    }
    const head = memory.head()
    await memory.close()
    const store = createObjectStore(path.join(dataDir, 'history.git'))
    const index = IndexFile.open(indexDirIn(dataDir))
    try {
      for (const since of [0, clock - 3 * 3_600_000, clock - 3_600_000, clock]) {
        for (const where of ['/memories', '/memories/n2.md', '/memories/n4.md']) {
          expect(await createCommitTimeline(store).changesSince(head, where, since)).toEqual(
            changesSince(index, where, since),
          )
        }
      }
    } finally {
      index.close()
    }
  })

  // Review13 R2: the walk followed git's default order (a parent as soon as its first child is
  // out), the index the timeline's (`git log --date-order`: a parent after all its children).
  // With a rename followed along the way the order decides what is found: the person's edit
  // below a rename made on a machine whose clock is behind was lost, and with it the flag.
  it('reads the same as the index and as git --date-order across a merge with a clock behind', async () => {
    const { store, commit } = await crafted()
    const t = 1_800_000_000
    const r = await commit({ 'a.md': '1' }, [], t, 'create', ['/memories/a.md'])
    // The person's edit of a.md.
    const x = await commit({ 'a.md': '2' }, [r], t + 100, 'str_replace', ['/memories/a.md'], 'user')
    // This machine: another file, later.
    const a = await commit({ 'a.md': '2', 'o.md': 'o' }, [x], t + 200, 'create', ['/memories/o.md'])
    // The other machine, its clock behind: a.md renamed to b.md, dated before the person's edit.
    const b = await commit({ 'b.md': '2' }, [x], t + 50, 'rename', [
      '/memories/a.md',
      '/memories/b.md',
    ])
    // Two more in one second, one on each side: the index puts the joined side's first.
    const a2 = await commit({ 'a.md': '2', 'o.md': 'o2' }, [a], t + 250, 'str_replace', [
      '/memories/o.md',
    ])
    const b2 = await commit({ 'b.md': '2', 'p.md': 'p' }, [b], t + 250, 'create', [
      '/memories/p.md',
    ])
    // The merge, with Claude's edit of b.md.
    const m = await commit(
      { 'b.md': '3', 'o.md': 'o2', 'p.md': 'p' },
      [a2, b2],
      t + 300,
      'str_replace',
      ['/memories/b.md'],
    )
    await store.flush()
    gitCli(dataDir, 'update-ref', 'refs/heads/main', m)
    const name = new Map([
      [r, 'R'],
      [x, 'X'],
      [a, 'A'],
      [b, 'B'],
      [a2, 'A2'],
      [b2, 'B2'],
      [m, 'M'],
    ])
    const names = (oids: ReadonlyArray<string>) => oids.map((oid) => name.get(oid))
    const time = new Map(
      [r, x, a, b, a2, b2, m].map((oid) => [
        oid,
        gitCli(dataDir, 'show', '-s', '--format=%ct', oid).trim(),
      ]),
    )
    const { index } = await openIndex(store, path.join(dataDir, 'history.git'), m)
    try {
      const order = createAncestry(() => index).newestFirst()
      for (const since of [0, (t + 60) * 1000, (t + 150) * 1000]) {
        // Filtered here: git's --since stops its walk at the first older commit it meets.
        const dateOrder = (...paths: string[]) =>
          gitCli(dataDir, 'log', '--date-order', '--format=%H %ct', 'main', '--', ...paths)
            .trim()
            .split('\n')
            .filter((line) => Number(line.split(' ')[1]) * 1000 >= since)
            .map((line) => line.split(' ')[0] as string)
        for (const [where, gitPaths] of [
          ['/memories', []],
          // Its old name counts only through a rename inside the window (B, at t + 50).
          ['/memories/b.md', since === 0 ? ['a.md', 'b.md'] : ['b.md']],
          ['/memories/o.md', ['o.md']],
        ] as const) {
          const fromCommits = await createCommitTimeline(store).changesSince(m, where, since)
          const fromIndex = changesSince(index, where, since, order)
          expect(names(fromCommits.map((c) => c.oid))).toEqual(names(fromIndex.map((c) => c.oid)))
          expect(fromCommits).toEqual(fromIndex)
          // Git's second opinion on the order: every commit that changed a name of the file,
          // the same times in the same order (two of one second, git lists as it met them).
          const fromGit = dateOrder(...gitPaths)
          expect(names(fromCommits.map((c) => c.oid)).sort()).toEqual(names(fromGit).sort())
          expect(fromCommits.map((c) => time.get(c.oid))).toEqual(
            fromGit.map((oid) => time.get(oid)),
          )
        }
      }
      // The person's edit is found through the rename on the behind side.
      expect(
        names(
          (await createCommitTimeline(store).changesSince(m, '/memories/b.md', 0)).map(
            (c) => c.oid,
          ),
        ),
      ).toEqual(['M', 'B', 'X', 'R'])
    } finally {
      index.close()
      store.close()
    }
  })

  // fix14: the walk stopped after a run of OLD_RUN_LIMIT old commits in its own collecting
  // order (a parent out once one child is), and only then put what it had collected in the
  // timeline's order. A commit whose other child lies behind a merge with a clock behind came
  // out early there, and the run ended before the timeline (git --date-order) reached an edit
  // in the window below that merge: the index found it, the walk did not.
  it('stops where the timeline (git --date-order) stops, not where its collecting did', async () => {
    const { store, tree, commit, commitTree } = await crafted()
    const T = 1_800_000_000
    const since = T * 1000
    const base = await tree({ 'a.md': '1' })
    const r = await commit({ 'a.md': '1' }, [], T - 20_000, 'create', ['/memories/a.md'])
    // A run of OLD_RUN_LIMIT old commits below P (none changes a file: cheap to write).
    let below = r
    for (let i = OLD_RUN_LIMIT; i >= 1; i--) {
      below = await commitTree(base, [below], T - 2000 - i, 'create', ['/memories/a.md'])
    }
    const p = await commitTree(base, [below], T - 1000, 'create', ['/memories/a.md'])
    // P's children: C1 on this machine's side, C2 on the other's.
    const c1 = await commitTree(base, [p], T - 500, 'create', ['/memories/a.md'])
    const c2 = await commitTree(base, [p], T - 400, 'create', ['/memories/a.md'])
    // The other side: an edit in the window, then a commit whose clock is far behind.
    const w = await commit({ 'a.md': '1', 'w.md': 'w' }, [c2], T + 100, 'create', [
      '/memories/w.md',
    ])
    const behind = await commit({ 'a.md': '1', 'w.md': 'w' }, [w], T - 10_000, 'create', [
      '/memories/w.md',
    ])
    const m = await commit({ 'a.md': '1', 'w.md': 'w' }, [c1, behind], T + 200, 'create', [
      '/memories/w.md',
    ])
    await store.flush()
    gitCli(dataDir, 'update-ref', 'refs/heads/main', m)

    // Git's second opinion: its --date-order, read until the same run of old commits ends it;
    // of those in the window, the ones that changed the path against their first parent.
    const reached: string[] = []
    let oldRun = 0
    for (const line of gitCli(dataDir, 'log', '--date-order', '--format=%H %ct', 'main')
      .trim()
      .split('\n')) {
      const [oid, time] = line.split(' ') as [string, string]
      if (Number(time) * 1000 < since) {
        if (++oldRun >= OLD_RUN_LIMIT) break
        continue
      }
      oldRun = 0
      reached.push(oid)
    }
    const changed = (oid: string, file: string) =>
      gitCli(dataDir, 'diff-tree', '-r', '--name-only', `${oid}^`, oid).split('\n').includes(file)
    expect(reached).toEqual([m, w])

    const { index } = await openIndex(store, path.join(dataDir, 'history.git'), m)
    try {
      const order = createAncestry(() => index).newestFirst()
      for (const [where, file] of [
        ['/memories/w.md', 'w.md'],
        ['/memories/a.md', 'a.md'],
      ] as const) {
        const fromCommits = (await createCommitTimeline(store).changesSince(m, where, since)).map(
          (c) => c.oid,
        )
        expect(fromCommits).toEqual(reached.filter((oid) => changed(oid, file)))
        expect(fromCommits).toEqual(changesSince(index, where, since, order).map((c) => c.oid))
      }
      expect(
        (await createCommitTimeline(store).changesSince(m, '/memories/w.md', since)).length,
      ).toBe(2)
    } finally {
      index.close()
      store.close()
    }
  })
})

// fix14b: every call ordered the whole history again (~16 µs a commit: 1.6 s before each of
// Claude's writes at 100,000 commits while the index was rebuilt). A CommitTimeline keeps the
// order: new commits of one parent go first, anything else is ordered again from what it kept.
describe('the order kept between calls while the index is rebuilt', () => {
  it('answers as git --date-order after commits land, a merge with a clock behind and a switch', async () => {
    const { store, commit } = await crafted()
    let reads = 0
    const counted = {
      ...store,
      readCommit: (oid: string) => {
        reads++
        return store.readCommit(oid)
      },
    }
    const t = 1_800_000_000
    const r = await commit({ 'a.md': '1' }, [], t, 'create', ['/memories/a.md'])
    const x = await commit({ 'a.md': '2' }, [r], t + 100, 'str_replace', ['/memories/a.md'], 'user')
    const a = await commit({ 'a.md': '2', 'o.md': 'o' }, [x], t + 200, 'create', ['/memories/o.md'])
    // The other machine, its clock behind.
    const b = await commit({ 'b.md': '2' }, [x], t + 50, 'rename', [
      '/memories/a.md',
      '/memories/b.md',
    ])
    const m = await commit({ 'b.md': '2', 'o.md': 'o' }, [a, b], t + 300, 'str_replace', [
      '/memories/b.md',
    ])
    await store.flush()

    const timeline = createCommitTimeline(counted)
    /** What git --date-order lists from `head` at `since` or later, and what both answer. */
    const check = async (head: string, since: number) => {
      gitCli(dataDir, 'update-ref', 'refs/heads/main', head)
      const fromGit = gitCli(dataDir, 'log', '--date-order', '--format=%H %ct', head)
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string])
        .filter(([, time]) => Number(time) * 1000 >= since)
      const kept = await timeline.changesSince(head, '/memories', since)
      // The same commits, the same times in the same order (two of one second, git lists as
      // it met them).
      expect(kept.map((c) => c.oid).sort()).toEqual(fromGit.map(([oid]) => oid).sort())
      expect(kept.map((c) => c.time)).toEqual(fromGit.map(([, time]) => Number(time) * 1000))
      // And every answer as one ordering of the whole history gives it.
      for (const where of ['/memories', '/memories/b.md', '/memories/o.md']) {
        expect(await timeline.changesSince(head, where, since)).toEqual(
          await createCommitTimeline(store).changesSince(head, where, since),
        )
      }
    }
    const readsFor = async (head: string) => {
      reads = 0
      // A window after every commit: only the ordering reads commits.
      await timeline.changesSince(head, '/memories', (t + 10_000) * 1000)
      return reads
    }

    expect(await readsFor(m)).toBe(5)
    await check(m, 0)
    await check(m, (t + 150) * 1000)
    // Asked again at the same head: nothing read.
    expect(await readsFor(m)).toBe(0)

    // Claude's and the person's commits land during the rebuild, one with its clock behind.
    const n1 = await commit({ 'b.md': '3', 'o.md': 'o' }, [m], t + 20, 'str_replace', [
      '/memories/b.md',
    ])
    const n2 = await commit(
      { 'b.md': '3', 'o.md': 'o2' },
      [n1],
      t + 400,
      'str_replace',
      ['/memories/o.md'],
      'user',
    )
    await store.flush()
    // Only the new commits are read.
    expect(await readsFor(n2)).toBe(2)
    await check(n2, 0)
    await check(n2, (t + 150) * 1000)

    // A merge from the other machine, its side's commit dated before all but the root.
    const s = await commit({ 'b.md': '2', 'p.md': 'p' }, [b], t + 10, 'create', ['/memories/p.md'])
    const m2 = await commit(
      { 'b.md': '3', 'o.md': 'o2', 'p.md': 'p' },
      [n2, s],
      t + 500,
      'create',
      ['/memories/p.md'],
    )
    await store.flush()
    expect(await readsFor(m2)).toBe(2)
    await check(m2, 0)
    await check(m2, (t + 60) * 1000)

    // The history switched to an unrelated one, and back.
    const u1 = await commit({ 'b.md': 'u' }, [], t + 5000, 'create', ['/memories/b.md'])
    const u2 = await commit({ 'b.md': 'u2' }, [u1], t + 4000, 'str_replace', ['/memories/b.md'])
    await store.flush()
    expect(await readsFor(u2)).toBe(2)
    await check(u2, 0)
    await check(m2, 0)
    await check(m2, (t + 150) * 1000)
    store.close()
  })
})
