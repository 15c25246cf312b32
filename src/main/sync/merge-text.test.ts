import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { conflictBlocks, hasConflicts, parseConflicts, resolveConflicts } from './conflict-markers'
import { resolvedText } from './conflicts'
import { mergeText, splitLines } from './merge-text'

const labels = { ours: 'laptop', theirs: 'desktop' }
const lines = (...items: string[]) => items.map((line) => `${line}\n`).join('')

describe('three-way text merge', () => {
  it('takes each side’s change to different lines, with no markers', () => {
    const base = lines('# Notes', 'Editor: Helix', 'Theme: dark', 'Font: Iosevka', 'Shell: fish')
    const ours = lines('# Notes', 'Editor: Zed', 'Theme: dark', 'Font: Iosevka', 'Shell: fish')
    const theirs = lines('# Notes', 'Editor: Helix', 'Theme: dark', 'Font: Iosevka', 'Shell: zsh')
    const merged = mergeText(base, ours, theirs, labels)
    expect(merged).toEqual({
      text: lines('# Notes', 'Editor: Zed', 'Theme: dark', 'Font: Iosevka', 'Shell: zsh'),
      conflicts: 0,
      markerSize: 7,
    })
  })

  it('keeps both versions of the same line between markers', () => {
    const base = lines('a', 'Editor: Helix', 'b')
    const merged = mergeText(
      base,
      lines('a', 'Editor: Zed', 'b'),
      lines('a', 'Editor: Vim', 'b'),
      labels,
    )
    expect(merged.conflicts).toBe(1)
    expect(merged.text).toBe(
      lines('a', '<<<<<<< laptop', 'Editor: Zed', '=======', 'Editor: Vim', '>>>>>>> desktop', 'b'),
    )
    expect(conflictBlocks(merged.text)).toEqual([
      {
        ours: 'Editor: Zed\n',
        theirs: 'Editor: Vim\n',
        oursLabel: 'laptop',
        theirsLabel: 'desktop',
      },
    ])
  })

  it('takes identical changes once and insertions at either end', () => {
    const base = lines('middle')
    expect(mergeText(base, lines('top', 'middle'), lines('middle', 'bottom'), labels)).toEqual({
      text: lines('top', 'middle', 'bottom'),
      conflicts: 0,
      markerSize: 7,
    })
    expect(mergeText(base, lines('same'), lines('same'), labels).text).toBe(lines('same'))
  })

  it('without a base, keeps shared lines once and marks only what differs', () => {
    const merged = mergeText(
      '',
      lines('# Me', 'Name: Sam', 'Likes: tea'),
      lines('# Me', 'Name: Sam', 'Likes: coffee'),
      labels,
    )
    expect(merged.conflicts).toBe(1)
    expect(merged.text).toBe(
      lines(
        '# Me',
        'Name: Sam',
        '<<<<<<< laptop',
        'Likes: tea',
        '=======',
        'Likes: coffee',
        '>>>>>>> desktop',
      ),
    )
  })

  it('starts a block on its own line after a last line without newline', () => {
    const merged = mergeText('x', 'x\ny', 'x\nz', labels)
    expect(merged.text).toBe(lines('x', '<<<<<<< laptop', 'y', '=======', 'z', '>>>>>>> desktop'))
  })

  it('keeps a one-sided deletion and the other side’s unrelated edit', () => {
    const base = lines('1', '2', '3', '4', '5')
    const merged = mergeText(
      base,
      lines('1', '3', '4', '5'),
      lines('1', '2', '3', '4', 'five'),
      labels,
    )
    expect(merged).toEqual({ text: lines('1', '3', '4', 'five'), conflicts: 0, markerSize: 7 })
  })

  it('loses no line either side wrote, and one side alone is taken as it is', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', 'e', '', '# h', '- x')
    const text = fc.array(line, { maxLength: 12 }).map((items) => lines(...items))
    fc.assert(
      fc.property(text, text, text, (base, ours, theirs) => {
        const merged = mergeText(base, ours, theirs, labels)
        expect(mergeText(base, ours, base, labels).text).toBe(ours)
        expect(mergeText(base, base, theirs, labels).text).toBe(theirs)
        const out = splitLines(merged.text)
        for (const side of [ours, theirs]) {
          for (const written of added(base, side)) expect(out).toContain(written)
        }
        expect(conflictBlocks(merged.text)).toHaveLength(merged.conflicts)
        expect(hasConflicts(merged.text)).toBe(merged.conflicts > 0)
      }),
      { numRuns: 400 },
    )
  })
})

describe('a file of 200,000 lines', () => {
  // Past about 120,000 items, `out.push(...lines)` overflows V8's stack: such a merge failed
  // for ever as "Something went wrong inside Cairn".
  const count = 200_000
  const base = Array.from({ length: count }, (_, i) => `entry ${i}\n`)

  it('merges edits to different lines, and one side adding 150,000', () => {
    const ours = ['first line changed here\n', ...base.slice(1)]
    const theirs = [...base.slice(0, -1), 'last line changed there\n']
    const merged = mergeText(base.join(''), ours.join(''), theirs.join(''), labels)
    expect(merged.conflicts).toBe(0)
    expect(merged.text).toBe(
      ['first line changed here\n', ...base.slice(1, -1), 'last line changed there\n'].join(''),
    )

    // One side adds 150,000 lines in the middle: taken as one region.
    const added = Array.from({ length: 150_000 }, (_, i) => `added ${i}\n`)
    const grown = [...base.slice(0, 1000), ...added, ...base.slice(1000)]
    const both = mergeText(base.join(''), grown.join(''), theirs.join(''), labels)
    expect(both.conflicts).toBe(0)
    expect(both.text).toBe([...grown.slice(0, -1), 'last line changed there\n'].join(''))
  })

  it('keeps a side of 200,000 lines whole in a conflict block', () => {
    const ours = base.map((line) => `ours ${line}`).join('')
    const merged = mergeText('one line\n', ours, 'another line\n', labels)
    expect(merged.conflicts).toBe(1)
    expect(conflictBlocks(merged.text)).toHaveLength(1)
    expect(resolveConflicts(merged.text, 'ours')).toBe(ours)
    expect(resolveConflicts(merged.text, 'theirs')).toBe('another line\n')
  })
})

