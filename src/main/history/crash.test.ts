import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  applyCommand,
  cloneModel,
  describeModel,
  emptyModel,
  random,
  readModel,
  type Command,
  type Model,
} from '../../../test/stress/memory-model'
import { addTotals, size } from '../../../test/stress/stress'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory } from './index'
import { commitCount, fsck, gitCli, headMatchesFolder, leftoverTempFiles } from './test-helpers'
import type { VersionedMemory } from './types'

// The crash test (issue #9): a child process runs random memory commands and acknowledges
// each durably; it is killed with SIGKILL at random moments (a third of the time while it
// opens, i.e. while it recovers from the previous kill). After each kill the folder must hold
// every acknowledged change (plus, at most, the one in flight), HEAD's tree must be the
// folder, `git fsck --strict` must be clean, no temp file may remain, and the number of
// commits must never drop. A second run does the same with background packing going on all
// the while, so kills land inside packing too (and inside the open that cleans up after it); a
// third packs 300 loose objects at a time, so a pass removes them on the removals' thread, and
// aims its kills inside that thread's batches.

const CHILD = path.resolve('test/stress/crash-child.ts')

let root: string
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-crash-'))
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true, maxRetries: 10 }))

/**
 * How a round's child dies: by a timer `ms` after it opened; by its own hand inside open, just
 * before its `atCall`-th file-system call; or, while packing, at a phase of a pass — `aim` is
 * the child's `CAIRN_CRASH_AIM` (it kills itself at the n-th file-system call after a step),
 * `afterStep` a timer the parent starts when the child says it reached that step, `batch` the
 * child's `CAIRN_CRASH_BATCH` (`<n>:<k>`: it kills itself once the k-th file of the n-th batch
 * it handed the removals' thread is gone).
 */
type Kill =
  | { readonly timer: number }
  | { readonly atCall: number }
  | { readonly aim: string }
  | { readonly afterStep: string; readonly ms: number }
  | { readonly batch: string }

/**
 * How a run's children work: commands only; packing at 8 loose (removals one file at a time
 * on the thread pool); packing at 300 loose (removals a batch at a time on their own thread).
 */
type Mode = 'commands' | 'packing' | 'thread'

/**
 * Where a kill landed: in open, between passes, or in a phase of a packing pass (`unlinking`:
 * while the removals' thread had a batch in hand).
 */
type Phase =
  | 'opening'
  | 'between'
  | 'preparing'
  | 'writing'
  | 'renaming'
  | 'removing'
  | 'unlinking'
  | 'folding'

/** The phase a pass is in once it said each step (`started`, then repack's). */
const PHASE_AFTER: Readonly<Record<string, Phase>> = {
  started: 'preparing', // index check, checkpoint, leftovers cleared, loose objects listed
  listed: 'writing', // the temp pack is made, then written object by object, then its index
  writing: 'writing',
  'index-durable': 'renaming', // the pack, then its index, renamed into place; folder fsynced
  'pack-renamed': 'renaming',
  'pack-durable': 'renaming',
  'removing-loose': 'removing', // loose files the new pack holds (a batch at a time on a thread of its own from 256)
  'batch-sent': 'unlinking', // a batch in the thread's hands (the rest of the pass waits for it)
  'batch-aimed': 'unlinking', // said by a child aiming inside a batch, as it kills itself
  'batch-late': 'unlinking', // the same, the thread never having reached the aimed-at file
  'batch-done': 'removing',
  'removing-packs': 'folding', // packs folded into the new one: marked, unlinked
  'pack-unindexed': 'folding',
  done: 'between',
}

/** Whether an open must die inside: a kill in open, by call number or by aim. */
function diesInOpen(kill: Kill): boolean {
  return 'atCall' in kill || ('aim' in kill && kill.aim.startsWith('open-packs:'))
}

