/**
 * Reading a history that two machines made: blame, history search and the timeline over
 * sync's two-parent merge commits, checked against the git CLI. Each machine is a real
 * versioned memory on its own data folder; "syncing" fetches the other's commits with the
 * git CLI and joins them with sync's own merge (engine.ts `mergeCommit`), as `sync:now` does
 * after its network part. The network itself is sync.test.ts's subject.
 */
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { BlameLine, CommitSummary } from '../../shared/types'
import { openVersionedMemory, type Origin, type VersionedMemory } from '../history'
import { gitCli, tempDataDir } from '../history/test-helpers'
import { mergeCommit } from './engine'

interface Peer {
  readonly name: string
  readonly dir: string
  readonly memory: VersionedMemory
}

let peers: Array<Peer & { cleanup: () => Promise<void> }> = []
let clock = Date.UTC(2026, 10, 2, 9, 0)
const now = () => (clock += 60_000)

afterEach(async () => {
  for (const peer of peers) {
    await peer.memory.close()
    await peer.cleanup()
  }
  peers = []
})

async function machine(name: string): Promise<Peer> {
  const { dir, cleanup } = await tempDataDir()
  const memory = await openVersionedMemory({ dataDir: dir, now, watch: false, machine: name })
  const peer = { name, dir, memory, cleanup }
  peers.push(peer)
  return peer
}

let toolUse = 0
const claude = (): Origin => ({
  actor: 'claude',
  conversationId: 'conv-sync',
  toolUseId: `toolu_${++toolUse}`,
})

async function run(peer: Peer, input: Record<string, unknown>): Promise<CommitSummary> {
  const outcome = await peer.memory.execute(input, claude())
  if (outcome.isError || !outcome.commit) {
    throw new Error(`${JSON.stringify(input)} failed: ${String(outcome.content)}`)
  }
  return outcome.commit
}

/** Claude replaces one line of a file with others. */
const edit = (peer: Peer, file: string, old: string, ...lines: string[]) =>
  run(peer, {
    command: 'str_replace',
    path: `/memories/${file}`,
    old_str: `${old}\n`,
    new_str: lines.map((line) => `${line}\n`).join(''),
  })

/**
 * Brings `from`'s history into `into` the way a sync does: nothing when `into` has it all,
 * a fast-forward when `into` has nothing of its own, else a merge commit by Cairn (first
 * parent `into`'s own history). Returns the new head's summary when `main` moved.
 */
async function pull(into: Peer, from: Peer): Promise<CommitSummary | null> {
  const ref = `refs/peers/${from.name}`
  gitCli(into.dir, 'fetch', '--quiet', path.join(from.dir, 'history.git'), `+main:${ref}`)
  const remote = gitCli(into.dir, 'rev-parse', ref).trim()
  return into.memory.git.exclusive(async (session) => {
    const local = session.head()
    if (local === null) return (await session.moveMain(remote, 'forward')).at(-1) ?? null
    const base = gitCli(into.dir, 'merge-base', local, remote).trim()
    if (base === remote) return null
    if (base === local) return (await session.moveMain(remote, 'forward')).at(-1) ?? null
    const merge = await mergeCommit(
      { git: into.memory.git, machine: into.name, now },
      local,
      remote,
      base,
      'sync',
    )
    return (await session.moveMain(merge.oid, 'forward')).at(-1) ?? null
  })
}

/** `git blame --porcelain` of `file` at `rev`: the commit of each line. */
function gitBlame(peer: Peer, rev: string, file: string): Array<{ sha: string; text: string }> {
  const lines: Array<{ sha: string; text: string }> = []
  let sha = ''
  for (const line of gitCli(peer.dir, 'blame', '--porcelain', rev, '--', file).split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(line)
    if (header) sha = header[1] as string
    else if (line.startsWith('\t')) lines.push({ sha, text: line.slice(1) })
  }
  return lines
}

function filesAt(peer: Peer, rev: string): string[] {
  return gitCli(peer.dir, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean)
}

