import { describe, expect, it } from 'vitest'
import { showsProblemNote } from './review-problem'

const problem = 'The file /memories/notes.md no longer has the text this change replaces.'

describe('the review card’s problem note', () => {
  it('is left out while a refusal coded review-unappliable is shown, whatever its words', () => {
    expect(
      showsProblemNote(problem, {
        code: 'review-unappliable',
        message: `${problem} This change can no longer be applied; decline it instead.`,
      }),
    ).toBe(false)
    // Worded otherwise (main's sentence reworded, or the problem put after it): still said.
    expect(
      showsProblemNote(problem, {
        code: 'review-unappliable',
        message: 'This change can no longer be applied: the file changed. Decline it instead.',
      }),
    ).toBe(false)
  })

  it('is shown with any other refusal, even one whose words begin with the problem', () => {
    expect(
      showsProblemNote(problem, {
        code: 'review-outdated',
        message: `${problem} The preview now shows it against the file as it is.`,
      }),
    ).toBe(true)
    expect(showsProblemNote(problem, { code: null, message: 'Something went wrong.' })).toBe(true)
    expect(showsProblemNote(problem, null)).toBe(true)
  })

  it('is not shown when the change has no problem', () => {
    expect(showsProblemNote(null, null)).toBe(false)
    expect(showsProblemNote(null, { code: 'review-unappliable', message: 'x' })).toBe(false)
  })
})