/** Runs the child until it is killed as `kill` says; returns its ack lines and where it died. */
async function runAndKill(
  dataDir: string,
  name: string,
  round: number,
  mode: Mode,
  kill: Kill,
): Promise<{ lines: string[]; killedWhileOpening: boolean; phase: Phase; last?: string }> {
  const ackFile = path.join(dataDir, `ack-${name}.jsonl`)
  const args = [CHILD, dataDir, ackFile, String(1000 + round)]
  if ('atCall' in kill) args.push(String(kill.atCall))
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env: {
      ...process.env,
      CAIRN_CRASH_PACKING: mode === 'commands' ? '0' : '1',
      CAIRN_CRASH_THREAD: mode === 'thread' ? '1' : '0',
      CAIRN_CRASH_AIM: 'aim' in kill ? kill.aim : '',
      CAIRN_CRASH_BATCH: 'batch' in kill ? kill.batch : '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  // Once its pipes are closed too: every line it said has arrived (its writes to the pipe are
  // synchronous, so even those of its last moment).
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  )
  let said = ''
  const selfKilled = await new Promise<boolean>((resolve, reject) => {
    let timed = false
    let waiting = false
    child.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      if (!said.includes('opened\n')) return
      if (!waiting) {
        waiting = true
        // The kill meant for a later moment, or for open (which is over): by a timer, or, for
        // a child that was to kill itself and has not by then, after a wait for its aim.
        const wait = 'timer' in kill ? kill.timer : diesInOpen(kill) ? 200 : AIM_WAIT_MS
        setTimeout(() => resolve(false), wait)
      }
      if ('afterStep' in kill && !timed && said.includes(`\nstep ${kill.afterStep}\n`)) {
        timed = true
        setTimeout(() => resolve(false), kill.ms)
      }
    })
    void exited.then((code) => {
      if (code === null && ('aim' in kill || 'atCall' in kill || 'batch' in kill)) resolve(true)
      else reject(new Error(`child exited (${code}) before its kill: ${stderr}`))
    })
  })
  if (!selfKilled) child.kill('SIGKILL')
  const code = await exited
  expect(code, stderr).toBeNull()
  const killedWhileOpening = !said.includes('opened\n')
  const steps = [...said.matchAll(/^step (\S+)$/gm)].map((match) => match[1] as string)
  const last = steps.at(-1)
  const phase: Phase = killedWhileOpening
    ? 'opening'
    : last === undefined
      ? 'between'
      : (PHASE_AFTER[last] ?? 'between')
  const text = fs.existsSync(ackFile) ? fs.readFileSync(ackFile, 'utf8') : ''
  fs.rmSync(ackFile, { force: true })
  return { lines: text.split('\n'), killedWhileOpening, phase, last }
}

/** How long a child aiming at a step may take to get there before a timer kills it anyway. */
const AIM_WAIT_MS = 60_000

/**
 * True when the folder is `model`, allowing only what an interrupted `rename` (`inFlight`)
 * may leave: the folders it was making for its destination, empty. (A `create` makes its new
 * folders under a hidden name and shows them with its file in one rename.)
 */
function sameModel(onDisk: Model, model: Model, inFlight: Command | null): boolean {
  const files = (m: Model) => describeModel({ files: m.files, dirs: new Set() })
  if (files(onDisk) !== files(model)) return false
  const target = inFlight?.command === 'rename' ? String(inFlight.new_path) : ''
  const parts = target
    .replace(/^\/memories\/?/, '')
    .split('/')
    .slice(0, -1)
  const making = new Set(parts.map((_, i) => parts.slice(0, i + 1).join('/')))
  for (const dir of model.dirs) if (!onDisk.dirs.has(dir)) return false
  for (const dir of onDisk.dirs) {
    if (model.dirs.has(dir)) continue
    if (!making.has(dir) || [...onDisk.files.keys()].some((file) => file.startsWith(`${dir}/`))) {
      return false
    }
  }
  return true
}

/**
 * What a pass killed half-way leaves in the pack folder for open to clear: temp files, a pack
 * without its index (or the reverse), a folded pack's mark.
 */
function packLeftovers(dataDir: string): string[] {
  const dir = path.join(dataDir, 'history.git', 'objects', 'pack')
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : []
  const present = new Set(names)
  return names.filter((name) => {
    if (/^tmp_(pack|idx)_|\.folded$/.test(name)) return true
    const match = /^(pack-[0-9a-f]+)\.(pack|idx)$/.exec(name)
    return match !== null && !present.has(`${match[1]}.${match[2] === 'pack' ? 'idx' : 'pack'}`)
  })
}

/**
 * The kills of a packing run's rounds, in turn: each aims at a phase of a pass, by the child's
 * own hand at its n-th file-system call after a step (exact, even in a phase of a few calls
 * such as the renames), or by a timer started when the child says it reached a step. Every
 * third round (the renames' or the writing's) then has a second child die in open, at one of
 * its first calls on the pack folder's files, where it clears what the first kill left there.
 */
const PACKING_KILLS: ReadonlyArray<(rand: () => number) => Kill> = [
  (rand) => ({ aim: `removing-loose:${1 + Math.floor(rand() * 40)}` }),
  (rand) => ({ afterStep: 'listed', ms: rand() * 200 }),
  (rand) => ({ aim: `index-durable:${1 + Math.floor(rand() * 5)}` }),
  (rand) => ({ afterStep: 'removing-loose', ms: rand() * 100 }),
  (rand) => ({ aim: `removing-packs:${1 + Math.floor(rand() * 12)}` }),
  (rand) => ({ aim: `listed:${1 + Math.floor(rand() * 60)}` }),
]

