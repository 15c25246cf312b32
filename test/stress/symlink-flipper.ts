/**
 * A real race for the symlink defect: a worker thread swaps `<root>/d` for a symlink to an
 * outside folder and back, as fast as it can, while the caller's commands run on the main
 * thread. Counts escapes: replies holding the outside folder's text, and any change to it.
 */

import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { treeHash } from './tree-hash'

/** Text every outside file holds; a reply with it read outside. */
export const OUTSIDE_MARK = 'OUTSIDE-SENTINEL'

export interface RaceResult {
  readonly tries: number
  readonly swaps: number
  readonly escapes: ReadonlyArray<string>
}

// The worker: while d is a real folder, puts its fixtures back (a command may have deleted
// them), then swaps it for the link and back.
const FLIPPER = `
const { workerData } = require('node:worker_threads')
const fs = require('node:fs')
const path = require('node:path')
const { root, outside, flag, counter } = workerData
const stop = new Int32Array(flag)
const swaps = new Int32Array(counter)
const d = path.join(root, 'd')
const aside = path.join(root, 'd-real')
const put = (file, text) => { try { fs.writeFileSync(file, text, { flag: 'wx' }) } catch {} }
while (Atomics.load(stop, 0) === 0) {
  try {
    fs.mkdirSync(path.join(d, 'sub'), { recursive: true })
    put(path.join(d, 'f.md'), 'inside file\\n')
    put(path.join(d, 'sub', 'x.md'), 'inside sub\\n')
    fs.renameSync(d, aside)
    fs.symlinkSync(outside, d)
    for (let i = 0; i < 50; i++) Atomics.load(stop, 0)
    fs.unlinkSync(d)
    fs.renameSync(aside, d)
    Atomics.add(swaps, 0, 1)
  } catch {
    try { if (fs.lstatSync(d).isSymbolicLink()) fs.unlinkSync(d) } catch {}
    try { fs.renameSync(aside, d) } catch {}
  }
}
`

/** Makes the outside folder: a file and a folder, all holding `OUTSIDE_MARK`. */
export function makeOutside(outside: string): void {
  fs.rmSync(outside, { recursive: true, force: true })
  fs.mkdirSync(path.join(outside, 'sub'), { recursive: true })
  fs.writeFileSync(path.join(outside, 'f.md'), `${OUTSIDE_MARK} file\n`)
  fs.writeFileSync(path.join(outside, 'sub', 'x.md'), `${OUTSIDE_MARK} folder\n`)
}

/** The commands raced: reads and deletes through d/, as the defect report did, and writes. */
export const RACED_COMMANDS: ReadonlyArray<Record<string, unknown>> = [
  { command: 'view', path: '/memories/d/f.md' },
  { command: 'view', path: '/memories/d' },
  { command: 'delete', path: '/memories/d/sub' },
  { command: 'create', path: '/memories/d/new.md', file_text: 'new\n' },
  { command: 'str_replace', path: '/memories/d/f.md', old_str: 'file', new_str: 'file' },
  { command: 'delete', path: '/memories/d/new.md' },
]

/**
 * Runs `execute` on `RACED_COMMANDS` in turn for `durationMs` while the worker swaps d/.
 * `root` must hold a real d/ (the worker keeps its fixtures); `outside` is made here.
 */
export async function raceConcurrently(options: {
  readonly root: string
  readonly outside: string
  readonly durationMs: number
  readonly execute: (input: Record<string, unknown>) => Promise<unknown>
}): Promise<RaceResult> {
  const { root, outside } = options
  makeOutside(outside)
  fs.mkdirSync(path.join(root, 'd', 'sub'), { recursive: true })
  const clean = treeHash(outside)
  const flag = new SharedArrayBuffer(4)
  const counter = new SharedArrayBuffer(4)
  const worker = new Worker(FLIPPER, { eval: true, workerData: { root, outside, flag, counter } })
  const escapes: string[] = []
  let tries = 0
  const end = Date.now() + options.durationMs
  try {
    while (Date.now() < end) {
      for (const input of RACED_COMMANDS) {
        tries++
        const reply = JSON.stringify(await options.execute(input))
        if (reply.includes(OUTSIDE_MARK)) escapes.push(`${String(input.command)} read outside`)
        if (input.command !== 'view' && treeHash(outside) !== clean) {
          escapes.push(`${String(input.command)} changed the outside folder`)
          makeOutside(outside)
        }
      }
    }
  } finally {
    Atomics.store(new Int32Array(flag), 0, 1)
    await new Promise((resolve) => worker.once('exit', resolve))
  }
  return { tries, swaps: Atomics.load(new Int32Array(counter), 0), escapes }
}
