/**
 * Memory tool benchmark: median time per command for Cairn's handler and the SDK's reference
 * handler (`BetaLocalFilesystemMemoryTool`), in the same run, on folders of 100 and 10,000 files.
 * Run: `npm run bench:memory` (or `npx tsx bench/memory.bench.ts`). Writes bench/results/memory.json.
 * `npm run bench:memory -- --quick` times only the commands that change the folder (no views) and
 * writes nothing: for comparing changes; only the full run is the measurement.
 */

import { execFileSync } from 'node:child_process'
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory'
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node'
import { createMemoryTool } from '../src/main/memory/index'
import { median } from './median'

type Run = (input: Record<string, unknown>) => Promise<unknown>

const COMMANDS = [
  'view dir',
  'view file',
  'create',
  'str_replace',
  'insert',
  'rename',
  'delete',
] as const
type CommandName = (typeof COMMANDS)[number]

const QUICK = process.argv.includes('--quick')
const TIMED: ReadonlyArray<CommandName> = QUICK
  ? COMMANDS.filter((c) => !c.startsWith('view'))
  : COMMANDS

const SIZES = [100, 10_000] as const
const FILES_PER_FOLDER = 50
const ITERATIONS: Readonly<Record<number, number>> = { 100: 40, 10_000: 20 }
const WARMUP = 3

const NOTE = Array.from(
  { length: 30 },
  (_, i) => `- fact ${i}: the user likes item ${i} and mentioned it on day ${i * 3}`,
).join('\n')

async function populate(root: string, files: number): Promise<void> {
  const folders = Math.ceil(files / FILES_PER_FOLDER)
  for (let f = 0; f < folders; f++) {
    const dir = path.join(root, `topic-${String(f).padStart(3, '0')}`)
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    const writes: Promise<void>[] = []
    for (let i = 0; i < FILES_PER_FOLDER && f * FILES_PER_FOLDER + i < files; i++) {
      writes.push(
        fs.writeFile(path.join(dir, `note-${String(i).padStart(2, '0')}.md`), NOTE, {
          mode: 0o600,
        }),
      )
    }
    await Promise.all(writes)
  }
  await fs.mkdir(path.join(root, 'bench'), { mode: 0o700 })
  await fs.writeFile(path.join(root, 'bench', 'edit.md'), `${NOTE}\ncounter token-0;\n`, {
    mode: 0o600,
  })
}

/** The command inputs of iteration `i` (each iteration leaves the folder as it found it). */
function inputs(i: number): Record<CommandName, Record<string, unknown>> {
  return {
    'view dir': { command: 'view', path: '/memories' },
    'view file': { command: 'view', path: '/memories/topic-000/note-00.md' },
    create: { command: 'create', path: `/memories/bench/new-${i}.md`, file_text: NOTE },
    str_replace: {
      command: 'str_replace',
      path: '/memories/bench/edit.md',
      old_str: `token-${i};`,
      new_str: `token-${i + 1};`,
    },
    insert: {
      command: 'insert',
      path: '/memories/bench/edit.md',
      insert_line: 1,
      insert_text: `inserted ${i}`,
    },
    rename: {
      command: 'rename',
      old_path: `/memories/bench/new-${i}.md`,
      new_path: `/memories/bench/moved-${i}.md`,
    },
    delete: { command: 'delete', path: `/memories/bench/moved-${i}.md` },
  }
}

// With --expose-gc (the npm script passes it) garbage from one command, e.g. the reference's
// 10,000-line listing, is collected before the next is timed instead of landing in its time.
const collect = (globalThis as { gc?: () => void }).gc ?? (() => {})

async function time(run: Run, input: Record<string, unknown>, command: string): Promise<number> {
  collect()
  const start = performance.now()
  const result = (await run(input)) as { isError?: boolean }
  const elapsed = performance.now() - start
  if (result && typeof result === 'object' && result.isError) {
    throw new Error(
      `${command} failed during the benchmark: ${JSON.stringify(result).slice(0, 200)}`,
    )
  }
  return elapsed
}

/**
 * The disk alone, no handler: what a durable atomic write costs (temp file, fsync, rename, fsync
 * of the folder — what Cairn's writes do) next to the reference's write (open, write, fsync,
 * close). Their ratio is the part of our write ratio that durability itself costs.
 */
const FLOOR = 'disk floor' as const

// Both floors make the same kind of calls (synchronous open/write/rename/close, asynchronous
// fsync, as Cairn does), so their ratio isolates the second fsync and the rename.
const fsync = promisify(fsSync.fsync)

async function durableWrite(dir: string, name: string, text: string): Promise<void> {
  const temp = path.join(dir, `.floor-${name}`)
  const fd = fsSync.openSync(temp, 'wx', 0o600)
  fsSync.writeFileSync(fd, text)
  await fsync(fd)
  fsSync.closeSync(fd)
  fsSync.renameSync(temp, path.join(dir, name))
  const folder = fsSync.openSync(dir, 'r')
  await fsync(folder)
  fsSync.closeSync(folder)
}

async function singleFsyncWrite(dir: string, name: string, text: string): Promise<void> {
  const fd = fsSync.openSync(path.join(dir, name), 'wx', 0o600)
  fsSync.writeFileSync(fd, text)
  await fsync(fd)
  fsSync.closeSync(fd)
}

