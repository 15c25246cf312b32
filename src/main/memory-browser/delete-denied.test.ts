import { execFileSync } from 'node:child_process'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCore, type Core } from '../core'
import { memoryTestBed } from '../history/test-helpers'
import { nodeDisk, setDisk } from '../lib/disk'
import { asTheAccount, errnoError, hookDisk } from '../lib/disk-hooks'

// `memory:delete` of a folder Cairn may list but not enter (mode 644, after `chmod -R 644`):
// its refusal named a file inside it, which is not what the person must fix (review12-story,
// item 5). As root enters everything, Cairn looks like another account (uid 4242) and the disk
// seam refuses what the system refuses that account: any look at an entry inside the folder.

const bed = memoryTestBed({ memory: false })
let undoDisk: () => void = () => {}
let core: Core | null = null

afterEach(async () => {
  await core?.close()
  core = null
  undoDisk()
  undoDisk = () => {}
  vi.restoreAllMocks()
  await chmod(path.join(bed.dataDir, 'memories', 'notes'), 0o755).catch(() => {})
})

describe('deleting a folder Cairn may list but not enter', () => {
  it('names the folder itself, changing nothing', async () => {
    const notes = path.join(bed.dataDir, 'memories', 'notes')
    await mkdir(notes, { recursive: true })
    await writeFile(path.join(notes, 'inside.md'), 'inside\n')
    await mkdir(path.join(notes, 'sub'))
    await writeFile(path.join(notes, 'sub', 'deep.md'), 'deep\n')
    await writeFile(path.join(bed.dataDir, 'memories', 'a.md'), 'a\n')
    core = await createCore({ dataDir: bed.dataDir })
    execFileSync('chown', ['-R', '4242:4242', path.join(bed.dataDir, 'memories')])
    await chmod(notes, 0o644)
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        const target = String(call.args[0])
        // Inside the folder (by its path or through its handle), nothing can be looked at.
        const inside =
          target.includes('/notes/') || /\/proc\/self\/fd\/\d+\/(inside\.md|sub)$/.test(target)
        return inside ? errnoError(call, 'EACCES') : undefined
      }),
    )
    undoDisk = setDisk(hooked.disk)
    vi.spyOn(process, 'getuid').mockReturnValue(4242)
    const result = await core.dispatch('memory:delete', { path: '/memories/notes' })
    undoDisk()
    vi.restoreAllMocks()
    expect(result.ok).toBe(false)
    const message = result.ok ? '' : result.error.message
    expect(message).toContain('/memories/notes')
    expect(message).not.toContain('inside.md')
    expect(message).not.toContain(bed.dataDir)
    await chmod(notes, 0o755)
    expect(execFileSync('ls', [notes], { encoding: 'utf8' }).trim()).toBe('inside.md\nsub')
  })
})
