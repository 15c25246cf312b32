/**
 * History benchmark: Cairn's versioned memory against the native git CLI, in one run.
 *
 *   npm run bench:history          (or: npx tsx bench/history.bench.ts)
 *   BENCH_QUICK=1 npm run bench:history    (skips the 100,000-commit part)
 *
 * Builds its fixtures (10,000 and 100,000 commits over 1,024 files; 10,000 commits over a flat
 * folder of 1,000 files and over 10,000 nested files) as loose objects, then:
 * - opens each history in a new process (loose, after Cairn's maintenance, after `git gc`),
 *   reporting the open time and the process's memory after it;
 * - compares bytes on disk after Cairn's maintenance with `git gc` on the same history;
 * - times commands with their commits (p50, p99) against `git add` + `git commit` on a clone;
 * - times file history, timeline pages and restores against `git log` and `git checkout`;
 * - reports the renderer's start-up JavaScript against what later screens load;
 * - times line provenance (blame) and history search against `git blame` and `git log -S`.
 * Writes everything to bench/results/history.json.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { build } from 'vite'
import { openVersionedMemory, type Origin, type VersionedMemory } from '../src/main/history'
import { nodeDisk, setDisk, type Disk } from '../src/main/lib/disk'
import { bundleSizes, total } from './bundle-sizes'
import { startGitProcess } from './git-process'
import { buildBlameFixture, buildFixture, type Fixture, type Shape } from './history-fixture'
import { median } from './median'
import { pageOutNote } from './page-out'

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.dirname(here)
const quick = process.env.BENCH_QUICK === '1'

interface Row {
  readonly name: string
  readonly unit: 'ms' | 'MB' | 'KB'
  readonly cairn: number
  readonly git: number | null
  /** What the row must meet, in words, and whether it did (null: no target). */
  readonly target: string
  readonly ok: boolean | null
  readonly samples: number
}

const rows: Row[] = []
const notes: string[] = []

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits
const mb = (bytes: number) => round(bytes / 1024 / 1024, 1)

function record(row: Omit<Row, 'cairn' | 'git'> & { cairn: number; git?: number | null }): void {
  const full: Row = {
    ...row,
    cairn: round(row.cairn),
    git: row.git == null ? null : round(row.git),
  }
  rows.push(full)
  const ratio =
    full.git !== null ? `  (git ${full.git} ${full.unit}, ${round(full.git / full.cairn, 1)}x)` : ''
  const ok = full.ok === null ? '' : full.ok ? '  ok' : '  MISSED'
  console.log(`  ${full.name}: ${full.cairn} ${full.unit}${ratio}${ok}`)
}

function percentile(values: ReadonlyArray<number>, p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

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

let home = ''
/** The environment git runs in: its own HOME, no system config, a fixed identity. */
const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Claude',
  GIT_AUTHOR_EMAIL: 'claude@cairn.invalid',
  GIT_COMMITTER_NAME: 'Claude',
  GIT_COMMITTER_EMAIL: 'claude@cairn.invalid',
})
function git(cwd: string | null, args: ReadonlyArray<string>): string {
  const result = spawnSync('git', args, {
    cwd: cwd ?? undefined,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: gitEnv(),
  })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

/** Disk use of a folder as `du` counts it (allocated blocks: what loose objects really cost). */
function diskBytes(dir: string): number {
  const out = spawnSync('du', ['-sk', dir], { encoding: 'utf8' })
  return Number(out.stdout.split('\t')[0]) * 1024
}

/**
 * How long the main thread has been ready to run but waiting for a CPU (Linux), in ms: on a
 * shared machine, the part of any stall that other processes caused.
 */
function cpuWaitMs(): number | null {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1')
    return Number(stat.split(' ')[1]) / 1e6
  } catch {
    return null
  }
}

/**
 * Waits for the disk to take everything written so far: building fixtures, `git gc` and
 * maintenance leave hundreds of MB of writes and deletions in flight, which would otherwise
 * slow whatever is measured next.
 */
function settle(): void {
  spawnSync('sync')
}

/** Copies a data folder; objects are hard-linked (git gc only adds and removes files there). */
function copyDataDir(from: string, to: string): void {
  fs.cpSync(path.join(from, 'memories'), path.join(to, 'memories'), { recursive: true })
  const gitFrom = path.join(from, 'history.git')
  const gitTo = path.join(to, 'history.git')
  fs.cpSync(gitFrom, gitTo, {
    recursive: true,
    filter: (source) => !source.startsWith(path.join(gitFrom, 'objects')),
  })
  const linked = spawnSync('cp', [
    '-al',
    path.join(gitFrom, 'objects'),
    path.join(gitTo, 'objects'),
  ])
  if (linked.status !== 0) throw new Error(`cp -al failed: ${linked.stderr}`)
}