/** Cairn's blame and git's, line by line, for lines that occur once in the file. */
async function expectSameAsGit(peer: Peer, rev: string, file: string): Promise<BlameLine[]> {
  const ours = await peer.memory.blame(`/memories/${file}`, rev === 'main' ? undefined : rev)
  const git = gitBlame(peer, rev, file)
  expect(ours.map((l) => l.text)).toEqual(git.map((l) => l.text))
  const count = new Map<string, number>()
  for (const line of git) count.set(line.text, (count.get(line.text) ?? 0) + 1)
  const unique = (i: number) => count.get(git[i]?.text ?? '') === 1
  expect(
    ours.flatMap((l, i) => (unique(i) ? [`${l.line} ${l.commit.oid}`] : [])),
    `${file} at ${rev.slice(0, 7)} on ${peer.name}`,
  ).toEqual(git.flatMap((l, i) => (unique(i) ? [`${i + 1} ${l.sha}`] : [])))
  return [...ours]
}

const text = (...lines: string[]) => lines.map((line) => `${line}\n`).join('')

/** Two machines with the same start: notes.md written by Claude on the laptop. */
async function twoMachines(): Promise<[Peer, Peer, CommitSummary]> {
  const laptop = await machine('laptop')
  const desktop = await machine('desktop')
  const base = await run(laptop, {
    command: 'create',
    path: '/memories/notes.md',
    file_text: text('# Notes', 'Editor: Helix', 'Shell: fish', 'Tea: green', 'Walks: daily'),
  })
  await pull(desktop, laptop)
  return [laptop, desktop, base]
}