/**
 * The same for passes of 300 loose objects, which remove them a batch at a time on the
 * removals' thread (the file-system calls there are outside the seam: no aim by call count;
 * an aim would also put a wrapper in front of the disk, and the pass would remove one file at
 * a time on the thread pool instead). Half the rounds die inside a batch, by the child's own
 * hand once a given file of it is gone (or at once): the first batch of the child (the thread
 * still starting) or a later one, a batch a command halted sent again included; others by a
 * timer from a step, in the writing, the removals and the folding; and those in the renames
 * (a few milliseconds, which a timer from a step missed in 36 rounds) by the child's own hand
 * at a file-system call, as in the packing run: its disk hooked, it dies before any removal.
 */
const THREAD_KILLS: ReadonlyArray<(rand: () => number) => Kill> = [
  (rand) => ({ batch: `1:${Math.floor(rand() * 257)}` }),
  (rand) => ({ afterStep: 'listed', ms: rand() * 300 }),
  (rand) => ({ batch: `${2 + Math.floor(rand() * 4)}:${Math.floor(rand() * 257)}` }),
  (rand) => ({ afterStep: 'pack-durable', ms: rand() * 40 }),
  (rand) => ({ batch: `${1 + Math.floor(rand() * 3)}:${Math.floor(rand() * 257)}` }),
  (rand) => ({ aim: `index-durable:${1 + Math.floor(rand() * 5)}` }),
]

/**
 * The kills of a round (see `Kill`), in order. Without packing, a third of the rounds die
 * inside open: the child kills itself before one of its first file-system calls (open makes
 * about a hundred before it looks at the objects); the others are killed by a timer.
 */
function pickKills(round: number, rand: () => number, mode: Mode): Kill[] {
  const inOpen = round % 3 === 0
  if (mode === 'commands') {
    return [inOpen ? { atCall: 1 + Math.floor(rand() * 120) } : { timer: 20 + rand() * 400 }]
  }
  const kills = mode === 'thread' ? THREAD_KILLS : PACKING_KILLS
  const pass = (kills[(round - 1) % kills.length] as (r: () => number) => Kill)(rand)
  return inOpen ? [pass, { aim: `open-packs:${1 + Math.floor(rand() * 6)}` }] : [pass]
}

/**
 * `readAt` equals `git show <commit>:<file>` for every file HEAD holds, every file the newest
 * 20 commits changed, and every file of `older` (commits): objects loose and packed, read
 * through Cairn's own reader after the kill. Returns how many were read.
 */
async function expectReadAtMatchesGit(
  memory: VersionedMemory,
  dataDir: string,
  older: ReadonlyArray<string>,
): Promise<number> {
  const requests = new Map<string, { oid: string; file: string }>()
  const add = (oid: string, file: string) => requests.set(`${oid}:${file}`, { oid, file })
  const tree = (oid: string) =>
    gitCli(dataDir, 'ls-tree', '-r', '--name-only', '-z', oid).split('\0').filter(Boolean)
  const head = gitCli(dataDir, 'rev-parse', 'main').trim()
  for (const oid of [head, ...older]) for (const file of tree(oid)) add(oid, file)
  // `--raw`: each commit's changed files, after a line of its id.
  let commit = ''
  for (const line of gitCli(dataDir, 'log', '-n', '20', '--format=%H', '--raw', '-z', 'main')
    .split('\n')
    .flatMap((chunk) => chunk.split('\0'))
    .filter(Boolean)) {
    if (/^[0-9a-f]{40}$/.test(line)) commit = line
    else if (!line.startsWith(':') && commit) add(commit, line)
  }
  const list = [...requests.values()]
  if (list.length === 0) return 0
  const out = execFileSync(
    'git',
    ['--git-dir', path.join(dataDir, 'history.git'), 'cat-file', '--batch'],
    {
      input: list.map((request) => `${request.oid}:${request.file}`).join('\n') + '\n',
      maxBuffer: 256 * 1024 * 1024,
    },
  )
  let at = 0
  for (const request of list) {
    const eol = out.indexOf(0x0a, at)
    const header = out.toString('latin1', at, eol)
    // A file the commit deleted (`missing`): Cairn says it is not there either.
    if (header.endsWith(' missing')) {
      at = eol + 1
      expect(await memory.readAt(`/memories/${request.file}`, request.oid)).toBeNull()
      continue
    }
    const size = Number(header.split(' ')[2])
    const expected = out.toString('utf8', eol + 1, eol + 1 + size)
    at = eol + 1 + size + 1
    expect(
      await memory.readAt(`/memories/${request.file}`, request.oid),
      `readAt ${request.file} at ${request.oid}`,
    ).toBe(expected)
  }
  return list.length
}

