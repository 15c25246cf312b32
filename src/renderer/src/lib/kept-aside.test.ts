import { describe, expect, it } from 'vitest'
import { asideNameOf, keptAsideWords } from './kept-aside'

describe('kept-aside words', () => {
  it('names where each kept file went, never promising History has it', () => {
    const words = keptAsideWords([
      {
        path: '/memories/a.md',
        keptAs: '/memories/a (not in history).md',
        reason: 'not-in-history',
      },
      { path: '/memories/b.md', keptAs: '/memories/b (not in history).md', reason: 'changed' },
      { path: '/memories/logs', keptAs: '/memories/logs (not in history)', reason: 'folder' },
    ])
    expect(words).toBe(
      ' History has no copy of a.md, so it was kept as “a (not in history).md”.' +
        ' b.md had been changed outside Cairn since History saw it, so that version was kept as “b (not in history).md”.' +
        ' logs held files History has no copy of: they were kept in “logs (not in history)”.',
    )
    expect(keptAsideWords(undefined)).toBe('')
  })

  it('puts the label before the extension, as the core names it', () => {
    expect(asideNameOf('/memories/logs/big.log')).toBe('big (not in history).log')
    expect(asideNameOf('/memories/README')).toBe('README (not in history)')
    expect(asideNameOf('/memories/.hidden')).toBe('.hidden (not in history)')
    expect(asideNameOf('/memories/private.md', true)).toBe('private (unreadable).md')
    // A label the person gave it is replaced, as the core does, never doubled.
    expect(asideNameOf('/memories/Trip (Not In History).log')).toBe('Trip (not in history).log')
    expect(asideNameOf('/memories/notes (Unreadable 2).md', true)).toBe('notes (unreadable).md')
  })

  // notices27: a restore over a file named as Cairn keeps things aside predicted its own name;
  // the core counts the name a restore writes again as taken (in any case), and numbers it.
  it('numbers the name a restore over it would take, as the core does', () => {
    expect(asideNameOf('/memories/big (not in history).log', false, true)).toBe(
      'big (not in history 2).log',
    )
    expect(asideNameOf('/memories/Trip (Not In History).log', false, true)).toBe(
      'Trip (not in history 2).log',
    )
    expect(asideNameOf('/memories/private (unreadable).md', true, true)).toBe(
      'private (unreadable 2).md',
    )
    // Another number, or the other label, leaves the first name free.
    expect(asideNameOf('/memories/big (not in history 3).log', false, true)).toBe(
      'big (not in history).log',
    )
    expect(asideNameOf('/memories/private (unreadable).md', false, true)).toBe(
      'private (not in history).md',
    )
  })
})
