import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { tempDataDir, userWrite } from './test-helpers'

let cleanup: () => Promise<void>
let memory: VersionedMemory
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  let dataDir: string
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, now })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

async function write(file: string, content: string): Promise<string> {
  const result = await userWrite(memory, file, content)
  if (!result.commit) throw new Error(`expected a commit for ${file}`)
  return result.commit.oid
}

async function restoreAll(oid: string): Promise<string> {
  const result = await memory.restoreAll(oid)
  if (!result.commit) throw new Error('expected a restore commit')
  return result.commit.oid
}

const name = (i: number) => `/memories/many/f${String(i).padStart(3, '0')}.md`

describe('showing a large commit', () => {
  it('lists the first 100 of 150 changes in path order, with content, and counts them all', async () => {
    const early = await write('/memories/keep.md', 'kept')
    for (let i = 0; i < 150; i++) await write(name(i), `file ${i}\n`)
    const restore = await restoreAll(early)

    const detail = await memory.show(restore)
    expect(detail.totalChanges).toBe(150)
    expect(detail.truncated).toBe(true)
    expect(detail.changes).toHaveLength(100)
    expect(detail.changes.map((change) => change.path)).toEqual(
      Array.from({ length: 100 }, (_, i) => name(i)),
    )
    for (const [i, change] of detail.changes.entries()) {
      expect(change).toMatchObject({ status: 'deleted', before: `file ${i}\n`, after: null })
      expect(change.omitted).toBeFalsy()
    }
  })

  it('reports a small commit as complete', async () => {
    const oid = await write('/memories/one.md', 'one')
    const detail = await memory.show(oid)
    expect(detail).toMatchObject({ totalChanges: 1, truncated: false })
    expect(detail.changes).toEqual([
      {
        path: '/memories/one.md',
        oldPath: null,
        status: 'added',
        before: null,
        after: 'one',
        binary: false,
      },
    ])
  })

  it('leaves out the text of files past the 2 MB budget; history:diff still has it', async () => {
    memory.setPolicy({ secretScanning: false })
    const early = await write('/memories/keep.md', 'kept')
    const big = (letter: string) => `${letter.repeat(99)}\n`.repeat(9_000) // 900,000 chars
    await write('/memories/a.md', big('a'))
    await write('/memories/b.md', big('b'))
    await write('/memories/c.md', big('c'))
    await write('/memories/d.md', 'small')
    const restore = await restoreAll(early)

    const detail = await memory.show(restore)
    expect(detail).toMatchObject({ totalChanges: 4, truncated: false })
    const [a, b, c, d] = detail.changes
    expect(a).toMatchObject({ path: '/memories/a.md', before: big('a') })
    expect(b).toMatchObject({ path: '/memories/b.md', before: big('b') })
    // c would take the total past 2,000,000 characters: sent without text, flagged.
    expect(c).toMatchObject({
      path: '/memories/c.md',
      status: 'deleted',
      before: null,
      after: null,
      binary: false,
      omitted: true,
    })
    // A later file that still fits keeps its text.
    expect(d).toMatchObject({ path: '/memories/d.md', before: 'small' })
    expect(d?.omitted).toBeFalsy()
    const sent = detail.changes.reduce(
      (sum, change) => sum + (change.before?.length ?? 0) + (change.after?.length ?? 0),
      0,
    )
    expect(sent).toBeLessThanOrEqual(2_000_000)

    const parent = detail.commit.parent
    if (!parent) throw new Error('a restore commit has a parent')
    const full = await memory.diff('/memories/c.md', parent, restore)
    expect(full).toMatchObject({ status: 'deleted', before: big('c'), after: null })
  })

  it('omits a single file larger than the whole budget', async () => {
    memory.setPolicy({ secretScanning: false })
    const before = `${'x'.repeat(99)}\n`.repeat(10_000) // 1,000,000 chars
    await write('/memories/huge.md', before)
    const after = `${'y'.repeat(99)}\n`.repeat(10_000) + 'tail'
    const oid = await write('/memories/huge.md', after)
    const detail = await memory.show(oid)
    expect(detail.changes).toEqual([
      {
        path: '/memories/huge.md',
        oldPath: null,
        status: 'modified',
        before: null,
        after: null,
        binary: false,
        omitted: true,
      },
    ])
  })
})
