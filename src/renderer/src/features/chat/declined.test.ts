import { describe, expect, it } from 'vitest'
import { declinedText } from '../../../../shared/review'
import { declinedNote } from './declined'

describe('a declined change on its card', () => {
  it('reads the person’s reason back from the tool_result', () => {
    expect(declinedNote(declinedText('/memories/a.md', 'not true'))).toBe(
      'You declined this change: “not true”. Nothing changed.',
    )
    expect(declinedNote(declinedText('/memories/a.md', null))).toBe(
      'You declined this change. Nothing changed.',
    )
    expect(declinedNote(declinedText('/memories/a.md', 'stopped'))).toBe(
      'Declined when you stopped the turn. Nothing changed.',
    )
    expect(declinedNote('Error: The path /memories/a.md does not exist')).toBeNull()
  })
})
