// Scratch: how much of a mutating command's time is fsync (not committed).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openVersionedMemory } from '../src/main/history'
import { nodeDisk, setDisk } from '../src/main/lib/disk'
import { median } from './median'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsync-share-'))
const memory = await openVersionedMemory({ dataDir: dir, watch: false })
for (let i = 0; i < 200; i++) {
  await memory.execute({ command: 'create', path: `/memories/a${i % 8}/t${i % 5}/n${i}.md`, file_text: `revision 0 of ${i}\n` })
}
let rev = 0
let fsyncs = 0
let fsyncMs = 0
const timed = { ...nodeDisk, fsync: async (fd: number) => { const t = performance.now(); await nodeDisk.fsync(fd); fsyncMs += performance.now() - t; fsyncs++ } }
const none = { ...nodeDisk, fsync: async () => {} }
async function one(i: number) {
  const n = (i * 37) % 200
  const t = performance.now()
  const out = await memory.execute({ command: 'str_replace', path: `/memories/a${n % 8}/t${n % 5}/n${n}.md`, old_str: `revision ${rev}`, new_str: `revision ${rev + 1}` })
  if (!out.commit) throw new Error(JSON.stringify(out.content))
  return performance.now() - t
}
for (const [name, d] of [['with fsync', timed], ['no fsync', none], ['with fsync again', timed]] as const) {
  const restore = setDisk(d)
  const times: number[] = []
  fsyncs = 0; fsyncMs = 0
  for (let i = 0; i < 40; i++) {
    // each file gets its own revision counter; use a fresh rev per round of 200
    times.push(await one(i + rev * 200))
  }
  rev++
  restore()
  console.log(name, 'median', median(times).toFixed(2), 'ms', 'fsyncs/cmd', (fsyncs / 40).toFixed(1), 'fsync ms/cmd (sum, overlapping)', (fsyncMs / 40).toFixed(2))
}
await memory.close()
fs.rmSync(dir, { recursive: true })
