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
 * point, which no timer can aim at. While packing, stdout also says `step <name>` at each step
 * of every background pass (`started`, then repack's), and `CAIRN_CRASH_AIM=<step>:<n>` makes
 * the child kill itself just before its n-th file-system call after the first pass reaches
 * that step: a kill inside a given phase of packing (writing, renaming, removing, folding).
 * `CAIRN_CRASH_AIM=open-packs:<n>` counts from open's first call on a file in the pack folder
 * instead (the n-th call from it, that one included): a kill inside the open that clears what
 * a pass killed half-way left there (a child that opens all the same then runs no command).
 * With `CAIRN_CRASH_THREAD=1`, a pass waits for 300 loose objects, so it removes them a batch at
 * a time on the removals' thread (`UnlinkWorker`, from 256 loose, only on the real file
 * system: no kill here may hook the disk then), and `CAIRN_CRASH_BATCH=<n>:<k>` makes the child
 * kill itself inside the n-th batch it hands that thread: as soon as the batch's k-th file is
 * gone (at once for k = 0), while the thread goes on with the rest.
 * The acknowledgement file gets, per command, a line before it runs (`{"run":…}`) and one after
 * (`{"done":…}`), each written with fsync. stdout says `opening` and `opened`.
 */

import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { openVersionedMemory } from '../../src/main/history'
import { nodeDisk, setDisk } from '../../src/main/lib/disk'
import { hookDisk } from '../../src/main/lib/disk-hooks'
import type { PassStep } from '../../src/main/history/maintainer'
import { applyCommand, nextCommand, random, readModel } from './memory-model'

const [dataDir, ackFile, seedText, killAtText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
]

const killAt = killAtText && dataDir !== 'maintain' ? Number(killAtText) : null
const aim = /^([a-z-]+):(\d+)$/.exec(process.env.CAIRN_CRASH_AIM ?? '')
/** Calls made when the aimed-at moment came (null: not yet). */
let aimedFrom: number | null = null
let opened = false
// `open-packs`: open's first call on a file in the pack folder: where it clears what a pass
// killed half-way left there (temp files, a pack without its index, a fold's leftovers), or
// else where it opens the packs.
const IN_PACK_FOLDER = `${path.sep}objects${path.sep}pack${path.sep}`
const hooked =
  killAt !== null || aim
    ? hookDisk(nodeDisk, (call) => {
        if (call.n === killAt) process.kill(process.pid, 'SIGKILL')
        if (!aim) return
        if (aimedFrom === null && aim[1] === 'open-packs' && !opened) {
          if (call.args.some((arg) => typeof arg === 'string' && arg.includes(IN_PACK_FOLDER))) {
            aimedFrom = call.n - 1
          }
        }
        if (aimedFrom !== null && call.n - aimedFrom >= Number(aim[2])) {
          process.kill(process.pid, 'SIGKILL')
        }
      })
    : null
if (hooked) setDisk(hooked.disk)

const batchAim = /^(\d+):(\d+)$/.exec(process.env.CAIRN_CRASH_BATCH ?? '')
if (batchAim) {
  // The removals' thread gets each batch as one message of paths, which it unlinks in order:
  // seen here as it is sent, and the child dies once the aimed-at file is gone (the thread,
  // busy with the next ones, never sees the main thread stop).
  let sent = 0
  const post = Worker.prototype.postMessage
  Worker.prototype.postMessage = function (this: Worker, value: unknown, ...rest: []) {
    post.call(this, value, ...rest)
    if (!Array.isArray(value) || ++sent !== Number(batchAim[1])) return
    const k = Number(batchAim[2])
    const target = k > 0 ? (value[Math.min(k, value.length) - 1] as string) : null
    const until = performance.now() + 10_000
    let there = target !== null
    while (there && performance.now() < until) there = fs.existsSync(target as string)
    // (Spinning: the thread unlinks meanwhile.) Late: the thread never got that far.
    process.stdout.write(there ? 'step batch-late\n' : 'step batch-aimed\n')
    process.kill(process.pid, 'SIGKILL')
  }
}

/** A background pass's step: said on stdout (synchronous on a pipe), maybe aimed at. */
function onStep(step: PassStep): void {
  process.stdout.write(`step ${step}\n`)
  if (aim && step === aim[1] && aimedFrom === null && hooked) aimedFrom = hooked.calls()
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
// Packing at 300 loose objects, idle moments' passes included: the removals go to the thread.
const THREAD_PACKING = { looseThreshold: 300, idleMs: 5, idleMinimum: 300, quietMs: 0 } as const

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
  const settings = process.env.CAIRN_CRASH_THREAD === '1' ? THREAD_PACKING : PACKING
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    ...(packing ? { maintenance: { ...settings, onStep } } : {}),
  })
  opened = true
  process.stdout.write('opened\n')
  // Meant to die inside open and did not: runs nothing, so the parent's kill ends it with no
  // command half-done (the parent replays this round's commands after the previous child's).
  if (aim?.[1] === 'open-packs') return new Promise(() => setInterval(() => undefined, 60_000))
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
    // While packing, a pause after every third command: a pass steps aside while a command
    // runs or waits (each of its pauses then waits for the queue to be idle), so it moves on
    // only in these moments. One every sixth command made the first pass of a child (its
    // index check, listing, writing that folds the packs before) take 2-12 s at load 10.
    if (packing && i % 3 === 2) await new Promise((resolve) => setTimeout(resolve, 15))
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`crash child failed: ${String(error)}\n`)
  process.exit(1)
})
