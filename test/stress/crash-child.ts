/**
 * The child of the crash test: opens the versioned memory of a data folder and runs random
 * Memory tool commands until it is killed, acknowledging each durably.
 *
 *   node --import tsx test/stress/crash-child.ts <dataDir> <ackFile> <seed> [<killAtCall>]
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

if (killAtText) {
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

async function main(): Promise<void> {
  process.stdout.write('opening\n')
  const memory = await openVersionedMemory({ dataDir, watch: false })
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
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`crash child failed: ${String(error)}\n`)
  process.exit(1)
})
