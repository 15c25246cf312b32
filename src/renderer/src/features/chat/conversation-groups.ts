import type { ConversationSearchHit } from '../../../../shared/types'

export interface ConversationGroup {
  readonly label: string
  readonly hits: ReadonlyArray<ConversationSearchHit>
}

const DAY = 24 * 60 * 60 * 1000

/**
 * Sorts the (newest first) list into Today / Yesterday / Previous 7 days / Previous 30 days /
 * Older, the way chat apps group a long history. Empty groups are left out.
 */
export function groupByAge(
  hits: ReadonlyArray<ConversationSearchHit>,
  now: number,
): ReadonlyArray<ConversationGroup> {
  const midnight = new Date(now)
  midnight.setHours(0, 0, 0, 0)
  const today = midnight.getTime()
  const bounds: ReadonlyArray<[string, number]> = [
    ['Today', today],
    ['Yesterday', today - DAY],
    ['Previous 7 days', today - 7 * DAY],
    ['Previous 30 days', today - 30 * DAY],
    ['Older', Number.NEGATIVE_INFINITY],
  ]
  const groups = bounds.map(([label]) => ({ label, hits: [] as ConversationSearchHit[] }))
  for (const hit of hits) {
    const index = bounds.findIndex(([, from]) => hit.conversation.updatedAt >= from)
    groups[index]!.hits.push(hit)
  }
  return groups.filter((group) => group.hits.length > 0)
}

/** One line of the windowed conversation list: a group's heading, or a conversation. */
export type ConversationListItem =
  | { readonly kind: 'label'; readonly group: string; readonly first: boolean }
  | {
      readonly kind: 'row'
      readonly group: string
      readonly hit: ConversationSearchHit
      /** Its place in its group, from 1, and the group's length (for a screen reader). */
      readonly posInSet: number
      readonly setSize: number
    }

/**
 * The groups as one list of lines, each heading before its conversations, so the sidebar can
 * draw only the lines in view however many conversations there are.
 */
export function listItems(
  groups: ReadonlyArray<ConversationGroup>,
): ReadonlyArray<ConversationListItem> {
  return groups.flatMap((group, at) => [
    { kind: 'label' as const, group: group.label, first: at === 0 },
    ...group.hits.map((hit, index) => ({
      kind: 'row' as const,
      group: group.label,
      hit,
      posInSet: index + 1,
      setSize: group.hits.length,
    })),
  ])
}
