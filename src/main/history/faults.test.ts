import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addTotals, size } from '../../../test/stress/stress'
import { CairnError } from '../lib/errors'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { deleteFile, renameFile, writeFile } from '../memory-browser'
import { openVersionedMemory, type VersionedMemory } from './index'
import { LOG_FILES } from './objects/object-log'
import {
  CLAUDE,
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headMatchesFolder,
  leaveStaleLock,
  leftoverTempFiles,
} from './test-helpers'

// Fault injection (issue #9): the scripted scenario below runs once per file-system call it
// makes, failing that one call with EIO, ENOSPC, EACCES or EMFILE. After each: the step
// that met the fault either worked or failed with a clear error, the folder is fully as
// before that step or fully as after it, and the next change works and leaves a valid
// repository whose HEAD matches the folder. The close that ends the steps is faulted too: it
// resolves or fails clearly, and a fresh open finds every step's change. A second scenario
// opens a folder its last Cairn left unsettled (the log's records kept, its lock left), so
// that the log's replay, the renames' checks and the take-over's sweep meet the faults.

const CODES = ['EIO', 'ENOSPC', 'EACCES', 'EMFILE'] as const

interface Step {
  readonly name: string
  run(memory: VersionedMemory): Promise<unknown>
}

const claude = { actor: 'claude', conversationId: 'c', toolUseId: 't' } as const
const tool = (input: Record<string, unknown>): Step => ({
  name: `${String(input.command)} ${String(input.path ?? input.old_path)}`,
  run: (memory) => memory.execute(input, claude),
})
const oldest = async (memory: VersionedMemory) =>
  (await memory.log({ offset: 0, limit: 500 })).entries.at(-1)!.oid

const STEPS: ReadonlyArray<Step> = [
  tool({ command: 'create', path: '/memories/a.md', file_text: 'alpha\nbeta\n' }),
  tool({ command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' }),
  tool({ command: 'create', path: '/memories/dir/deep/b.md', file_text: 'b\n' }),
  tool({ command: 'insert', path: '/memories/dir/deep/b.md', insert_line: 1, insert_text: 'c' }),
  tool({ command: 'rename', old_path: '/memories/dir/deep', new_path: '/memories/moved' }),
  tool({ command: 'view', path: '/memories' }),
  tool({ command: 'view', path: '/memories/a.md' }),
  tool({ command: 'delete', path: '/memories/moved' }),
  { name: 'user write', run: (m) => writeFile(m.execute, '/memories/user.md', 'by hand\n') },
  {
    name: 'user rename',
    run: (m) => renameFile(m.execute, '/memories/user.md', '/memories/u2.md'),
  },
  {
    name: 'restore file',
    run: async (m) =>
      m.restoreFile('/memories/a.md', (await m.log({ offset: 0, limit: 9 })).entries[4]!.oid),
  },
  { name: 'restore all', run: async (m) => m.restoreAll(await oldest(m)) },
  {
    name: 'revert',
    run: async (m) => m.revert((await m.log({ offset: 0, limit: 1 })).entries[0]!.oid),
  },
  { name: 'user delete', run: (m) => deleteFile(m.execute, '/memories/seed.md') },
]

/** A data folder to start from (copied fresh for each run) and the steps run on it. */
interface Scenario {
  readonly name: string
  readonly fixture: string
  readonly steps: ReadonlyArray<Step>
}

let template: string
let scratch: string

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-faults-'))
  template = path.join(scratch, 'template')
  // A history to open, an outside edit for open to commit, a stray temp file to remove.
  const memory = await openVersionedMemory({
    dataDir: template,
    watch: false,
    now: clock(),
    logger: createRecordingLogger(),
  })
  await memory.execute(
    { command: 'create', path: '/memories/seed.md', file_text: 'seed\n' },
    CLAUDE,
  )
  await memory.execute({ command: 'create', path: '/memories/old/x.md', file_text: 'x\n' }, CLAUDE)
  await memory.close()
  fs.writeFileSync(path.join(template, 'memories', 'outside.md'), 'edited outside\n')
  // Named as Cairn names its temp files: only those are leftovers (a person's look-alike stays).
  fs.writeFileSync(path.join(template, 'memories', `.cairn-tmp-${randomUUID()}`), 'half')
})
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 10 }))

function clock(): () => number {
  let time = 1_700_000_000_000
  return () => (time += 1000)
}

function fresh(name: string, from = template): string {
  const dir = path.join(scratch, name)
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
  fs.cpSync(from, dir, { recursive: true })
  return dir
}

/** HEAD's tree, per the git CLI: the same files make the same id, whatever the commits' times. */
function headTree(dataDir: string): string {
  return gitCli(dataDir, 'rev-parse', 'main^{tree}').trim()
}

