/**
 * The child of the crash test: opens the versioned memory of a data folder and runs random
 * Memory tool commands until it is killed, acknowledging each durably.
 *
 *   node --import tsx test/stress/crash-child.ts <dataDir> <ackFile> <seed>
 *
 * The acknowledgement file gets, per command, a line before it runs (`{"run":…}`) and one after
 * (`{"done":…}`), each written with fsync. stdout says `opening` and `opened`.
 */

import fs from 'node:fs'
import path from 'node:path'
import { openVersionedMemory } from '../../src/main/history'
import { applyCommand, emptyModel, nextCommand, random, type Model } from './memory-model'

const [dataDir, ackFile, seedText] = process.argv.slice(2) as [string, string, string]

function acknowledge(record: unknown): void {
  const fd = fs.openSync(ackFile, 'a')
  try {
    fs.writeSync(fd, `${JSON.stringify(record)}\n`)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

// The model of what is on disk now, read from the folder (it is the parent's to check).
function readModel(root: string): Model {
  const model = emptyModel()
  const walk = (dir: string, rel: string) => {
    for (const dirent of fs.readdirSync(dir, { withFileTypes: true })) {
      if (dirent.name.startsWith('.')) continue
      const relative = rel ? `${rel}/${dirent.name}` : dirent.name
      if (dirent.isDirectory()) {
        model.dirs.add(relative)
        walk(path.join(dir, dirent.name), relative)
      } else if (dirent.isFile()) {
        model.files.set(relative, fs.readFileSync(path.join(dir, dirent.name), 'utf8'))
      }
    }
  }
  if (fs.existsSync(root)) walk(root, '')
  return model
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