describe('blame across machines', () => {
  it('follows this side for lines merged unchanged from it, the other side for the rest', async () => {
    const [laptop, desktop, base] = await twoMachines()
    const mine = await edit(laptop, 'notes.md', 'Editor: Helix', 'Editor: Zed')
    const theirs = await edit(desktop, 'notes.md', 'Walks: daily', 'Walks: weekends', 'Bike: yes')
    const merge = await pull(laptop, desktop)
    expect(merge).toMatchObject({ actor: 'system', command: 'merge', machine: 'laptop' })
    expect(merge?.otherParents).toEqual([theirs.oid])

    const lines = await expectSameAsGit(laptop, merge!.oid, 'notes.md')
    expect(lines.map((l) => [l.text, l.commit.oid])).toEqual([
      ['# Notes', base.oid],
      ['Editor: Zed', mine.oid],
      ['Shell: fish', base.oid],
      ['Tea: green', base.oid],
      ['Walks: weekends', theirs.oid],
      ['Bike: yes', theirs.oid],
    ])
    // The other machine's lines say where they were written; none is the merge's own.
    expect(lines[4]?.commit).toMatchObject({ actor: 'claude', machine: 'desktop' })
    expect(lines.some((l) => l.commit.command === 'merge')).toBe(false)

    // The desktop, taking the merge by fast-forward, reads the same provenance.
    await pull(desktop, laptop)
    expect((await desktop.memory.blame('/memories/notes.md')).map((l) => l.commit.oid)).toEqual(
      lines.map((l) => l.commit.oid),
    )
  })

  it('gives a file the other machine changed alone wholly to that machine', async () => {
    const [laptop, desktop, base] = await twoMachines()
    await run(laptop, { command: 'create', path: '/memories/todo.md', file_text: text('buy') })
    const theirs = await edit(desktop, 'notes.md', 'Tea: green', 'Tea: oolong')
    const merge = await pull(laptop, desktop)
    const lines = await expectSameAsGit(laptop, merge!.oid, 'notes.md')
    expect(lines.map((l) => l.commit.oid)).toEqual([
      base.oid,
      base.oid,
      base.oid,
      theirs.oid,
      base.oid,
    ])
  })

  it('makes the markers of a conflict the merge’s own, each version its machine’s', async () => {
    const [laptop, desktop, base] = await twoMachines()
    const mine = await edit(laptop, 'notes.md', 'Shell: fish', 'Shell: zsh')
    const theirs = await edit(desktop, 'notes.md', 'Shell: fish', 'Shell: nushell')
    const merge = await pull(laptop, desktop)
    const show = await laptop.memory.show(merge!.oid)
    expect(show.message).toMatch(/^Conflict: %2Fmemories%2Fnotes\.md$/m)

    const lines = await expectSameAsGit(laptop, merge!.oid, 'notes.md')
    const by = Object.fromEntries(lines.map((l) => [l.text, l.commit.oid]))
    expect(by).toEqual({
      '# Notes': base.oid,
      'Editor: Helix': base.oid,
      '<<<<<<< laptop': merge!.oid,
      'Shell: zsh': mine.oid,
      '=======': merge!.oid,
      'Shell: nushell': theirs.oid,
      '>>>>>>> desktop': merge!.oid,
      'Tea: green': base.oid,
      'Walks: daily': base.oid,
    })

    // Keeping both versions removes the markers only: every line keeps who wrote it.
    const resolved = await laptop.memory.execute(
      {
        command: 'create',
        path: '/memories/notes.md',
        file_text: text(...lines.map((l) => l.text).filter((t) => !/^(<{7}|={7}|>{7})/.test(t))),
      },
      { actor: 'user' },
      { commitAs: 'resolve', createExisting: 'overwrite' },
    )
    expect(resolved.commit).toMatchObject({ actor: 'user', command: 'resolve' })
    const after = await expectSameAsGit(laptop, 'main', 'notes.md')
    expect(after.map((l) => l.commit.oid)).toEqual([
      base.oid,
      base.oid,
      mine.oid,
      theirs.oid,
      base.oid,
      base.oid,
    ])
  })

  it('follows a file one machine renamed while the other edited it', async () => {
    const [laptop, desktop, base] = await twoMachines()
    const moved = await run(laptop, {
      command: 'rename',
      old_path: '/memories/notes.md',
      new_path: '/memories/profile/notes.md',
    })
    const mine = await edit(laptop, 'profile/notes.md', 'Editor: Helix', 'Editor: Kakoune')
    const theirs = await edit(desktop, 'notes.md', 'Tea: green', 'Tea: sencha')
    const merge = await pull(laptop, desktop)
    expect(filesAt(laptop, merge!.oid)).toEqual(['profile/notes.md'])
    const lines = await expectSameAsGit(laptop, merge!.oid, 'profile/notes.md')
    expect(lines.map((l) => l.commit.oid)).toEqual([
      base.oid,
      mine.oid,
      base.oid,
      theirs.oid,
      base.oid,
    ])
    expect(moved.command).toBe('rename')
    // And from the other side: the desktop merges the laptop's rename into its own edit.
    const other = await pull(desktop, laptop)
    expect(other?.oid).toBe(merge!.oid)
  })

  it('agrees with git blame on random histories two machines made and synced', async () => {
    for (const seed of [11, 23, 37]) {
      let state = seed
      const random = () => {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
        return state / 2_147_483_648
      }
      let fresh = 0
      const line = () => `line-${String(++fresh).padStart(5, '0')}-${seed}`
      const pick = <T>(items: ReadonlyArray<T>): T =>
        items[Math.floor(random() * items.length)] as T
      const laptop = await machine(`laptop-${seed}`)
      const desktop = await machine(`desktop-${seed}`)
      const both = [laptop, desktop]
      await run(laptop, {
        command: 'create',
        path: '/memories/a.md',
        file_text: text(line(), line(), line(), line()),
      })
      await pull(desktop, laptop)
      const merges: string[] = []

      for (let round = 0; round < 6; round++) {
        for (const peer of both) {
          for (let step = 0; step < 4; step++) {
            const files = filesAt(peer, 'main')
            const roll = random()
            try {
              if (roll < 0.15 || files.length === 0) {
                await run(peer, {
                  command: 'create',
                  path: `/memories/${peer.name.slice(0, 1)}${round}${step}.md`,
                  file_text: text(line(), line(), line()),
                })
                continue
              }
              const file = pick(files)
              const lines = gitCli(peer.dir, 'show', `main:${file}`).split('\n').slice(0, -1)
              if (roll < 0.6 && lines.length > 0) {
                const old = pick(lines)
                const count = Math.floor(random() * 3)
                await edit(peer, file, old, ...Array.from({ length: count }, line))
              } else if (roll < 0.85) {
                await run(peer, {
                  command: 'insert',
                  path: `/memories/${file}`,
                  insert_line: Math.floor(random() * (lines.length + 1)),
                  insert_text: line(),
                })
              } else if (roll < 0.93) {
                await run(peer, {
                  command: 'rename',
                  old_path: `/memories/${file}`,
                  new_path: `/memories/${peer.name.slice(0, 1)}-moved-${round}-${step}.md`,
                })
              } else if (files.length > 2) {
                await run(peer, { command: 'delete', path: `/memories/${file}` })
              }
            } catch {
              // A refused change (a name in use) is no step.
            }
          }
        }
        // One machine takes the other's changes, then the other takes the result (or both
        // merge on their own first, so that merges of merges happen too).
        const [first, second] = random() < 0.5 ? [laptop, desktop] : [desktop, laptop]
        const made = await pull(first as Peer, second as Peer)
        if (made?.command === 'merge') merges.push(made.oid)
        if (random() < 0.7) {
          const back = await pull(second as Peer, first as Peer)
          if (back?.command === 'merge') merges.push(back.oid)
        }
      }
      expect(merges.length).toBeGreaterThan(2)
      for (const peer of both) {
        gitCli(peer.dir, 'fsck', '--strict', '--no-dangling')
        for (const file of filesAt(peer, 'main')) await expectSameAsGit(peer, 'main', file)
      }
      for (const oid of merges) {
        const peer = both.find((p) => p.memory.git.position(oid) >= 0) as Peer
        for (const file of filesAt(peer, oid)) await expectSameAsGit(peer, oid, file)
      }
    }
    // Three random histories of two machines, synced, each file checked against the git CLI:
    // about 15 s on a quiet machine, past the default 30 s on a loaded one.
  }, 120_000)
})