/** Bundles the open probe to plain JavaScript, so the child processes carry no TypeScript loader. */
async function bundleProbe(outDir: string): Promise<string> {
  await build({
    configFile: false,
    logLevel: 'error',
    root: repoRoot,
    build: {
      ssr: path.join(here, 'open-probe.ts'),
      outDir,
      emptyOutDir: true,
      minify: false,
      rollupOptions: { output: { format: 'esm', entryFileNames: 'open-probe.mjs' } },
    },
  })
  return path.join(outDir, 'open-probe.mjs')
}

interface Probe {
  readonly loadMs: number
  readonly openMs: number
  readonly firstPageMs: number
  readonly rss: number
  readonly recovery: string | null
}

let probeScript = ''
/** Opens `dataDir` in `times` fresh processes (after one to warm the disk cache). */
function probeOpen(dataDir: string, times = 5): Probe[] {
  const results: Probe[] = []
  for (let i = 0; i <= times; i++) {
    const run = spawnSync(process.execPath, [probeScript, dataDir], {
      encoding: 'utf8',
      cwd: repoRoot,
    })
    if (run.status !== 0) throw new Error(`open probe failed: ${run.stderr}`)
    const probe = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Probe
    if (probe.recovery) throw new Error(`open needed recovery: ${probe.recovery}`)
    if (i > 0) results.push(probe)
  }
  return results
}

function recordOpen(
  label: string,
  dataDir: string,
  targetMs: number,
  rssTargetMb: number | null,
): void {
  const probes = probeOpen(dataDir)
  const open = median(probes.map((p) => p.openMs))
  record({
    name: `open ${label}`,
    unit: 'ms',
    cairn: open,
    target: `≤ ${targetMs} ms`,
    ok: open <= targetMs,
    samples: probes.length,
  })
  const rss = median(probes.map((p) => p.rss)) / 1024 / 1024
  record({
    name: `  RSS after open ${label}`,
    unit: 'MB',
    cairn: rss,
    target: rssTargetMb === null ? '' : `≤ ${rssTargetMb} MB`,
    ok: rssTargetMb === null ? null : rss <= rssTargetMb,
    samples: probes.length,
  })
  notes.push(
    `open ${label}: module load ${round(median(probes.map((p) => p.loadMs)), 1)} ms before it; first timeline page ready at ${round(median(probes.map((p) => p.firstPageMs)), 1)} ms`,
  )
}

/** A `str_replace` on a different file each time, as Claude would send it. */
function nextEdit(fixture: Fixture, i: number): Record<string, unknown> {
  // Never the followed file: its history is what the file-history rows check against.
  const files = [...fixture.revisions.keys()].filter((file) => file !== fixture.target)
  const file = files[(i * 37) % files.length] as string
  const revision = fixture.revisions.get(file) as number
  fixture.revisions.set(file, revision + 1)
  return {
    command: 'str_replace',
    path: `/memories/${file}`,
    old_str: `revision ${revision}`,
    new_str: `revision ${revision + 1}`,
  }
}

const origin: Origin = { actor: 'claude', conversationId: 'bench', toolUseId: 'toolu_bench' }

async function commitOne(memory: VersionedMemory, fixture: Fixture, i: number): Promise<void> {
  const outcome = await memory.execute(nextEdit(fixture, i), origin)
  if (!outcome.commit) throw new Error(`no commit: ${JSON.stringify(outcome.content)}`)
}

/**
 * The disk with every fsync skipped: the reference that tells what durability costs (the same
 * commands, samples alternating with the durable ones, so load on the machine hits both alike).
 */
const withoutFsync: Disk = { ...nodeDisk, fsync: async () => undefined, fsyncSync: () => undefined }