describe('conflict markers', () => {
  const text = lines(
    'top',
    '<<<<<<< laptop',
    'ours 1',
    '=======',
    'theirs 1',
    '>>>>>>> desktop',
    'mid',
    '<<<<<<< laptop',
    '=======',
    'theirs 2',
    '>>>>>>> desktop',
  )

  it('resolves every block to one side or both', () => {
    expect(resolveConflicts(text, 'ours')).toBe(lines('top', 'ours 1', 'mid'))
    expect(resolveConflicts(text, 'theirs')).toBe(lines('top', 'theirs 1', 'mid', 'theirs 2'))
    expect(resolveConflicts(text, 'both')).toBe(
      lines('top', 'ours 1', 'theirs 1', 'mid', 'theirs 2'),
    )
  })

  it('leaves incomplete or stray markers as plain text', () => {
    const stray = lines('<<<<<<< nobody', 'no end', '=======', 'x')
    expect(parseConflicts(stray)).toEqual([{ kind: 'text', text: stray }])
    expect(hasConflicts(lines('>>>>>>> x', '======='))).toBe(false)
  })
})

describe('sides that hold marker-like lines', () => {
  // A Markdown setext heading underlines with "="; a note may quote a git conflict.
  const base = lines('Intro', '', 'Editor: Vim')
  const laptop = lines('Intro', '', 'Tools', '=======', 'Editor: Zed')
  const desktop = lines('Intro', '', 'Quoted:', '<<<<<<<< HEAD', 'Editor: Helix', '>>>>>>>>')

  it('writes markers longer than any marker-like line, as git does', () => {
    const merged = mergeText(base, laptop, desktop, labels)
    expect(merged.conflicts).toBe(1)
    expect(merged.text).toContain('<<<<<<<<< laptop\n')
    expect(merged.text).toContain('\n=========\n')
    expect(merged.text).toContain('>>>>>>>>> desktop\n')
    expect(conflictBlocks(merged.text)).toEqual([
      {
        ours: lines('Tools', '=======', 'Editor: Zed'),
        theirs: lines('Quoted:', '<<<<<<<< HEAD', 'Editor: Helix', '>>>>>>>>'),
        oursLabel: 'laptop',
        theirsLabel: 'desktop',
      },
    ])
  })

  it('sizes the markers from the whole file, so a quoted conflict elsewhere is never one', () => {
    const example = lines(
      '```',
      '<<<<<<< HEAD',
      'mine',
      '=======',
      'theirs',
      '>>>>>>> topic',
      '```',
    )
    const merged = mergeText(
      example + lines('Editor: Vim'),
      example + lines('Editor: Zed'),
      example + lines('Editor: Helix'),
      labels,
    )
    expect(merged.markerSize).toBe(8)
    expect(conflictBlocks(merged.text, merged.markerSize)).toEqual([
      {
        ours: 'Editor: Zed\n',
        theirs: 'Editor: Helix\n',
        oursLabel: 'laptop',
        theirsLabel: 'desktop',
      },
    ])
    // Read at that size, every choice keeps the example whole.
    const ours = resolvedText(merged.text, 'laptop', 'ours', undefined, null, merged.markerSize)
    expect(ours).toBe(example + lines('Editor: Zed'))
  })

  it('gives exactly one side, the other, or both from either machine', () => {
    const merged = mergeText(base, laptop, desktop, labels).text
    const both = lines('Intro', '', 'Tools', '=======', 'Editor: Zed')
    expect(resolvedText(merged, 'laptop', 'ours')).toBe(laptop)
    expect(resolvedText(merged, 'laptop', 'theirs')).toBe(desktop)
    expect(resolvedText(merged, 'laptop', 'both')).toBe(
      both + lines('Quoted:', '<<<<<<<< HEAD', 'Editor: Helix', '>>>>>>>>'),
    )
    // The desktop learns the same merge: its "ours" is its own version.
    expect(resolvedText(merged, 'desktop', 'ours')).toBe(desktop)
    expect(resolvedText(merged, 'desktop', 'theirs')).toBe(laptop)
  })

  it('still reads 7-character markers, and the setext line in a block of that size', () => {
    const text = lines('<<<<<<< laptop', 'a', '========', '=======', 'b', '>>>>>>> desktop')
    expect(conflictBlocks(text)).toEqual([
      {
        ours: lines('a', '========'),
        theirs: lines('b'),
        oursLabel: 'laptop',
        theirsLabel: 'desktop',
      },
    ])
  })
})

// Lines of `side` beyond what `base` holds (as a multiset): what that side wrote.
function added(base: string, side: string): string[] {
  const pool = new Map<string, number>()
  for (const line of splitLines(base)) pool.set(line, (pool.get(line) ?? 0) + 1)
  const result: string[] = []
  for (const line of splitLines(side)) {
    const left = pool.get(line) ?? 0
    if (left > 0) pool.set(line, left - 1)
    else result.push(line.endsWith('\n') ? line : `${line}\n`)
  }
  return result
}