/** Bytes the write-ahead log holds (0 once a checkpoint emptied both its files). */
function loggedBytes(dataDir: string): number {
  return LOG_FILES.reduce(
    (sum, name) => sum + fs.statSync(path.join(dataDir, 'history.git', name)).size,
    0,
  )
}

/**
 * The template after the steps, closed as a kill would leave it: every `fsync` of the close
 * fails, so its checkpoint leaves the log's records for the next open to replay (and the
 * logged renames to check), and a lock is left by a process that is gone (the next open takes
 * it over and sweeps for leftovers everywhere).
 */
async function unsettled(): Promise<string> {
  const dataDir = fresh('unsettled')
  const logger = createRecordingLogger()
  const memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
  for (const step of STEPS) await step.run(memory)
  const failing = hookDisk(nodeDisk, (call) =>
    call.name === 'fsync' || call.name === 'fsyncSync' ? errnoError(call, 'EIO') : undefined,
  )
  const restore = setDisk(failing.disk)
  try {
    await memory.close()
  } finally {
    restore()
  }
  leaveStaleLock(dataDir)
  // Else the scenario would replay nothing (an idle checkpoint emptied the log meanwhile).
  expect(loggedBytes(dataDir), 'the unsettled folder keeps log records').toBeGreaterThan(0)
  return dataDir
}

/** The folder as people see it: regular files and their content, temp files left out. */
async function visible(dataDir: string): Promise<string> {
  const files = await folderFiles(dataDir)
  return JSON.stringify([...files].filter(([file]) => !/(^|\/)\.cairn-tmp-/.test(file)))
}

interface Reference {
  /** Calls made before each step (index 0: before open), and in all. */
  readonly startsAt: ReadonlyArray<number>
  /** Calls made by open and the steps; the close's calls follow, up to `total`. */
  readonly stepsEnd: number
  /** Calls made by open, the steps and the close: the last one a fault can fall in. */
  readonly total: number
  readonly before: ReadonlyArray<string>
  readonly after: ReadonlyArray<string>
  /** After the close: HEAD's tree and the commit count, as a fresh open must find them. */
  readonly headTree: string
  readonly commits: number
}

/** The scenario without faults: where each step's calls start, and the folder around it. */
async function reference(scenario: Scenario): Promise<Reference> {
  const dataDir = fresh(`reference-${scenario.name}`, scenario.fixture)
  const logger = createRecordingLogger()
  const counting = hookDisk(nodeDisk, () => undefined)
  const restore = setDisk(counting.disk)
  const startsAt: number[] = []
  const before: string[] = []
  const after: string[] = []
  let stepsEnd: number
  try {
    before.push(await visible(dataDir))
    startsAt.push(counting.calls())
    const memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
    after.push(await visible(dataDir))
    for (const step of scenario.steps) {
      before.push(await visible(dataDir))
      startsAt.push(counting.calls())
      await step.run(memory)
      after.push(await visible(dataDir))
    }
    stepsEnd = counting.calls()
    await memory.close()
  } finally {
    restore()
  }
  return {
    startsAt,
    stepsEnd,
    total: counting.calls(),
    before,
    after,
    headTree: headTree(dataDir),
    commits: commitCount(dataDir),
  }
}

/** Everything a result or an error shows people or Claude must be plain words. */
function expectClear(shown: string, dataDir: string): void {
  expect(shown).not.toContain(dataDir)
  expect(shown).not.toContain('injected')
  expect(shown).not.toMatch(/\bE[A-Z]{2,}\b|\n\s+at /)
}

/** Closes that failed (clearly) with a fault in them, for the run's summary. */
const closesFailed: string[] = []

/**
 * Runs the scenario with call `n` failing with `code` and checks what it left. True when call
 * `n` came while faults were on (open, the steps and the close after them); false when the
 * run never made it there.
 */