/** Commits with Cairn and with the git CLI on a clone of the same history, samples alternating. */
async function compareCommits(
  label: string,
  memory: VersionedMemory,
  fixture: Fixture,
  clone: string,
  samples: number,
): Promise<void> {
  // Warm up: the code paths, and the object folders maintenance emptied and removed.
  for (let i = 0; i < 20; i++) await commitOne(memory, fixture, 10_000 + i)
  const files = [...fixture.revisions.keys()]
  const cairn: number[] = []
  const unsynced: number[] = []
  const gitTimes: number[] = []
  // Not the row's reference (that stays the CLI as people run it): git with every write
  // fsynced, as Cairn's commits are, in the notes.
  const durableGit: number[] = []
  const durable: number[] = []
  const afterFork: number[] = []
  const noFork: number[] = []
  // In a process of its own: a fork of this one would slow the command timed after it
  // (bench/git-process.ts), which the app never pays.
  const gitProcess = startGitProcess(gitEnv())
  const gitCommit = async (into: number[], i: number, options: ReadonlyArray<string>) => {
    const file = files[(i * 53) % files.length] as string
    into.push(
      await gitProcess.commit({
        clone,
        file,
        content: `edited by the git CLI benchmark ${i}\n`,
        subject: `str_replace /memories/${file}`,
        options,
      }),
    )
  }
  // The row's samples: a git commit after every other command, so half of them come right
  // after another process ran (cold: docs/performance.md, "Stop 19") and half right after a
  // command; the p50 falls between the two, and the notes give each half.
  const afterGit: number[] = []
  const afterCommand: number[] = []
  try {
    for (let i = 0; i < samples; i++) {
      const ms = (await measure(1, () => commitOne(memory, fixture, i)))[0] as number
      cairn.push(ms)
      if (i % 2 === 0) {
        afterCommand.push(ms)
        await gitCommit(gitTimes, i, [])
      } else afterGit.push(ms)
    }
    // What the fsyncs cost, in a phase of its own after the row's samples: commands with every
    // fsync skipped leave the metadata they changed unwritten, which slows the file creations
    // of the commands after them (docs/durability.md), so they must not run among the row's
    // samples.
    for (let i = 0; i < samples / 2; i++) {
      durable.push(...(await measure(1, () => commitOne(memory, fixture, 30_000 + i))))
      const restore = setDisk(withoutFsync)
      try {
        unsynced.push(...(await measure(1, () => commitOne(memory, fixture, 20_000 + i))))
      } finally {
        restore()
      }
    }
    // What running git from this process would have added (why it runs in its own): commands
    // right after a fork of this process, alternating with commands right after the same
    // spawn made by the git process.
    for (let i = 0; i < samples / 4; i++) {
      spawnSync('true')
      afterFork.push(...(await measure(1, () => commitOne(memory, fixture, 50_000 + 2 * i))))
      await gitProcess.spawn('true')
      noFork.push(...(await measure(1, () => commitOne(memory, fixture, 50_001 + 2 * i))))
    }
    // After the loop, so that Cairn's samples run beside the same git work as they always have.
    for (let i = 0; i < samples / 4; i++) {
      await gitCommit(durableGit, samples + i, [
        '-c',
        'core.fsync=all',
        '-c',
        'core.fsyncMethod=fsync',
      ])
    }
  } finally {
    gitProcess.close()
  }
  const p50 = percentile(cairn, 50)
  const p99 = percentile(cairn, 99)
  const gitP50 = percentile(gitTimes, 50)
  record({
    name: `commit p50 ${label}`,
    unit: 'ms',
    cairn: p50,
    git: gitP50,
    target: '≤ 3 ms and ≥ 12x git',
    ok: p50 <= 3 && gitP50 / p50 >= 12,
    samples: cairn.length,
  })
  record({
    name: `commit p99 ${label}`,
    unit: 'ms',
    cairn: p99,
    git: percentile(gitTimes, 99),
    target: '≤ 15 ms',
    ok: p99 <= 15,
    samples: cairn.length,
  })
  notes.push(
    `commit ${label}: max ${round(Math.max(...cairn), 1)} ms over ${cairn.length} commands`,
    `commit ${label}, what the row's samples alternate with: a \`git add\` + \`git commit\` in a clone, in a process of its own, after every other command (git's ${gitTimes.length} samples); p50 of the ${afterGit.length} commands right after git ${round(percentile(afterGit, 50), 2)} ms, of the ${afterCommand.length} right after a command ${round(percentile(afterCommand, 50), 2)} ms`,
  )
  // What the fsyncs cost (docs/durability.md): the same commands with fsync skipped.
  const bareP50 = percentile(unsynced, 50)
  const bareP99 = percentile(unsynced, 99)
  const durableP50 = percentile(durable, 50)
  const durableP99 = percentile(durable, 99)
  notes.push(
    `commit ${label} with every fsync skipped (reference, alternating with ${durable.length} durable commands after the row's samples): p50 ${round(bareP50, 2)} ms against ${round(durableP50, 2)} ms, p99 ${round(bareP99, 1)} ms against ${round(durableP99, 1)} ms; durability costs ${round(durableP50 - bareP50, 2)} ms at p50 (${round(durableP50 / bareP50, 2)}x), ${round(durableP99 - bareP99, 1)} ms at p99`,
  )
  const forkP50 = percentile(afterFork, 50)
  const noForkP50 = percentile(noFork, 50)
  notes.push(
    `commit ${label} right after a fork of the benchmark's process (spawnSync of \`true\`; alternating with ${noFork.length} commands after the same spawn made by another process): p50 ${round(forkP50, 2)} ms against ${round(noForkP50, 2)} ms (${round(forkP50 - noForkP50, 2)} ms for the fork; git runs in a process of its own, bench/git-process.ts)`,
  )
  const durableGitP50 = percentile(durableGit, 50)
  notes.push(
    `commit ${label}, git add + git commit with -c core.fsync=all -c core.fsyncMethod=fsync (durable like Cairn's; not the row's reference; after Cairn's samples, not alternating): p50 ${round(durableGitP50, 1)} ms, ${round(durableGitP50 / p50, 1)}x Cairn's`,
  )
}

/** Clones `dataDir`'s history into a work tree for the git CLI, its index warmed. */
function gitClone(dataDir: string, into: string): string {
  git(null, ['clone', '-q', path.join(dataDir, 'history.git'), into])
  git(into, ['status', '--short'])
  return into
}

