/**
 * "Memory at this reply" lists every file of an old commit with its size. It used to read each
 * version whole to measure it; sizes now come from the object headers (a loose file's first
 * bytes, a pack entry's header), each version checked (a packed one's records against their
 * CRC-32s, a loose one read whole). This measures the ways over the same 200-file memory, loose
 * and then packed (versions stored as deltas), against `git ls-tree -r -l` in the same run.
 *
 *   npx tsx bench/snapshot-sizes.bench.ts
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openVersionedMemory } from '../src/main/history'
import { createObjectStore } from '../src/main/history/object-store'
import { median } from './median'

const FILES = 200
const VERSIONS = 3
const BYTES = 50_000
const SAMPLES = 7

const round = (value: number) => Math.round(value * 100) / 100

function text(seed: number, version: number): string {
  const lines: string[] = []
  let length = 0
  for (let i = 0; length < BYTES; i++) {
    const line =
      i % 50 === version ? `file ${seed}, version ${version}` : `line ${i} of note ${seed}`
    lines.push(line)
    length += line.length + 1
  }
  return `${lines.join('\n')}\n`
}

// The median of `run` over fresh stores: no object is in a cache from an earlier sample.
function timed(run: (store: ReturnType<typeof createObjectStore>) => void, gitdir: string): number {
  const times: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const store = createObjectStore(gitdir)
    try {
      const start = performance.now()
      run(store)
      times.push(performance.now() - start)
    } finally {
      store.close()
    }
  }
  return median(times)
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-bench-sizes-'))
  const gitdir = path.join(dataDir, 'history.git')
  const load = os.loadavg().map(round)
  console.log(
    `snapshot sizes: ${FILES} files of ~${BYTES / 1000} kB, ${VERSIONS} versions each (load ${load.join(' ')})`,
  )
  try {
    const memory = await openVersionedMemory({ dataDir, watch: false })
    const origin = { actor: 'claude', conversationId: null, toolUseId: null } as const
    for (let version = 0; version < VERSIONS; version++) {
      for (let file = 0; file < FILES; file++) {
        await memory.execute(
          {
            command: 'create',
            path: `/memories/notes/n${file}.md`,
            file_text: text(file, version),
          },
          origin as never,
        )
      }
    }
    // The reply's memory: the middle of the history (an old version of every file).
    const at = (await memory.log({ offset: FILES, limit: 1 })).entries[0]!.oid
    await memory.close()
    const blobs = spawnSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', at], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')
      .map((line) => line.split(/\s+/)[2]!)
    for (const stage of ['loose', 'packed'] as const) {
      if (stage === 'packed') {
        const again = await openVersionedMemory({ dataDir, watch: false })
        await again.maintain()
        await again.close()
      }
      let total = 0
      const whole = timed((store) => {
        for (const oid of blobs) total += store.db.read(oid).content.byteLength
      }, gitdir)
      const header = timed((store) => {
        for (const oid of blobs) total -= store.blobSize(oid)
      }, gitdir)
      // What the listing does now: headers, and each version checked (CRC-32s when packed).
      let checkedTotal = 0
      const checked = timed((store) => {
        for (const size of store.checkedBlobSizes(blobs).values()) checkedTotal += size ?? NaN
      }, gitdir)
      const git = median(
        Array.from({ length: SAMPLES }, () => {
          const start = performance.now()
          spawnSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', '-l', at], { encoding: 'utf8' })
          return performance.now() - start
        }),
      )
      // The whole listing, as the Memory tab asks for it, in a fresh session (no size cache).
      const session = await openVersionedMemory({ dataDir, watch: false })
      const start = performance.now()
      const listed = await session.listAt(at)
      const listing = performance.now() - start
      // Again in that session: sizes remembered, the rest (trees, times) as before.
      const second = performance.now()
      await session.listAt(at)
      const again = performance.now() - second
      await session.close()
      const checkedEach = checkedTotal / SAMPLES
      if (
        total !== 0 ||
        checkedEach !==
          listed.reduce((sum, entry) => sum + (entry.kind === 'file' ? entry.size : 0), 0) ||
        listed.filter((entry) => entry.kind === 'file').length !== FILES
      ) {
        throw new Error('the two ways disagree')
      }
      console.log(
        `  ${stage}: sizes read whole ${round(whole)} ms, from headers ${round(header)} ms (${round(whole / header)}x), from headers with each version checked ${round(checked)} ms (${round(whole / checked)}x); git ls-tree -r -l ${round(git)} ms; listAt in a fresh session ${round(listing)} ms (again, sizes known: ${round(again)} ms)`,
      )
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main()
