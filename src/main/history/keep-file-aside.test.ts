import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { fsck, gitCli, tempDataDir, CLAUDE } from './test-helpers'

// A file too large to version is in no commit: Claude's `delete` of it, or a `create` over
// it, lost it for good ("Successfully deleted", "its previous content was replaced"), where a
// folder delete and a restore keep such a file aside. Now they keep it aside too, and say so.

let dataDir: string
let root: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

const BIG = 33 * 1024 * 1024

function writeBig(relative: string): void {
  const fd = fs.openSync(path.join(root, relative), 'w')
  fs.ftruncateSync(fd, BIG)
  fs.writeSync(fd, 'end', BIG - 3)
  fs.closeSync(fd)
}

function endOf(relative: string): string {
  const fd = fs.openSync(path.join(root, relative), 'r')
  const buffer = Buffer.alloc(3)
  fs.readSync(fd, buffer, 0, 3, BIG - 3)
  fs.closeSync(fd)
  return buffer.toString()
}

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  root = path.join(dataDir, 'memories')
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
  await memory.close()
  // Put there by the person: too large to version, so no commit holds it.
  writeBig('recording.log')
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

describe('a file history holds no copy of', () => {
  it('is kept aside by a file delete, which says so', async () => {
    const result = await memory.execute(
      { command: 'delete', path: '/memories/recording.log' },
      CLAUDE,
    )
    expect(result).toMatchObject({
      isError: false,
      content:
        'Successfully deleted /memories/recording.log. It was not in the history, which a restore could not bring back, so it was kept as /memories/recording (not in history).log.',
    })
    expect(fs.readdirSync(root).sort()).toEqual(['a.md', 'recording (not in history).log'])
    expect(fs.statSync(path.join(root, 'recording (not in history).log')).size).toBe(BIG)
    expect(endOf('recording (not in history).log')).toBe('end')
    // History holds neither name; the commit changed nothing it held.
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('a.md')
    fsck(dataDir)
  })

  it('is not kept aside a second time: deleting the kept file is refused', async () => {
    await memory.execute({ command: 'delete', path: '/memories/recording.log' }, CLAUDE)
    const result = await memory.execute(
      { command: 'delete', path: '/memories/recording (not in history).log' },
      CLAUDE,
    )
    expect(result.isError).toBe(true)
    expect(result.content).toBe(
      'Error: /memories/recording (not in history).log is not in the history, which a restore could not bring back, and was kept aside already; Cairn does not delete it. Nothing was changed.',
    )
    expect(fs.readdirSync(root).sort()).toEqual(['a.md', 'recording (not in history).log'])
  })

  it('is kept aside by a create over it, which says so', async () => {
    const result = await memory.execute(
      { command: 'create', path: '/memories/recording.log', file_text: 'short\n' },
      CLAUDE,
    )
    expect(result).toMatchObject({
      isError: false,
      content:
        'File created successfully at: /memories/recording.log. The file already existed and was not in the history, which a restore could not bring back, so its previous content was kept as /memories/recording (not in history).log.',
    })
    expect(fs.readFileSync(path.join(root, 'recording.log'), 'utf8')).toBe('short\n')
    expect(endOf('recording (not in history).log')).toBe('end')
    expect(gitCli(dataDir, 'show', 'main:recording.log')).toBe('short\n')
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      'a.md',
      'recording.log',
    ])
    fsck(dataDir)
  })

  it('numbers the name when a create goes over the kept file, never labels it twice', async () => {
    await memory.execute({ command: 'delete', path: '/memories/recording.log' }, CLAUDE)
    const result = await memory.execute(
      { command: 'create', path: '/memories/recording (not in history).log', file_text: 'short\n' },
      CLAUDE,
    )
    // It was kept as "recording (not in history) (not in history).log".
    expect(result).toMatchObject({
      isError: false,
      content:
        'File created successfully at: /memories/recording (not in history).log. The file already existed and was not in the history, which a restore could not bring back, so its previous content was kept as /memories/recording (not in history 2).log.',
    })
    expect(fs.readdirSync(root).sort()).toEqual([
      'a.md',
      'recording (not in history 2).log',
      'recording (not in history).log',
    ])
    expect(endOf('recording (not in history 2).log')).toBe('end')
    expect(fs.readFileSync(path.join(root, 'recording (not in history).log'), 'utf8')).toBe(
      'short\n',
    )
    fsck(dataDir)
  })

  it('still replaces a file history holds, as before', async () => {
    const result = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'b\n' },
      CLAUDE,
    )
    expect(result.content).toBe(
      'File created successfully at: /memories/a.md. The file already existed; its previous content was replaced.',
    )
    expect(fs.readdirSync(root).sort()).toEqual(['a.md', 'recording.log'])
  })
})

