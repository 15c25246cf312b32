/**
 * History benchmark: Cairn's versioned memory against the native git CLI, in one run.
 *
 *   npm run bench:history          (or: npx tsx bench/history.bench.ts)
 *
 * Builds its fixtures (1,024 files; 10,000 and 100,000 commits) by writing a packfile
 * directly, then reports medians and writes bench/results/history.json.
 */
import { spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { openVersionedMemory, type Origin, type VersionedMemory } from '../src/main/history'
import { buildBlameFixture, buildFixture, type Fixture } from './history-fixture'
import { median } from './median'

interface Row {
  readonly name: string
  readonly cairnMs: number
  readonly gitMs: number | null
  readonly targetMs: number | null
  readonly samples: number
}

const rows: Row[] = []
const notes: string[] = []

async function measure(
  samples: number,
  run: (i: number) => Promise<unknown> | unknown,
): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < samples; i++) {
    const start = performance.now()
    await run(i)
    times.push(performance.now() - start)
  }
  return times
}

function git(cwd: string | null, args: ReadonlyArray<string>, home: string): string {
  const result = spawnSync('git', args, {
    cwd: cwd ?? undefined,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Claude',
      GIT_AUTHOR_EMAIL: 'claude@cairn.invalid',
      GIT_COMMITTER_NAME: 'Claude',
      GIT_COMMITTER_EMAIL: 'claude@cairn.invalid',
    },
  })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

function record(
  name: string,
  cairn: number[],
  gitTimes: number[] | null,
  targetMs: number | null,
): void {
  rows.push({
    name,
    cairnMs: round(median(cairn)),
    gitMs: gitTimes ? round(median(gitTimes)) : null,
    targetMs,
    samples: cairn.length,
  })
  const last = rows.at(-1) as Row
  const ratio =
    last.gitMs !== null ? `  (git ${last.gitMs} ms, ${round(last.gitMs / last.cairnMs)}x)` : ''
  console.log(`  ${name}: ${last.cairnMs} ms${ratio}`)
}

const round = (value: number) => Math.round(value * 1000) / 1000

/** A `str_replace` on a different file each time, as Claude would send it. */
function nextEdit(fixture: Fixture, i: number): { input: Record<string, unknown>; file: string } {
  const files = [...fixture.revisions.keys()]
  const file = files[(i * 37) % files.length] as string
  const revision = fixture.revisions.get(file) as number
  fixture.revisions.set(file, revision + 1)
  return {
    file,
    input: {
      command: 'str_replace',
      path: `/memories/${file}`,
      old_str: `revision ${revision}`,
      new_str: `revision ${revision + 1}`,
    },
  }
}

