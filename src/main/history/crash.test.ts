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
// commits must never drop.

const CHILD = path.resolve('test/stress/crash-child.ts')

let dataDir: string
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-crash-'))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

/** Runs the child until it is killed at a moment picked by `rand`; returns its ack lines. */
async function runAndKill(
  round: number,
  rand: () => number,
): Promise<{ lines: string[]; duringOpen: boolean }> {
  const ackFile = path.join(dataDir, `ack-${round}.jsonl`)
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, dataDir, ackFile, String(1000 + round)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  const duringOpen = round % 3 === 0
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const waitFor = duringOpen ? 'opening' : 'opened'
      if (out.includes(waitFor)) {
        const delay = duringOpen ? rand() * 40 : 20 + rand() * 400
        setTimeout(resolve, delay)
        out = '\0'
      }
    })
    void exited.then((code) =>
      reject(new Error(`child exited (${code}) before its kill: ${stderr}`)),
    )
  })
  child.kill('SIGKILL')
  const code = await exited
  expect(code, stderr).toBeNull()
  const text = fs.existsSync(ackFile) ? fs.readFileSync(ackFile, 'utf8') : ''
  fs.rmSync(ackFile, { force: true })
  return { lines: text.split('\n'), duringOpen }
}

describe('SIGKILL at random moments, also while opening', () => {
  it('never loses an acknowledged change, and leaves a valid history that matches the folder', async () => {
    const rounds = size(4, 120)
    const rand = random(20240901)
    let expected = emptyModel()
    let commits = 0
    let kills = 0
    let commands = 0
    let losses = 0
    for (let round = 1; round <= rounds; round++) {
      const { lines } = await runAndKill(round, rand)
      kills++
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
        const found = describeModel(readModel(path.join(dataDir, 'memories')))
        const withInFlight = inFlight ? cloneModel(expected) : null
        if (withInFlight && inFlight) applyCommand(withInFlight, inFlight)
        const candidates = [describeModel(expected)]
        if (withInFlight) candidates.push(describeModel(withInFlight))
        if (!candidates.includes(found)) losses++
        expect(candidates, `round ${round}: the folder lost an acknowledged change`).toContain(
          found,
        )
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
  }, 3_600_000)
})