// A delete refused any file whose name carries a kept-aside label in any case when history held
// no copy of it, saying it "was kept aside already": so a person's own recording named
// `Trip (Not In History).log`, which Cairn never kept aside, could not be deleted on a disk
// where case counts (redges2 R5, stop 26). Cairn spells its labels in lower case: only such a
// name is refused; a person's is kept aside once, taking Cairn's spelling.
describe('a file a person named like a kept-aside file', () => {
  it.each(['Trip (Not In History).md', 'Trip (not in history).md', 'Trip (Unreadable 2).md'])(
    'is deleted like any other when history holds it (%s)',
    async (name) => {
      const created = await memory.execute(
        { command: 'create', path: `/memories/${name}`, file_text: 'Lisbon\n' },
        CLAUDE,
      )
      expect(created.commit).not.toBeNull()
      expect(gitCli(dataDir, 'show', `main:${name}`)).toBe('Lisbon\n')
      const result = await memory.execute({ command: 'delete', path: `/memories/${name}` }, CLAUDE)
      expect(result).toMatchObject({
        isError: false,
        content: `Successfully deleted /memories/${name}`,
      })
      expect(fs.readdirSync(root).sort()).toEqual(['a.md', 'recording.log'])
      expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('a.md')
      // The deleted version stays in history, as for any file.
      expect(gitCli(dataDir, 'show', `main~1:${name}`)).toBe('Lisbon\n')
    },
  )

  it("is kept aside once, in Cairn's spelling, when history holds no copy of it", async () => {
    writeBig('Trip (Not In History).log')
    const result = await memory.execute(
      { command: 'delete', path: '/memories/Trip (Not In History).log' },
      CLAUDE,
    )
    expect(result).toMatchObject({
      isError: false,
      content:
        'Successfully deleted /memories/Trip (Not In History).log. It was not in the history, which a restore could not bring back, so it was kept as /memories/Trip (not in history).log.',
    })
    expect(fs.readdirSync(root).sort()).toEqual([
      'Trip (not in history).log',
      'a.md',
      'recording.log',
    ])
    expect(endOf('Trip (not in history).log')).toBe('end')
    // Kept aside by Cairn now: deleting it again is refused, and nothing changes.
    const again = await memory.execute(
      { command: 'delete', path: '/memories/Trip (not in history).log' },
      CLAUDE,
    )
    expect(again).toMatchObject({
      isError: true,
      content:
        'Error: /memories/Trip (not in history).log is not in the history, which a restore could not bring back, and was kept aside already; Cairn does not delete it. Nothing was changed.',
    })
    expect(fs.readdirSync(root).sort()).toEqual([
      'Trip (not in history).log',
      'a.md',
      'recording.log',
    ])
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('a.md')
    fsck(dataDir)
  })
})

// The names a restore writes were checked exactly as spelt: a file kept aside as
// `notes (not in history).md` beside a restored `notes (Not In History).md` is one file on a
// case-blind disk (macOS, Windows), where the restore wrote over what it had just kept aside
// (review R6). Checked case-blind, the kept file takes the next number instead.
describe('a name a restore writes', () => {
  it('is not given to a file kept aside, in any case', async () => {
    const create = (name: string, text: string) =>
      memory.execute({ command: 'create', path: `/memories/${name}`, file_text: text }, CLAUDE)
    await create('notes.md', 'v1\n')
    await create('notes (Not In History).md', 'the old note\n')
    const target = memory.head()!
    await memory.execute({ command: 'delete', path: '/memories/notes (Not In History).md' }, CLAUDE)
    // Grown too large to version by the person since: history holds no copy of it.
    writeBig('notes.md')

    const result = await memory.restoreAll(target)
    expect(result.message).toContain('kept as /memories/notes (not in history 2).md')
    expect(fs.readdirSync(root).sort()).toEqual([
      'a.md',
      'notes (Not In History).md',
      'notes (not in history 2).md',
      'notes.md',
      'recording.log',
    ])
    expect(fs.readFileSync(path.join(root, 'notes (Not In History).md'), 'utf8')).toBe(
      'the old note\n',
    )
    expect(fs.readFileSync(path.join(root, 'notes.md'), 'utf8')).toBe('v1\n')
    expect(endOf('notes (not in history 2).md')).toBe('end')
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      'a.md',
      'notes (Not In History).md',
      'notes.md',
    ])
    fsck(dataDir)
  })
})
