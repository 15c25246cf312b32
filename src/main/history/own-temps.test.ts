import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { CLAUDE, tempDataDir } from './test-helpers'

// The scan at open removed anything whose name began with `.cairn-tmp-`, folders whole: a
// person's own `.cairn-tmp-backup/` went at the next start (review hunt10 D7). Only the names
// Cairn gives its temp files (the prefix and a UUID) are leftovers.

let dataDir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

describe('temp names at open (D7)', () => {
  it("removes Cairn's own leftovers and keeps a person's entries that only look alike", async () => {
    let memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    await memory.close()
    const root = path.join(dataDir, 'memories')
    const mine = path.join(root, '.cairn-tmp-backup')
    fs.mkdirSync(mine)
    fs.writeFileSync(path.join(mine, 'important.md'), 'keep me\n')
    fs.writeFileSync(path.join(root, '.cairn-tmp-notes.md'), 'mine too\n')
    const leftFile = path.join(root, `.cairn-tmp-${randomUUID()}`)
    const leftFolder = path.join(root, `.cairn-tmp-${randomUUID()}`)
    // The shape restores gave their temp files before the UUID (12 hex digits).
    const olderLeft = path.join(root, '.cairn-tmp-0123456789ab')
    fs.writeFileSync(olderLeft, 'half a restore')
    fs.writeFileSync(leftFile, 'half a write')
    fs.mkdirSync(leftFolder)
    fs.writeFileSync(path.join(leftFolder, 'x.md'), 'half a delete\n')

    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await memory.close()
    expect(fs.readFileSync(path.join(mine, 'important.md'), 'utf8')).toBe('keep me\n')
    expect(fs.readFileSync(path.join(root, '.cairn-tmp-notes.md'), 'utf8')).toBe('mine too\n')
    expect(fs.existsSync(leftFile)).toBe(false)
    expect(fs.existsSync(leftFolder)).toBe(false)
    expect(fs.existsSync(olderLeft)).toBe(false)
  })
})
