import { describe, expect, it } from 'vitest'
import type { Conversation } from '../../shared/types'
import { findLowerCase, matchConversation } from './search'

const conversation = (text: string): Conversation => ({
  id: 'c1',
  title: 'Languages',
  createdAt: 0,
  updatedAt: 0,
  messageCount: 1,
  toolCommits: {},
  messages: [{ role: 'user', content: [{ type: 'text', text }], createdAt: 0 }],
})

describe('the search excerpt', () => {
  it('holds the match after characters that grow when lower-cased', () => {
    // "İ" lower-cases to two characters: sixty of them shifted the excerpt off the match.
    const text = `${'İ'.repeat(60)} My favourite language is Python ${'y'.repeat(60)}`
    const hit = matchConversation(conversation(text), 'python')
    expect(hit?.excerpt).toContain('Python')
    expect(hit?.excerpt).toMatch(/^…İ+ My favourite language is Python y+…$/)
  })

  it('maps a match back onto the original text', () => {
    expect(findLowerCase('İİ PYTHON', 'python')).toEqual({ at: 3, length: 6 })
    expect(findLowerCase('plain Python', 'python')).toEqual({ at: 6, length: 6 })
    expect(findLowerCase('İstanbul', 'i̇stanbul')).toEqual({ at: 0, length: 8 })
    expect(findLowerCase('nothing here', 'python')).toBeNull()
  })
})