async function runWithFault(
  scenario: Scenario,
  ref: Reference,
  n: number,
  code: string,
): Promise<boolean> {
  const dataDir = fresh(`fault-${n}-${code}`, scenario.fixture)
  const steps = scenario.steps
  // Faults are logged as warnings (retried, or a nicety lost); never as errors (bugs).
  const logger = createRecordingLogger()
  const label = `${scenario.name}: fault ${code} at call ${n}${n > ref.stepsEnd ? ' (close)' : ''}`
  let faulted: DiskCall | null = null
  const faulty = hookDisk(nodeDisk, (call) => {
    if (call.n !== n) return undefined
    faulted = call
    return errnoError(call, code)
  })
  const countBefore = commitCount(dataDir)
  const restore = setDisk(faulty.disk)
  let memory: VersionedMemory | null = null
  // Which step the fault falls in: 0 is open.
  const step = ref.startsAt.findLastIndex((start) => start < n)
  try {
    try {
      memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
    } catch (error) {
      // Open failed: clearly, and having changed nothing.
      expect(step, label).toBe(0)
      expect(error, label).toBeInstanceOf(CairnError)
      expect(['disk-full', 'io-error', 'access-denied', 'read-only']).toContain(
        (error as CairnError).code,
      )
      expectClear((error as Error).message, dataDir)
      expect(await visible(dataDir), label).toBe(ref.before[0])
      expect(
        fs.readdirSync(dataDir).filter((name) => name.includes('.broken')),
        label,
      ).toEqual([])
      restore()
      expect(commitCount(dataDir), label).toBe(countBefore)
      memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
    }
    if (step === 0) expect([ref.after[0], ref.before[0]]).toContain(await visible(dataDir))
    for (let i = 1; i < steps.length + 1 && faulted === null; i++) {
      const wasBefore = await visible(dataDir)
      let outcome: unknown
      let failed: unknown = null
      try {
        outcome = await steps[i - 1]!.run(memory)
      } catch (error) {
        failed = error
      }
      if (faulted === null) continue
      // This step met the fault.
      const now = await visible(dataDir)
      const toolError =
        typeof outcome === 'object' &&
        outcome !== null &&
        (outcome as { isError?: boolean }).isError
      if (failed) {
        expect(failed, `${label} in ${steps[i - 1]!.name}`).toBeInstanceOf(CairnError)
        expectClear((failed as Error).message, dataDir)
        expect(now, `${label}: an error, so nothing changed`).toBe(wasBefore)
      } else if (toolError) {
        const content = String((outcome as { content: unknown }).content)
        expect(content).toMatch(/^Error: /)
        expectClear(content, dataDir)
        expect(now, `${label}: an error, so nothing changed`).toBe(wasBefore)
      } else {
        expectClear(JSON.stringify(outcome), dataDir)
        expect([ref.after[i], wasBefore], `${label} in ${steps[i - 1]!.name}`).toContain(now)
      }
    }
    // Past the steps: the close that ends them meets the fault. It resolves (nothing it writes
    // is relied on unflushed: docs/durability.md "Closing") or fails clearly.
    const inClose = faulted === null && n > ref.stepsEnd
    if (inClose) {
      try {
        await memory.close()
      } catch (error) {
        expect(faulted, `${label}: the close failed with no fault`).not.toBeNull()
        expect(error, label).toBeInstanceOf(CairnError)
        expectClear((error as Error).message, dataDir)
        closesFailed.push(`${code} at ${n}`)
      }
    }
    restore()
    // A position open, the steps and the close did not reach tested nothing: counted apart,
    // not as a fault. (The numbering moves with load: the object log's idle checkpoint, on a
    // 1.5 s timer, runs between steps in one run and in the close in another.)
    const injected = faulted !== null
    if (inClose) {
      // A fresh open on the real disk finds every step's change, committed, and a whole
      // repository: the folder as after the last step, HEAD's tree the reference's.
      memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
      expect(await visible(dataDir), `${label}: the folder after the last step`).toBe(
        ref.after.at(-1),
      )
      expect(headTree(dataDir), `${label}: HEAD after the last step`).toBe(ref.headTree)
      expect(commitCount(dataDir), `${label}: every step's commit`).toBe(ref.commits)
      fsck(dataDir)
    }
    // The next change works, and catches up whatever the fault left owed.
    const probe = await memory.execute(
      {
        command: 'create',
        path: '/memories/probe.md',
        file_text: `after ${label}\n`,
      },
      CLAUDE,
    )
    expect(probe.isError, `${label}: ${JSON.stringify(probe.content)}`).toBe(false)
    expect(probe.commit, label).not.toBeNull()
    await memory.close()
    memory = null
    expect(await headMatchesFolder(dataDir), `${label}: HEAD is the folder`).toBe(true)
    fsck(dataDir)
    expect(commitCount(dataDir)).toBeGreaterThanOrEqual(countBefore)
    // Open again: nothing left over anywhere.
    memory = await openVersionedMemory({ dataDir, watch: false, now: clock(), logger })
    await memory.close()
    memory = null
    expect(leftoverTempFiles(dataDir), label).toEqual([])
    expect(
      logger.entries.filter((entry) => entry.level === 'error'),
      label,
    ).toEqual([])
    return injected
  } catch (error) {
    const call = (faulted as DiskCall | null)?.name ?? 'no call'
    throw new Error(`${label} (${call}, step ${step}): ${String(error)}`, { cause: error })
  } finally {
    restore()
    await memory?.close()
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 })
  }
}

