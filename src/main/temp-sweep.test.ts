import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCore, type Core } from './core'
import { createRecordingLogger } from './lib/logger'

// A kill during a save of a conversation (or the settings, or the API key) left its whole
// text in a `.cairn-tmp-…` file for good: nothing outside memories/ and history.git ever
// removed them. A start, with the data folder's lock held, now does.

let cores: Core[] = []
let dir: string | undefined
afterEach(async () => {
  for (const core of cores) await core.close()
  cores = []
  if (dir) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
  dir = undefined
})

const open = async (dataDir: string): Promise<Core> => {
  const core = await createCore({ dataDir, logger: createRecordingLogger(), env: {} })
  cores.push(core)
  return core
}

describe("temp files of interrupted saves in Cairn's own folders", () => {
  it('are removed at start; nothing else is', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-sweep-'))
    const stray = [
      '.cairn-tmp-1b2c',
      'conversations/.cairn-tmp-3d4e',
      'conversations/.cairn-tmp-5f6a',
      'sync/.cairn-tmp-7b8c',
    ]
    for (const folder of ['conversations', 'sync']) fs.mkdirSync(path.join(dir, folder))
    for (const file of stray) fs.writeFileSync(path.join(dir, file), 'the whole conversation')
    // Kept: a folder of that name (not a save's), and a file of the person's.
    fs.mkdirSync(path.join(dir, 'conversations', '.cairn-tmp-folder'))
    fs.writeFileSync(path.join(dir, 'conversations', 'notes.txt'), 'mine')

    await open(dir)
    for (const file of stray) expect(fs.existsSync(path.join(dir, file))).toBe(false)
    expect(fs.readdirSync(path.join(dir, 'conversations')).sort()).toEqual([
      '.cairn-tmp-folder',
      'notes.txt',
    ])
  })

  it('are left alone by a start refused because another Cairn has the folder open', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-sweep-'))
    await open(dir)
    // Another instance's save in progress.
    const saving = path.join(dir, 'conversations', '.cairn-tmp-9d0e')
    fs.mkdirSync(path.dirname(saving), { recursive: true })
    fs.writeFileSync(saving, 'being written')
    await expect(open(dir)).rejects.toThrow()
    expect(fs.readFileSync(saving, 'utf8')).toBe('being written')
  })
})