/** Commands run before a maintenance pass starts (the first one after open is cold). */
const WARM_UP = 5
/**
 * Commands at the same pace with no maintenance, on the same history just before each pass:
 * the row's reference. The disk this runs on is shared (other processes, other machines on
 * the host), and a command's fsyncs wait for it: without this, a slow disk hour reads as
 * maintenance's doing.
 */
const REFERENCE_COMMANDS = 100

interface MaintenancePass {
  /** The first command after open, on its own. */
  readonly firstMs: number
  /** Each command that ran while the pass did. */
  readonly during: ReadonlyArray<number>
  /** The same commands at the same pace just before the pass, no maintenance running. */
  readonly reference: ReadonlyArray<number>
  readonly report: Awaited<ReturnType<VersionedMemory['maintain']>>
  readonly maintainMs: number
  /** The longest the event loop was held (timer lateness, 1 ms resolution). */
  readonly loopMaxMs: number
  readonly gcPauses: ReadonlyArray<number>
  /** Time the main thread waited for a CPU (other processes), or null where not known. */
  readonly waitedMs: number | null
}

/**
 * Opens `dataDir` (a loose history), warms it with a few commands, then lets maintenance pack
 * it while commands keep coming, one every 100 ms as a busy conversation would send them:
 * each may wait for one slice of packing at most. The removals after wait for 500 ms without
 * a command, so from then on the commands come in turns (ten, then 2 s without). A second
 * pass then packs what they left.
 */
async function commandsDuringMaintenance(
  dataDir: string,
  fixture: Fixture,
): Promise<MaintenancePass> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  const [firstMs] = await measure(1, () => commitOne(memory, fixture, 40_000))
  for (let i = 1; i < WARM_UP; i++) await commitOne(memory, fixture, 40_000 + i)
  const reference: number[] = []
  for (let i = 0; i < REFERENCE_COMMANDS; i++) {
    reference.push(...(await measure(1, () => commitOne(memory, fixture, 45_000 + i))))
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const start = performance.now()
  let packing = true
  const loopDelay = monitorEventLoopDelay({ resolution: 1 })
  loopDelay.enable()
  const gcPauses: number[] = []
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcPauses.push(entry.duration)
  })
  gcObserver.observe({ entryTypes: ['gc'] })
  const waitedBefore = cpuWaitMs()
  // Removals wait for a moment without commands: once they start, the commands come as turns
  // do, ten 100 ms apart, then 2 s without one (the person reading the answer).
  let removing = false
  const pass = memory
    .maintain({ onStep: (step) => (removing ||= step === 'removing-loose') })
    .finally(() => (packing = false))
  const during: number[] = []
  for (let i = 0, burst = 0; packing; i++) {
    during.push(...(await measure(1, () => commitOne(memory, fixture, 50_000 + i))))
    const gap = removing && ++burst % 10 === 0 ? 2_000 : 100
    await new Promise((resolve) => setTimeout(resolve, gap))
  }
  const report = await pass
  loopDelay.disable()
  gcObserver.disconnect()
  const maintainMs = performance.now() - start
  const waitedMs = waitedBefore === null ? null : (cpuWaitMs() as number) - waitedBefore
  // What those commands left loose is packed by the next pass, as the next idle moment would.
  await memory.maintain()
  await memory.close()
  return {
    firstMs: firstMs as number,
    during,
    reference,
    report,
    maintainMs,
    loopMaxMs: loopDelay.max / 1e6,
    gcPauses,
    waitedMs,
  }
}

/**
 * Loose history -> open (loose) -> `git gc` on a copy -> open (git gc) -> Cairn's maintenance
 * -> open (Cairn-packed), with disk use before and after each.
 */
