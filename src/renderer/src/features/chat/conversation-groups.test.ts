import { describe, expect, it } from 'vitest'
import type { ConversationSearchHit } from '../../../../shared/types'
import { groupByAge, listItems } from './conversation-groups'

const hit = (id: string, updatedAt: number): ConversationSearchHit => ({
  conversation: { id, title: id, createdAt: updatedAt, updatedAt, messageCount: 1 },
  excerpt: null,
})

describe('groupByAge', () => {
  it('puts conversations under Today, Yesterday and older headings in order', () => {
    const now = new Date(2026, 5, 15, 12).getTime()
    const hour = 60 * 60 * 1000
    const groups = groupByAge(
      [hit('a', now - hour), hit('b', now - 20 * hour), hit('c', now - 100 * 24 * hour)],
      now,
    )
    expect(groups.map((g) => [g.label, g.hits.map((h) => h.conversation.id)])).toEqual([
      ['Today', ['a']],
      ['Yesterday', ['b']],
      ['Older', ['c']],
    ])
  })

  it('returns no groups for no conversations', () => {
    expect(groupByAge([], Date.now())).toEqual([])
  })
})

describe('listItems', () => {
  it('puts each heading before its conversations, each with its place in its group', () => {
    const now = new Date(2026, 5, 15, 12).getTime()
    const hour = 60 * 60 * 1000
    const items = listItems(
      groupByAge([hit('a', now - hour), hit('b', now - 2 * hour), hit('c', now - 20 * hour)], now),
    )
    expect(
      items.map((item) =>
        item.kind === 'label'
          ? `${item.group}${item.first ? ' (first)' : ''}`
          : `${item.hit.conversation.id} ${item.posInSet}/${item.setSize}`,
      ),
    ).toEqual(['Today (first)', 'a 1/2', 'b 2/2', 'Yesterday', 'c 1/1'])
  })
})