/**
 * Runs `scenario` with faults at a spread of its calls (quick: about `quick.steps` positions
 * in open and the steps and `quick.close` in the close, each with one code) or at every call
 * with every code (the stress run), and checks each run.
 */
async function faultEveryCall(
  scenario: Scenario,
  quick: { readonly steps: number; readonly close: number },
): Promise<void> {
  // Checked before the reference run: a mistyped code fails at once, not after it.
  const only = process.env['CAIRN_FAULT_CODES']?.split(',')
  const unknown = only?.filter((code) => !(CODES as ReadonlyArray<string>).includes(code))
  if (unknown?.length) {
    throw new Error(
      `CAIRN_FAULT_CODES names ${unknown.join(', ')}: each must be one of ${CODES.join(', ')}`,
    )
  }
  const ref = await reference(scenario)
  expect(ref.total).toBeGreaterThan(100)
  expect(ref.stepsEnd, 'open and the steps make calls').toBeGreaterThan(quick.steps)
  expect(ref.total - ref.stepsEnd, 'the close makes calls').toBeGreaterThan(quick.close)
  console.log(
    `fault injection (${scenario.name}): ${ref.total} calls, ${ref.stepsEnd} in open and the steps, the close's from ${ref.stepsEnd + 1}; steps start at`,
    ref.startsAt,
  )
  // Quick: a spread of positions in open and the steps and another in the close, one code
  // each; full: every position with every code.
  const spread = (from: number, to: number, count: number): number[] => {
    const stride = size(Math.max(1, Math.floor((to - from + 1) / count)), 1)
    const at: number[] = []
    for (let n = from; n <= to; n += stride) at.push(n)
    return at
  }
  const positions = [
    ...spread(1, ref.stepsEnd, quick.steps),
    ...spread(ref.stepsEnd + 1, ref.total, quick.close),
  ]
  let faults = 0
  // To search a range: CAIRN_FAULT_FROM / CAIRN_FAULT_TO bound the calls faulted
  // (CAIRN_FAULT_FROM=close: from the close's first call; pick the scenario with vitest's -t),
  // and CAIRN_FAULT_ALL=1 goes on past a failure and reports every one at the end;
  // CAIRN_FAULT_CODES (EACCES,EIO) limits the full run's codes.
  const from = process.env['CAIRN_FAULT_FROM']
  const first = from === 'close' ? ref.stepsEnd + 1 : Number(from ?? 1)
  // Past the close nothing is injected (the probe and the opens after run on the real disk).
  const last = Math.min(ref.total, Number(process.env['CAIRN_FAULT_TO'] ?? ref.total))
  const collect = process.env['CAIRN_FAULT_ALL'] === '1'
  const failures: string[] = []
  const unreached: string[] = []
  closesFailed.length = 0
  for (const n of positions.filter((at) => at >= first && at <= last)) {
    const codes = size([CODES[n % CODES.length]!], [...CODES]).filter(
      (code) => !only || only.includes(code),
    )
    for (const code of codes) {
      try {
        if (!(await runWithFault(scenario, ref, n, code))) unreached.push(`${code} at ${n}`)
      } catch (error) {
        if (!collect) throw error
        failures.push(String(error).split('\n')[0]!)
        console.log(`FAILED ${String(error).split('\n')[0]!}`)
      }
      faults++
    }
  }
  const injected = faults - unreached.length
  if (unreached.length > 0) console.log(`fault injection: never reached ${unreached.join(', ')}`)
  console.log(
    `fault injection (${scenario.name}): ${faults} runs, ${injected} faults injected, ${failures.length} failed; closes that failed clearly: ${closesFailed.join(', ') || 'none'}`,
  )
  addTotals('fault injection', { rounds: faults, injectedFaults: injected })
  expect(failures).toEqual([])
  // A bound that is not a number (NaN) or a range no code falls in must not pass having
  // injected nothing; nor a run whose numbering moved so far that most positions were never
  // reached (the reference's timers ran elsewhere than the runs').
  expect(injected, 'no fault was injected: check CAIRN_FAULT_FROM/TO/CODES').toBeGreaterThan(0)
  expect(unreached.length, 'most positions never reached').toBeLessThanOrEqual(faults / 2)
}

describe('fault injection at every file-system call of a scripted scenario', () => {
  it('always ends in a clear error or a success, a whole folder, and a valid history', async () => {
    await faultEveryCall(
      { name: 'steps', fixture: template, steps: STEPS },
      { steps: 16, close: 2 },
    )
  }, 3_600_000)

  it('opens a folder left unsettled (log replayed, lock taken over) whatever call fails', async () => {
    const fixture = await unsettled()
    await faultEveryCall({ name: 'reopen', fixture, steps: [] }, { steps: 2, close: 1 })
  }, 3_600_000)
})