async function storageRows(
  root: string,
  label: string,
  commits: number,
  targets: {
    openMs: number
    rssMb: number | null
    diskMb: number | null
    /** Commands the maintenance row needs (more passes on copies until then; 0: one pass). */
    minSamples: number
  },
  sparseTouches?: number,
): Promise<Fixture> {
  let start = performance.now()
  const fixture = await buildFixture(path.join(root, `loose-${commits}`), commits, {
    storage: 'loose',
    ...(sparseTouches ? { sparseTouches } : {}),
  })
  notes.push(
    `${label}: 1,024 files x ${commits.toLocaleString('en-US')} commits written as loose objects in ${round((performance.now() - start) / 1000, 1)} s`,
  )
  const gitdir = path.join(fixture.dataDir, 'history.git')
  const looseBytes = diskBytes(gitdir)
  settle()
  recordOpen(`${label} (loose)`, fixture.dataDir, targets.openMs, targets.rssMb)

  const gcDir = path.join(root, `gc-${commits}`)
  copyDataDir(fixture.dataDir, gcDir)
  start = performance.now()
  git(null, ['--git-dir', path.join(gcDir, 'history.git'), 'gc', '-q'])
  const gcMs = performance.now() - start
  const gcBytes = diskBytes(path.join(gcDir, 'history.git'))
  settle()
  recordOpen(`${label} (git gc)`, gcDir, targets.openMs, targets.rssMb)

  // More passes, each on a full copy of the loose history (not hard links: the pass's
  // unlinks must free the blocks, as they do in the app), until the row has enough commands
  // for its p99 to be more than its maximum; the pass on the history itself comes last.
  const passes: MaintenancePass[] = []
  const counted = () => passes.reduce((sum, pass) => sum + pass.during.length, 0)
  while (
    targets.minSamples > 0 &&
    counted() + (passes.length > 0 ? counted() / passes.length : 0) < targets.minSamples * 1.1
  ) {
    const copy = path.join(root, `pass-${commits}-${passes.length}`)
    fs.cpSync(fixture.dataDir, copy, { recursive: true, preserveTimestamps: true })
    settle()
    passes.push(
      await commandsDuringMaintenance(copy, { ...fixture, revisions: new Map(fixture.revisions) }),
    )
    await rm(copy, { recursive: true, force: true })
    settle()
  }
  passes.push(await commandsDuringMaintenance(fixture.dataDir, fixture))
  const last = passes.at(-1) as MaintenancePass
  const during = passes.flatMap((pass) => pass.during)
  const reference = passes.flatMap((pass) => pass.reference)
  record({
    name: `commit p99 while maintenance packs ${label}`,
    unit: 'ms',
    cairn: percentile(during, 99),
    target: '≤ 15 ms',
    ok: percentile(during, 99) <= 15,
    samples: during.length,
  })
  record({
    name: `commit p99 at that pace without maintenance ${label} (reference, same run)`,
    unit: 'ms',
    cairn: percentile(reference, 99),
    target: '',
    ok: null,
    samples: reference.length,
  })
  const perPass = (values: ReadonlyArray<number>, digits: number) =>
    values.map((value) => round(value, digits)).join(', ')
  notes.push(
    `${label}: commit p99 while maintenance packs, reference: before each pass, on the same history (its copy written back with \`sync\`), ${REFERENCE_COMMANDS} commands 100 ms apart with no maintenance: p50 ${round(percentile(reference, 50), 2)} ms, p99 ${round(percentile(reference, 99), 1)} ms, max ${round(Math.max(...reference), 1)} ms (per pass: ${perPass(
      passes.map((pass) => Math.max(...pass.reference)),
      1,
    )}); what maintenance adds at p99 is the row less this (a command's fsyncs wait for the disk, which other work shares)`,
    `${label}: commit p99 while maintenance packs: ${passes.length === 1 ? 'one pass: the history opened, warmed' : `${passes.length} passes (each but the last on a fresh full copy of the loose history): each opened, warmed`} with ${WARM_UP} commands, then one command every 100 ms while the pass wrote its pack, and in turns (ten 100 ms apart, then 2 s without) while it removed what the pack holds, until it ended; ${during.length} commands (${perPass(
      passes.map((pass) => pass.during.length),
      0,
    )} per pass): p50 ${round(percentile(during, 50), 2)} ms, p99 ${round(percentile(during, 99), 1)} ms, max ${round(Math.max(...during), 1)} ms (per pass: ${perPass(
      passes.map((pass) => Math.max(...pass.during)),
      1,
    )}); the event loop was held at most ${round(Math.max(...passes.map((pass) => pass.loopMaxMs)), 1)} ms at a time; ${passes.reduce((sum, pass) => sum + pass.gcPauses.length, 0)} GC pauses, the longest ${round(Math.max(0, ...passes.flatMap((pass) => pass.gcPauses)), 1)} ms${last.waitedMs === null ? '' : `; the main thread waited ${round(passes.reduce((sum, pass) => sum + (pass.waitedMs ?? 0), 0) / 1000, 1)} s of the ${round(passes.reduce((sum, pass) => sum + pass.maintainMs, 0) / 1000, 1)} s for a CPU (other processes)`}`,
    `${label}: the first command after opening the loose history (cold: code paths, caches), not among those samples: ${perPass(
      passes.map((pass) => pass.firstMs),
      1,
    )} ms`,
  )
  // A kernel that pages out what was not read for a minute makes the folders' blocks and the
  // loose objects cold whatever the free memory (stop 26): the row's notes say so.
  const pageOut = pageOutNote()
  if (pageOut) notes.push(`${label}: commit p99 while maintenance packs: ${pageOut}`)
  const packedBytes = diskBytes(gitdir)
  settle()
  record({
    name: `bytes on disk after maintenance ${label}`,
    unit: 'MB',
    cairn: mb(packedBytes),
    git: mb(gcBytes),
    target: targets.diskMb === null ? '' : `≤ ${targets.diskMb} MB`,
    ok: targets.diskMb === null ? null : mb(packedBytes) <= targets.diskMb,
    samples: 1,
  })
  notes.push(
    `${label}: history.git ${mb(looseBytes)} MB loose; maintenance packed ${last.report.packed.toLocaleString('en-US')} objects in ${round(last.maintainMs / 1000, 1)} s (in slices, beside commands) to ${mb(packedBytes)} MB; git gc took ${round(gcMs / 1000, 1)} s to ${mb(gcBytes)} MB (both include the side index, ${mb(diskBytes(path.join(gitdir, 'cairn-index')))} MB)`,
  )
  recordOpen(`${label} (Cairn-packed)`, fixture.dataDir, targets.openMs, targets.rssMb)
  await rm(gcDir, { recursive: true, force: true })
  settle()
  return fixture
}

