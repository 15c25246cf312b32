/**
 * `refs/heads/main` is written in place (docs/durability.md): a read racing that write may see
 * part of the old value and part of the new one, still 40 hex digits and a newline, naming no
 * commit. The push runs outside the serial queue, where a commit may write the ref meanwhile:
 * it read the ref file, and a torn read failed the sync. The disk seam hands out one such
 * torn read; the sync must push the history's `main` as if nothing happened.
 */
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { expectSound, useSyncServer } from './test-support'

const sync = useSyncServer()

const isMainRef = (file: unknown) =>
  typeof file === 'string' && file.replace(/\\/g, '/').endsWith('/refs/heads/main')

/**
 * From now on, the first read of `refs/heads/main` (whole, sync or async) comes back torn:
 * the first half of `older`'s id, then the rest of what the file holds.
 */
function tearOneRead(older: string): { torn(): number; undo(): void } {
  let torn = 0
  const tear = (bytes: Buffer): Buffer => {
    if (torn > 0) return bytes
    torn++
    return Buffer.from(older.slice(0, 20) + bytes.toString('utf8').slice(20))
  }
  const undo = setDisk({
    ...nodeDisk,
    readFileSync(file) {
      const bytes = nodeDisk.readFileSync(file)
      return isMainRef(file) ? tear(bytes) : bytes
    },
    promises: {
      ...nodeDisk.promises,
      async readFile(file) {
        const bytes = await nodeDisk.promises.readFile(file)
        return isMainRef(file) ? tear(bytes) : bytes
      },
    },
  })
  return { torn: () => torn, undo }
}

describe('a torn read of the in-place ref during a sync', () => {
  it('pushes the history’s main: the sync neither fails nor sends a commit that does not exist', async () => {
    const repo = sync.newRepo('torn')
    const desktop = await sync.machine('desktop')
    await desktop.write('a.md', 'alpha\n')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    const older = desktop.git('rev-parse', 'main').trim()
    await desktop.write('b.md', 'beta\n')
    const head = desktop.git('rev-parse', 'main').trim()
    expect(head).not.toBe(older)

    const tearing = tearOneRead(older)
    let status
    try {
      status = await desktop.sync()
    } finally {
      tearing.undo()
    }
    expect(status.error).toBeUndefined()
    expect(status.state).toBe('idle')
    expect(status.unsynced).toBe(0)
    expect(sync.server.git(repo, 'rev-parse', 'main').trim()).toBe(head)
    expect(desktop.git('rev-parse', 'main').trim()).toBe(head)
    await expectSound(sync.server, repo, [desktop])
  })
})