/** What a run counted. */
interface RunCounts {
  readonly kills: number
  readonly killsWhileOpening: number
  /** Kills per phase (`opening` included). */
  readonly phases: Readonly<Record<Phase, number>>
  /** Kills meant for a pass (those not meant for an open), while packing. */
  readonly passRounds: number
  /** Of the kills meant for an open, those whose pack folder held a killed pass's leftovers. */
  readonly opensWithLeftovers: number
  /** Files `readAt` read and compared with git. */
  readonly reads: number
  /** Kills by a child's own hand inside a batch of the removals' thread, its aim reached. */
  readonly aimedInBatch: number
}

/**
 * Rounds of: run the child, kill it, replay its acknowledgements on the model, reopen and
 * check. Returns what it counted.
 */
async function crashRounds(
  name: string,
  rounds: number,
  seed: number,
  mode: Mode,
): Promise<RunCounts> {
  const packing = mode !== 'commands'
  const dataDir = path.join(root, name)
  fs.mkdirSync(dataDir)
  {
    const rand = random(seed)
    // Which older commits are read back: drawn apart, so the kills stay those of the seed.
    const pick = random(seed + 1)
    let expected = emptyModel()
    let commits = 0
    let kills = 0
    let killsWhileOpening = 0
    let commands = 0
    let losses = 0
    let passRounds = 0
    let opensWithLeftovers = 0
    let reads = 0
    let aimedInBatch = 0
    const phases: Record<Phase, number> = {
      opening: 0,
      between: 0,
      preparing: 0,
      writing: 0,
      renaming: 0,
      removing: 0,
      unlinking: 0,
      folding: 0,
    }
    for (let round = 1; round <= rounds; round++) {
      const plan = pickKills(round, rand, mode)
      const lines: string[] = []
      const phasesHit: Phase[] = []
      for (const [k, kill] of plan.entries()) {
        if (packing && !diesInOpen(kill)) passRounds++
        if (packing && diesInOpen(kill) && packLeftovers(dataDir).length > 0) opensWithLeftovers++
        const run = await runAndKill(dataDir, `${round}-${k}`, round, mode, kill)
        if (run.last === 'batch-aimed') aimedInBatch++
        lines.push(...run.lines)
        kills++
        phases[run.phase]++
        phasesHit.push(run.phase)
        if (run.killedWhileOpening) killsWhileOpening++
      }
      const kill = plan.map((k) => JSON.stringify(k)).join(' then ')
      const phase = phasesHit.join(' then ')
      // Replay the acknowledged commands on the model of the folder before the round.
      let inFlight: Command | null = null
      for (const line of lines) {
        let record: { run?: number; command?: Command; done?: number; isError?: boolean }
        try {
          record = JSON.parse(line) as typeof record
        } catch {
          continue // empty, or torn by the kill
        }
        if (record.command) {
          inFlight = record.command
          commands++
        } else if (record.done !== undefined && inFlight) {
          const works = applyCommand(expected, inFlight)
          expect(record.isError, `${JSON.stringify(inFlight)} in round ${round}`).toBe(!works)
          inFlight = null
        }
      }
      const memory = await openVersionedMemory({
        dataDir,
        watch: false,
        logger: createRecordingLogger(),
      })
      try {
        const onDisk = readModel(path.join(dataDir, 'memories'))
        const withInFlight = inFlight ? cloneModel(expected) : null
        if (withInFlight && inFlight) applyCommand(withInFlight, inFlight)
        const ok =
          sameModel(onDisk, expected, inFlight) ||
          (withInFlight !== null && sameModel(onDisk, withInFlight, null))
        if (!ok) {
          losses++
          throw new Error(
            `round ${round} (killed ${phase}, ${kill}): the folder lost an acknowledged change.\n in flight: ${JSON.stringify(inFlight)}\n expected: ${describeModel(expected)}\n with it:  ${withInFlight ? describeModel(withInFlight) : '-'}\n on disk:  ${describeModel(onDisk)}`,
          )
        }
        expected = readModel(path.join(dataDir, 'memories'))
        const where = `round ${round} (killed ${phase}, ${kill})`
        expect(await headMatchesFolder(dataDir), `${where}: HEAD is the folder`).toBe(true)
        fsck(dataDir)
        expect(leftoverTempFiles(dataDir), where).toEqual([])
        // Open cleared what a pass killed half-way left in the pack folder.
        expect(packLeftovers(dataDir), where).toEqual([])
        // ... and filed nothing as damaged: a kill leaves no damaged pack (a pack killed between
        // its renames is finished, one whose index never arrived is a temp file's), so a pack
        // there would be an install the clearing took for damage.
        const damaged = path.join(dataDir, 'history.git', 'cairn-damaged')
        expect(fs.existsSync(damaged) ? fs.readdirSync(damaged) : [], where).toEqual([])
        const count = commitCount(dataDir)
        if (count < commits) losses++
        expect(count, `${where}: commits never drop`).toBeGreaterThanOrEqual(commits)
        commits = count
        // What three older commits held reads as git shows it too.
        const all = count > 0 ? gitCli(dataDir, 'rev-list', 'main').split('\n').filter(Boolean) : []
        const older =
          all.length > 0 ? [0, 1, 2].map(() => all[Math.floor(pick() * all.length)]) : []
        if (count > 0) reads += await expectReadAtMatchesGit(memory, dataDir, older as string[])
      } finally {
        await memory.close()
      }
    }
    expect(commands).toBeGreaterThan(0)
    addTotals('crash', { rounds, kills, generatedCommands: commands, losses })
    return { kills, killsWhileOpening, phases, passRounds, opensWithLeftovers, reads, aimedInBatch }
  }
}