async function commitOne(memory: VersionedMemory, fixture: Fixture, origin: Origin, i: number) {
  const outcome = await memory.execute(nextEdit(fixture, i).input, origin)
  if (!outcome.commit) throw new Error(`no commit: ${JSON.stringify(outcome.content)}`)
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cairn-bench-history-'))
  const home = path.join(root, 'home')
  await mkdir(home)
  console.log(`Cairn history benchmark (node ${process.version}, ${os.cpus().length} cores)`)
  try {
    // ------------------------------------------------------------- 10,000 commits
    let start = performance.now()
    const small = await buildFixture(path.join(root, 'c10k'), 10_000)
    notes.push(
      `fixture 1,024 files x 10,000 commits built in ${round(performance.now() - start)} ms`,
    )
    start = performance.now()
    let memory = await openVersionedMemory({ dataDir: small.dataDir })
    notes.push(`open at 10,000 commits: ${round(performance.now() - start)} ms`)
    if (memory.recovery) throw new Error('fixture needed recovery')

    // Native git: a clone of the same history, its index warmed.
    const work = path.join(root, 'clone')
    git(null, ['clone', '-q', path.join(small.dataDir, 'history.git'), work], home)
    git(work, ['status', '--short'], home)

    console.log('\n1,024 files, 10,000 commits')
    // Cairn and git samples alternate, so background load hits both alike.
    const origin = { actor: 'claude', conversationId: 'bench', toolUseId: 'toolu_bench' } as const
    for (let i = 0; i < 3; i++) await memory.execute(nextEdit(small, i).input, origin)
    const cairnCommit: number[] = []
    const gitCommit: number[] = []
    for (let i = 0; i < 30; i++) {
      cairnCommit.push(...(await measure(1, () => commitOne(memory, small, origin, 100 + i))))
      gitCommit.push(
        ...(await measure(1, async () => {
          const file = `area-${i % 8}/topic-${(i * 3) % 8}/note-${(i * 5) % 16 || 1}.md`
          await writeFile(path.join(work, file), `edited by the git CLI benchmark ${i}\n`)
          git(work, ['add', '--', file], home)
          git(work, ['commit', '-q', '-m', `str_replace /memories/${file}`], home)
        })),
      )
    }
    record('mutating command end to end @10k', cairnCommit, gitCommit, 15)
    memory.setPolicy({ secretScanning: false })
    record(
      '  same, secret scanning off (commit share)',
      await measure(30, (i) => commitOne(memory, small, origin, 200 + i)),
      null,
      null,
    )
    memory.setPolicy({ secretScanning: true })

    const target = `/memories/${small.target}`
    const history = await memory.fileHistory(target)
    if (history.length !== small.targetCommits.length + 1)
      throw new Error('fileHistory missed commits')
    const gitFollow = [
      '--git-dir',
      path.join(small.dataDir, 'history.git'),
      'log',
      '--follow',
      '--format=%H',
      '--',
      small.target,
    ]
    const gitCount = git(null, gitFollow, home).trim().split('\n').length
    notes.push(`fileHistory @10k: ${history.length} commits (git log --follow: ${gitCount})`)
    record(
      'fileHistory @10k',
      await measure(30, () => memory.fileHistory(target)),
      await measure(5, () => git(null, gitFollow, home)),
      25,
    )

    const gitPage = [
      '--git-dir',
      path.join(small.dataDir, 'history.git'),
      'log',
      '-n',
      '50',
      '--format=%H%x00%an%x00%at%x00%s%x00%(trailers)',
    ]
    record(
      'timeline page (50) @10k',
      await measure(50, () => memory.log({ offset: 0, limit: 50 })),
      await measure(5, () => git(null, gitPage, home)),
      null,
    )

    const [older, newer] = small.targetCommits.slice(-3)
    const restore = await measure(20, async (i) => {
      const result = await memory.restoreFile(target, i % 2 ? (newer as string) : (older as string))
      if (!result.commit) throw new Error('restore made no commit')
    })
    const gitRestore = await measure(10, (i) => {
      git(
        work,
        ['checkout', i % 2 ? (newer as string) : (older as string), '--', small.target],
        home,
      )
      git(work, ['commit', '-q', '-m', `restore ${target}`], home)
    })
    record('restore one file @10k', restore, gitRestore, 20)
    await memory.close()

    // ------------------------------------------------------------ 100,000 commits
    start = performance.now()
    const large = await buildFixture(path.join(root, 'c100k'), 100_000, { sparseTouches: 10 })
    notes.push(
      `fixture 1,024 files x 100,000 commits built in ${round(performance.now() - start)} ms`,
    )
    start = performance.now()
    memory = await openVersionedMemory({ dataDir: large.dataDir })
    notes.push(`open at 100,000 commits: ${round(performance.now() - start)} ms`)

    console.log('\n1,024 files, 100,000 commits')
    const largeTarget = `/memories/${large.target}`
    const largeFollow = [
      '--git-dir',
      path.join(large.dataDir, 'history.git'),
      'log',
      '--follow',
      '--format=%H',
      '--',
      large.target,
    ]
    record(
      'fileHistory @100k',
      await measure(20, () => memory.fileHistory(largeTarget)),
      await measure(3, () => git(null, largeFollow, home)),
      150,
    )
    const largePage = [
      '--git-dir',
      path.join(large.dataDir, 'history.git'),
      'log',
      '-n',
      '50',
      '--format=%H%x00%an%x00%at%x00%s%x00%(trailers)',
    ]
    record(
      'timeline page (50) @100k',
      await measure(50, () => memory.log({ offset: 0, limit: 50 })),
      await measure(5, () => git(null, largePage, home)),
      20,
    )
    record(
      'timeline page (50) by conversation @100k',
      await measure(20, () => memory.log({ offset: 0, limit: 50, conversationId: 'conv-5' })),
      null,
      20,
    )
    record(
      'timeline page (50) at offset 50,000 @100k',
      await measure(20, () => memory.log({ offset: 50_000, limit: 50 })),
      null,
      20,
    )
    const largeOrigin = {
      actor: 'claude',
      conversationId: 'bench',
      toolUseId: 'toolu_bench',
    } as const
    record(
      'mutating command end to end @100k',
      await measure(20, (i) => commitOne(memory, large, largeOrigin, i)),
      null,
      15,
    )
    await memory.close()

    await provenanceAndSearch(root, home, small, large)
  } finally {
    await rm(root, { recursive: true, force: true })
  }

  console.log('\n| benchmark | Cairn median | git CLI median | git / Cairn | target | ok |')
  console.log('|---|---:|---:|---:|---:|:-:|')
  for (const row of rows) {
    const ratio = row.gitMs !== null ? `${round(row.gitMs / row.cairnMs)}x` : '—'
    const ok = row.targetMs === null ? '' : row.cairnMs <= row.targetMs ? 'yes' : 'NO'
    console.log(
      `| ${row.name} | ${row.cairnMs} ms | ${row.gitMs ?? '—'} ms | ${ratio} | ${row.targetMs ?? '—'} ms | ${ok} |`,
    )
  }
  for (const note of notes) console.log(`- ${note}`)

  const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'history.json')
  await mkdir(path.dirname(out), { recursive: true })
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, rows, notes }, null, 2)}\n`,
  )
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`)
}