async function commitRows(root: string, shape: Shape, label: string): Promise<void> {
  const start = performance.now()
  const fixture = await buildFixture(path.join(root, shape), 10_000, { shape, storage: 'pack' })
  notes.push(
    `${label}: fixture of 10,000 commits built and packed in ${round((performance.now() - start) / 1000, 1)} s`,
  )
  const clone = gitClone(fixture.dataDir, path.join(root, `${shape}-clone`))
  settle()
  const memory = await openVersionedMemory({ dataDir: fixture.dataDir, watch: false })
  await compareCommits(label, memory, fixture, clone, 200)
  await memory.close()
  // The copy and its clone stay until the end (root's removal): removed here, their ~3,000
  // (flat) or ~21,000 (nested) freed inodes would slow the files the next row creates for a
  // minute, on a disk that holds off reusing them (docs/performance.md, stop 28).
}

async function queryRows(
  memory: VersionedMemory,
  fixture: Fixture,
  label: string,
  clone: string | null,
) {
  const gitdir = path.join(fixture.dataDir, 'history.git')
  const target = `/memories/${fixture.target}`
  const history = await memory.fileHistory(target)
  if (history.length !== fixture.targetCommits.length + 1)
    throw new Error('fileHistory missed commits')
  const follow = ['--git-dir', gitdir, 'log', '--follow', '--format=%H', '--', fixture.target]
  notes.push(
    `fileHistory ${label}: ${history.length} commits (git log --follow: ${git(null, follow).trim().split('\n').length})`,
  )
  const fileHistory = median(await measure(20, () => memory.fileHistory(target)))
  record({
    name: `fileHistory ${label}`,
    unit: 'ms',
    cairn: fileHistory,
    git: median(await measure(3, () => git(null, follow))),
    target: label.includes('100k') ? '≤ 150 ms' : '≤ 25 ms',
    ok: fileHistory <= (label.includes('100k') ? 150 : 25),
    samples: 20,
  })
  const pageArgs = [
    '--git-dir',
    gitdir,
    'log',
    '-n',
    '50',
    '--format=%H%x00%an%x00%at%x00%s%x00%(trailers)',
  ]
  const page = median(await measure(50, () => memory.log({ offset: 0, limit: 50 })))
  record({
    name: `timeline page (50) ${label}`,
    unit: 'ms',
    cairn: page,
    git: median(await measure(5, () => git(null, pageArgs))),
    target: '≤ 20 ms',
    ok: page <= 20,
    samples: 50,
  })
  const byConversation = median(
    await measure(20, () => memory.log({ offset: 0, limit: 50, conversationId: 'conv-5' })),
  )
  record({
    name: `timeline page (50) by conversation ${label}`,
    unit: 'ms',
    cairn: byConversation,
    target: '≤ 20 ms',
    ok: byConversation <= 20,
    samples: 20,
  })
  const deep = median(
    await measure(20, () => memory.log({ offset: Math.floor(fixture.commits / 2), limit: 50 })),
  )
  record({
    name: `timeline page (50) at offset ${(fixture.commits / 2).toLocaleString('en-US')} ${label}`,
    unit: 'ms',
    cairn: deep,
    target: '≤ 20 ms',
    ok: deep <= 20,
    samples: 20,
  })
  if (!clone) return
  const [older, newer] = fixture.targetCommits.slice(-3)
  const restore = median(
    await measure(20, async (i) => {
      const result = await memory.restoreFile(target, i % 2 ? (newer as string) : (older as string))
      if (!result.commit) throw new Error('restore made no commit')
    }),
  )
  record({
    name: `restore one file ${label}`,
    unit: 'ms',
    cairn: restore,
    git: median(
      await measure(10, (i) => {
        git(clone, [
          'checkout',
          i % 2 ? (newer as string) : (older as string),
          '--',
          fixture.target,
        ])
        git(clone, ['commit', '-q', '-m', `restore ${target}`])
      }),
    ),
    target: '≤ 20 ms',
    ok: restore <= 20,
    samples: 20,
  })
}