describe('history search across machines', () => {
  async function searchAll(peer: Peer, needle: string) {
    const hits: Array<{ oid: string; files: string[] }> = []
    let before: string | undefined
    for (;;) {
      const page = await peer.memory.searchHistory({
        text: needle,
        matchCase: true,
        ...(before ? { before } : {}),
        budgetMs: 0,
      })
      hits.push(
        ...page.hits.map((hit) => ({
          oid: hit.commit.oid,
          files: hit.files.map((f) => `${f.change} ${f.path}`),
        })),
      )
      if (!page.next) return hits
      before = page.next
    }
  }

  it('finds the commit that wrote a text on the other machine, not the merge that took it', async () => {
    const [laptop, desktop] = await twoMachines()
    await edit(laptop, 'notes.md', 'Editor: Helix', 'Editor: Zed')
    const theirs = await edit(desktop, 'notes.md', 'Tea: green', 'Tea: genmaicha')
    const merge = await pull(laptop, desktop)
    expect(merge?.command).toBe('merge')

    expect(await searchAll(laptop, 'genmaicha')).toEqual([
      { oid: theirs.oid, files: ['added /memories/notes.md'] },
    ])
    // What git log -S finds (it leaves merges out), commit for commit.
    const git = gitCli(laptop.dir, 'log', '-S', 'genmaicha', '--format=%H', 'main').trim()
    expect(git).toBe(theirs.oid)
    expect((await searchAll(laptop, 'Tea: green')).map((h) => h.oid)).toEqual(
      gitCli(laptop.dir, 'log', '-S', 'Tea: green', '--format=%H', 'main').trim().split('\n'),
    )
  })

  it('finds conflict markers where the merge wrote them and where they were resolved', async () => {
    const [laptop, desktop] = await twoMachines()
    await edit(laptop, 'notes.md', 'Shell: fish', 'Shell: zsh')
    await edit(desktop, 'notes.md', 'Shell: fish', 'Shell: nushell')
    const merge = await pull(laptop, desktop)
    const resolved = await laptop.memory.execute(
      { command: 'create', path: '/memories/notes.md', file_text: text('# Notes', 'Shell: zsh') },
      { actor: 'user' },
      { commitAs: 'resolve', createExisting: 'overwrite' },
    )
    expect(await searchAll(laptop, '<<<<<<<')).toEqual([
      { oid: resolved.commit!.oid, files: ['removed /memories/notes.md'] },
      { oid: merge!.oid, files: ['added /memories/notes.md'] },
    ])
    // The merge kept the desktop's line between markers: it did not add it.
    expect((await searchAll(laptop, 'nushell')).map((h) => h.oid)).not.toContain(merge!.oid)

    // A new session reads what the first one recorded, merges' other parents included.
    await laptop.memory.close()
    const again = await openVersionedMemory({ dataDir: laptop.dir, now, watch: false })
    peers = peers.map((p) => (p.dir === laptop.dir ? { ...p, memory: again } : p))
    const reopened = peers.find((p) => p.dir === laptop.dir) as Peer
    expect(await searchAll(reopened, '<<<<<<<')).toEqual(await searchAll(reopened, '<<<<<<<'))
    expect((await searchAll(reopened, '<<<<<<<')).map((h) => h.oid)).toEqual([
      resolved.commit!.oid,
      merge!.oid,
    ])
  })
})