/**
 * Line provenance (blame) and history search (issue #12), as their own rows: blame of a
 * 500-line file that 1,000 commits changed (first time, from provenance kept by an earlier
 * session, and after one more commit), blame of a file 10 commits changed in a 100,000-commit
 * history, and a search of 10,000 commits for a text — each against the git CLI.
 */
async function provenanceAndSearch(
  root: string,
  home: string,
  small: Fixture,
  large: Fixture,
): Promise<void> {
  console.log('\nline provenance and history search')
  const long = await buildBlameFixture(path.join(root, 'blame'), { lines: 500, commits: 1_000 })
  const longPath = `/memories/${long.file}`
  const gitdir = path.join(long.dataDir, 'history.git')
  const saved = path.join(gitdir, 'cairn-blame')
  const gitBlame = (dir: string, file: string) =>
    git(null, ['--git-dir', dir, 'blame', '--porcelain', 'main', '--', file], home)

  // Cairn's answer must be git's before its time means anything.
  const session = await openVersionedMemory({ dataDir: long.dataDir, watch: false })
  const ours = (await session.blame(longPath)).map((line) => line.commit.oid)
  const theirs = gitBlame(gitdir, long.file)
    .split('\n')
    .filter((line) => /^[0-9a-f]{40} /.test(line))
    .map((line) => line.slice(0, 40))
  if (ours.join() !== theirs.join()) throw new Error('blame differs from git blame')
  await session.close()
  notes.push(
    `blame fixture: ${long.lines} lines, ${long.commits} commits changing the file, ${new Set(ours).size} distinct commits in the answer`,
  )

  // Each session first reads one file at HEAD: isomorphic-git opens the pack on the first
  // read of a session (it reads it whole), a fixed cost measured on its own row.
  const head = async (memory: Awaited<ReturnType<typeof openVersionedMemory>>) =>
    memory.readAt(longPath, (await memory.log({ offset: 0, limit: 1 })).entries[0]?.oid ?? '')
  const fresh = async () => openVersionedMemory({ dataDir: long.dataDir, watch: false })
  const opening: number[] = []
  const cold: number[] = []
  for (let i = 0; i < 3; i++) {
    await rm(saved, { recursive: true, force: true })
    const memory = await fresh()
    opening.push(...(await measure(1, () => head(memory))))
    cold.push(...(await measure(1, () => memory.blame(longPath))))
    await memory.close()
  }
  record('  first object read of a session (the pack opened), for reference', opening, null, null)
  record(
    'blame 500 lines x 1,000 commits, first time (nothing kept)',
    cold,
    await measure(5, () => gitBlame(gitdir, long.file)),
    null,
  )
  const kept: number[] = []
  for (let i = 0; i < 10; i++) {
    const memory = await fresh()
    await head(memory)
    kept.push(...(await measure(1, () => memory.blame(longPath))))
    await memory.close()
  }
  record('blame 500 lines x 1,000 commits, new session (provenance kept)', kept, null, 30)
  const memory = await fresh()
  await memory.blame(longPath)
  const origin = { actor: 'claude', conversationId: 'bench', toolUseId: 'toolu_blame' } as const
  const text = (await readFile(path.join(long.dataDir, 'memories', long.file), 'utf8')).split('\n')
  const afterCommit: number[] = []
  for (let i = 0; i < 10; i++) {
    const line = text[(i * 53) % long.lines] as string
    const outcome = await memory.execute(
      { command: 'str_replace', path: longPath, old_str: line, new_str: `${line} (edited ${i})` },
      origin,
    )
    if (!outcome.commit) throw new Error(`no commit: ${JSON.stringify(outcome.content)}`)
    text[(i * 53) % long.lines] = `${line} (edited ${i})`
    afterCommit.push(...(await measure(1, () => memory.blame(longPath))))
  }
  record('blame 500 lines x 1,000 commits, after one more commit', afterCommit, null, 30)
  await memory.close()

  // A file 10 commits changed, among 100,000: the walk crosses the whole index.
  if (!large.sparse) throw new Error('the 100k fixture has no sparse file')
  const sparsePath = `/memories/${large.sparse}`
  const largeDir = path.join(large.dataDir, 'history.git')
  const largeMemory = await openVersionedMemory({ dataDir: large.dataDir, watch: false })
  const sparseOwners = new Set((await largeMemory.blame(sparsePath)).map((l) => l.commit.oid))
  if ([...sparseOwners].some((oid) => !large.sparseCommits.includes(oid))) {
    throw new Error('sparse blame names a commit that did not change the file')
  }
  const sparseTimes: number[] = []
  for (let i = 0; i < 5; i++) {
    await rm(path.join(largeDir, 'cairn-blame'), { recursive: true, force: true })
    // A new session each time: nothing the previous walk found is reused (the pack is
    // opened first, by reading the file at HEAD, as above).
    const again =
      i === 0 ? largeMemory : await openVersionedMemory({ dataDir: large.dataDir, watch: false })
    const top = (await again.log({ offset: 0, limit: 1 })).entries[0]?.oid ?? ''
    await again.readAt(sparsePath, top)
    sparseTimes.push(...(await measure(1, () => again.blame(sparsePath))))
    await again.close()
  }
  record(
    'blame 10 commits in 100,000, first time',
    sparseTimes,
    await measure(3, () => gitBlame(largeDir, large.sparse as string)),
    15,
  )

  // History search: every page of a search of the 10,000-commit history.
  const searchDir = path.join(small.dataDir, 'history.git')
  const searchAll = async (memory: VersionedMemory, text: string) => {
    let before: string | undefined
    let hits = 0
    for (;;) {
      const page = await memory.searchHistory({ text, matchCase: true, before })
      hits += page.hits.length
      if (!page.next) return hits
      before = page.next
    }
  }
  const needles = ['revision 7\n', 'revision 12\n', 'revision 3\n', 'revision 41\n']
  const gitSearch = (needle: string) =>
    git(null, ['--git-dir', searchDir, 'log', `-S${needle}`, '--format=%H'], home)
  const freshSearch = () => openVersionedMemory({ dataDir: small.dataDir, watch: false })
  // The first search of all reads every commit's trees once; what it found is kept.
  await rm(path.join(searchDir, 'cairn-changes.jsonl'), { force: true })
  let searcher = await freshSearch()
  let hits = 0
  const first = await measure(1, async () => (hits = await searchAll(searcher, needles[0]!)))
  await searcher.close()
  const gitHits = gitSearch(needles[0]!).trim().split('\n').filter(Boolean).length
  if (hits !== gitHits) throw new Error(`search found ${hits} commits, git log -S ${gitHits}`)
  notes.push(`history search @10k for "revision 7": ${hits} commits (git log -S: ${gitHits})`)
  record(
    'history search, 10,000 commits, first search ever (trees read)',
    first,
    await measure(3, () => gitSearch(needles[0]!)),
    null,
  )
  const keptSearch: number[] = []
  for (const needle of needles.slice(1)) {
    searcher = await freshSearch()
    keptSearch.push(...(await measure(1, () => searchAll(searcher, needle))))
    await searcher.close()
  }
  record('history search, 10,000 commits, new session (records kept)', keptSearch, null, 1000)
  searcher = await freshSearch()
  await searchAll(searcher, needles[0]!)
  record(
    'history search, 10,000 commits, next search in the session',
    await measure(3, (i) => searchAll(searcher, needles[i + 1]!)),
    null,
    1000,
  )
  await searcher.close()
}

await main()