async function rendererRows(): Promise<void> {
  const built = spawnSync('npx', ['electron-vite', 'build'], { cwd: repoRoot, encoding: 'utf8' })
  if (built.status !== 0) throw new Error(`electron-vite build failed: ${built.stderr}`)
  const sizes = await bundleSizes(path.join(repoRoot, 'out', 'renderer'))
  const initial = total(sizes.initial)
  const lazy = total(sizes.lazy)
  record({
    name: 'renderer JS loaded at start',
    unit: 'KB',
    cairn: initial.bytes / 1024,
    target: '',
    ok: null,
    samples: 1,
  })
  record({
    name: 'renderer JS loaded by later screens',
    unit: 'KB',
    cairn: lazy.bytes / 1024,
    target: '',
    ok: null,
    samples: 1,
  })
  notes.push(
    `renderer at start: ${sizes.initial.map((f) => `${f.file} ${round(f.bytes / 1024, 1)} KB (${round(f.gzip / 1024, 1)} KB gzip)`).join(', ')}`,
    `renderer on demand: ${sizes.lazy.map((f) => `${f.file} ${round(f.bytes / 1024, 1)} KB (${round(f.gzip / 1024, 1)} KB gzip)`).join(', ')}`,
  )
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'cairn-bench-history-'))
  home = path.join(root, 'home')
  await mkdir(home)
  const load = os.loadavg().map((value) => round(value, 2))
  console.log(
    `Cairn history benchmark (node ${process.version}, ${os.cpus().length} cores, load ${load.join(' ')})`,
  )
  try {
    // Inside the repository, so the bundle's imports of packages resolve from node_modules.
    probeScript = await bundleProbe(path.join(repoRoot, 'out', 'bench-probe'))

    console.log('\nRenderer')
    await rendererRows()

    // Before the maintenance passes below: each frees some 50,000 loose files, and on a file
    // system that holds off reusing freed inodes (docs/durability.md) the commits timed right
    // after would pay for those passes, which are not part of what these rows measure.
    console.log('\nCommits at 10,000 commits of history')
    await commitRows(root, 'flat-1000', '@10k, 1,000 flat files')
    await commitRows(root, 'nested-10000', '@10k, 10,000 nested files')

    console.log('\n1,024 files, 10,000 commits')
    const small = await storageRows(root, '@10k', 10_000, {
      openMs: 60,
      rssMb: null,
      diskMb: null,
      minSamples: 300,
    })
    const clone = gitClone(small.dataDir, path.join(root, 'clone-10k'))
    settle()
    let memory = await openVersionedMemory({ dataDir: small.dataDir, watch: false })
    await compareCommits('@10k, 1,024 nested files', memory, small, clone, 200)
    await queryRows(memory, small, '@10k', clone)
    await memory.close()
    await rm(clone, { recursive: true, force: true })

    let large: Fixture | null = null
    if (!quick) {
      console.log('\n1,024 files, 100,000 commits')
      // With a file 10 commits changed, spread over the history, for blame's row.
      const big = await storageRows(
        root,
        '@100k',
        100_000,
        { openMs: 300, rssMb: 150, diskMb: 100, minSamples: 0 },
        10,
      )
      large = big
      memory = await openVersionedMemory({ dataDir: big.dataDir, watch: false })
      await queryRows(memory, big, '@100k', null)
      // The pattern of every other commit row (a git commit in another process after every
      // other command), so that 10,000 and 100,000 commits compare like with like: until stop
      // 25 this row ran its commands back to back and the one at 10,000 did not.
      const bigClone = gitClone(big.dataDir, path.join(root, 'clone-100k'))
      settle()
      await compareCommits('@100k, 1,024 nested files', memory, big, bigClone, 200)
      await memory.close()
      await rm(bigClone, { recursive: true, force: true })
    }

    await provenanceAndSearch(root, small, large)
  } finally {
    await rm(root, { recursive: true, force: true })
  }

  const after = os.loadavg().map((value) => round(value, 2))
  notes.push(
    `load average at start ${load.join(' ')}, at the end ${after.join(' ')} (2 cores shared with other work)`,
  )
  console.log('\n| benchmark | Cairn | git CLI | git / Cairn | target | ok |')
  console.log('|---|---:|---:|---:|---|:-:|')
  for (const row of rows) {
    const ratio = row.git !== null ? `${round(row.git / row.cairn, 1)}x` : '—'
    const gitValue = row.git !== null ? `${row.git} ${row.unit}` : '—'
    const ok = row.ok === null ? '' : row.ok ? 'yes' : 'NO'
    console.log(
      `| ${row.name.trim()} | ${row.cairn} ${row.unit} | ${gitValue} | ${ratio} | ${row.target || '—'} | ${ok} |`,
    )
  }
  for (const note of notes) console.log(`- ${note}`)

  const out = path.join(here, 'results', 'history.json')
  await mkdir(path.dirname(out), { recursive: true })
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, rows, notes }, null, 2)}\n`,
  )
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`)
}

/** `git blame --porcelain` of `file` at `main` in the git directory `dir`. */
const gitBlame = (dir: string, file: string) =>
  git(null, ['--git-dir', dir, 'blame', '--porcelain', 'main', '--', file])

