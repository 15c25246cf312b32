/**
 * The child of the crash tests. Two modes:
 *
 *   node --import tsx test/stress/crash-child.ts <dataDir> <ackFile> <seed> [<killAtCall>]
 *
 * opens the versioned memory of a data folder and runs random Memory tool commands until it
 * is killed, acknowledging each durably. With `CAIRN_CRASH_PACKING=1`, background packing runs
 * all the while (a pass every few commits), so kills land inside packing too.
 *
 *   node --import tsx test/stress/crash-child.ts maintain <dataDir> [<stopAtStep>]
 *
 * opens the history and runs one maintenance pass, printing each step (`step <name>`); with a
 * step named it stops there, blocking, so the parent's SIGKILL lands exactly at that point;
 * otherwise it runs to the end and prints `finished` (`CAIRN_MERGE_ALL=1` folds every pack).
 *
 * With `killAtCall`, the child kills itself (SIGKILL) just before that file-system call of its
 * own, counted through the disk seam: a kill inside open (and so inside recovery) at an exact
 * point, which no timer can aim at.
 * The acknowledgement file gets, per command, a line before it runs (`{"run":…}`) and one after
 * (`{"done":…}`), each written with fsync. stdout says `opening` and `opened`.
 */

import fs from 'node:fs'
import path from 'node:path'
import { openVersionedMemory } from '../../src/main/history'
import { nodeDisk, setDisk } from '../../src/main/lib/disk'
import { hookDisk } from '../../src/main/lib/disk-hooks'
import { applyCommand, nextCommand, random, readModel } from './memory-model'

const [dataDir, ackFile, seedText, killAtText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
]

if (killAtText && dataDir !== 'maintain') {
  const killAt = Number(killAtText)
  setDisk(
    hookDisk(nodeDisk, (call) => {
      if (call.n === killAt) process.kill(process.pid, 'SIGKILL')
    }).disk,
  )
}

function acknowledge(record: unknown): void {
  const fd = fs.openSync(ackFile, 'a')
  try {
    fs.writeSync(fd, `${JSON.stringify(record)}\n`)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

// Packing as often as there is anything to pack: after 8 loose objects, or 5 ms without a commit.
// Removals wait for no quiet moment (`quietMs: 0`), so kills land in them while commands run.
const PACKING = { looseThreshold: 8, idleMs: 5, idleMinimum: 1, quietMs: 0 } as const

async function maintainOnce(dir: string, stopAt: string | undefined): Promise<void> {
  const memory = await openVersionedMemory({ dataDir: dir, watch: false, maintenance: false })
  process.stdout.write('opened\n')
  await memory.maintain({
    mergeAll: process.env.CAIRN_MERGE_ALL === '1',
    onStep(step) {
      process.stdout.write(`step ${step}\n`)
      // Hold here until killed.
      if (step === stopAt) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
    },
  })
  await memory.close()
  process.stdout.write('finished\n')
}

async function main(): Promise<void> {
  if (dataDir === 'maintain') return maintainOnce(ackFile, seedText || undefined)
  process.stdout.write('opening\n')
  const packing = process.env.CAIRN_CRASH_PACKING === '1'
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    ...(packing ? { maintenance: PACKING } : {}),
  })
  process.stdout.write('opened\n')
  const model = readModel(path.join(dataDir, 'memories'))
  const rand = random(Number(seedText))
  for (let i = 0; ; i++) {
    const command = nextCommand(rand, model)
    acknowledge({ run: i, command })
    const result = await memory.execute(command, {
      actor: 'claude',
      conversationId: 'crash',
      toolUseId: `toolu_${i}`,
    })
    if (!result.isError && command.command !== 'view') applyCommand(model, command)
    acknowledge({ done: i, isError: result.isError, commit: result.commit?.oid ?? null })
    // While packing, a pause now and then: passes step aside for commands, so without quiet
    // moments they would never get far enough to be killed inside.
    if (packing && i % 6 === 5) await new Promise((resolve) => setTimeout(resolve, 15))
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`crash child failed: ${String(error)}\n`)
  process.exit(1)
})
