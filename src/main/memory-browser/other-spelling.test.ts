/**
 * A file the Memory tab lists under a name in another Unicode spelling (a decomposed `café.md`
 * put there outside Cairn): what the person is told when they rename or delete it, or name
 * another file like it, speaks to them, never Claude's "ask the person". Nothing changes.
 */
import { readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { MemoryEntry } from '../../shared/types'
import { createCore, type Core } from '../core'
import { tempDataDir } from '../history/test-helpers'

const NFD = 'cafe\u0301.md'
const NFC = NFD.normalize('NFC')

let dataDir: string
let cleanup: () => Promise<void>
let core: Core

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  core = await createCore({ dataDir })
  await writeFile(path.join(dataDir, 'memories', NFD), 'put there from a Mac\n')
  const saved = await core.dispatch('memory:write', { path: '/memories/notes.md', content: 'x\n' })
  expect(saved.ok).toBe(true)
})
afterEach(async () => {
  await core.close()
  await cleanup()
})

const names = () => readdir(path.join(dataDir, 'memories'))

it('refuses in the person’s words to rename or delete the file the tab lists, changing nothing', async () => {
  const tree = await core.dispatch('memory:tree', undefined)
  if (!tree.ok) throw new Error(tree.error.message)
  const listed = (tree.value as ReadonlyArray<MemoryEntry>).map((entry) => entry.path)
  expect(listed).toContain(`/memories/${NFD}`)
  const before = (await names()).sort()
  for (const [channel, payload] of [
    ['memory:delete', { path: `/memories/${NFD}` }],
    ['memory:rename', { from: `/memories/${NFD}`, to: '/memories/cafe.md' }],
  ] as const) {
    const result = await core.dispatch(channel, payload)
    expect(result.ok).toBe(false)
    if (result.ok) continue
    expect(result.error.code).toBe('invalid-path')
    expect(result.error.message).toContain('Rename it outside Cairn, in your file manager')
    expect(result.error.message).not.toMatch(/ask the person|Claude/i)
    expect(result.error.message).toContain('Nothing was changed.')
  }
  expect((await names()).sort()).toEqual(before)
})

it('says a look-alike name is taken in the person’s words, not Claude’s', async () => {
  const result = await core.dispatch('memory:rename', {
    from: '/memories/notes.md',
    to: `/memories/${NFC}`,
  })
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.error.code).toBe('conflict')
  expect(result.error.message).toContain(
    'Rename it outside Cairn, in your file manager, retyping its name, or use another name.',
  )
  expect(result.error.message).not.toMatch(/ask the person/i)
  expect(await names()).toContain('notes.md')
})