/** Medians in milliseconds, against a target in milliseconds (null: none). */
function recordMs(
  name: string,
  cairn: ReadonlyArray<number>,
  gitTimes: ReadonlyArray<number> | null,
  targetMs: number | null,
): void {
  const value = median(cairn)
  record({
    name,
    unit: 'ms',
    cairn: value,
    git: gitTimes ? median(gitTimes) : null,
    target: targetMs === null ? '' : `≤ ${targetMs} ms`,
    ok: targetMs === null ? null : value <= targetMs,
    samples: cairn.length,
  })
}

/** Blame of a file that 10 commits changed, spread over a 100,000-commit history. */
async function sparseBlame(large: Fixture): Promise<void> {
  const sparse = large.sparse
  if (!sparse) throw new Error('the 100k fixture has no sparse file')
  const sparsePath = `/memories/${sparse}`
  const largeDir = path.join(large.dataDir, 'history.git')
  const largeMemory = await openVersionedMemory({ dataDir: large.dataDir, watch: false })
  const sparseOwners = new Set((await largeMemory.blame(sparsePath)).map((l) => l.commit.oid))
  if ([...sparseOwners].some((oid) => !large.sparseCommits.includes(oid))) {
    throw new Error('sparse blame names a commit that did not change the file')
  }
  await largeMemory.close()
  const sparseTimes: number[] = []
  for (let i = 0; i < 5; i++) {
    await rm(path.join(largeDir, 'cairn-blame'), { recursive: true, force: true })
    // A new session each time: nothing the previous walk found is reused (the pack is
    // opened first, by reading the file at HEAD, as above).
    const again = await openVersionedMemory({ dataDir: large.dataDir, watch: false })
    const top = (await again.log({ offset: 0, limit: 1 })).entries[0]?.oid ?? ''
    await again.readAt(sparsePath, top)
    sparseTimes.push(...(await measure(1, () => again.blame(sparsePath))))
    await again.close()
  }
  recordMs(
    'blame 10 commits in 100,000, first time',
    sparseTimes,
    await measure(3, () => gitBlame(largeDir, sparse)),
    15,
  )
}

/**
 * Line provenance (blame) and history search (issue #12), as their own rows: blame of a
 * 500-line file that 1,000 commits changed (first time, from provenance kept by an earlier
 * session, and after one more commit), blame of a file 10 commits changed in a 100,000-commit
 * history, and a search of 10,000 commits for a text — each against the git CLI.
 */
async function provenanceAndSearch(
  root: string,
  small: Fixture,
  large: Fixture | null,
): Promise<void> {
  console.log('\nline provenance and history search')
  const long = await buildBlameFixture(path.join(root, 'blame'), { lines: 500, commits: 1_000 })
  const longPath = `/memories/${long.file}`
  const gitdir = path.join(long.dataDir, 'history.git')
  const saved = path.join(gitdir, 'cairn-blame')

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

  // Each session first reads one file at HEAD (the pack's index opened, its first object
  // read), a fixed cost measured on its own row.
  const head = async (memory: Awaited<ReturnType<typeof openVersionedMemory>>) =>
    memory.readAt(longPath, (await memory.log({ offset: 0, limit: 1 })).entries[0]?.oid ?? '')
  const fresh = async () => openVersionedMemory({ dataDir: long.dataDir, watch: false })
  // The first blame ever (nothing kept: a history that came by sync or import, or a lost
  // cache) reads and checks every version once; git blame's samples alternate with it.
  const opening: number[] = []
  const cold: number[] = []
  const coldGit: number[] = []
  for (let i = 0; i < 7; i++) {
    await rm(saved, { recursive: true, force: true })
    const memory = await fresh()
    opening.push(...(await measure(1, () => head(memory))))
    cold.push(...(await measure(1, () => memory.blame(longPath))))
    await memory.close()
    coldGit.push(...(await measure(1, () => gitBlame(gitdir, long.file))))
  }
  recordMs('  first object read of a session (the pack opened), for reference', opening, null, null)
  recordMs('blame 500 lines x 1,000 commits, first time (nothing kept)', cold, coldGit, 30)
  const kept: number[] = []
  for (let i = 0; i < 10; i++) {
    const memory = await fresh()
    await head(memory)
    kept.push(...(await measure(1, () => memory.blame(longPath))))
    await memory.close()
  }
  recordMs('blame 500 lines x 1,000 commits, new session (provenance kept)', kept, null, 30)
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
  recordMs('blame 500 lines x 1,000 commits, after one more commit', afterCommit, null, 30)
  await memory.close()

  // A file 10 commits changed, among 100,000: the walk crosses the whole index.
  if (large) await sparseBlame(large)

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
    git(null, ['--git-dir', searchDir, 'log', `-S${needle}`, '--format=%H'])
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
  recordMs(
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
  recordMs('history search, 10,000 commits, new session (records kept)', keptSearch, null, 1000)
  searcher = await freshSearch()
  await searchAll(searcher, needles[0]!)
  recordMs(
    'history search, 10,000 commits, next search in the session',
    await measure(3, (i) => searchAll(searcher, needles[i + 1]!)),
    null,
    1000,
  )
  await searcher.close()
}

await main()
