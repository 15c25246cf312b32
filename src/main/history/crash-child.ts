/**
 * A child process for crash tests: opens the history of a data folder and runs maintenance,
 * printing each step. With a step named, it stops there (blocking, so the parent's SIGKILL
 * lands exactly at that point); without, it runs to the end and prints `finished`.
 *
 *   node --import tsx src/main/history/crash-child.ts <dataDir> [stopAtStep]
 */
import { openVersionedMemory } from './versioned-memory'

const [dataDir, stopAt] = process.argv.slice(2)
if (!dataDir) throw new Error('usage: crash-child <dataDir> [step]')

const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
process.stdout.write('opened\n')
await memory.maintain({
  mergeAll: process.env.CAIRN_MERGE_ALL === '1',
  onStep(step) {
    process.stdout.write(`step ${step}\n`)
    if (step === stopAt) {
      // Hold here until killed.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
    }
  },
})
await memory.close()
process.stdout.write('finished\n')
