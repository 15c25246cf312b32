import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { openVersionedMemory, type VersionedMemory } from './index'
import { CLAUDE, fsck, headFiles, tempDataDir } from './test-helpers'

// notices27: a read-only file system's refusal always said "the memory folder is read-only",
// also where the read-only thing was the data folder (the history, its side index, the memory
// folder made again there). Each now names the place it was met in. As the other disk tests, a
// fault is injected at the disk seam (EROFS), on writes only, as a read-only mount refuses.

let dataDir: string
let cleanup: () => Promise<void>
let undo: () => void = () => {}

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  const memory = await openVersionedMemory({ dataDir, watch: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'alpha\n' }, CLAUDE)
  await memory.close()
})
afterEach(async () => {
  undo()
  undo = () => {}
  await cleanup()
})

const WRITES = fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT

/** From now on, a write-open or a `mkdir` of a path `picked` says is refused with EROFS. */
function readOnly(picked: (target: string) => boolean): void {
  undo = setDisk(
    hookDisk(nodeDisk, (call) => {
      const target = String(call.args[0])
      if (call.name === 'mkdirSync' && picked(target)) return errnoError(call, 'EROFS')
      if (call.name !== 'openSync' || (Number(call.args[1] ?? 0) & WRITES) === 0) return undefined
      return picked(target) ? errnoError(call, 'EROFS') : undefined
    }).disk,
  )
}

async function refusal(work: () => Promise<unknown>): Promise<CairnError> {
  const error = await work().then(
    () => new Error('it did not fail'),
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(CairnError)
  expect((error as CairnError).code).toBe('read-only')
  expect((error as CairnError).message).not.toContain(dataDir)
  return error as CairnError
}

describe('a read-only file system (notices27)', () => {
  it('names the data folder when the history cannot be written at open', async () => {
    // Changed while Cairn was closed: the open has a recovery commit to write in the history.
    fs.writeFileSync(path.join(dataDir, 'memories', 'b.md'), 'beta\n')
    const history = path.join(dataDir, 'history.git')
    readOnly((target) => target.startsWith(`${history}${path.sep}`))
    const error = await refusal(() => openVersionedMemory({ dataDir, watch: false }))
    expect(error.message).toBe(
      "Cairn could not open your memory history because Cairn's data folder is read-only. Nothing was changed; fix the problem and open Cairn again.",
    )
    undo()
    expect([...headFiles(dataDir).keys()]).toEqual(['a.md'])
    fsck(dataDir)
  })

  it('names the data folder when the memory folder cannot be made again in it', async () => {
    fs.rmSync(path.join(dataDir, 'memories'), { recursive: true })
    const memories = path.join(dataDir, 'memories')
    readOnly((target) => target === memories)
    const error = await refusal(() => openVersionedMemory({ dataDir, watch: false }))
    expect(error.message).toMatch(/because Cairn's data folder is read-only\./)
    expect(error.message).not.toMatch(/memory folder is read-only/)
  })

  it('names the memory folder when a file in it cannot be written', async () => {
    const memory: VersionedMemory = await openVersionedMemory({ dataDir, watch: false })
    try {
      const first = memory.head()!
      await memory.execute(
        { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'beta' },
        CLAUDE,
      )
      // Every write-open but the history's: the memory folder is what is read-only.
      const history = path.join(dataDir, 'history.git')
      readOnly((target) => !target.startsWith(`${history}${path.sep}`))
      const created = await memory.execute(
        { command: 'create', path: '/memories/new.md', file_text: 'n\n' },
        CLAUDE,
      )
      expect(created.isError).toBe(true)
      expect(created.content).toMatch(
        /because the memory folder is read-only\. Nothing was changed\./,
      )
      const restored = await refusal(() => memory.restoreFile('/memories/a.md', first))
      expect(restored.message).toMatch(/: the memory folder is read-only\. /)
    } finally {
      undo()
      await memory.close()
    }
    expect(fs.readFileSync(path.join(dataDir, 'memories', 'a.md'), 'utf8')).toBe('beta\n')
    fsck(dataDir)
  })
})
