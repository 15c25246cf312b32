// review13-tool R2: outside changes larger than the near-limit margin, with a realistic limit,
// must still be counted before a growing write (the watcher saw them: they are saved first).
import { writeFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, tempDataDir } from './test-helpers'
let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({
    dataDir,
    limits: { maxFiles: 1000, maxTotalBytes: 20 * 1024 * 1024 },
  })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})
const outside = (name: string, text: string) =>
  writeFileSync(path.join(dataDir, 'memories', name), text)
it('maxFiles 1000: 995 files dropped in outside, then a create', async () => {
  for (let i = 0; i < 5; i++)
    expect(
      (
        await memory.execute(
          { command: 'create', path: `/memories/f${i}.md`, file_text: 'x' },
          CLAUDE,
        )
      ).isError,
    ).toBe(false)
  for (let i = 0; i < 995; i++) outside(`o${i}.md`, 'y')
  const r = await memory.execute(
    { command: 'create', path: '/memories/new.md', file_text: 'z' },
    CLAUDE,
  )
  console.log(
    'files now',
    readdirSync(path.join(dataDir, 'memories')).length,
    JSON.stringify(r.content).slice(0, 200),
  )
  expect(r.isError).toBe(true)
})
it('maxTotalBytes 20 MiB: 19.9 MiB dropped in outside, then a 500 KB create', async () => {
  expect(
    (await memory.execute({ command: 'create', path: `/memories/f.md`, file_text: 'x' }, CLAUDE))
      .isError,
  ).toBe(false)
  for (let i = 0; i < 20; i++) outside(`big${i}.md`, 'b'.repeat(1_040_000))
  const r = await memory.execute(
    { command: 'create', path: '/memories/new.md', file_text: 'z'.repeat(500_000) },
    CLAUDE,
  )
  console.log(JSON.stringify(r.content).slice(0, 200))
  expect(r.isError).toBe(true)
})
