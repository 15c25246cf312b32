import { readdirSync } from 'node:fs'
import { mkdir, open as openFile, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { fsck, memoryTestBed, CLAUDE } from '../history/test-helpers'
import { nodeDisk, setDisk, type Disk } from '../lib/disk'
import type { DomainHandlers } from '../lib/handlers'
import { memoryBrowserHandlers } from './index'

// Review hunt10-app D1: a delete, rename or restore that kept aside a file History holds no
// copy of answered "Nothing changed." (or a bare "Deleted …"), and the window promised
// History could bring the file back. The result now names what was kept, and where.

const bed = memoryTestBed()
let handlers: DomainHandlers<'memory'>
beforeEach(() => {
  handlers = memoryBrowserHandlers(bed.memory)
})

const BIG = 33 * 1024 * 1024

/** A sparse file over the 32 MB History versions (instant, takes no disk space). */
async function big(relative: string): Promise<void> {
  const file = path.join(bed.dataDir, 'memories', relative)
  await mkdir(path.dirname(file), { recursive: true })
  const handle = await openFile(file, 'w')
  await handle.truncate(BIG)
  await handle.close()
}

const folder = (relative = '') => readdir(path.join(bed.dataDir, 'memories', relative))

describe('changes that keep a file aside say so', () => {
  it('marks in the tree the files History keeps no copy of', async () => {
    await handlers['memory:write']({ path: '/memories/small.md', content: 'hi' })
    await big('logs/big.log')
    const tree = await handlers['memory:tree'](undefined)
    expect(tree.find((entry) => entry.path === '/memories/logs/big.log')).toMatchObject({
      notInHistory: 'too-large',
      keptAsideAs: 'big (not in history).log',
    })
    expect(tree.find((entry) => entry.path === '/memories/logs')?.keptAsideAs).toBe(
      'logs (not in history)',
    )
    const small = tree.find((entry) => entry.path === '/memories/small.md')
    expect(small?.notInHistory).toBeUndefined()
    expect(small?.keptAsideAs).toBeUndefined()
  })

  // Stop 28: the window said "too large to version" of a name History cannot track, and foretold
  // the kept name by a rule of its own, which knew neither a name already taken nor a disk that
  // ignores case (where the file's own name in other letters is taken).
  it('says why History keeps no copy of each file, and the name a delete keeps it as', async () => {
    await big('big.log')
    await writeFile(path.join(bed.dataDir, 'memories', 'big (not in history).log'), 'earlier\n')
    await writeFile(path.join(bed.dataDir, 'memories', 'tab\tname.md'), 'a tab\n')
    const tree = await handlers['memory:tree'](undefined)
    const at = (name: string) => tree.find((entry) => entry.path === `/memories/${name}`)
    expect(at('tab\tname.md')).toMatchObject({
      notInHistory: 'name-not-allowed',
      keptAsideAs: 'tab\tname (not in history).md',
    })
    // The first name is taken: the core numbers it, and the listing says so.
    expect(at('big.log')).toMatchObject({
      notInHistory: 'too-large',
      keptAsideAs: 'big (not in history 2).log',
    })
    const result = await handlers['memory:delete']({ path: '/memories/big.log' })
    expect(result.keptAside?.[0]?.keptAs).toBe('/memories/big (not in history 2).log')
  })

  it.each([
    ['a disk that keeps case', false, 'Trip (not in history).log'],
    ['a disk that ignores case', true, 'Trip (not in history 2).log'],
  ])(
    'on %s, names where a delete keeps a file whose own name carries the label',
    async (_disk, ignoresCase, keptAs) => {
      await big('Trip (Not In History).log')
      const undo = ignoresCase ? setDisk(caseBlind()) : () => undefined
      try {
        const tree = await handlers['memory:tree'](undefined)
        const entry = tree.find((e) => e.path === '/memories/Trip (Not In History).log')
        expect(entry?.keptAsideAs).toBe(keptAs)
        const result = await handlers['memory:delete']({
          path: '/memories/Trip (Not In History).log',
        })
        expect(result.keptAside?.[0]?.keptAs).toBe(`/memories/${keptAs}`)
      } finally {
        undo()
      }
      expect(await folder()).toEqual([keptAs])
    },
  )

  it('a file delete names the kept file instead of "Nothing changed."', async () => {
    await big('big.log')
    const result = await handlers['memory:delete']({ path: '/memories/big.log' })
    expect(result.commit).toBeNull()
    expect(result.keptAside).toEqual([
      {
        path: '/memories/big.log',
        keptAs: '/memories/big (not in history).log',
        reason: 'not-in-history',
      },
    ])
    expect(result.message).toBe(
      'History has no copy of /memories/big.log, so instead of being deleted it was kept as /memories/big (not in history).log.',
    )
    expect(await folder()).toEqual(['big (not in history).log'])
    // The notice follows the file: it no longer names a path that holds nothing.
    expect(bed.memory.notices().map((notice) => notice.path)).toEqual([
      '/memories/big (not in history).log',
    ])
  })

  it('a folder delete names the folder its unversioned files were kept in', async () => {
    await handlers['memory:write']({ path: '/memories/logs/note.md', content: 'note' })
    await big('logs/big.log')
    const result = await handlers['memory:delete']({ path: '/memories/logs' })
    expect(result.commit).not.toBeNull()
    expect(result.keptAside).toEqual([
      { path: '/memories/logs', keptAs: '/memories/logs (not in history)', reason: 'folder' },
    ])
    expect(result.message).toMatch(/kept in \/memories\/logs \(not in history\)\.$/)
    expect(await folder('logs (not in history)')).toEqual(['big.log'])
    expect(bed.memory.notices().map((notice) => notice.path)).toEqual([
      '/memories/logs (not in history)/big.log',
    ])
    fsck(bed.dataDir)
  })

  it('a rename History cannot record says it happened, and that it is not in History', async () => {
    await big('big.log')
    const result = await handlers['memory:rename']({
      from: '/memories/big.log',
      to: '/memories/renamed.log',
    })
    expect(result.commit).toBeNull()
    expect(result.message).toBe(
      'Renamed /memories/big.log to /memories/renamed.log. History keeps no copy of it, so the change is not in History and cannot be undone.',
    )
    expect(await folder()).toEqual(['renamed.log'])
    expect(bed.memory.notices().map((notice) => notice.path)).toEqual(['/memories/renamed.log'])
  })

  it('a restore over such a file returns where it was kept', async () => {
    const first = await bed.memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'old' },
      CLAUDE,
    )
    await big('a.md')
    const result = await bed.memory.restoreFile('/memories/a.md', first.commit!.oid)
    expect(result.keptAside).toEqual([
      {
        path: '/memories/a.md',
        keptAs: '/memories/a (not in history).md',
        reason: 'not-in-history',
      },
    ])
    expect(result.message).toContain('kept as /memories/a (not in history).md')
    expect(bed.memory.notices().map((notice) => notice.path)).toEqual([
      '/memories/a (not in history).md',
    ])
    expect((await folder()).sort()).toEqual(['a (not in history).md', 'a.md'])
    fsck(bed.dataDir)
  })

  it('a plain delete carries no kept entries', async () => {
    await handlers['memory:write']({ path: '/memories/a.md', content: 'a' })
    const result = await handlers['memory:delete']({ path: '/memories/a.md' })
    expect(result.commit).not.toBeNull()
    expect(result.keptAside).toBeUndefined()
    expect(result.message).toBe('Deleted /memories/a.md.')
  })
})

/**
 * This disk as one that ignores case (macOS's, Windows') would answer `lstat`: a name not there
 * finds an entry whose name differs from it only in case. (Linux here offers no such file
 * system: tmpfs and ext4 lack the kernel's Unicode tables.)
 */
function caseBlind(): Disk {
  const blind = Object.create(nodeDisk) as Disk
  blind.lstatIfThere = (file) => {
    const found = nodeDisk.lstatIfThere(file)
    if (found) return found
    const dir = path.dirname(file)
    const name = path.basename(file).toLowerCase()
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return undefined
    }
    const same = names.find((other) => other.toLowerCase() === name)
    return same === undefined ? undefined : nodeDisk.lstatIfThere(path.join(dir, same))
  }
  return blind
}
