import { describe, expect, it } from 'vitest'
import type { CommitDetail, CommitSummary, FileChange } from '../../../../shared/types'
import { ApiError } from '../../lib/api'
import {
  loadFailure,
  loadOmittedChange,
  truncationNote,
  type HistoryReader,
} from './omitted-change'

const commit: CommitSummary = {
  oid: 'c'.repeat(40),
  parent: 'p'.repeat(40),
  time: 0,
  actor: 'user',
  command: 'restore-all',
  subject: 'restore all memories',
  paths: [],
  conversationId: null,
  toolUseId: null,
  overwrite: false,
  restoredFrom: null,
}

const omitted = (over: Partial<FileChange>): FileChange => ({
  path: '/memories/a.md',
  oldPath: null,
  status: 'modified',
  before: null,
  after: null,
  binary: false,
  omitted: true,
  ...over,
})

/** A reader over a tiny history: `files[oid][path]` is the text there. */
function reader(files: Record<string, Record<string, string>>) {
  const calls: string[] = []
  const at = (path: string, oid: string) => files[oid]?.[path] ?? null
  const api: HistoryReader = {
    async diff(path, from, to) {
      calls.push(`diff ${path} ${from.slice(0, 1)}..${to.slice(0, 1)}`)
      return omitted({ path, before: at(path, from), after: at(path, to), omitted: false })
    },
    async readAt(path, oid) {
      calls.push(`readAt ${path} ${oid.slice(0, 1)}`)
      return at(path, oid)
    },
  }
  return { api, calls }
}

describe('loadOmittedChange', () => {
  it('diffs a plain change against the commit parent', async () => {
    const { api, calls } = reader({
      [commit.parent!]: { '/memories/a.md': 'old' },
      [commit.oid]: { '/memories/a.md': 'new' },
    })
    const full = await loadOmittedChange(api, commit, omitted({}))
    expect(calls).toEqual(['diff /memories/a.md p..c'])
    expect(full).toMatchObject({ status: 'modified', before: 'old', after: 'new', omitted: false })
  })

  it('reads both names of a renamed file', async () => {
    const { api, calls } = reader({
      [commit.parent!]: { '/memories/old.md': 'text' },
      [commit.oid]: { '/memories/new.md': 'text!' },
    })
    const change = omitted({
      path: '/memories/new.md',
      oldPath: '/memories/old.md',
      status: 'renamed',
    })
    const full = await loadOmittedChange(api, commit, change)
    expect(calls).toEqual(['readAt /memories/old.md p', 'readAt /memories/new.md c'])
    expect(full).toMatchObject({ status: 'renamed', before: 'text', after: 'text!' })
  })

  it('reads only the new name of a renamed file whose earlier copy is damaged', async () => {
    const { api, calls } = reader({ [commit.oid]: { '/memories/new.md': 'intact' } })
    // The history's copy of the old name cannot be read: reading it would fail every time.
    api.readAt = async (path, oid) => {
      calls.push(`readAt ${path} ${oid.slice(0, 1)}`)
      if (oid === commit.parent) throw new ApiError({ code: 'history-damaged', message: 'x' })
      return path === '/memories/new.md' ? 'intact' : null
    }
    const change = omitted({
      path: '/memories/new.md',
      oldPath: '/memories/old.md',
      status: 'renamed',
      beforeDamaged: true,
    })
    const full = await loadOmittedChange(api, commit, change)
    expect(calls).toEqual(['readAt /memories/new.md c'])
    expect(full).toMatchObject({
      before: null,
      after: 'intact',
      beforeDamaged: true,
      omitted: false,
    })
  })

  it('reads only the new side in the first commit, which has no parent', async () => {
    const first = { ...commit, parent: null }
    const { api, calls } = reader({ [commit.oid]: { '/memories/a.md': 'hello' } })
    const full = await loadOmittedChange(api, first, omitted({ status: 'added' }))
    expect(calls).toEqual(['readAt /memories/a.md c'])
    expect(full).toMatchObject({ status: 'added', before: null, after: 'hello', omitted: false })
  })
})

describe('truncationNote', () => {
  const detail = (shown: number, total: number): CommitDetail => ({
    commit,
    message: '',
    changes: Array.from({ length: shown }, (_, i) => omitted({ path: `/memories/f${i}.md` })),
    totalChanges: total,
    truncated: shown < total,
  })

  it('says how many of how many files are shown, with thousands separators', () => {
    expect(truncationNote(detail(100, 3412))).toBe('Showing 100 of 3,412 changed files')
  })

  it('says nothing when every change was sent', () => {
    expect(truncationNote(detail(3, 3))).toBeNull()
  })
})

describe('loadFailure', () => {
  it('says a version too large to show as the core words it, with nothing to try again', () => {
    const message =
      '/memories/big.log is too large to show here: this version is 20.0 MB, and Cairn shows files of up to 4.0 MB.'
    expect(loadFailure(new ApiError({ code: 'too-large', message }))).toEqual({
      message,
      retry: false,
    })
  })

  it('offers to try again after any other failure', () => {
    expect(loadFailure(new ApiError({ code: 'io-error', message: 'The disk failed.' }))).toEqual({
      message: 'Could not load this diff: The disk failed.',
      retry: true,
    })
  })
})
