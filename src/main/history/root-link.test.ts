import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { createMemoryTool } from '../memory'
import { openVersionedMemory } from './index'
import { tempDataDir } from './test-helpers'

// A person who moved `memories` to a synced folder and linked it back was told "a file is in
// the way of a folder on that path": it is a link, and the words now say so and what to do.

let dataDir: string
let cleanup: () => Promise<void>
let real: string
let link: string

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  real = path.join(dataDir, 'synced-memories')
  fs.mkdirSync(real)
  fs.writeFileSync(path.join(real, 'a.md'), 'a\n')
  link = path.join(dataDir, 'memories')
  fs.symlinkSync(real, link)
})
afterEach(async () => {
  await cleanup()
})

const WORDS =
  'the memory folder is a symbolic link, and Cairn never follows links: put the real folder in its place'

describe('a memory folder that is a symbolic link', () => {
  it('is refused at open with words that say so, and left as it was', async () => {
    await expect(
      openVersionedMemory({
        dataDir,
        watch: false,
        maintenance: false,
        logger: createRecordingLogger(),
      }),
    ).rejects.toThrow(`Cairn could not open your memory history because ${WORDS}.`)
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(fs.readdirSync(real)).toEqual(['a.md'])
  })

  it('is refused by the Memory tool on its own with the same words', async () => {
    const tool = createMemoryTool({ root: link, logger: createRecordingLogger() })
    const result = await tool.execute({ command: 'view', path: '/memories' })
    expect(result.isError).toBe(true)
    expect(result.content).toBe(
      `Error: The memory command failed because ${WORDS}. Nothing was changed.`,
    )
    expect(String(result.content)).not.toContain(dataDir)
  })
})
