import { describe, expect, it } from 'vitest'
import type { MemoryEntry } from '../../../../shared/types'
import { copyNameFor, formatSize, parentOf, visibleRows } from './tree-model'

const file = (path: string, size = 1): MemoryEntry => ({ path, kind: 'file', size, modifiedAt: 0 })
const dir = (path: string, size = 1): MemoryEntry => ({ path, kind: 'dir', size, modifiedAt: 0 })

describe('tree model', () => {
  const entries = [
    file('/memories/b.md'),
    dir('/memories/projects'),
    file('/memories/projects/x.md'),
    dir('/memories/projects/old'),
    file('/memories/projects/old/y.md'),
    file('/memories/a.md'),
  ]

  it('lists folders before files, by name, with their depth', () => {
    expect(visibleRows(entries, new Set()).map((r) => `${r.level}:${r.name}`)).toEqual([
      '1:projects',
      '2:old',
      '3:y.md',
      '2:x.md',
      '1:a.md',
      '1:b.md',
    ])
  })

  it('orders numbered names the way file managers do (f2 before f10)', () => {
    const numbered = [file('/memories/f10.md'), file('/memories/F2.md'), file('/memories/f1.md')]
    expect(visibleRows(numbered, new Set()).map((r) => r.name)).toEqual([
      'f1.md',
      'F2.md',
      'f10.md',
    ])
  })

  // It was drawn with ▾ as if it could be opened (review12-story, item 3).
  it('gives a folder Cairn may not read no expander, like an unreadable file', () => {
    const locked: MemoryEntry = { ...dir('/memories/locked'), unreadable: true }
    const rows = visibleRows([locked, file('/memories/a.md')], new Set())
    expect(rows.map((r) => [r.name, r.expanded])).toEqual([
      ['locked', null],
      ['a.md', null],
    ])
  })

  it('hides the children of a collapsed folder', () => {
    const rows = visibleRows(entries, new Set(['/memories/projects']))
    expect(rows.map((r) => r.name)).toEqual(['projects', 'a.md', 'b.md'])
    expect(rows[0]?.expanded).toBe(false)
  })

  it('finds the parent folder of a path', () => {
    expect(parentOf('/memories/a.md')).toBeNull()
    expect(parentOf('/memories/projects/old/y.md')).toBe('/memories/projects/old')
  })

  it('formats sizes the way file managers do', () => {
    expect([formatSize(512), formatSize(1434), formatSize(2 * 1024 * 1024)]).toEqual([
      '512 B',
      '1.4 KB',
      '2.0 MB',
    ])
    // 1,048,525 to 1,048,575 bytes (within the 1 MiB a file may hold) round to 1024.0 KB.
    expect([1048524, 1048525, 1048575, 1048576].map(formatSize)).toEqual([
      '1023.9 KB',
      '1.0 MB',
      '1.0 MB',
      '1.0 MB',
    ])
  })

  it('shows a size that rounds to 1024.0 of a unit as 1.0 of the next, as the listing does', () => {
    expect([1_048_524, 1_048_525, 1_048_575, 1_048_576].map(formatSize)).toEqual([
      '1023.9 KB',
      '1.0 MB',
      '1.0 MB',
      '1.0 MB',
    ])
    expect([1023 * 1024 * 1024, 1024 ** 3 - 1, 3 * 1024 ** 3].map(formatSize)).toEqual([
      '1023.0 MB',
      '1.0 GB',
      '3.0 GB',
    ])
  })
})

describe('copyNameFor', () => {
  it('names a free file beside the path for text that cannot go back to it', () => {
    expect(copyNameFor('/memories/a/prefs.md', new Set())).toBe('/memories/a/prefs (your edit).md')
    expect(copyNameFor('/memories/notes', new Set(['/memories/notes (your edit)']))).toBe(
      '/memories/notes (your edit 2)',
    )
    expect(copyNameFor('/memories/.rc', new Set())).toBe('/memories/.rc (your edit)')
  })
})

describe('tree model: places for screen readers', () => {
  it("gives each row its folder's size and its place in it, counting only its siblings", () => {
    const rows = visibleRows(
      [
        { path: '/memories/b.md', kind: 'file', size: 1, modifiedAt: 0 },
        { path: '/memories/docs', kind: 'dir', size: 1, modifiedAt: 0 },
        { path: '/memories/docs/x.md', kind: 'file', size: 1, modifiedAt: 0 },
        { path: '/memories/docs/y.md', kind: 'file', size: 1, modifiedAt: 0 },
        { path: '/memories/a.md', kind: 'file', size: 1, modifiedAt: 0 },
      ],
      new Set(),
    )
    expect(rows.map((r) => `${r.name} ${r.posInSet}/${r.setSize}`)).toEqual([
      'docs 1/3',
      'x.md 1/2',
      'y.md 2/2',
      'a.md 2/3',
      'b.md 3/3',
    ])
  })
})
