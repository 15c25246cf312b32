import { describe, expect, it } from 'vitest'
import { requestSchemas } from '../../../../shared/contract'
import { MAX_SEARCH_CHARS } from '../../../../shared/types'
import { searchTextProblem } from './use-history-search'

// Issue #12 review: a 1,001-character search answered "Invalid request for history:search:
// text: Too big: expected string to have <=1000 characters".
describe('the text a history search looks for', () => {
  it('is refused past the limit in words for people, before any request', () => {
    const long = 'x'.repeat(MAX_SEARCH_CHARS + 1)
    expect(searchTextProblem(long)).toBe(
      'it can look for at most 1,000 characters, and this text has 1,001. Search for a shorter part of it.',
    )
    expect(searchTextProblem('x'.repeat(MAX_SEARCH_CHARS))).toBeNull()
  })

  it('is the limit the channel enforces, so the two cannot drift apart', () => {
    const schema = requestSchemas['history:search']
    expect(schema.safeParse({ text: 'x'.repeat(MAX_SEARCH_CHARS) }).success).toBe(true)
    const refused = schema.safeParse({ text: 'x'.repeat(MAX_SEARCH_CHARS + 1) })
    expect(refused.success).toBe(false)
    expect(refused.error?.issues[0]?.message).toBe(
      'is longer than the 1,000 characters a search can look for',
    )
  })
})