describe('the timeline of a synced history', () => {
  it('interleaves both machines’ changes by time, never a commit below its parent', async () => {
    const [laptop, desktop, base] = await twoMachines()
    const made: CommitSummary[] = [base]
    for (let i = 0; i < 4; i++) {
      made.push(
        await edit(
          laptop,
          'notes.md',
          i === 0 ? 'Editor: Helix' : `Editor: ${i - 1}`,
          `Editor: ${i}`,
        ),
      )
      // The desktop's changes are a day later each time: days alternate between machines.
      clock += 24 * 3_600_000
      made.push(
        await edit(
          desktop,
          'notes.md',
          i === 0 ? 'Walks: daily' : `Walks: ${i - 1}`,
          `Walks: ${i}`,
        ),
      )
    }
    const merge = (await pull(laptop, desktop)) as CommitSummary
    const log = (await laptop.memory.log({ offset: 0, limit: 100 })).entries
    expect(log.map((c) => c.oid)).toEqual(
      gitCli(laptop.dir, 'log', '--date-order', '--format=%H', 'main').trim().split('\n'),
    )
    expect(log[0]?.oid).toBe(merge.oid)
    const times = log.map((c) => c.time)
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    // Pages of the timeline are slices of the same order.
    const page = await laptop.memory.log({ offset: 3, limit: 4 })
    expect(page.entries.map((c) => c.oid)).toEqual(log.slice(3, 7).map((c) => c.oid))
    // Filtered, in the same order: every change but the start is Claude's.
    const claudes = await laptop.memory.log({ offset: 0, limit: 100, actor: 'claude' })
    expect(claudes.entries.map((c) => c.oid)).toEqual(
      log.filter((c) => c.actor === 'claude').map((c) => c.oid),
    )
    expect(claudes.total).toBe(made.length)
  })

  it('still sees this machine’s recent changes after a merge brought older ones', async () => {
    const [laptop, desktop] = await twoMachines()
    // The desktop's changes are older than the laptop's newest one.
    const theirs = await edit(desktop, 'notes.md', 'Walks: daily', 'Walks: never')
    clock += 3_600_000
    const mine = await laptop.memory.execute(
      {
        command: 'str_replace',
        path: '/memories/notes.md',
        old_str: 'Tea: green',
        new_str: 'Tea: black',
      },
      { actor: 'user' },
    )
    await pull(laptop, desktop)
    const recent = await laptop.memory.changesSince('/memories/notes.md', mine.commit!.time - 1)
    expect(recent.map((c) => c.oid)).toContain(mine.commit!.oid)
    expect(recent.map((c) => c.oid)).not.toContain(theirs.oid)
  })
})
