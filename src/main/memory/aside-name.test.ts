import { describe, expect, it } from 'vitest'
import { asideName, isAsideName } from './keep-aside'
import { parseMemoryPath } from './path-rules'

// A kept name longer than the path rules allow was one Claude was told of but could not
// `view` or `delete` ("a name is longer than 128 characters").

const none = (): boolean => false

describe('asideName', () => {
  it('keeps the name within 128 characters, the label and extension whole', () => {
    const name = asideName(`${'b'.repeat(125)}.md`, none, 'file', '/memories/')
    expect(name).toBe(`${'b'.repeat(108)} (not in history).md`)
    expect(name.length).toBe(128)
  })

  it('keeps the path within 512 characters in a deep folder', () => {
    const within = `/memories/${'d'.repeat(100)}/${'e'.repeat(100)}/${'f'.repeat(100)}/${'g'.repeat(100)}/`
    const name = asideName('h'.repeat(90), none, 'folder', within)
    expect((within + name).length).toBe(512)
    expect(name.endsWith(' (not in history)')).toBe(true)
    expect(parseMemoryPath(within + name)).toMatchObject({ ok: true })
  })

  it('leaves a short name as it was', () => {
    expect(asideName('big.md', (n) => n === 'big (not in history).md', 'file', '/memories/')).toBe(
      'big (not in history 2).md',
    )
  })

  it('names a file kept aside because it could not be read for that, not "not in history"', () => {
    const taken = (n: string) => n === 'private (unreadable).md'
    expect(asideName('private.md', none, 'file', '/memories/', 'unreadable')).toBe(
      'private (unreadable).md',
    )
    expect(asideName('private.md', taken, 'file', '/memories/', 'unreadable')).toBe(
      'private (unreadable 2).md',
    )
    // Kept aside already, either way: never kept aside again (only renamed, on and on).
    expect(isAsideName('private (unreadable).md')).toBe(true)
    expect(isAsideName('private (unreadable 2).md')).toBe(true)
    expect(isAsideName('big (not in history).md')).toBe(true)
    expect(isAsideName('private.md')).toBe(false)
  })

  it('numbers a name kept aside already instead of labelling it twice', () => {
    // A `create` over `x (unreadable).md` kept its content as `x (unreadable) (unreadable).md`.
    const taken = (names: string[]) => (n: string) => names.includes(n)
    expect(
      asideName(
        'x (unreadable).md',
        taken(['x (unreadable).md']),
        'file',
        '/memories/',
        'unreadable',
      ),
    ).toBe('x (unreadable 2).md')
    expect(
      asideName(
        'x (unreadable 2).md',
        taken(['x (unreadable).md', 'x (unreadable 2).md']),
        'file',
        '/memories/',
        'unreadable',
      ),
    ).toBe('x (unreadable 3).md')
    expect(
      asideName(
        'big (not in history).log',
        taken(['big (not in history).log']),
        'file',
        '/memories/',
      ),
    ).toBe('big (not in history 2).log')
    expect(
      asideName(
        'notes (not in history)',
        taken(['notes (not in history)']),
        'folder',
        '/memories/',
      ),
    ).toBe('notes (not in history 2)')
    // The label says the reason of this time.
    expect(
      asideName(
        'x (not in history).md',
        taken(['x (not in history).md']),
        'file',
        '/memories/',
        'unreadable',
      ),
    ).toBe('x (unreadable).md')
    // Names that only look alike keep theirs.
    expect(asideName('x(unreadable).md', none, 'file', '/memories/')).toBe(
      'x(unreadable) (not in history).md',
    )
    expect(asideName('(unreadable).md', none, 'file', '/memories/', 'unreadable')).toBe(
      '(unreadable) (unreadable).md',
    )
  })

  it('numbers a label that differs only in case instead of labelling it twice', () => {
    // `x (Unreadable).md`, named so by a person: on a file system that ignores case it is the
    // name `x (unreadable).md`, so it was kept as `x (Unreadable) (unreadable).md`.
    const ignoringCase = (names: string[]) => (n: string) =>
      names.some((name) => name.toLowerCase() === n.toLowerCase())
    expect(
      asideName(
        'x (Unreadable).md',
        ignoringCase(['x (Unreadable).md']),
        'file',
        '/memories/',
        'unreadable',
      ),
    ).toBe('x (unreadable 2).md')
    expect(
      asideName(
        'Notes (NOT IN HISTORY 2)',
        ignoringCase(['Notes (NOT IN HISTORY 2)']),
        'folder',
        '/memories/',
      ),
    ).toBe('Notes (not in history)')
    // Where case counts, the label in Cairn's case is a name of its own: taken only if there.
    expect(asideName('x (Unreadable).md', none, 'file', '/memories/', 'unreadable')).toBe(
      'x (unreadable).md',
    )
    expect(isAsideName('x (Unreadable).md')).toBe(true)
    expect(isAsideName('big (Not In History 3).log')).toBe(true)
  })
})
