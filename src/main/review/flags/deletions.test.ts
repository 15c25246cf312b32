import { describe, expect, it } from 'vitest'
import { deletionFlags, removedChars, type DeletionInput } from './deletions'

const file = (over: Partial<DeletionInput>): DeletionInput => ({
  command: 'str_replace',
  path: '/memories/notes.md',
  kind: 'file',
  before: null,
  after: null,
  fileCount: 0,
  ...over,
})

const NOTES = '# Notes\n- Likes tea\n- Lives in Lisbon\n- Has a cat called Miso\n- Plays chess\n'

describe('the deletion rules', () => {
  it('flag deleting a folder, with how many files it held', () => {
    expect(
      deletionFlags(file({ command: 'delete', kind: 'dir', path: '/memories/work', fileCount: 3 })),
    ).toEqual([
      {
        rule: 'deletes-folder',
        path: '/memories/work',
        line: null,
        message: 'Deletes the folder /memories/work and the 3 files in it',
      },
    ])
  })

  it('flag deleting a whole file, but not an empty one', () => {
    expect(deletionFlags(file({ command: 'delete', before: NOTES }))).toMatchObject([
      { rule: 'deletes-most', message: 'Deletes the whole file (5 lines)' },
    ])
    expect(deletionFlags(file({ command: 'delete', before: '' }))).toEqual([])
  })

  it('flag replacing or deleting a file that is not text, with its size', () => {
    expect(deletionFlags(file({ command: 'create', after: 'x\n', notTextBytes: 2048 }))).toEqual([
      {
        rule: 'deletes-most',
        path: '/memories/notes.md',
        line: null,
        message: 'Replaces the whole file (not text, 2,048 bytes)',
      },
    ])
    expect(deletionFlags(file({ command: 'delete', notTextBytes: 1 }))[0]?.message).toBe(
      'Deletes the whole file (not text, 1 byte)',
    )
    // A new file (nothing there) is no deletion.
    expect(deletionFlags(file({ command: 'create', after: 'x\n', notTextBytes: null }))).toEqual([])
  })

  it('flag an edit that removes more than half of the text', () => {
    const after = '# Notes\n- Likes tea\n'
    const [flag] = deletionFlags(file({ before: NOTES, after }))
    expect(flag).toMatchObject({ rule: 'deletes-most', line: null })
    expect(flag!.message).toBe(`Removes 74% of the file's text (56 of ${NOTES.length} characters)`)
  })

  it('flag a rewrite that replaces most of the file', () => {
    expect(
      deletionFlags(file({ command: 'create', before: NOTES, after: '# Notes\nAll gone.\n' })),
    ).toMatchObject([{ rule: 'deletes-most' }])
  })

  it('leave alone edits that keep most of the text', () => {
    const cases: Array<[string, string]> = [
      [NOTES, NOTES.replace('tea', 'green tea')],
      [NOTES, NOTES.replace('- Plays chess\n', '')],
      [NOTES, `${NOTES}- New line\n`],
      ['Pet: cat', 'Pet: dog'],
      [NOTES, NOTES.split('\n').reverse().join('\n')],
    ]
    for (const [before, after] of cases) {
      expect(deletionFlags(file({ before, after })), after).toEqual([])
    }
  })

  it('leave alone new files, renames and files that held only blanks', () => {
    expect(deletionFlags(file({ command: 'create', before: null, after: NOTES }))).toEqual([])
    expect(deletionFlags(file({ command: 'rename', before: NOTES, after: NOTES }))).toEqual([])
    expect(deletionFlags(file({ before: '\n\n', after: 'x' }))).toEqual([])
  })

  it('count removed characters exactly for a change in one place', () => {
    expect(removedChars('abcdef', 'abXYZf')).toBe(3)
    expect(removedChars('abc', 'abc')).toBe(0)
    expect(removedChars('abc', '')).toBe(3)
    expect(removedChars('', 'abc')).toBe(0)
  })

  it('stay linear on a large rewrite', () => {
    const big = Array.from({ length: 50_000 }, (_, i) => `line ${i}`).join('\n')
    const shuffled = big.split('\n').reverse().join('\n')
    // Every line is still there, only in another order: next to nothing counts as removed
    // (the ends of the two lines cut by the common start and end).
    expect(removedChars(big, shuffled)).toBeLessThan(20)
  })
})
