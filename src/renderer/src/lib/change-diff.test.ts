import { describe, expect, it } from 'vitest'
import { changeDiff } from './change-diff'
import { flagRules, flagSentences, flagWhere } from './flags'
import { holdsHidden, revealHidden } from './reveal-hidden'

describe('the diff of a pending change', () => {
  it('shows added and removed lines with their numbers, folding what did not change', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n'
    const after = before.replace('line 10\n', 'line ten\n')
    const diff = changeDiff(before, after)
    expect(diff.added).toBe(1)
    expect(diff.removed).toBe(1)
    expect(diff.rows).toEqual([
      { kind: 'gap', count: 6 },
      { kind: 'same', text: 'line 7', line: 7 },
      { kind: 'same', text: 'line 8', line: 8 },
      { kind: 'same', text: 'line 9', line: 9 },
      { kind: 'del', text: 'line 10', line: 10 },
      { kind: 'add', text: 'line ten', line: 10 },
      { kind: 'same', text: 'line 11', line: 11 },
      { kind: 'same', text: 'line 12', line: 12 },
      { kind: 'same', text: 'line 13', line: 13 },
      { kind: 'gap', count: 7 },
    ])
  })

  it('shows a new file as all added and a deletion as all removed', () => {
    expect(changeDiff(null, 'a\nb\n').rows).toEqual([
      { kind: 'add', text: 'a', line: 1 },
      { kind: 'add', text: 'b', line: 2 },
    ])
    expect(changeDiff('a\n', null)).toMatchObject({ added: 0, removed: 1 })
  })

  it('cuts a very long diff and says so', () => {
    const after = Array.from({ length: 900 }, (_, i) => `${i}`).join('\n')
    const diff = changeDiff(null, after, 3, 100)
    expect(diff.rows).toHaveLength(100)
    expect(diff.cut).toBe(true)
    expect(diff.added).toBe(900)
  })
})

describe('invisible characters in a diff', () => {
  it('marks each one by its code, and spells out hidden tag text (each holding its characters)', () => {
    const tags = [...'hi you'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')
    expect(revealHidden(`pass\u200bword${tags}!`)).toEqual([
      { kind: 'text', text: 'pass' },
      { kind: 'hidden', label: 'U+200B', raw: '\u200b' },
      { kind: 'text', text: 'word' },
      { kind: 'hidden', label: 'hidden text “hi you”', raw: tags },
      { kind: 'text', text: '!' },
    ])
  })

  it('leaves plain text and emoji joiners as they are', () => {
    expect(revealHidden('Ign\u3164ore')).toEqual([
      { kind: 'text', text: 'Ign' },
      { kind: 'hidden', label: 'U+3164', raw: '\u3164' },
      { kind: 'text', text: 'ore' },
    ])
    expect(revealHidden('Family 👨\u200d👩\u200d👧')).toEqual([
      { kind: 'text', text: 'Family 👨\u200d👩\u200d👧' },
    ])
  })
})

// Left by the review of handler28: `holdsHidden` and `revealHidden` skip the walk over a text
// with no format or default-ignorable character. The walk is forced here by a zero-width space
// at the end, so every code point the walk marks must be one the quick test lets through.
describe('the quick test for invisible characters', () => {
  it('misses no character the walk marks, over every code point', () => {
    const missed: string[] = []
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue
      const text = `a${String.fromCodePoint(code)}b`
      const walked = revealHidden(`${text} \u200b`).filter((piece) => piece.kind === 'hidden')
      if (holdsHidden(text) !== walked.length > 1) missed.push(code.toString(16))
    }
    expect(missed).toEqual([])
  })
})

describe('flags for people', () => {
  const flags = [
    { rule: 'instructions', path: '/memories/notes.md', line: 2, message: 'm1' },
    { rule: 'instructions', path: '/memories/notes.md', line: 5, message: 'm2' },
    { rule: 'deletes-most', path: '/memories/a/b.md', line: null, message: 'm3' },
  ] as const
  it('say which rule fired and where', () => {
    expect(flagWhere(flags[0])).toBe('notes.md, line 2')
    expect(flagWhere(flags[2])).toBe('a/b.md')
    expect(flagSentences(flags)[0]).toBe('Instruction-like text (notes.md, line 2): m1')
    expect(flagRules(flags)).toEqual(['instructions', 'deletes-most'])
  })
})
