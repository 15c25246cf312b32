import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { IndexFile, writeIndex } from './index-file'
import { fileHistoryOf, queryLog, toolUseCommitsOf } from './queries'
import type { IndexEntry } from './side-index'

function entries(specs: ReadonlyArray<Partial<IndexEntry> & { files: string[] }>): IndexEntry[] {
  return specs.map((spec, i) => ({
    oid: String(i).padStart(40, '0'),
    parent: i === 0 ? null : String(i - 1).padStart(40, '0'),
    time: i * 1000,
    actor: 'claude',
    command: 'create',
    subject: `commit ${i}`,
    paths: spec.files,
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    ...spec,
  }))
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'cairn-queries-'))
afterAll(() => {
  log.close()
  rmSync(scratch, { recursive: true, force: true, maxRetries: 10 })
})

/** The entries as a real side index on disk. */
function indexOf(list: IndexEntry[]): IndexFile {
  const dir = path.join(scratch, 'index')
  writeIndex(dir, list)
  return IndexFile.open(dir)
}

const log = indexOf(
  entries([
    { files: ['/memories/a.md'], conversationId: 'c1' },
    { files: ['/memories/b.md'], actor: 'user' },
    { files: ['/memories/d/x.md'], conversationId: 'c1' },
    { files: ['/memories/a.md'], conversationId: 'c2' },
    { files: ['/memories/d/x.md', '/memories/d/y.md'], command: 'delete', paths: ['/memories/d'] },
  ]),
)

describe('the timeline', () => {
  it('pages newest first with the total count', () => {
    const page = queryLog(log, { offset: 1, limit: 2 })
    expect(page.total).toBe(5)
    expect(page.entries.map((e) => e.subject)).toEqual(['commit 3', 'commit 2'])
    expect(queryLog(log, { offset: 10, limit: 2 }).entries).toEqual([])
  })

  it('filters by path (files and folders), conversation and actor', () => {
    const subjects = (q: Parameters<typeof queryLog>[1]) =>
      queryLog(log, q).entries.map((e) => e.subject)
    expect(subjects({ offset: 0, limit: 50, path: '/memories/a.md' })).toEqual([
      'commit 3',
      'commit 0',
    ])
    expect(subjects({ offset: 0, limit: 50, path: '/memories/d' })).toEqual([
      'commit 4',
      'commit 2',
    ])
    expect(subjects({ offset: 0, limit: 50, conversationId: 'c1' })).toEqual([
      'commit 2',
      'commit 0',
    ])
    expect(subjects({ offset: 0, limit: 50, actor: 'user' })).toEqual(['commit 1'])
    expect(queryLog(log, { offset: 1, limit: 1, path: '/memories/a.md' })).toMatchObject({
      total: 2,
    })
  })

  it('does not leak index-only fields into summaries', () => {
    expect(queryLog(log, { offset: 0, limit: 1 }).entries[0]).not.toHaveProperty('files')
  })

  it('does not mistake a sibling with a longer name for a folder member', () => {
    expect(fileHistoryOf(log, '/memories/d/x')).toEqual([])
  })
})

describe("a call's commit, by its tool use id", () => {
  const dir = path.join(scratch, 'calls')
  writeIndex(
    dir,
    entries([
      { files: ['/memories/a.md'], conversationId: 'c1', toolUseId: 'toolu_a' },
      { files: ['/memories/b.md'], conversationId: 'c2', toolUseId: 'toolu_b' },
      { files: ['/memories/c.md'], actor: 'user' },
      { files: ['/memories/d.md'], conversationId: 'c1', toolUseId: 'toolu_d' },
    ]),
  )
  const calls = IndexFile.open(dir)
  afterAll(() => calls.close())

  it('finds the commits of the conversation made for those calls, and no other', () => {
    const found = toolUseCommitsOf(calls, 'c1', ['toolu_a', 'toolu_b', 'toolu_d', 'toolu_none'])
    expect([...found.keys()].sort()).toEqual(['toolu_a', 'toolu_d'])
    expect(found.get('toolu_a')).toMatchObject({ subject: 'commit 0', paths: ['/memories/a.md'] })
    expect(found.get('toolu_d')).toMatchObject({ subject: 'commit 3', conversationId: 'c1' })
    // toolu_b made a commit, in another conversation: not this conversation's call.
    expect(toolUseCommitsOf(calls, 'c2', ['toolu_b']).get('toolu_b')?.subject).toBe('commit 1')
    expect(toolUseCommitsOf(calls, 'c3', ['toolu_a']).size).toBe(0)
    expect(toolUseCommitsOf(calls, 'c1', []).size).toBe(0)
    // Dated before the calls were made: still found (the walk stops only after a long run).
    expect(toolUseCommitsOf(calls, 'c1', ['toolu_a'], 1e12).get('toolu_a')?.subject).toBe(
      'commit 0',
    )
  })
})
