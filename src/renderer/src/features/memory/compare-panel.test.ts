import { describe, expect, it } from 'vitest'
import { shownChange } from './ComparePanel'

const changes = [
  { path: 'new.md', oldPath: 'old.md' },
  { path: 'notes.md', oldPath: null },
  { path: 'todo.md', oldPath: null },
]

describe('shownChange', () => {
  it('shows the first change when no file is selected, even when it is a rename', () => {
    // `oldPath === null` once matched the first change that was not a rename.
    expect(shownChange(changes, null)).toBe(changes[0])
  })

  it('finds the selected file by its name now or its name at the reply', () => {
    expect(shownChange(changes, 'todo.md')).toBe(changes[2])
    expect(shownChange(changes, 'old.md')).toBe(changes[0])
    expect(shownChange(changes, 'new.md')).toBe(changes[0])
  })

  it('shows the first change when the selected file did not change', () => {
    expect(shownChange(changes, 'same.md')).toBe(changes[0])
    expect(shownChange([], 'same.md')).toBeUndefined()
  })
})
