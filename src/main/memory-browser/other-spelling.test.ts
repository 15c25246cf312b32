/**
 * A file the Memory tab lists under a name in another Unicode spelling (a decomposed `café.md`
 * put there outside Cairn): the person renames it (into memory, keeping its name) or deletes
 * it there, through the one queue, with a commit; what they are told of a name like it speaks
 * to them, never Claude's "ask the person". Claude's paths are made NFC as ever.
 */
import { link, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { ChangeResult, MemoryEntry } from '../../shared/types'
import { createCore, type Core } from '../core'
import { fsck, gitCli, tempDataDir } from '../history/test-helpers'

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

/** The names git's last commit holds, as git spells them. */
const committed = () =>
  gitCli(dataDir, '-c', 'core.quotePath=false', 'ls-tree', '-r', '--name-only', 'main')
    .split('\n')
    .filter(Boolean)
    .sort()

async function listed(): Promise<string[]> {
  const tree = await core.dispatch('memory:tree', undefined)
  if (!tree.ok) throw new Error(tree.error.message)
  return (tree.value as ReadonlyArray<MemoryEntry>).map((entry) => entry.path)
}

it('renames the file the tab lists under another spelling into memory, with one commit by the person', async () => {
  expect(await listed()).toContain(`/memories/${NFD}`)
  // Renamed to its own name, retyped (composed): it becomes a file memory paths can name.
  const result = await core.dispatch('memory:rename', {
    from: `/memories/${NFD}`,
    to: `/memories/${NFC}`,
  })
  if (!result.ok) throw new Error(result.error.message)
  expect((result.value as ChangeResult).commit).not.toBeNull()
  expect((await names()).sort()).toEqual([NFC, 'notes.md'])
  expect(committed()).toEqual([NFC, 'notes.md'])
  expect(gitCli(dataDir, 'log', '-1', '--format=%an%n%B', 'main')).toMatch(/^You\n/)
  expect(await readFile(path.join(dataDir, 'memories', NFC), 'utf8')).toBe('put there from a Mac\n')
  fsck(dataDir)
  // Now a memory path names it, Claude's way too.
  const read = await core.dispatch('memory:read', { path: `/memories/${NFC}` })
  expect(read.ok).toBe(true)
})

it('renames it to another name, and deletes one, each with one commit', async () => {
  const renamed = await core.dispatch('memory:rename', {
    from: `/memories/${NFD}`,
    to: '/memories/coffee.md',
  })
  if (!renamed.ok) throw new Error(renamed.error.message)
  expect(committed()).toEqual(['coffee.md', 'notes.md'])

  const other = 'the\u0301 vert.md'
  await writeFile(path.join(dataDir, 'memories', other), 'green\n')
  const heads = gitCli(dataDir, 'rev-list', '--count', 'main').trim()
  const deleted = await core.dispatch('memory:delete', { path: `/memories/${other}` })
  if (!deleted.ok) throw new Error(deleted.error.message)
  expect((deleted.value as ChangeResult).commit).not.toBeNull()
  expect((await names()).sort()).toEqual(['coffee.md', 'notes.md'])
  expect(committed()).toEqual(['coffee.md', 'notes.md'])
  // The file put there outside Cairn is committed first (history keeps it), then the delete.
  expect(Number(gitCli(dataDir, 'rev-list', '--count', 'main').trim())).toBe(Number(heads) + 2)
  expect(gitCli(dataDir, '-c', 'core.quotePath=false', 'show', `main~1:${other}`)).toBe('green\n')
  fsck(dataDir)
})

it('still refuses a memory path that misses only because of the spelling: only the tab’s own names are taken as spelled', async () => {
  // The person's composed name of the decomposed file names nothing: refused in their words.
  const result = await core.dispatch('memory:delete', { path: `/memories/${NFC}` })
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.error.code).toBe('not-found')
  // The step said is the one the tab now offers itself (it once sent the person outside Cairn).
  expect(result.error.message).toContain('Rename it here in the Memory tab, keeping its name')
  expect(result.error.message).not.toMatch(/outside Cairn, in your file manager/)
  expect(result.error.message).not.toMatch(/ask the person/i)
  // A bad name stays refused, spelled as it is or not.
  const hidden = await core.dispatch('memory:delete', { path: '/memories/.cafe\u0301' })
  expect(hidden).toMatchObject({ ok: false, error: { code: 'invalid-path' } })
  expect((await names()).sort()).toEqual([NFD, 'notes.md'].sort())
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
    'Rename it here in the Memory tab, keeping its name, or use another name.',
  )
  expect(result.error.message).not.toMatch(/outside Cairn, in your file manager/)
  expect(result.error.message).not.toMatch(/ask the person/i)
  expect(await names()).toContain('notes.md')
})

it('refuses renaming the decomposed name onto a composed one that is its hard link: nothing is said moved that did not', async () => {
  // Two names of one file (a sync tool or `ln` made them): the composed one is its own entry,
  // not the decomposed one found again by a disk that ignores the spelling. rename(2) between
  // links of one file does nothing, and the tab said "Renamed", with no commit.
  await link(path.join(dataDir, 'memories', NFD), path.join(dataDir, 'memories', NFC))
  const before = gitCli(dataDir, 'rev-parse', 'main').trim()
  const result = await core.dispatch('memory:rename', {
    from: `/memories/${NFD}`,
    to: `/memories/${NFC}`,
  })
  expect(result).toMatchObject({ ok: false, error: { code: 'exists' } })
  expect((await names()).sort()).toEqual([NFD, NFC, 'notes.md'].sort())
  // Only the sweep of the names the rename touched may commit (the link made outside Cairn).
  expect(gitCli(dataDir, 'log', '--format=%an', `${before}..main`)).not.toMatch(/^You$/m)
  fsck(dataDir)
})