interface Row {
  readonly files: number
  readonly command: CommandName | typeof FLOOR
  readonly oursMs: number
  readonly referenceMs: number
  readonly ratio: number
}

async function benchSize(files: number): Promise<Row[]> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bench-'))
  try {
    const oursRoot = path.join(base, 'ours', 'memories')
    const reference = await BetaLocalFilesystemMemoryTool.init(path.join(base, 'ref'))
    await populate(oursRoot, files)
    await populate(path.join(base, 'ref', 'memories'), files)
    // Flush the freshly written folders so their writeback does not land inside the timings.
    if (process.platform !== 'win32') execFileSync('sync')
    const tool = createMemoryTool({ root: oursRoot })
    const refTool = betaMemoryTool(reference)
    const ours: Run = (input) => tool.execute(input)
    // The reference throws on failure; the bench counts only successful commands.
    const ref: Run = async (input) => refTool.run(input as never)

    const samples = new Map<string, number[]>()
    const iterations = ITERATIONS[files]!
    for (let i = 0; i < WARMUP + iterations; i++) {
      const step = inputs(i)
      for (const command of TIMED) {
        // Alternate who goes first so neither side always runs on a warmer cache.
        const order: Array<['ours' | 'ref', Run]> =
          i % 2
            ? [
                ['ref', ref],
                ['ours', ours],
              ]
            : [
                ['ours', ours],
                ['ref', ref],
              ]
        for (const [who, run] of order) {
          const ms = await time(run, step[command], `${who} ${command}`)
          if (i >= WARMUP)
            samples.set(`${who}:${command}`, [...(samples.get(`${who}:${command}`) ?? []), ms])
        }
      }
      // The disk floor, in the same folders the handlers write to, alternating the same way.
      const floors: Array<['ours' | 'ref', string, typeof durableWrite]> = [
        ['ours', path.join(oursRoot, 'bench'), durableWrite],
        ['ref', path.join(base, 'ref', 'memories', 'bench'), singleFsyncWrite],
      ]
      if (i % 2) floors.reverse()
      for (const [who, dir, write] of floors) {
        collect()
        const start = performance.now()
        await write(dir, `floor-${i}.md`, NOTE)
        const ms = performance.now() - start
        await fs.rm(path.join(dir, `floor-${i}.md`))
        if (i >= WARMUP)
          samples.set(`${who}:${FLOOR}`, [...(samples.get(`${who}:${FLOOR}`) ?? []), ms])
      }
    }
    const rowNames: ReadonlyArray<Row['command']> = [...TIMED, FLOOR]
    return rowNames.map((command): Row => {
      const oursMs = median(samples.get(`ours:${command}`)!)
      const referenceMs = median(samples.get(`ref:${command}`)!)
      return { files, command, oursMs, referenceMs, ratio: oursMs / referenceMs }
    })
  } finally {
    await fs.rm(base, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const started = performance.now()
  const rows: Row[] = []
  for (const files of SIZES) rows.push(...(await benchSize(files)))
  const target = 1.5
  const pad = (s: string, n: number) => s.padEnd(n)
  const lines = [
    `${pad('files', 7)}${pad('command', 13)}${pad('cairn ms', 11)}${pad('reference ms', 14)}ratio`,
    ...rows.map(
      (r) =>
        `${pad(String(r.files), 7)}${pad(r.command, 13)}${pad(r.oursMs.toFixed(3), 11)}${pad(r.referenceMs.toFixed(3), 14)}${r.ratio.toFixed(2)}${r.command === FLOOR ? '  (disk only, see below)' : r.ratio > target ? '  (over 1.5x)' : ''}`,
    ),
  ]
  console.log(lines.join('\n'))
  console.log(
    `\n'${FLOOR}': no handler, the disk alone. cairn column: temp file + fsync + rename + fsync of` +
      ` the folder (a durable atomic write, what Cairn's create/str_replace/insert do); reference` +
      ` column: open + write + fsync (the reference's create). Its ratio is what durability alone` +
      ` costs; a write ratio near it is the disk, not the handler.`,
  )
  const seconds = (performance.now() - started) / 1000
  const load = os.loadavg()[0]!
  console.log(
    `\nmedian of ${ITERATIONS[100]} (100 files) / ${ITERATIONS[10_000]} (10,000 files) runs; ${seconds.toFixed(1)} s in all;` +
      ` load average ${load.toFixed(1)} on ${os.cpus().length} CPUs (fsync-bound rows vary with disk load)`,
  )
  if (QUICK) return
  const out = path.join(import.meta.dirname, 'results', 'memory.json')
  await fs.mkdir(path.dirname(out), { recursive: true })
  await fs.writeFile(
    out,
    JSON.stringify(
      {
        benchmark: 'memory',
        date: new Date().toISOString(),
        node: process.version,
        platform: process.platform,
        loadAverage: load,
        cpus: os.cpus().length,
        target,
        rows,
      },
      null,
      2,
    ) + '\n',
  )
  console.log(`results written to ${path.relative(process.cwd(), out)}`)
}

await main()
