import { spawn } from 'node:child_process'
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
import { commitCount, fsck, headMatchesFolder, leftoverTempFiles } from './test-helpers'

// The crash test (issue #9): a child process runs random memory commands and acknowledges
// each durably; it is killed with SIGKILL at random moments (a third of the time while it
// opens, i.e. while it recovers from the previous kill). After each kill the folder must hold
// every acknowledged change (plus, at most, the one in flight), HEAD's tree must be the
// folder, `git fsck --strict` must be clean, no temp file may remain, and the number of
// commits must never drop. A second run does the same with background packing going on all
// the while, so kills land inside packing too (and inside the open that cleans up after it).

const CHILD = path.resolve('test/stress/crash-child.ts')

let root: string
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-crash-'))
})
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

/** Runs the child until it is killed at a moment picked by `rand`; returns its ack lines. */
async function runAndKill(
  dataDir: string,
  round: number,
  rand: () => number,
  packing: boolean,
  untilPacked = false,
): Promise<{ lines: string[]; killedWhileOpening: boolean }> {
  const ackFile = path.join(dataDir, `ack-${round}.jsonl`)
  // A third of the rounds die inside open: the child kills itself before one of its first
  // file-system calls (open makes about a hundred); the others are killed by a timer.
  const duringOpen = round % 3 === 0 && !untilPacked
  const args = [CHILD, dataDir, ackFile, String(1000 + round)]
  if (duringOpen) args.push(String(1 + Math.floor(rand() * 120)))
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env: { ...process.env, CAIRN_CRASH_PACKING: packing ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  let said = ''
  const selfKilled = await new Promise<boolean>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      out += chunk.toString()
      if (out.includes('opened')) {
        const delay = packing ? 50 + rand() * 1500 : 20 + rand() * 400
        // On a loaded machine a pass may not get to write its pack before a timer's kill: the
        // round that must see one waits for it first (a kill then lands in a later pass, or
        // in the removal of what the pack holds).
        if (untilPacked)
          void packWritten(dataDir).then(() => setTimeout(() => resolve(false), delay))
        else setTimeout(() => resolve(false), delay)
        out = '\0'
      }
    })
    void exited.then((code) => {
      if (code === null && duringOpen) resolve(true)
      else reject(new Error(`child exited (${code}) before its kill: ${stderr}`))
    })
  })
  if (!selfKilled) child.kill('SIGKILL')
  const killedWhileOpening = !said.includes('opened')
  const code = await exited
  expect(code, stderr).toBeNull()
  const text = fs.existsSync(ackFile) ? fs.readFileSync(ackFile, 'utf8') : ''
  fs.rmSync(ackFile, { force: true })
  return { lines: text.split('\n'), killedWhileOpening }
}

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

/** Resolves once the repository holds a pack, looking every 20 ms (for at most 2 minutes). */
async function packWritten(dataDir: string): Promise<void> {
  for (let waited = 0; waited < 120_000 && packCount(dataDir) === 0; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Packs in the repository now. */
function packCount(dataDir: string): number {
  const dir = path.join(dataDir, 'history.git', 'objects', 'pack')
  return fs.existsSync(dir)
    ? fs.readdirSync(dir).filter((name) => name.endsWith('.pack')).length
    : 0
}

/**
 * Rounds of: run the child, kill it, replay its acknowledgements on the model, reopen and
 * check. Returns what it counted.
 */
async function crashRounds(
  name: string,
  rounds: number,
  seed: number,
  packing: boolean,
): Promise<{ kills: number; killsWhileOpening: number; roundsWithPacks: number }> {
  const dataDir = path.join(root, name)
  fs.mkdirSync(dataDir)
  {
    const rand = random(seed)
    let expected = emptyModel()
    let commits = 0
    let kills = 0
    let killsWhileOpening = 0
    let commands = 0
    let losses = 0
    let roundsWithPacks = 0
    for (let round = 1; round <= rounds; round++) {
      // The last round of a packing run, when no pack has been written yet, waits for one (and
      // is never one that dies inside open), so the run always kills inside packing's work.
      const mustPack = packing && round === rounds && roundsWithPacks === 0
      const { lines, killedWhileOpening } = await runAndKill(
        dataDir,
        round,
        rand,
        packing,
        mustPack,
      )
      if (packCount(dataDir) > 0) roundsWithPacks++
      kills++
      if (killedWhileOpening) killsWhileOpening++
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
            `round ${round}: the folder lost an acknowledged change.\n in flight: ${JSON.stringify(inFlight)}\n expected: ${describeModel(expected)}\n with it:  ${withInFlight ? describeModel(withInFlight) : '-'}\n on disk:  ${describeModel(onDisk)}`,
          )
        }
        expected = readModel(path.join(dataDir, 'memories'))
        expect(await headMatchesFolder(dataDir), `round ${round}: HEAD is the folder`).toBe(true)
        fsck(dataDir)
        expect(leftoverTempFiles(dataDir), `round ${round}`).toEqual([])
        const count = commitCount(dataDir)
        if (count < commits) losses++
        expect(count, `round ${round}: commits never drop`).toBeGreaterThanOrEqual(commits)
        commits = count
      } finally {
        await memory.close()
      }
    }
    expect(commands).toBeGreaterThan(0)
    addTotals('crash', { rounds, kills, generatedCommands: commands, losses })
    return { kills, killsWhileOpening, roundsWithPacks }
  }
}

describe('SIGKILL at random moments, also while opening', () => {
  it('never loses an acknowledged change, and leaves a valid history that matches the folder', async () => {
    const rounds = size(4, 120)
    const { kills, killsWhileOpening } = await crashRounds('commands', rounds, 20240901, false)
    // Some kills must have interrupted an open (and so a recovery) for the test to mean it.
    if (rounds >= 30) expect(killsWhileOpening).toBeGreaterThan(0)
    console.log(`crash test: ${kills} kills, ${killsWhileOpening} while opening`)
  }, 3_600_000)

  it('loses nothing when killed while background packing runs beside the commands', async () => {
    const rounds = size(4, 60)
    const { kills, roundsWithPacks } = await crashRounds('packing', rounds, 20250301, true)
    // Packing must really have happened (and so been killed at times) for the test to mean it.
    expect(roundsWithPacks).toBeGreaterThan(0)
    console.log(`crash test while packing: ${kills} kills, ${roundsWithPacks} rounds with packs`)
  }, 3_600_000)
})