describe('SIGKILL at random moments, also while opening', () => {
  it('never loses an acknowledged change, and leaves a valid history that matches the folder', async () => {
    const rounds = size(4, 120)
    const { kills, killsWhileOpening, reads } = await crashRounds(
      'commands',
      rounds,
      20240901,
      'commands',
    )
    // Some kills must have interrupted an open (and so a recovery) for the test to mean it.
    if (rounds >= 30) expect(killsWhileOpening).toBeGreaterThan(0)
    console.log(`crash test: ${kills} kills, ${killsWhileOpening} while opening; ${reads} reads`)
  }, 3_600_000)

  it('loses nothing when killed inside each phase of background packing beside the commands', async () => {
    const rounds = size(4, 60)
    const run = await crashRounds('packing', rounds, 20250301, 'packing')
    const { phases } = run
    const perPhase = Object.entries(phases).map(([phase, n]) => `${n} ${phase}`)
    console.log(
      `crash test while packing: ${run.kills} kills: ${perPhase.join(', ')}; ` +
        `${run.opensWithLeftovers} opens killed with a killed pass's leftovers to clear; ` +
        `${run.reads} reads`,
    )
    // The kills meant for a pass must mostly land inside its work, for the test to mean it (a
    // timer started when the child opened mostly missed it: a pass took seconds to get there).
    const inPasses = phases.writing + phases.renaming + phases.removing + phases.folding
    expect(inPasses).toBeGreaterThanOrEqual(Math.ceil(run.passRounds / 2))
    if (rounds >= 30) {
      for (const phase of ['writing', 'renaming', 'removing', 'opening'] as const) {
        expect(phases[phase], phase).toBeGreaterThan(0)
      }
      expect(run.opensWithLeftovers).toBeGreaterThan(0)
    }
  }, 3_600_000)

  it('loses nothing when killed inside the removals thread of packing passes of 300 loose objects', async () => {
    const rounds = size(1, 36)
    const run = await crashRounds('thread', rounds, 20261203, 'thread')
    const { phases } = run
    const perPhase = Object.entries(phases).map(([phase, n]) => `${n} ${phase}`)
    console.log(
      `crash test while packing on the removals' thread: ${run.kills} kills: ${perPhase.join(', ')}; ` +
        `${run.aimedInBatch} as the thread had just unlinked the aimed-at file of its batch; ` +
        `${run.opensWithLeftovers} opens killed with a killed pass's leftovers to clear; ` +
        `${run.reads} reads`,
    )
    // Half the kills meant for a pass are aimed inside a batch: most must land there.
    expect(phases.unlinking).toBeGreaterThanOrEqual(Math.floor(run.passRounds / 3))
    const inPasses =
      phases.writing + phases.renaming + phases.removing + phases.unlinking + phases.folding
    expect(inPasses).toBeGreaterThanOrEqual(Math.ceil(run.passRounds / 2))
    if (rounds >= 30) {
      // Nearly all of a pass's removals here are in a batch (`unlinking`), rarely between two.
      for (const phase of ['writing', 'renaming', 'unlinking', 'opening'] as const) {
        expect(phases[phase], phase).toBeGreaterThan(0)
      }
      expect(run.aimedInBatch).toBeGreaterThan(0)
    }
  }, 3_600_000)
})
